"""plan.lock is byte-identical across runs, machines, working directories, time zones and
hash seeds (DESIGN §3), and the committed one is what `lrc compile` produces now.

The tests that compare with the committed generated/ (`test_subprocess_compile_reproduces_
the_committed_lock`, `test_check_on_the_repository_copy_passes_and_writes_nothing`) are the
pull-request gate in test form: they fail when someone changed specs/ or runtime/ without
running `lrc compile` and committing generated/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from lrc.runtime.lock import format as lockformat

REPO = Path(__file__).resolve().parents[2]
LOCK = "generated/demo/plan.lock"
LRC_SCRIPT = Path(sys.executable).with_name("lrc")


def lrc(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    cmd = [str(LRC_SCRIPT)] if LRC_SCRIPT.exists() else [sys.executable, "-m", "lrc.compiler.cli"]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("LRC_")}
    full_env.update(env)
    return subprocess.run([*cmd, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=300)


def tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_compiling_twice_gives_identical_outputs(project: Path) -> None:
    first = compile_project(project)
    assert not first.diagnostics.has_errors, first.diagnostics.sorted()
    second = compile_project(project)
    assert not second.diagnostics.has_errors
    assert second.outputs == first.outputs
    assert second.changed == []  # nothing left to write


def test_outputs_do_not_depend_on_where_the_project_lives(tmp_path: Path) -> None:
    roots = []
    for name in ("a", "somewhere/else/entirely"):
        root = tmp_path / name
        root.mkdir(parents=True)
        for part in ("specs", "schemas"):
            shutil.copytree(REPO / part, root / part)
        roots.append(root)
    results = [compile_project(root) for root in roots]
    for result in results:
        assert not result.diagnostics.has_errors, result.diagnostics.sorted()
    assert results[0].outputs == results[1].outputs
    for rel, data in results[0].outputs.items():
        text = data.decode("utf-8")
        for leak in (str(tmp_path), str(REPO), "/tmp/", "/home/", "/root/"):
            assert leak not in text, f"{rel} contains {leak!r}"


def test_lock_format_properties(project: Path) -> None:
    result = compile_project(project)
    assert not result.diagnostics.has_errors, result.diagnostics.sorted()
    data = result.outputs[LOCK]
    assert data.endswith(b"\n") and b"\r" not in data
    lock = json.loads(data)
    assert data == lockformat.dumps(lock)  # canonical: sorted keys, 2-space indent
    assert list(lock) == sorted(lock)
    assert lockformat.verify_digests(lock) == []
    assert lock["root_digest"] == lockformat.root_digest(lock)


def test_subprocess_compile_reproduces_the_committed_lock(project: Path, tmp_path: Path) -> None:
    """From another working directory, in another time zone, with another hash seed."""
    committed = (REPO / LOCK).read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = lrc("compile", "--project", str(project), cwd=elsewhere, TZ="Pacific/Auckland", PYTHONHASHSEED="12345", LC_ALL="C")
    assert proc.returncode == 0, proc.stderr
    assert (project / LOCK).read_bytes() == committed, "generated/demo/plan.lock is not what `lrc compile` produces: recompile and commit"
    # A second run, in yet another setting, changes nothing.
    proc = lrc("compile", "--project", str(project), cwd=elsewhere, TZ="America/St_Johns", PYTHONHASHSEED="0", LANG="tr_TR.UTF-8")
    assert proc.returncode == 0, proc.stderr
    assert "generated/ was already up to date." in proc.stdout
    assert (project / LOCK).read_bytes() == committed


def test_check_on_the_repository_copy_passes_and_writes_nothing(project: Path, tmp_path: Path) -> None:
    before = tree(project)
    proc = lrc("compile", "--check", "--project", str(project), cwd=tmp_path)
    assert tree(project) == before, "--check must never write"
    assert proc.returncode == 0, f"the committed generated/ is stale:\n{proc.stderr}"
    assert "lrc compile --check: generated/ is up to date." in proc.stdout


def test_check_writes_nothing_even_when_stale(project: Path) -> None:
    (project / LOCK).unlink()
    (project / "generated/demo/extra.txt").write_text("stale\n", encoding="utf-8")
    before = tree(project)
    result = compile_project(project, check=True)
    assert tree(project) == before
    assert result.changed == []
    [stale] = [d for d in result.diagnostics.sorted() if d.severity == "error"]  # one cause, one diagnostic
    assert stale.code == "LRC7001" and stale.summary.startswith("generated/ is stale: run `lrc compile`")
    assert f"missing: {LOCK}" in stale.notes
    assert "not produced by `lrc compile` (it removes it): generated/demo/extra.txt" in stale.notes


def test_committed_lock_validates_against_the_lock_schema() -> None:
    schema_path = REPO / "schemas" / "lock.schema.json"
    if not schema_path.exists():
        pytest.skip("schemas/lock.schema.json does not exist yet")
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    lock = json.loads((REPO / LOCK).read_text(encoding="utf-8"))
    errors = sorted(validator.iter_errors(lock), key=lambda e: list(map(str, e.absolute_path)))
    assert not errors, "\n".join(f"/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20])


def test_committed_lock_is_self_consistent() -> None:
    lock = lockformat.loads((REPO / LOCK).read_bytes())
    assert lockformat.verify_digests(lock) == []
    assert (REPO / LOCK).read_bytes() == lockformat.dumps(lock)

"""The `lrc` command line through a real subprocess: exit codes, output formats, import hygiene."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from support import REPO, run_lrc

DIAG_LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (error|warning)\[(?P<code>LRC\d{4})\]: .+$", re.M)


def _break_workload(project: Path) -> Path:
    path = project / "specs/workloads/triage.ap-inbox/workload.yaml"
    text = path.read_text().replace("title: AP inbox triage", "titel: AP inbox triage")
    path.write_text(text)
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("no_cache", ["", "1"], ids=["with-whatever-cache-the-tree-has", "LRC_NO_CACHE"])
def test_compile_check_passes_on_the_repository_and_writes_nothing(no_cache: str):
    before = _tree(REPO / "generated")
    res = run_lrc("compile", "--check", env={"LRC_NO_CACHE": no_cache} if no_cache else None)
    assert res.returncode == 0, res.stderr
    assert "up to date" in res.stdout
    assert _tree(REPO / "generated") == before


def test_compile_check_fails_when_the_lock_is_stale(project_copy: Path):
    lock = project_copy / "generated/demo/plan.lock"
    lock.write_bytes(lock.read_bytes().replace(b'"n_per_cell": 15', b'"n_per_cell": 14'))
    before = _tree(project_copy / "generated")
    res = run_lrc("compile", "--check", "--project", str(project_copy))
    assert res.returncode == 1
    assert "generated/demo/plan.lock:" not in res.stdout
    assert "error[LRC7001]: generated/demo/plan.lock is out of date" in res.stderr
    assert _tree(project_copy / "generated") == before


def test_compile_check_fails_when_the_lock_is_missing(project_copy: Path):
    (project_copy / "generated/demo/plan.lock").unlink()
    res = run_lrc("compile", "--check", "--project", str(project_copy))
    assert res.returncode == 1
    assert "error[LRC7002]" in res.stderr
    assert not (project_copy / "generated/demo/plan.lock").exists()


def test_spec_error_text_format_names_file_line_column_code_pointer_and_hint(project_copy: Path):
    _break_workload(project_copy)
    res = run_lrc("compile", "--project", str(project_copy))
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    lines = [m.groupdict() for m in DIAG_LINE.finditer(res.stderr)]
    codes = {(d["path"], d["code"]) for d in lines}
    assert ("specs/workloads/triage.ap-inbox/workload.yaml", "LRC2003") in codes  # unknown field 'titel'
    assert ("specs/workloads/triage.ap-inbox/workload.yaml", "LRC2002") in codes  # missing 'title'
    assert "at /titel" in res.stderr
    assert "hint: did you mean 'title'?" in res.stderr
    assert "nothing written" in res.stderr


def test_spec_error_json_format_validates_against_the_published_schema(project_copy: Path):
    _break_workload(project_copy)
    res = run_lrc("compile", "--format", "json", "--project", str(project_copy))
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    schema = json.loads((REPO / "schemas/diagnostics.schema.json").read_text())
    Draft202012Validator(schema).validate(doc)
    assert doc["format_version"] == 1 and doc["ok"] is False
    unknown = [d for d in doc["diagnostics"] if d["code"] == "LRC2003"]
    assert unknown and unknown[0]["pointer"] == "/titel" and unknown[0]["line"] == 6 and unknown[0]["column"] == 1


def test_spec_error_github_format_emits_workflow_annotations(project_copy: Path):
    _break_workload(project_copy)
    res = run_lrc("compile", "--format", "github", "--project", str(project_copy))
    assert res.returncode == 1
    assert "::error file=specs/workloads/triage.ap-inbox/workload.yaml,line=6,col=1,title=LRC2003::unknown field 'titel'" in res.stdout


def test_usage_errors_exit_2():
    assert run_lrc().returncode == 2
    assert run_lrc("compile", "--format", "yaml").returncode == 2
    assert run_lrc("no-such-command").returncode == 2
    assert run_lrc("execute", "generated/demo/plan.lock").returncode == 2  # --out is required


def test_no_project_is_a_usage_error(tmp_path: Path):
    res = run_lrc("compile", cwd=tmp_path)
    assert res.returncode == 2
    assert "no lrc project" in res.stderr and "Traceback" not in res.stderr


def test_explain_prints_long_help_for_known_codes_and_refuses_unknown():
    res = run_lrc("explain", "LRC5001")
    assert res.returncode == 0 and "changed without version bump" in res.stdout and "lrc bump" in res.stdout
    assert run_lrc("explain", "LRC0000").returncode == 2


def test_every_code_has_an_explanation():
    from lrc.compiler.codes import CODES

    for code, entry in CODES.items():
        assert re.fullmatch(r"LRC\d{4}", code)
        assert entry.title and len(entry.explanation) > 30, code


def test_execute_refuses_a_missing_lock_with_exit_4(tmp_path: Path):
    res = run_lrc("execute", str(tmp_path / "nope.lock"), "--out", str(tmp_path / "out"))
    assert res.returncode == 4
    assert "cannot read" in res.stderr and "Traceback" not in res.stderr


def test_execute_refuses_a_file_that_is_not_a_lock(tmp_path: Path):
    bogus = tmp_path / "plan.lock"
    bogus.write_text("{not json")
    res = run_lrc("execute", str(bogus), "--out", str(tmp_path / "out"))
    assert res.returncode == 4 and "not a plan.lock" in res.stderr


def test_execute_refuses_a_lock_of_another_format(tmp_path: Path):
    lock = json.loads((REPO / "generated/demo/plan.lock").read_text())
    lock["lock_format"] = 99
    path = tmp_path / "plan.lock"
    path.write_text(json.dumps(lock))
    res = run_lrc("execute", str(path), "--out", str(tmp_path / "out"))
    assert res.returncode == 4 and "newer than this lrc understands" in res.stderr


def _imported_modules(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> set[str]:
    import os
    import subprocess

    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "lrc.compiler.cli", *args], cwd=cwd,
                         env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    names = set()
    for line in res.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.split(".")[0] in ("litellm", "polars", "openai", "tqdm")
                  or n.startswith(("lrc.runtime.execute", "lrc.runtime.models", "lrc.runtime.report", "lrc.runtime.workloads")))


def test_compile_path_imports_neither_litellm_nor_polars_nor_the_runtime(project_copy: Path, tmp_path: Path):
    """Cold (no .lrc-cache/, as on a fresh clone or CI), warm (a cache left by an earlier
    compile, as after `python3 dev.py demo`) and with the cache turned off: the project is a
    copy, so what earlier commands left in the repository's tree cannot decide the outcome."""
    env = {"LRC_CACHE_KEY_FILE": str(tmp_path / "cache.key")}
    cold = _imported_modules(["compile", "--check"], project_copy, env)
    assert not (project_copy / ".lrc-cache").exists()  # --check writes nothing, not even a cache
    assert "ruamel.yaml" in cold and "jinja2" in cold and "jsonschema_rs" in cold  # the probe does see imports
    assert "jsonschema" not in cold  # clean specs never need Python jsonschema (it words refusals)
    assert _forbidden(cold) == []

    assert run_lrc("compile", cwd=project_copy, env=env).returncode == 0  # leaves a warm cache behind
    assert (project_copy / ".lrc-cache").is_dir()
    warm = _imported_modules(["compile", "--check"], project_copy, env)
    assert "lrc.compiler.pipeline" in warm  # the probe does see imports
    assert _forbidden(warm) == []

    uncached = _imported_modules(["compile", "--check"], project_copy, {**env, "LRC_NO_CACHE": "1"})
    assert "jsonschema_rs" in uncached and _forbidden(uncached) == []

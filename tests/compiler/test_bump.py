"""`lrc bump ID`: one token of the author's file changes, nothing else.

Specs are bumped in a temporary project copy. Code components are never bumped in the real
runtime/: the token surgery (`_replace_token`, `_only_version_changed`) is tested on a
temporary Python file, and the full code path of `bump()` on a copy of runtime/.
"""

from __future__ import annotations

import re

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.compiler.bump import _only_version_changed, _replace_token, bump
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.pipeline import compile_project
from lrc.compiler.versioning import LEDGER

WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"
EDITION = "specs/editions/demo.yaml"
LRC_SCRIPT = Path(sys.executable).with_name("lrc")


def diff_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def version_of(path: Path) -> int:
    """The `version:` a spec file carries now (the tests follow the re-locks, not a hard-coded number)."""
    return int(re.search(r"(?m)^version: (\d+)\s*(?:#.*)?$", path.read_text(encoding="utf-8-sig")).group(1))


def component_version_of(path: Path) -> int:
    return int(re.search(r"(?m)^COMPONENT_VERSION = (\d+)\s*(?:#.*)?$", path.read_text(encoding="utf-8")).group(1))


def run_bump(root: Path, ident: str):
    diags = Diagnostics()
    return bump(root, ident, diags), diags


@pytest.mark.parametrize("rel,ident", [
    (WORKLOAD, "triage.ap-inbox"),
    (EDITION, "demo"),
    ("specs/standard/ledgerrate.yaml", "ledgerrate"),
    ("specs/systems/agentic.yaml", "agentic"),
])
def test_bump_changes_only_the_version_token(fresh_project: Path, rel: str, ident: str) -> None:
    path = fresh_project / rel
    before = path.read_bytes()
    old = int(re.search(rb"(?m)^version: (\d+)$", before).group(1))
    done, diags = run_bump(fresh_project, ident)
    assert not diags.items
    assert (done.path, done.id, done.old, done.new) == (rel, ident, old, old + 1)
    after = path.read_bytes()
    assert diff_lines(before.decode(), after.decode()) == [f"-version: {old}\n", f"+version: {old + 1}\n"]
    # Byte for byte: the same file with one character replaced.
    i = before.index(f"\nversion: {old}\n".encode()) + len(b"\nversion: ")
    assert after == before[:i] + str(old + 1).encode() + before[i + len(str(old)):]


def test_bump_keeps_comments_and_odd_formatting(fresh_project: Path) -> None:
    path = fresh_project / "specs/systems/single-shot.yaml"
    old = version_of(path)
    text = path.read_text(encoding="utf-8")
    assert f"version: {old}\n" in text and "max_steps: 1\n" in text
    text = text.replace(f"version: {old}\n", f"version:    {old}   # bumped by lrc bump\n")
    text = text.replace("max_steps: 1\n", "max_steps:   1     # one request\n\n\n")
    path.write_text(text, encoding="utf-8")
    done, diags = run_bump(fresh_project, "single-shot")
    assert done and not diags.items
    after = path.read_text(encoding="utf-8")
    assert after == text.replace(f"version:    {old}   #", f"version:    {old + 1}   #")


def test_bump_keeps_crlf_and_bom(fresh_project: Path) -> None:
    path = fresh_project / WORKLOAD
    original = path.read_text(encoding="utf-8")
    old = version_of(path)
    crlf = ("\ufeff" + original.replace("\n", "\r\n")).encode("utf-8")
    path.write_bytes(crlf)
    done, diags = run_bump(fresh_project, "triage.ap-inbox")
    assert done and not diags.items, diags.sorted()
    after = path.read_bytes()
    assert f"\r\nversion: {old}\r\n".encode() in crlf
    assert after == crlf.replace(f"\r\nversion: {old}\r\n".encode(), f"\r\nversion: {old + 1}\r\n".encode(), 1)
    assert b"\n" not in after.replace(b"\r\n", b"")


def test_bump_keeps_mixed_line_endings(fresh_project: Path) -> None:
    """A file with one CRLF line among LF lines keeps exactly its endings (regression)."""
    path = fresh_project / "specs/systems/agentic.yaml"
    old = version_of(path)
    assert b"title: Agentic\n" in path.read_bytes()
    mixed = path.read_bytes().replace(b"title: Agentic\n", b"title: Agentic\r\n")
    path.write_bytes(mixed)
    done, diags = run_bump(fresh_project, "agentic")
    assert done and not diags.items
    assert f"\nversion: {old}\n".encode() in mixed
    assert path.read_bytes() == mixed.replace(f"\nversion: {old}\n".encode(), f"\nversion: {old + 1}\n".encode())


def test_bump_with_a_bom_and_the_version_on_line_one(fresh_project: Path) -> None:
    path = fresh_project / "specs/systems/agentic.yaml"
    old = version_of(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    body = [line for line in lines if not line.startswith("version:")]
    data = (f"\ufeffversion: {old}\n" + "".join(body)).encode("utf-8")
    path.write_bytes(data)
    done, diags = run_bump(fresh_project, "agentic")
    assert done and not [d for d in diags.items if d.severity == "error"], diags.sorted()
    assert path.read_bytes() == data.replace(f"version: {old}".encode(), f"version: {old + 1}".encode(), 1)


def test_bump_skips_versions_already_recorded(fresh_project: Path) -> None:
    old = version_of(fresh_project / WORKLOAD)
    with (fresh_project / LEDGER).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"digest": "sha256:" + "0" * 64, "id": "triage.ap-inbox", "kind": "workload", "version": old + 1}) + "\n")
    done, _ = run_bump(fresh_project, "triage.ap-inbox")
    assert (done.old, done.new) == (old, old + 2)


def test_bump_twice(fresh_project: Path) -> None:
    old = int(re.search(r"(?m)^version: (\d+)$", (fresh_project / EDITION).read_text(encoding="utf-8")).group(1))
    assert run_bump(fresh_project, "demo")[0].new == old + 1
    assert run_bump(fresh_project, "demo")[0].new == old + 2
    assert f"\nversion: {old + 2}\n" in (fresh_project / EDITION).read_text(encoding="utf-8")


def test_bump_refuses_an_unknown_id_with_did_you_mean(fresh_project: Path) -> None:
    before = {p: p.read_bytes() for p in (fresh_project / "specs").rglob("*") if p.is_file()}
    done, diags = run_bump(fresh_project, "triage.ap-inbx")
    assert done is None
    [diag] = diags.items
    assert diag.code == "LRC8001"
    assert diag.summary == "no spec or code component has id 'triage.ap-inbx'"
    assert diag.hint == "did you mean 'triage.ap-inbox'?"
    assert before == {p: p.read_bytes() for p in (fresh_project / "specs").rglob("*") if p.is_file()}


def test_bump_refuses_a_version_token_it_cannot_edit_alone(fresh_project: Path) -> None:
    """`version: 0x1` is the integer 1, but the text is not `1`: LRC8002, file untouched."""
    path = fresh_project / "specs/systems/agentic.yaml"
    old = version_of(path)
    text = path.read_text(encoding="utf-8").replace(f"version: {old}\n", f"version: {old:#x}\n")
    assert f"version: {old:#x}\n" in text
    path.write_text(text, encoding="utf-8")
    done, diags = run_bump(fresh_project, "agentic")
    assert done is None
    assert [d.code for d in diags.items] == ["LRC8002"]
    assert path.read_text(encoding="utf-8") == text


def test_bumped_project_compiles_once_references_follow(fresh_project: Path) -> None:
    done, _ = run_bump(fresh_project, "triage.ap-inbox")
    result = compile_project(fresh_project)
    assert [d.code for d in result.diagnostics.sorted() if d.severity == "error"] == ["LRC3001"]  # the edition pins the old version
    path = fresh_project / EDITION
    old_pin, new_pin = f"triage.ap-inbox.v{done.old}", f"triage.ap-inbox.v{done.new}"
    assert old_pin in path.read_text(encoding="utf-8")
    path.write_text(path.read_text(encoding="utf-8").replace(old_pin, new_pin), encoding="utf-8")
    run_bump(fresh_project, "demo")
    result = compile_project(fresh_project)
    assert not result.diagnostics.has_errors


# -- Python components: token surgery on a temporary file ------------------------------------

MODULE = '''"""A component."""

# COMPONENT_VERSION = 1 in a comment stays as it is
COMPONENT_ID = "example.component"
COMPONENT_VERSION = 1  # bump me

def f(x):
    return x * 1
'''


def test_replace_token_on_a_python_file(tmp_path: Path) -> None:
    path = tmp_path / "component.py"
    path.write_text(MODULE, encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    edited = _replace_token(text, 5, 21, "1", "2")
    assert edited is not None
    assert diff_lines(text, edited) == ["-COMPONENT_VERSION = 1  # bump me\n", "+COMPONENT_VERSION = 2  # bump me\n"]
    assert _only_version_changed(text, edited, 2)
    path.write_text(edited, encoding="utf-8")
    assert "# COMPONENT_VERSION = 1 in a comment" in path.read_text(encoding="utf-8")


def test_replace_token_refuses_a_wrong_position() -> None:
    assert _replace_token(MODULE, 5, 20, "1", "2") is None
    assert _replace_token(MODULE, 8, 16, "1", "2") is not None  # a position is a position ...
    assert not _only_version_changed(MODULE, _replace_token(MODULE, 8, 16, "1", "2"), 2)  # ... the AST check catches it


def test_only_version_changed_rejects_other_edits() -> None:
    assert not _only_version_changed(MODULE, MODULE.replace("COMPONENT_VERSION = 1", "COMPONENT_VERSION = 2").replace("x * 1", "x * 3"), 2)
    assert not _only_version_changed(MODULE, MODULE, 2)  # nothing changed: the new version is not there
    assert not _only_version_changed(MODULE, MODULE.replace("COMPONENT_VERSION = 1", "COMPONENT_VERSION = 3"), 2)
    # Comments and formatting are not part of the syntax tree.
    assert _only_version_changed(MODULE, MODULE.replace("COMPONENT_VERSION = 1  # bump me", "COMPONENT_VERSION = 2  # bumped"), 2)


def test_bump_code_component_in_a_runtime_copy(fresh_project: Path, runtime_copy) -> None:
    runtime = runtime_copy(fresh_project)
    path = runtime / "workloads/triage_ap_inbox/tools.py"
    before = path.read_text(encoding="utf-8")
    old = component_version_of(path)
    done, diags = run_bump(fresh_project, "triage.ap-inbox.tools")
    assert not diags.items
    assert (done.path, done.old, done.new) == ("runtime/workloads/triage_ap_inbox/tools.py", old, old + 1)
    after = path.read_text(encoding="utf-8")
    assert diff_lines(before, after) == [f"-COMPONENT_VERSION = {old}\n", f"+COMPONENT_VERSION = {old + 1}\n"]


# -- the command line ---------------------------------------------------------------------------


def _lrc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [str(LRC_SCRIPT)] if LRC_SCRIPT.exists() else [sys.executable, "-m", "lrc.compiler.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LRC_")}
    return subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_cli_bump_prints_old_and_new_version(fresh_project: Path, tmp_path: Path) -> None:
    old = version_of(fresh_project / WORKLOAD)
    proc = _lrc("bump", "triage.ap-inbox", "--project", str(fresh_project), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{WORKLOAD}: triage.ap-inbox {old} -> {old + 1}" in proc.stdout.splitlines()
    assert f"\nversion: {old + 1}\n" in (fresh_project / WORKLOAD).read_text(encoding="utf-8")


def test_cli_bump_unknown_id_exits_1(fresh_project: Path, tmp_path: Path) -> None:
    proc = _lrc("bump", "demo-edition", "--project", str(fresh_project), cwd=tmp_path)
    assert proc.returncode == 1
    assert "error[LRC8001]: no spec or code component has id 'demo-edition'" in proc.stderr
    assert "hint: did you mean 'demo'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_bump_json(fresh_project: Path) -> None:
    old = version_of(fresh_project / "specs/systems/agentic.yaml")
    proc = _lrc("bump", "agentic", "--format", "json", cwd=fresh_project / "specs" / "systems")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["format_version"] == 1 and doc["diagnostics"] == []
    assert doc["bumped"] == [{"path": "specs/systems/agentic.yaml", "id": "agentic", "old": old, "new": old + 1}]

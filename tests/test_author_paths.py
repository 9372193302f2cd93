"""The spec author's paths that used to end in a wall: `lrc explain` without a code, a spec
passed where a lock belongs, one stale-generated/ message instead of one per file, template
errors with their line, and every location of `lrc diff` and of the gate a line of its file.

CLI behaviour is checked through a subprocess (support.run_lrc) on throw-away copies of the
repository's specs/ and schemas/.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from helpers.project import compiled_copy, copy_project, demo_only, replace_in
from support import REPO, run_lrc

from lrc.compiler.codes import CODES, RANGES
from lrc.compiler.pipeline import compile_project

pytestmark = pytest.mark.usefixtures("code_is_locked")  # conftest says why

WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"
SYSTEM_PROMPT = "specs/workloads/triage.ap-inbox/prompts/system.j2"
DEMO = "specs/editions/demo.yaml"


@pytest.fixture(scope="module")
def _baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo edition alone is enough here (the file: 49.7 -> 34.5 s of CPU on a slow 2-core
    host with the warm cache over a cold compile per test)."""
    return compiled_copy(tmp_path_factory.mktemp("paths-baseline") / "project", keep=demo_only)


@pytest.fixture
def project(_baseline: Path, tmp_path: Path) -> Path:
    return copy_project(_baseline, tmp_path / "project")


def test_explain_without_a_code_lists_every_code_grouped_by_range() -> None:
    for args in (("explain",), ("explain", "--list")):
        res = run_lrc(*args)
        assert res.returncode == 0, res.stderr
        assert "usage:" not in res.stderr
        heading = None
        seen: dict[str, str] = {}
        for line in res.stdout.splitlines():
            if line.endswith(":") and not line.startswith(" "):
                heading = line[:-1]
            elif m := re.fullmatch(r"  (LRC\d{4})  (.+)", line):
                assert m[1] not in seen, f"{m[1]} listed twice"
                seen[m[1]] = heading
                assert m[2] == CODES[m[1]].title
        assert set(seen) == set(CODES)
        for code, heading in seen.items():  # each under its own range (longest prefix wins)
            prefix = max((p for p, t in RANGES if code.startswith(p)), key=len)
            assert heading == dict(RANGES)[prefix], (code, heading)
    # Every range heading appears in the module docstring, where the ranges are documented.
    import lrc.compiler.codes as codes

    for _, title in RANGES:
        assert title.split(" ", 1)[0] in codes.__doc__


def test_explain_refuses_a_code_with_list_and_an_unknown_code() -> None:
    assert run_lrc("explain", "--list", "LRC1001").returncode == 2
    res = run_lrc("explain", "LRC0000")
    assert res.returncode == 2 and "unknown diagnostic code" in res.stderr


# -- compile --check: one stale generated/, one diagnostic ------------------------------------------

def test_a_forgotten_compile_is_one_diagnostic_listing_every_file(project: Path) -> None:
    old = int(re.search(r"(?m)^version: (\d+)$", (project / WORKLOAD).read_text(encoding="utf-8")).group(1))
    new = old + 1  # a project compiled from scratch: its ledger records only the current version
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    assert run_lrc("bump", "--all-required", "--update-pins", cwd=project).returncode == 0
    res = run_lrc("compile", "--check", "--format", "json", cwd=project)
    assert res.returncode == 1
    [diag] = json.loads(res.stdout)["diagnostics"]
    assert diag["code"] == "LRC7001" and diag["summary"].startswith("generated/ is stale: run `lrc compile`")
    notes = diag["notes"]
    assert "out of date: generated/demo/plan.lock" in notes and "out of date: generated/ledger.jsonl" in notes
    assert any(n.startswith(f"missing: generated/demo/prompts/triage.ap-inbox.v{new}/") for n in notes)
    assert any(n.startswith(f"not produced by `lrc compile` (it removes it): generated/demo/prompts/triage.ap-inbox.v{old}/") for n in notes)
    assert f"({len(notes)} generated files differ" in diag["summary"] and len(notes) > 5
    gh = run_lrc("compile", "--check", "--format", "github", cwd=project)
    annotations = [line for line in gh.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith("::error title=LRC7001::generated/ is stale")
    assert "%0Anote: out of date: generated/demo/plan.lock" in annotations[0]
    text = run_lrc("compile", "--check", cwd=project)
    assert text.stderr.count("error[LRC7001]") == 1 and "lrc compile --check: 1 problem(s)." in text.stderr


@pytest.mark.parametrize("damage,code", [
    ("remove-lock", "LRC7002"), ("stale-lock", "LRC7001"), ("extra-file", "LRC7003"), ("ledger", "LRC7004")])
def test_one_differing_generated_file_is_reported_at_that_file(project: Path, damage: str, code: str) -> None:
    lock = project / "generated/demo/plan.lock"
    target = {"remove-lock": lock, "stale-lock": lock, "extra-file": project / "generated/demo/extra.txt",
              "ledger": project / "generated/ledger.jsonl"}[damage]
    if damage == "remove-lock":
        lock.unlink()
    elif damage == "extra-file":
        target.write_text("x\n", encoding="utf-8")
    else:
        target.write_bytes(target.read_bytes() + b"\n")
    res = run_lrc("compile", "--check", "--format", "json", cwd=project)
    assert res.returncode == 1
    [diag] = json.loads(res.stdout)["diagnostics"]
    assert (diag["code"], diag["path"]) == (code, target.relative_to(project).as_posix())


# -- execute / report given a spec ---------------------------------------------------------------------

@pytest.mark.parametrize("command", ["execute", "report"])
def test_a_spec_where_a_lock_belongs_names_the_lock_to_pass(project: Path, command: str) -> None:
    out = project / "runs"
    res = run_lrc(command, DEMO, "--out", str(out), cwd=project)
    assert res.returncode == 2, res.stderr
    assert "error[LRC8301]: specs/editions/demo.yaml is an edition spec, not a plan.lock; pass its lock: generated/demo/plan.lock" in res.stderr
    assert f"hint: lrc {command} generated/demo/plan.lock --out ..." in res.stderr
    assert "Traceback" not in res.stderr and "invalid JSON" not in res.stderr and not out.exists()
    # From another folder the paths are the ones to type there.
    res = run_lrc(command, "demo.yaml", "--out", str(out), cwd=project / "specs/editions")
    assert res.returncode == 2 and "pass its lock: ../../generated/demo/plan.lock" in res.stderr
    # A folder holding the lock.
    res = run_lrc(command, "generated/demo", "--out", str(out), cwd=project)
    assert res.returncode == 2 and "generated/demo is a folder; pass its lock: generated/demo/plan.lock" in res.stderr


@pytest.mark.parametrize("command", ["execute", "report"])
def test_a_spec_of_an_edition_not_compiled_yet_says_compile_first(project: Path, command: str) -> None:
    shutil.rmtree(project / "generated/demo")
    res = run_lrc(command, DEMO, "--out", str(project / "runs"), cwd=project)
    assert res.returncode == 2
    assert "edition demo is not compiled yet" in res.stderr and "run `lrc compile` first; it writes generated/demo/plan.lock" in res.stderr
    res = run_lrc(command, WORKLOAD, "--out", str(project / "runs"), cwd=project)
    assert res.returncode == 2 and "is a workload spec, not a plan.lock" in res.stderr and "run `lrc compile` first" in res.stderr


def test_a_workload_spec_lists_the_compiled_locks_and_a_broken_lock_is_still_refused(project: Path, tmp_path: Path) -> None:
    res = run_lrc("execute", WORKLOAD, "--out", str(project / "runs"), cwd=project)
    assert res.returncode == 2 and "hint: compiled locks: generated/demo/plan.lock" in res.stderr
    for name, body in (("bad.lock", "{}\n"), ("plan.yaml.lock", "not json\n")):
        (tmp_path / name).write_text(body, encoding="utf-8")
        res = run_lrc("execute", str(tmp_path / name), "--out", str(tmp_path / "runs"), cwd=project)
        assert res.returncode == 4 and "LRC8301" not in res.stderr and "Traceback" not in res.stderr


# -- template errors name their line ---------------------------------------------------------------------

USER_PROMPT = "specs/workloads/triage.ap-inbox/prompts/single-shot.user.j2"


@pytest.mark.parametrize("source,code,line", [
    ("Batch:\n\n{{ item.batch_id }}\n{{ customer }}\n", "LRC4002", 4),  # undefined variable (static)
    ("Batch:\n{{ item.batch_id }}\n\n\n{{ item.no_such_field }}\n", "LRC4002", 5),  # undefined attribute (render)
    ("Batch:\n{{ item.batch_id.__class__ }}\n", "LRC4003", 2),  # sandbox: attribute escape
    ("a\nb\n{% set l = [] %}{{ l.append(1) }}\n", "LRC4003", 3),  # sandbox: mutation
    ("a\n\n\n{{ 'ab' * 300000 }}\n", "LRC4004", 4),  # too large: multiplication
    ("a\n{% for i in range(100) %}\n{{ 'y' * 9000 }}\n{% endfor %}\n", "LRC4004", 3),  # too large: the output cap
    ("a\n{{ '%99999d' | format(1) }}\n", "LRC4004", 2),  # too large: a format width
    ("a\n{% if true %}\n{{ 1 // 0 }}\n{% endif %}\n", "LRC4001", 3),  # runtime error
    ("a\n\n{{ item.emails | random }}\n", "LRC4001", 3),  # a filter the sandbox removed
    ("a\n{% for e in item.emails %}\n{{ e.subject\n", "LRC4001", 3),  # syntax error
])
def test_template_errors_name_the_template_line(project: Path, source: str, code: str, line: int) -> None:
    (project / USER_PROMPT).write_text(source, encoding="utf-8")
    result = compile_project(project)  # the other specs come from the copied cache; this one is compiled
    errors = [d for d in result.diagnostics.sorted() if d.severity == "error"]
    assert [(d.code, d.path, d.line, d.column) for d in errors] == [(code, USER_PROMPT, line, 1)], \
        [(d.code, d.line, d.summary) for d in errors]


# -- a changed inlined file is located in that file (the gate, lrc diff) -----------------------------------

OUTPUT_SCHEMA = "specs/workloads/triage.ap-inbox/output.schema.json"


def _lines(project: Path, rel: str) -> list[str]:
    return (project / rel).read_text(encoding="utf-8").split("\n")


def _change_prompt(project: Path, how: str) -> tuple[str, int]:
    """Edit the system prompt; return (file, the 1-based line of the change in the new text)."""
    path = project / SYSTEM_PROMPT
    lines = path.read_text(encoding="utf-8").split("\n")
    if how == "middle":
        lines[3] += " (edited)"
        at = 4
    elif how == "first":
        lines[0] = "Edited. " + lines[0]
        at = 1
    elif how == "insert":
        lines.insert(2, "A new second rule.")
        at = 3
    elif how == "delete":
        del lines[4]
        at = 5
    else:  # append at the end
        at = len([x for x in lines if x is not None]) + (0 if lines[-1] == "" else 1)
        lines = lines[:-1] + ["One more closing line.", ""] if lines[-1] == "" else lines + ["One more closing line."]
    path.write_text("\n".join(lines), encoding="utf-8")
    return SYSTEM_PROMPT, at


def _change_schema(project: Path, how: str) -> tuple[str, int]:
    path = project / OUTPUT_SCHEMA
    text = path.read_text(encoding="utf-8")
    key = {"schema-email-id": '"email_id": {"type": "string", "minLength": 1}', "schema-description": '"description": "One label'}[how]
    assert key in text
    new = key.replace('"minLength": 1', '"minLength": 2') if how == "schema-email-id" else key.replace("One label", "Exactly one label")
    path.write_text(text.replace(key, new, 1), encoding="utf-8")
    at = next(i for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1) if new in line)
    return OUTPUT_SCHEMA, at


SCENARIOS = ["middle", "first", "insert", "delete", "append", "schema-email-id", "schema-description"]


def _apply(project: Path, scenario: str) -> tuple[str, int]:
    return _change_schema(project, scenario) if scenario.startswith("schema-") else _change_prompt(project, scenario)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_change_in_an_inlined_file_is_reported_at_its_line_too(project: Path, scenario: str) -> None:
    rel, at = _apply(project, scenario)
    res = run_lrc("compile", "--check", "--format", "json", cwd=project)
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    Draft202012Validator(json.loads((REPO / "schemas/diagnostics.schema.json").read_text(encoding="utf-8"))).validate(doc)
    [gate] = [d for d in doc["diagnostics"] if d["code"] == "LRC5001"]
    assert (gate["path"], gate["line"]) == (WORKLOAD, 5)  # the version line, as before
    assert {"path": rel, "line": at} in gate["related"]
    assert any(n.startswith("changed: ") and n.endswith(f"({rel}:{at})") for n in gate["notes"])
    gh = run_lrc("compile", "--check", "--format", "github", cwd=project).stdout.splitlines()
    main = next(line for line in gh if line.startswith(f"::error file={WORKLOAD},line=5,"))
    assert "%0Anote: changed: " in main  # the notes are kept
    assert any(line.startswith(f"::error file={rel},line={at},title=LRC5001::") for line in gh)  # a line the PR diff shows


@pytest.mark.parametrize("scenario", SCENARIOS + ["workload-field", "edition-pin"])
def test_every_diff_location_is_a_line_of_the_file_it_names(project: Path, scenario: str) -> None:
    import subprocess

    env_git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*env_git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*env_git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*env_git, "commit", "-q", "-m", "base"], cwd=project, check=True)
    expected = None
    if scenario == "workload-field":
        replace_in(project / WORKLOAD, "title: AP inbox triage", "title: AP inbox triage (edited)")
        replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    elif scenario == "edition-pin":
        replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
        assert run_lrc("bump", "--all-required", "--update-pins", cwd=project).returncode == 0
    else:
        expected = _apply(project, scenario)
    res = run_lrc("diff", "--format", "json", cwd=project)
    assert res.returncode == 2, res.stderr
    doc = json.loads(res.stdout)
    located = 0
    for spec in doc["specs"]:
        for change in spec["changes"]:
            if spec["kind"] == "code":
                continue
            rel = change["file"] or spec["new"]["path"]
            assert change["line"] is not None
            n = len(_lines(project, rel))
            assert 1 <= change["line"] <= n, (scenario, change)
            located += 1
            if change["file"] is not None and expected is not None:
                assert (change["file"], change["line"]) == expected
    assert located

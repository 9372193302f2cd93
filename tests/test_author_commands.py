"""The author commands: `lrc diff`, `lrc bump --all-required`, `lrc explain`, `lrc render`,
`lrc seed new`, `lrc pricing snapshot`, and `--format text|json|github` on them.

Every command runs once or more through a real subprocess (exit codes, formats, JSON valid
against schemas/diagnostics.schema.json); `diff` is also unit-tested in-process on crafted
changes. Each test works on a throw-away project: the repository's specs/ and schemas/,
trimmed to the demo edition and compiled from scratch once per session (so the ledger holds
exactly what is compiled now, whatever others are editing); `--against GIT_REF` tests make a
git repository of their own in tmp (never the main repository).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from helpers.project import compiled_copy, copy_project, demo_only, replace_in
from support import REPO, pinned, run_lrc

from lrc.compiler import diff
from lrc.runtime.lock import codeprint

WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"
SYSTEM_PROMPT = "specs/workloads/triage.ap-inbox/prompts/system.j2"
EDITION = "specs/editions/demo.yaml"
SCHEMA = Draft202012Validator(json.loads((REPO / "schemas/diagnostics.schema.json").read_text(encoding="utf-8")))


# -- projects ------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def _baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled_copy(tmp_path_factory.mktemp("author-baseline") / "project", keep=demo_only)


@pytest.fixture
def project(_baseline: Path, tmp_path: Path) -> Path:
    """specs/, schemas/ and a freshly compiled generated/ (demo edition only), writable."""
    return copy_project(_baseline, tmp_path / "project")


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    res = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _commit(root: Path, message: str = "snapshot") -> str:
    if not (root / ".git").exists():
        _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", message)
    return _git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo_project(project: Path) -> Path:
    """The project as a git repository of its own with one commit."""
    _commit(project, "baseline")
    return project


def _version(path: Path) -> int:
    """The `version:` of a spec file as written (editions are bumped as their pins change)."""
    return int(re.search(r"(?m)^version: (\d+)$", path.read_text(encoding="utf-8")).group(1))


def _line_of(path: Path, prefix: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.startswith(prefix))


def _json(res: subprocess.CompletedProcess) -> dict:
    doc = json.loads(res.stdout)
    SCHEMA.validate(doc)
    assert doc["format_version"] == 1
    return doc


def _by_id(result: diff.DiffResult) -> dict[tuple[str, str], diff.Change]:
    return {(c.kind, c.id): c for c in result.changes}


# -- diff: unit tests on crafted changes ----------------------------------------------------------

def test_diff_of_an_unchanged_tree_is_empty(repo_project: Path) -> None:
    result = diff.run(repo_project, "HEAD")
    assert not result.failed and result.changes == []
    assert re.fullmatch(r"[0-9a-f]{40}", result.against["commit"])


def test_comment_and_formatting_changes_are_not_changes(repo_project: Path) -> None:
    path = repo_project / WORKLOAD
    text = path.read_text(encoding="utf-8")
    text = text.replace("title: AP inbox triage\n", "# a reviewer's note\ntitle:    'AP inbox triage'   # quoted now\n")
    path.write_text(text, encoding="utf-8")
    replace_in(repo_project / EDITION, "n_per_cell: 15", "n_per_cell: 15      # unchanged value, new comment")
    result = diff.run(repo_project, "HEAD")
    assert not result.failed, result.error
    assert result.changes == []


def test_prompt_change_at_the_same_version_requires_a_bump(repo_project: Path) -> None:
    version = _version(repo_project / WORKLOAD)
    replace_in(repo_project / SYSTEM_PROMPT, "You are", "You are a careful")
    result = diff.run(repo_project, "HEAD")
    assert not result.failed, result.error
    changes = _by_id(result)
    assert set(changes) == {("workload", "triage.ap-inbox")}
    c = changes[("workload", "triage.ap-inbox")]
    assert c.status == "changed" and c.old.version == c.new.version == version
    assert c.old.digest != c.new.digest
    pointers = {f.pointer for f in c.fields}
    assert {"/systems/single-shot/prompts/system", "/systems/agentic/prompts/system"} <= pointers
    shown = next(f for f in c.fields if f.pointer == "/systems/single-shot/prompts/system")
    assert shown.file == SYSTEM_PROMPT
    assert "You are a careful" in shown.new and "You are a careful" not in shown.old
    assert len(shown.old) <= diff.SHOW_CHARS + 2  # shortened around the difference
    assert c.bump_required and c.bump_command == "lrc bump triage.ap-inbox"
    assert result.bumps == ["triage.ap-inbox"]


def test_a_bumped_version_needs_no_bump_and_the_pin_change_shows_in_the_edition(repo_project: Path) -> None:
    replace_in(repo_project / SYSTEM_PROMPT, "You are", "You are a careful")
    old = _version(repo_project / WORKLOAD)
    new = old + 1
    replace_in(repo_project / WORKLOAD, f"\nversion: {old}\n", f"\nversion: {new}\n")
    replace_in(repo_project / EDITION, f"  - triage.ap-inbox.v{old}\n", f"  - triage.ap-inbox.v{new}\n")
    result = diff.run(repo_project, "HEAD")
    assert not result.failed, result.error
    changes = _by_id(result)
    wl = changes[("workload", "triage.ap-inbox")]
    assert (wl.old.version, wl.new.version) == (old, new) and not wl.bump_required
    assert "/version" in {f.pointer for f in wl.fields}
    ed = changes[("edition", "demo")]
    assert [(f.pointer, f.old, f.new) for f in ed.fields] == [("/workloads/1", f'"triage.ap-inbox.v{old}"', f'"triage.ap-inbox.v{new}"')]
    assert ed.bump_required and result.bumps == ["demo"]  # the edition changed at its recorded version
    version = _version(repo_project / EDITION)
    replace_in(repo_project / EDITION, f"\nversion: {version}\n", f"\nversion: {version + 1}\n")
    result = diff.run(repo_project, "HEAD")
    assert not result.failed and result.bumps == []
    assert {c.id for c in result.changes} == {"demo", "triage.ap-inbox"}


def test_added_and_removed_specs(repo_project: Path) -> None:
    extra = repo_project / "specs/editions/demo-two.yaml"
    extra.write_text((repo_project / EDITION).read_text(encoding="utf-8").replace("\nid: demo\n", "\nid: demo-two\n"), encoding="utf-8")
    result = diff.run(repo_project, "HEAD")
    assert not result.failed, result.error
    [added] = result.changes
    assert (added.status, added.kind, added.id, added.new.version, added.old) == ("added", "edition", "demo-two",
                                                                                  _version(extra), None)
    assert not added.bump_required and added.new.path == "specs/editions/demo-two.yaml"
    _commit(repo_project, "add demo-two")
    extra.unlink()
    result = diff.run(repo_project, "HEAD")
    [removed] = result.changes
    assert (removed.status, removed.id, removed.new, removed.old.path) == ("removed", "demo-two", None, "specs/editions/demo-two.yaml")
    assert not removed.bump_required


def test_against_an_older_commit(repo_project: Path) -> None:
    first = _git(repo_project, "rev-parse", "HEAD").strip()
    replace_in(repo_project / WORKLOAD, "title: AP inbox triage", "title: AP inbox triage, revised")
    _commit(repo_project, "retitle")
    assert diff.run(repo_project, "HEAD").changes == []
    result = diff.run(repo_project, first[:10])
    assert [f.pointer for f in result.changes[0].fields] == ["/title"]
    assert result.against["commit"] == first


def test_a_version_the_ledger_never_recorded_needs_no_bump(repo_project: Path) -> None:
    (repo_project / "generated/ledger.jsonl").unlink()
    replace_in(repo_project / WORKLOAD, "title: AP inbox triage", "title: AP inbox triage, revised")
    [c] = diff.run(repo_project, "HEAD").changes
    assert not c.bump_required and "not in the ledger" in c.reason


def test_diff_against_a_lock(project: Path) -> None:
    lock = project / "generated/demo/plan.lock"
    result = diff.run(project, str(lock))
    assert not result.failed and result.changes == []
    assert result.against["edition"] == "demo"
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    result = diff.run(project, str(lock))
    c = _by_id(result)[("workload", "triage.ap-inbox")]
    assert c.bump_required and c.new.path == WORKLOAD and c.old.path == WORKLOAD
    assert c.fields[0].line is not None  # located in the current spec file


def test_diff_against_a_tampered_or_missing_lock_is_an_error(project: Path, tmp_path: Path) -> None:
    data = json.loads((project / "generated/demo/plan.lock").read_text(encoding="utf-8"))
    data["plan"]["edition"]["spec"]["n_per_cell"] = 3
    bad = tmp_path / "tampered.lock"
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = diff.run(project, str(bad))
    assert result.failed and "modified after compilation" in result.error and result.error_code == "LRC8103"
    assert [d.code for d in result.diagnostics.items] == ["LRC8103"]
    result = diff.run(project, str(tmp_path / "missing.lock"))
    assert result.failed and "cannot read" in result.error and result.error_code == "LRC8101"


def test_diff_against_a_ref_whose_specs_do_not_compile(project: Path) -> None:
    system = project / "specs/systems/single-shot.yaml"
    good = system.read_text(encoding="utf-8")
    system.write_text(good + "timeout: 3\n", encoding="utf-8")  # an unknown field at that commit
    _commit(project, "broken")
    system.write_text(good, encoding="utf-8")
    result = diff.run(project, "HEAD")
    assert result.failed and result.error_code == "LRC8102"
    codes = [(d.code, d.path) for d in result.diagnostics.sorted()]
    assert ("LRC2003", "HEAD:specs/systems/single-shot.yaml") in codes and ("LRC8102", None) in codes


def test_code_component_changes_against_a_git_ref(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = project / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setattr(codeprint, "runtime_root", lambda: runtime)
    _commit(project, "with runtime")
    grading = runtime / "workloads/triage_ap_inbox/grading.py"
    tools = runtime / "workloads/triage_ap_inbox/tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "\n# a comment: not a change\n", encoding="utf-8")
    assert diff.run(project, "HEAD").changes == []
    grading.write_text(grading.read_text(encoding="utf-8") + "\n\ndef _unused_helper():\n    return 1\n", encoding="utf-8")
    result = diff.run(project, "HEAD")
    assert not result.failed, result.error
    [c] = result.changes
    from lrc.runtime.workloads.triage_ap_inbox import grading as triage_grading

    version = triage_grading.COMPONENT_VERSION
    assert (c.kind, c.id, c.old.version, c.new.version) == ("code", "triage.ap-inbox.grading", version, version)
    assert [f.file for f in c.fields] == ["runtime/workloads/triage_ap_inbox/grading.py"]
    assert c.bump_required and c.bump_command == "lrc bump triage.ap-inbox.grading"
    assert "runtime/workloads/triage_ap_inbox/grading.py: changed (sha256:" in diff.text(result)


def test_show_pair_cuts_long_values_around_the_first_difference() -> None:
    old = "x" * 500 + "old tail"
    new = "x" * 500 + "new tail"
    a, b = diff.show_pair(old, new)
    assert a.startswith("…") and "old tail" in a and "new tail" in b
    assert diff.show_pair(1, 2) == ("1", "2")
    assert diff.show_pair(diff.MISSING, {"a": 1}) == (None, '{"a":1}')


# -- diff through the command line -----------------------------------------------------------------

def test_cli_diff_exit_codes_and_formats(repo_project: Path) -> None:
    res = run_lrc("diff", cwd=repo_project)
    assert res.returncode == 0, res.stderr
    assert "no changes" in res.stdout
    replace_in(repo_project / SYSTEM_PROMPT, "You are", "You are a careful")

    res = run_lrc("diff", cwd=repo_project)
    assert res.returncode == 2, res.stderr
    assert "~ workload triage.ap-inbox" in res.stdout
    assert "bump required: run `lrc bump triage.ap-inbox`" in res.stdout
    assert "/systems/single-shot/prompts/system (specs/workloads/triage.ap-inbox/prompts/system.j2:1)" in res.stdout

    res = run_lrc("diff", "--format", "json", "--against", "HEAD", "--project", str(repo_project))
    assert res.returncode == 2
    doc = _json(res)
    assert doc["ok"] is True and doc["differs"] is True and doc["bump_commands"] == ["lrc bump triage.ap-inbox"]
    [entry] = doc["specs"]
    assert entry["kind"] == "workload" and entry["status"] == "changed" and entry["bump_required"] is True
    assert entry["old"]["digest"] != entry["new"]["digest"]

    res = run_lrc("diff", "--format", "github", cwd=repo_project)
    assert res.returncode == 2
    assert res.stdout.startswith("::error file=specs/workloads/triage.ap-inbox/workload.yaml,line=5,col=10,title=bump required::")


def test_cli_diff_errors_exit_1(repo_project: Path, tmp_path: Path) -> None:
    res = run_lrc("diff", "--against", "no-such-branch", cwd=repo_project)
    assert res.returncode == 1 and "unknown git ref 'no-such-branch'" in res.stderr and "Traceback" not in res.stderr
    res = run_lrc("diff", "--against", "no-such-branch", "--format", "json", cwd=repo_project)
    assert res.returncode == 1
    doc = _json(res)
    assert doc["ok"] is False and "unknown git ref" in doc["error"]
    assert [d["code"] for d in doc["diagnostics"]] == ["LRC8101"]
    res = run_lrc("diff", "--against", "no-such-branch", "--format", "github", cwd=repo_project)
    assert res.returncode == 1 and res.stdout.startswith("::error title=LRC8101::unknown git ref")
    assert "lrc: error[LRC8101]: unknown git ref 'no-such-branch'" in run_lrc("diff", "--against", "no-such-branch", cwd=repo_project).stderr

    plain = tmp_path / "plain"
    for name in ("specs", "schemas"):
        shutil.copytree(repo_project / name, plain / name)
    res = run_lrc("diff", cwd=plain)
    assert res.returncode == 1 and "not inside a git repository" in res.stderr and "error[LRC8101]" in res.stderr

    replace_in(repo_project / WORKLOAD, "title: AP inbox triage", "titel: AP inbox triage")
    res = run_lrc("diff", "--format", "json", cwd=repo_project)
    assert res.returncode == 1
    doc = _json(res)
    assert {d["code"] for d in doc["diagnostics"]} >= {"LRC2003"} and doc["ok"] is False
    res = run_lrc("diff", cwd=repo_project)
    assert res.returncode == 1 and "error[LRC2003]" in res.stderr and "does not compile" in res.stderr


def test_cli_diff_against_a_lock_file(project: Path) -> None:
    lock = project / "generated/demo/plan.lock"
    assert run_lrc("diff", "--against", str(lock), cwd=project).returncode == 0
    replace_in(project / WORKLOAD, "title: AP inbox triage", "title: AP inbox triage, revised")
    res = run_lrc("diff", "--against", "generated/demo/plan.lock", "--format", "json", cwd=project)
    assert res.returncode == 2
    doc = _json(res)
    assert doc["against"]["kind"] == "lock" and doc["against"]["edition"] == "demo"
    assert [c["pointer"] for c in doc["specs"][0]["changes"]] == ["/title"]


# -- bump --all-required ------------------------------------------------------------------------------

def test_bump_all_required_bumps_what_the_gate_refuses_and_lists_stale_pins(project: Path) -> None:
    replace_in(project / SYSTEM_PROMPT, "You are", "You are a careful")
    before = (project / WORKLOAD).read_text(encoding="utf-8")
    edition_before = (project / EDITION).read_bytes()
    old = _version(project / WORKLOAD)
    new = old + 1  # the ledger of a project compiled from scratch records only the current version
    pin_line = _line_of(project / EDITION, f"  - triage.ap-inbox.v{old}")
    res = run_lrc("bump", "--all-required", cwd=project)
    assert res.returncode == 0, res.stderr
    assert f"{WORKLOAD}: triage.ap-inbox {old} -> {new}" in res.stdout
    assert (f"specs/editions/demo.yaml:{pin_line}:5: edition demo pins triage.ap-inbox.v{old} at /workloads/1"
            f" -> write triage.ap-inbox.v{new}") in res.stdout
    assert "update them by hand" in res.stdout
    assert f"\nversion: {old}\n" in before
    assert (project / WORKLOAD).read_text(encoding="utf-8") == before.replace(f"\nversion: {old}\n", f"\nversion: {new}\n")
    assert (project / EDITION).read_bytes() == edition_before  # pins are never edited by lrc

    # The author updates the pin; now the edition changed at its recorded version.
    replace_in(project / EDITION, f"  - triage.ap-inbox.v{old}\n", f"  - triage.ap-inbox.v{new}\n")
    res = run_lrc("bump", "--all-required", "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    doc = _json(res)
    demo = _version(project / EDITION) - 1  # bumped by the command just run
    assert [(b["id"], b["old"], b["new"]) for b in doc["bumped"]] == [("demo", demo, demo + 1)] and doc["pins"] == []
    assert run_lrc("compile", cwd=project).returncode == 0
    res = run_lrc("bump", "--all-required", cwd=project)
    assert res.returncode == 0 and "Nothing to bump" in res.stdout


def test_bump_all_required_refuses_ids_and_needs_something(project: Path) -> None:
    res = run_lrc("bump", "--all-required", "demo", cwd=project)
    assert res.returncode == 2 and "not both" in res.stderr
    assert run_lrc("bump", cwd=project).returncode == 2


def test_bump_all_required_on_a_tree_with_errors_bumps_nothing(project: Path) -> None:
    replace_in(project / WORKLOAD, "title: AP inbox triage", "titel: AP inbox triage")
    before = (project / WORKLOAD).read_bytes()
    res = run_lrc("bump", "--all-required", "--format", "github", cwd=project)
    assert res.returncode == 1
    assert "::error file=specs/workloads/triage.ap-inbox/workload.yaml" in res.stdout
    assert (project / WORKLOAD).read_bytes() == before


# -- explain --------------------------------------------------------------------------------------------

def test_every_code_has_an_example_that_names_it() -> None:
    from lrc.compiler.code_examples import EXAMPLES
    from lrc.compiler.codes import CODES, explain

    assert sorted(set(CODES) - set(EXAMPLES)) == [], "codes without an example in compiler/code_examples.py"
    assert sorted(set(EXAMPLES) - set(CODES)) == [], "examples of codes that codes.py does not define"
    for code, example in EXAMPLES.items():
        snippet, _, reported = example.partition("\n\nlrc reports:\n")
        assert snippet.strip() and reported.strip(), code
        assert re.search(rf"(error|warning)\[{code}\]: ", reported), f"{code}: the example does not show its own code"
        assert "Example:" in explain(code) and reported.splitlines()[0].strip() in explain(code)


def test_cli_explain_prints_the_example() -> None:
    res = run_lrc("explain", "LRC3001")
    assert res.returncode == 0
    assert res.stdout.startswith("LRC3001: unknown reference\n")
    assert "Example:" in res.stdout and "error[LRC3001]: unknown workload 'triage.ap-inbox.v2'" in res.stdout


# -- render -----------------------------------------------------------------------------------------------

def _held_out_edition(project: Path, commitment: str, edition_id: str = "held") -> None:
    text = (project / EDITION).read_text(encoding="utf-8")
    text = text.replace("\nid: demo\n", f"\nid: {edition_id}\n")
    text = re.sub(r"(?m)^version: \d+$", "version: 1", text, count=1)
    text = re.sub(r"seed:\n  policy: public\n  value: \S+\n", f"seed:\n  policy: held-out\n  commitment: {commitment}\n", text)
    assert "held-out" in text
    (project / f"specs/editions/{edition_id}.yaml").write_text(text, encoding="utf-8")


def test_render_sample_is_the_locked_sample(project: Path) -> None:
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", cwd=project)
    assert res.returncode == 0, res.stderr
    lock = json.loads((project / "generated/demo/plan.lock").read_text(encoding="utf-8"))
    prompts = lock["plan"]["workloads"][pinned("triage.ap-inbox")]["prompts"]["single-shot"]
    assert prompts["system"]["sample"].rstrip("\n") in res.stdout and prompts["user"]["sample"].rstrip("\n") in res.stdout
    assert "locked sample render" in res.stdout

    res = run_lrc("render", pinned("triage.ap-inbox"), "--system", "agentic", "--format", "json", cwd=project)
    doc = _json(res)
    assert doc["source"] == "sample" and doc["item"] is None and doc["edition"] == "demo"
    agentic = lock["plan"]["workloads"][pinned("triage.ap-inbox")]["prompts"]["agentic"]
    assert doc["messages"] == [{"role": "system", "content": agentic["system"]["sample"]},
                               {"role": "user", "content": agentic["user"]["sample"]}]
    assert {t["function"]["name"] for t in doc["tools"]} >= {"submit_labels"}


def test_render_item_is_byte_identical_to_what_execute_sends(project: Path) -> None:
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import render_messages

    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--item", "3", "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    doc = _json(res)
    plan = json.loads((project / "generated/demo/plan.lock").read_text(encoding="utf-8"))["plan"]
    item = item_gen.generate(plan, plan["seed"]["value"])[pinned("triage.ap-inbox")][3]
    wl = plan["workloads"][pinned("triage.ap-inbox")]
    expected = render_messages(wl, "single-shot", item, plan["models"][doc["model"]])
    assert doc["messages"] == expected
    assert doc["item"]["index"] == 3 and doc["item"]["item_id"] == item.item_id

    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--item", "3", cwd=project)
    assert res.returncode == 0
    assert expected[1]["content"].rstrip("\n") in res.stdout and f"item 3 ({item.item_id})" in res.stdout


def test_render_attaches_the_file_for_a_file_capable_model(project: Path) -> None:
    text = (project / EDITION).read_text(encoding="utf-8").replace("\nid: demo\n", "\nid: files\n")
    text = text.replace("  - id: lrc/baseline\n", "  - id: lrc/baseline\n    accepts_files: true\n")
    (project / "specs/editions/files.yaml").write_text(text, encoding="utf-8")
    res = run_lrc("compile", cwd=project)
    assert res.returncode == 0, res.stderr
    args = ("render", "extract.invoice", "--system", "single-shot", "--edition", "files", "--model", "lrc/baseline", "--item", "0")
    res = run_lrc(*args, "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    doc = _json(res)
    file_part = doc["messages"][1]["content"][1]
    data = base64.b64decode(file_part["file"]["file_data"].split(",", 1)[1])
    facts = doc["item"]["files"][file_part["file"]["filename"]]
    assert facts == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    res = run_lrc(*args, cwd=project)
    assert res.returncode == 0
    assert f"[attachment invoice.pdf (application/pdf): {len(data):,} bytes, sha256:{facts['sha256']};" in res.stdout
    assert "base64" not in res.stdout
    # Without --model the text variant is shown, and the note names the file-capable model.
    res = run_lrc("render", "extract.invoice", "--system", "single-shot", "--edition", "files", cwd=project)
    assert res.returncode == 0 and "get the file attached instead: lrc/baseline" in res.stdout


def test_render_held_out_edition_needs_the_seed_file(project: Path, tmp_path: Path) -> None:
    seed_path = tmp_path / "held.seed"
    res = run_lrc("seed", "new", "--out", str(seed_path), cwd=project)
    assert res.returncode == 0, res.stderr
    commitment = re.search(r"commitment: (sha256:[0-9a-f]{64})\}", res.stdout).group(1)
    _held_out_edition(project, commitment)
    assert run_lrc("compile", cwd=project).returncode == 0
    base = ("render", "triage.ap-inbox", "--system", "single-shot", "--edition", "held", "--item", "0")
    res = run_lrc(*base, cwd=project)
    assert res.returncode == 4 and "--seed-file" in res.stderr
    assert run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--edition", "held", cwd=project).returncode == 0
    res = run_lrc(*base, "--seed-file", str(seed_path), "--format", "json", cwd=project)
    assert res.returncode == 0, res.stderr
    assert _json(res)["item"]["index"] == 0
    wrong = tmp_path / "wrong.seed"
    wrong.write_text("not the seed\n")
    res = run_lrc(*base, "--seed-file", str(wrong), cwd=project)
    assert res.returncode == 4 and "does not match" in res.stderr


def test_render_problems(project: Path) -> None:
    res = run_lrc("render", "triage.ap-inbx", "--system", "single-shot", cwd=project)
    assert res.returncode == 1 and f"did you mean {pinned('triage.ap-inbox')}?" in res.stderr and "error[LRC8202]" in res.stderr
    res = run_lrc("render", "execute.month-end", "--system", "single-shot", cwd=project)
    assert res.returncode == 1 and "with system(s) agentic, not 'single-shot'" in res.stderr and "error[LRC8202]" in res.stderr
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--item", "999", "--format", "json", cwd=project)
    doc = _json(res)
    assert res.returncode == 1 and "outside this edition's items" in doc["error"] and doc["ok"] is False
    assert [d["code"] for d in doc["diagnostics"]] == ["LRC8204"] and doc["format_version"] == 1
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--model", "lrc/orcle", "--format", "github", cwd=project)
    assert res.returncode == 1 and res.stdout.startswith("::error title=LRC8202::the edition does not run model 'lrc/orcle'")
    assert run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--item", "-1", cwd=project).returncode == 2
    assert run_lrc("render", "triage.ap-inbox", cwd=project).returncode == 2  # --system is required
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", "--edition", "nope", cwd=project)
    assert res.returncode == 1 and "no lock for edition 'nope'" in res.stderr and "error[LRC8201]" in res.stderr
    lock = project / "generated/demo/plan.lock"
    lock.write_bytes(lock.read_bytes().replace(b'"n_per_cell": 15', b'"n_per_cell": 14'))
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", cwd=project)
    assert res.returncode == 4 and "modified after compilation" in res.stderr and "Traceback" not in res.stderr
    assert "error[LRC8203]" in res.stderr


def test_render_with_several_editions_needs_edition_unless_demo(project: Path) -> None:
    shutil.copytree(project / "generated/demo", project / "generated/other")
    assert run_lrc("render", "triage.ap-inbox", "--system", "single-shot", cwd=project).returncode == 0  # demo
    shutil.move(project / "generated/demo", project / "generated/third")
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", cwd=project)
    assert res.returncode == 2 and "--edition" in res.stderr


@pytest.mark.parametrize("planted", ["fifo", "dangling-link", "folder"])
def test_a_demo_lock_that_is_not_a_file_is_refused_never_another_edition_rendered(project: Path, planted: str) -> None:
    """A probe (2026-12-07): with generated/demo/plan.lock a FIFO, `lrc render` silently rendered
    the other compiled edition. Whatever sits at the demo's lock, it is the demo's lock to refuse."""
    shutil.copytree(project / "generated/demo", project / "generated/other")
    lock = project / "generated/demo/plan.lock"
    lock.unlink()
    if planted == "fifo":
        os.mkfifo(lock)
    elif planted == "dangling-link":
        lock.symlink_to(project / "nowhere.lock")
    else:
        lock.mkdir()
    res = run_lrc("render", "triage.ap-inbox", "--system", "single-shot", cwd=project, timeout=60)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "generated/demo/plan.lock" in res.stderr and "Traceback" not in res.stderr
    assert "generated/other" not in res.stdout + res.stderr


# -- seed new, pricing snapshot ----------------------------------------------------------------------------

def test_seed_new_writes_a_private_file_prints_its_commitment_and_never_overwrites(project: Path) -> None:
    from lrc.runtime.lock.canonical import digest_bytes

    res = run_lrc("seed", "new", cwd=project)
    assert res.returncode == 0, res.stderr
    path = project / "seeds/held-out.seed"
    value = path.read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", value)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    line = re.search(r"(?m)^seed: \{policy: held-out, commitment: (sha256:[0-9a-f]{64})\}$", res.stdout)
    assert line and line.group(1) == digest_bytes("seed", value.encode())
    assert "never commit" in res.stderr
    res = run_lrc("seed", "new", cwd=project)
    assert res.returncode == 1 and "refusing to overwrite" in res.stderr
    assert path.read_text().strip() == value
    res = run_lrc("seed", "new", "q1", cwd=project)
    assert res.returncode == 0 and (project / "seeds/q1.seed").is_file()


def test_compile_never_reads_a_seed_file(project: Path, tmp_path: Path) -> None:
    seed_path = project / "seeds/held.seed"
    res = run_lrc("seed", "new", "held", cwd=project)
    commitment = re.search(r"commitment: (sha256:[0-9a-f]{64})\}", res.stdout).group(1)
    _held_out_edition(project, commitment)
    probe = (
        "import sys\n"
        "def hook(event, args):\n"
        "    if event == 'open' and str(args[0]).endswith('.seed'):\n"
        "        raise SystemExit('compile opened a seed file: ' + str(args[0]))\n"
        "sys.addaudithook(hook)\n"
        "from lrc.compiler.cli import main\n"
        f"sys.exit(main(['compile', '--project', {str(project)!r}]))\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert seed_path.is_file()
    lock = (project / "generated/held/plan.lock").read_text(encoding="utf-8")
    assert seed_path.read_text().strip() not in lock and commitment in lock


def test_pricing_snapshot(tmp_path: Path) -> None:
    res = run_lrc("pricing", "snapshot", "openai/gpt-4.1", "--as-of", "2026-11-29", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("pricing:\n  openai/gpt-4.1:\n") and 'as_of: "2026-11-29"' in res.stdout
    res = run_lrc("pricing", "snapshot", "openai/gpt-4.1", "no-such/model", cwd=tmp_path)
    assert res.returncode == 1
    assert "openai/gpt-4.1" in res.stdout and "no-such/model: not in" in res.stderr
    assert run_lrc("pricing", "snapshot", "openai/gpt-4.1", "--as-of", "29/11/2026", cwd=tmp_path).returncode == 2
    assert run_lrc("pricing", "snapshot", cwd=tmp_path).returncode == 2


# -- import hygiene ----------------------------------------------------------------------------------------

def test_diff_imports_neither_litellm_nor_polars_nor_the_runtime_beyond_the_lock(repo_project: Path) -> None:
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "lrc.compiler.cli", "diff"], cwd=repo_project,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in res.stderr.splitlines() if line.startswith("import time:") and "|" in line}
    assert not {n for n in names if n.split(".")[0] in ("litellm", "polars")}
    # The lock's modules and the stdlib-only reader they share (lrc.runtime.filebytes: a file read
    # without blocking, regular files only -- the cache key, the sealed entries).
    assert not {n for n in names if n.startswith("lrc.runtime.") and not n.startswith(("lrc.runtime.lock", "lrc.runtime.filebytes"))}


def test_publish_of_a_held_out_edition_rebuilds_from_the_journal_with_the_seed(project: Path, tmp_path: Path) -> None:
    """`lrc publish` rebuilds a folder's outputs from its journal before reading them; a held-out
    edition's items (its answer keys) need the seed, so publish asks for it as `lrc report` does."""
    seed_path = tmp_path / "held.seed"
    assert run_lrc("seed", "new", "--out", str(seed_path), cwd=project).returncode == 0
    from lrc.runtime.lock.canonical import digest_bytes

    _held_out_edition(project, digest_bytes("seed", seed_path.read_text(encoding="utf-8").strip().encode("utf-8")))
    assert run_lrc("compile", cwd=project).returncode == 0
    lock = project / "generated" / "held" / "plan.lock"
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--seed-file", seed_path, "--models", "lrc/oracle",
                  "--workloads", "triage.ap-inbox", "--limit", "1", "--no-progress", cwd=project)
    assert res.returncode == 0, res.stderr
    res = run_lrc("publish", out, "--history", tmp_path / "h", "--plan", lock, cwd=project)
    assert res.returncode == 4 and "held-out seed" in res.stderr and "--seed-file" in res.stderr, res.stderr
    res = run_lrc("publish", out, "--history", tmp_path / "h", "--plan", lock, "--seed-file", seed_path, cwd=project)
    assert res.returncode == 4 and "partial folders never publish" in res.stderr, res.stderr  # rebuilt with the seed: partial
    wrong = tmp_path / "wrong.seed"
    wrong.write_text("not the seed\n", encoding="utf-8")
    res = run_lrc("publish", out, "--history", tmp_path / "h", "--plan", lock, "--seed-file", wrong, cwd=project)
    assert res.returncode == 4 and "does not match the locked seed commitment" in res.stderr, res.stderr
    assert not (tmp_path / "h").exists()

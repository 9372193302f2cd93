"""Errata without re-paying (issue 15 §4): an erratum is its own spec, compiled apart from the
plan it corrects, and `lrc regrade` applies it to stored outputs without any model call.

The regrade tests work on copies of the small demo (`small_demo_run`, read-only): its project
(specs, schemas, generated/ with its own ledger) and its run folder. Each regrade runs with every
way to reach a model broken (`no_model_calls`), so a call would fail the test."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import sys
from pathlib import Path

import pytest

from helpers.project import run_lrc
from lrc.runtime.models.reference import CANDIDATES

PRICE = """\
  - price:
      model: lrc/baseline
      pricing:
        currency: USD
        per_tokens: 1000000
        input: "0.10"
        cached_input: "0.01"
        output: "0.40"
        as_of: "2026-11-29"
        source: corrected demo price
"""
EXCLUDE = """\
  - exclude:
      workload: {workload}
      item: {item}
      reason: its answer key labels a dunning notice as a statement
"""


def erratum_yaml(ident: str, edition: str, digest: str, corrections: str, note: str = "A correction of the small demo's tables.") -> str:
    return ("# yaml-language-server: $schema=../../schemas/erratum.schema.json\n"
            f"kind: erratum\nid: {ident}\nversion: 1\nedition: {edition}\nplan_digest: {digest}\n"
            f'date: "2026-12-20"\nnote: {note}\ncorrections:\n{corrections}')


def tree_hash(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def demo(small_demo_run, tmp_path: Path):
    """(project copy, run folder copy, lock) of the small demo, free to change."""
    lock, out, res = small_demo_run
    assert res.returncode == 0, res.stderr
    project = tmp_path / "project"
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(lock.parents[2] / name, project / name)
    run = tmp_path / "run"
    shutil.copytree(out, run, ignore=shutil.ignore_patterns(".lrc-*"))
    return project, run, json.loads(lock.read_text(encoding="utf-8"))


def _edition_ref(lock: dict) -> str:
    return lock["plan"]["edition"]["ref"]


def _workload(lock: dict, prefix: str) -> str:
    return next(w for w in lock["plan"]["workloads"] if w.startswith(prefix))


def add_erratum(project: Path, ident: str, text: str) -> None:
    folder = project / "specs" / "errata"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{ident}.yaml").write_text(text, encoding="utf-8")


def compile_in(project: Path):
    from lrc.compiler.pipeline import compile_project

    return compile_project(project)


@pytest.fixture
def no_model_calls(monkeypatch: pytest.MonkeyPatch):
    """Every road to a model raises: the litellm adapter, the reference models, any socket."""
    from lrc.runtime.models import adapter, reference

    def refuse(*_a, **_k):
        raise AssertionError("a model was called during a regrade")

    monkeypatch.setattr(adapter, "complete", refuse)
    monkeypatch.setattr(adapter, "load_litellm", refuse)
    monkeypatch.setattr(reference, "respond", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setitem(sys.modules, "litellm", None)  # importing it raises ImportError


def regrade(project: Path, run: Path, ident: str, out: Path, monkeypatch: pytest.MonkeyPatch, plan: Path | None = None) -> int:
    from lrc.runtime.errata import regrade_cli

    monkeypatch.chdir(project)
    return regrade_cli(run, ident, out, plan_path=plan)


def cells(folder: Path) -> dict[tuple[str, str, str], dict]:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return {(c["workload"], c["model"], c["system"]): c for c in summary["regrade"]["cells"]}


# -- the spec -------------------------------------------------------------------------------------

def test_erratum_compiles_apart_from_the_plan(demo):
    project, _, lock = demo
    before = (project / "generated" / "demo" / "plan.lock").read_bytes()
    add_erratum(project, "E-demo-001", erratum_yaml("E-demo-001", _edition_ref(lock), lock["root_digest"],
                                                    EXCLUDE.format(workload=_workload(lock, "triage."), item="ap-batch-01") + PRICE))
    result = compile_in(project)
    assert not result.diagnostics.has_errors, [str(d) for d in result.diagnostics.items]
    assert (project / "generated" / "demo" / "plan.lock").read_bytes() == before  # the plan digest is unchanged
    art = json.loads((project / "generated" / "errata" / "E-demo-001.json").read_text(encoding="utf-8"))
    assert art["erratum"]["plan_digest"] == lock["root_digest"] and art["digest"].startswith("sha256:")
    again = compile_in(project)
    assert "generated/errata/E-demo-001.json" not in again.changed  # deterministic
    # the version gate: a changed erratum without a bump is refused at its version line
    path = project / "specs" / "errata" / "E-demo-001.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("small demo's tables", "small demo's cells"), encoding="utf-8")
    gated = compile_in(project)
    [diag] = [d for d in gated.diagnostics.items if d.severity == "error"]
    assert (diag.code, diag.path, diag.line, diag.pointer) == ("LRC5001", "specs/errata/E-demo-001.yaml", 4, "/version")


def test_erratum_spec_errors(demo):
    project, _, lock = demo
    ed, digest = _edition_ref(lock), lock["root_digest"]
    grading = next(r for r in lock["plan"]["code"] if r.startswith("triage.ap-inbox.grading."))
    base, version = grading.rsplit(".v", 1)
    add_erratum(project, "E-missing", "# yaml-language-server: $schema=../../schemas/erratum.schema.json\n"
                                      f"kind: erratum\nid: E-missing\nversion: 1\nedition: {ed}\nplan_digest: {digest}\n"
                                      "corrections:\n" + PRICE)
    add_erratum(project, "E-digest", erratum_yaml("E-digest", ed, "md5:1234", PRICE))
    add_erratum(project, "E-float", erratum_yaml("E-float", ed, digest, PRICE.replace('input: "0.10"', "input: 0.10")))
    result = compile_in(project)  # schema errors stop a compile before references are resolved
    found = {(d.path.removeprefix("specs/errata/").removesuffix(".yaml"), d.code, d.line, d.column, d.pointer)
             for d in result.diagnostics.items if d.severity == "error"}
    assert ("E-missing", "LRC2002", 2, 1, "") in found
    assert ("E-digest", "LRC2005", 6, 14, "/plan_digest") in found
    assert ("E-float", "LRC2001", 15, 16, "/corrections/0/price/pricing/input") in found
    shutil.rmtree(project / "specs" / "errata")
    add_erratum(project, "E-component", erratum_yaml("E-component", ed, digest, f"  - regrade_with: {base}.v99\n"))
    add_erratum(project, "E-older", erratum_yaml("E-older", ed, digest, f"  - regrade_with: {grading}\n"))
    add_erratum(project, "E-item", erratum_yaml("E-item", ed, digest, EXCLUDE.format(workload="triage.ap-inbox.v1", item="ap-batch-01")))
    add_erratum(project, "E-plan", erratum_yaml("E-plan", ed, "sha256:" + "0" * 64, PRICE))
    result = compile_in(project)
    found = {(d.path.removeprefix("specs/errata/").removesuffix(".yaml"), d.code, d.line, d.column, d.pointer)
             for d in result.diagnostics.items if d.severity == "error"}
    assert ("E-component", "LRC3001", 10, 19, "/corrections/0/regrade_with") in found
    assert ("E-older", "LRC3023", 10, 19, "/corrections/0/regrade_with") in found
    assert ("E-item", "LRC3024", 11, 17, "/corrections/0/exclude/workload") in found
    assert ("E-plan", "LRC3022", 6, 14, "/plan_digest") in found
    assert not (project / "generated" / "errata").exists()  # nothing written


def test_inline_edition_errata_are_refused(demo):
    project, _, _ = demo
    path = project / "specs" / "editions" / "demo.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("errata: []", 'errata:\n  - date: "2026-12-01"\n    note: a fix'),
                    encoding="utf-8")
    codes = {(d.code, d.pointer) for d in compile_in(project).diagnostics.items if d.severity == "error"}
    assert ("LRC6117", "/errata") in codes


# -- regrade --------------------------------------------------------------------------------------

def test_regrade_exclusion_and_price(demo, tmp_path, monkeypatch, no_model_calls):
    project, run, lock = demo
    triage = _workload(lock, "triage.")
    add_erratum(project, "E-demo-001", erratum_yaml("E-demo-001", _edition_ref(lock), lock["root_digest"],
                                                    EXCLUDE.format(workload=triage, item="ap-batch-01")))
    add_erratum(project, "E-demo-002", erratum_yaml("E-demo-002", _edition_ref(lock), lock["root_digest"], PRICE,
                                                    note="The baseline's demo price was misread."))
    assert not compile_in(project).diagnostics.has_errors
    hashed = tree_hash(run)

    excluded = tmp_path / "excluded"
    assert regrade(project, run, "E-demo-001", excluded, monkeypatch) == 0
    assert tree_hash(run) == hashed  # RUN_DIR untouched
    table = cells(excluded)
    for key, c in table.items():
        if key[0] == triage:
            assert c["new"]["n"] == c["old"]["n"] - 1 and c["changed"], key
        else:
            assert c["new"] == c["old"] and not c["changed"], key
    card = (excluded / "rate-card.md").read_text(encoding="utf-8")
    assert "**CORRECTED by erratum E-demo-001: A correction of the small demo's tables. (2026-12-20)**" in card
    assert "item ap-batch-01 of " + triage + " excluded" in card and "**CHANGED**" in card
    assert json.loads((excluded / "erratum.json").read_text(encoding="utf-8"))["applied"][0]["erratum"]["id"] == "E-demo-001"

    priced = tmp_path / "priced"
    assert regrade(project, run, "E-demo-002", priced, monkeypatch) == 0
    for key, c in cells(priced).items():
        assert (c["new"]["passes"], c["new"]["n"], c["new"]["pass_rate"]) == (c["old"]["passes"], c["old"]["n"], c["old"]["pass_rate"])
        if key[1] == "lrc/baseline":
            assert c["new"]["cost_usd"] != c["old"]["cost_usd"] and c["changed"], key
            if c["new"]["passes"]:
                assert c["new"]["cpo_usd"] != c["old"]["cpo_usd"], key
        else:
            assert not c["changed"], key
    assert tree_hash(run) == hashed

    # a regraded folder can be corrected again; the changelog lists both errata
    both = tmp_path / "both"
    assert regrade(project, excluded, "E-demo-002", both, monkeypatch) == 0
    card = (both / "rate-card.md").read_text(encoding="utf-8")
    assert "CORRECTED by erratum E-demo-001" in card and "CORRECTED by erratum E-demo-002" in card


def test_regrade_with_a_corrected_grader(demo, tmp_path, monkeypatch, no_model_calls):
    """A grader fixed in a newer version (in a copy of runtime/ that both code discovery and the
    import see), the workload and edition re-pinned to it, and an erratum for the published plan."""
    import importlib.util

    from lrc.runtime.lock import codeprint

    project, run, lock = demo
    published = tmp_path / "published.lock"
    shutil.copyfile(project / "generated" / "demo" / "plan.lock", published)
    old = next(r for r in lock["plan"]["code"] if r.startswith("extract.invoice.grading."))
    base, version = old.rsplit(".v", 1)
    new = f"{base}.v{int(version) + 1}"
    runtime = tmp_path / "code" / "runtime"
    shutil.copytree(Path(codeprint.runtime_root()), runtime, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    grading = runtime / "workloads" / "extract_invoice" / "grading.py"
    text = grading.read_text(encoding="utf-8")
    assert text.count(f"COMPONENT_VERSION = {version}\n") == 1
    text = text.replace(f"COMPONENT_VERSION = {version}\n", f"COMPONENT_VERSION = {int(version) + 1}\n")
    text += ("\n\ndef _corrected(answer, key, params):\n"
             "    return [{**r, 'status': 'pass'} if r['severity'] == 'error' else r for r in validate(answer, key, params)]\n\n\n"
             "VALIDATORS = {'invoice-fields': _corrected}\n")
    grading.write_text(text, encoding="utf-8")
    monkeypatch.setattr(codeprint, "runtime_root", lambda: runtime)
    spec = importlib.util.spec_from_file_location("lrc.runtime.workloads.extract_invoice.grading", grading)
    module = importlib.util.module_from_spec(spec)
    # in sys.modules before it runs (a dataclass looks its module up there), whatever ran before
    monkeypatch.setitem(sys.modules, "lrc.runtime.workloads.extract_invoice.grading", module)
    spec.loader.exec_module(module)
    # re-pin: the workload to the corrected grader, the edition to that workload (both bumped)
    invoice = _workload(lock, "extract.invoice.")
    wpath = project / "specs" / "workloads" / "extract.invoice" / "workload.yaml"
    wl = wpath.read_text(encoding="utf-8")
    wversion = int(invoice.rsplit(".v", 1)[1])
    wpath.write_text(wl.replace(old, new).replace(f"\nversion: {wversion}\n", f"\nversion: {wversion + 1}\n"), encoding="utf-8")
    epath = project / "specs" / "editions" / "demo.yaml"
    ed = epath.read_text(encoding="utf-8")
    eversion = lock["plan"]["edition"]["spec"]["version"]
    epath.write_text(ed.replace(invoice, f"{invoice.rsplit('.v', 1)[0]}.v{wversion + 1}")
                     .replace(f"\nversion: {eversion}\n", f"\nversion: {eversion + 1}\n"), encoding="utf-8")
    add_erratum(project, "E-demo-003", erratum_yaml("E-demo-003", _edition_ref(lock), lock["root_digest"], f"  - regrade_with: {new}\n",
                                                    note="The invoice grader refused correct totals."))
    result = compile_in(project)
    assert not result.diagnostics.has_errors, [str(d) for d in result.diagnostics.items]
    art = json.loads((project / "generated" / "errata" / "E-demo-003.json").read_text(encoding="utf-8"))
    assert art["code"][new]["replaces"] == old

    hashed = tree_hash(run)
    out = tmp_path / "regraded"
    assert regrade(project, run, "E-demo-003", out, monkeypatch, plan=published) == 0
    assert tree_hash(run) == hashed
    table = cells(out)
    for key, c in table.items():
        if key[0] == invoice and key[1] == "lrc/baseline":
            assert c["old"]["passes"] == 0 and c["new"]["passes"] == c["new"]["n"] and c["changed"], key
        elif key[0] == invoice and key[1].removeprefix("lrc/") in CANDIDATES:
            # a demo candidate answers an item it misses as the baseline does: the fix lifts those too
            assert c["old"]["passes"] <= c["new"]["passes"] == c["new"]["n"], key
        else:
            assert not c["changed"], key
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert f"re-graded with {new} (replacing {old}); no model was called" in card

    # the corrected code is checked: another fingerprint than the compiled erratum's is refused
    grading.write_text(text + "\n# a comment is no change\nX = 1\n", encoding="utf-8")
    from lrc.runtime import execute

    assert regrade(project, run, "E-demo-003", tmp_path / "again", monkeypatch, plan=published) == execute.EXIT_REFUSED


def test_report_rebuilds_a_regraded_folder_byte_for_byte(demo, tmp_path, monkeypatch, no_model_calls, small_demo_run):
    project, run, lock = demo
    add_erratum(project, "E-demo-001", erratum_yaml("E-demo-001", _edition_ref(lock), lock["root_digest"],
                                                    EXCLUDE.format(workload=_workload(lock, "triage."), item="ap-batch-01") + PRICE))
    assert not compile_in(project).diagnostics.has_errors
    out = tmp_path / "regraded"
    assert regrade(project, run, "E-demo-001", out, monkeypatch) == 0
    before = tree_hash(out)
    for path in out.glob("*.md"):
        path.unlink()
    (out / "summary.json").unlink()
    shutil.rmtree(out / "runs")
    res = run_lrc("report", small_demo_run[0], "--out", out, cwd=project)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    after = {k: v for k, v in tree_hash(out).items() if not k.startswith(".lrc-")}
    assert after == {k: v for k, v in before.items() if not k.startswith(".lrc-")}
    # the uncorrected folder's report names the erratum published for its plan; its card stays the record
    card = (run / "rate-card.md").read_bytes()
    res = run_lrc("report", small_demo_run[0], "--out", run, cwd=project)
    assert res.returncode == 0 and "CORRECTED by erratum E-demo-001: A correction of the small demo's tables. (2026-12-20)" in res.stderr
    assert (run / "rate-card.md").read_bytes() == card
    # an execute never writes uncorrected tables over a regraded folder
    res = run_lrc("execute", small_demo_run[0], "--out", out, cwd=project)
    assert res.returncode == 4 and "regraded by an erratum" in res.stderr
    assert {k: v for k, v in tree_hash(out).items() if not k.startswith(".lrc-")} == after


# -- the command line -----------------------------------------------------------------------------

def test_regrade_cli_errors(demo, tmp_path, small_demo_run):
    project, run, lock = demo
    res = run_lrc("regrade", run, "--erratum", "E-nope", "--out", tmp_path / "x", cwd=project)
    assert res.returncode == 1 and "no compiled erratum E-nope" in res.stderr and "Traceback" not in res.stderr
    res = run_lrc("regrade", run, "--erratum", "not an id", "--out", tmp_path / "x", cwd=project)
    assert res.returncode == 1 and "is not an erratum id" in res.stderr
    res = run_lrc("regrade", run, "--out", tmp_path / "x", cwd=project)
    assert res.returncode == 2  # usage: --erratum is required

    # an erratum of another plan
    add_erratum(project, "E-demo-001", erratum_yaml("E-demo-001", _edition_ref(lock), lock["root_digest"],
                                                    EXCLUDE.format(workload=_workload(lock, "triage."), item="ap-batch-99")))
    assert not compile_in(project).diagnostics.has_errors
    journal = run / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(lines[0])
    other = tmp_path / "other"
    other.mkdir()
    (other / "journal.jsonl").write_text(json.dumps({**header, "plan": "sha256:" + "1" * 64}) + "\n", encoding="utf-8")
    res = run_lrc("regrade", other, "--erratum", "E-demo-001", "--out", tmp_path / "y", cwd=project)
    assert res.returncode == 4 and "holds results of plan sha256:1111" in res.stderr and "Traceback" not in res.stderr

    # an item the folder does not hold: exit 1, nothing regraded
    res = run_lrc("regrade", run, "--erratum", "E-demo-001", "--out", tmp_path / "z", cwd=project)
    assert res.returncode == 1 and "excludes item ap-batch-99" in res.stderr and "Traceback" not in res.stderr

    # --out is RUN_DIR, or a folder that is not empty: exit 6
    res = run_lrc("regrade", run, "--erratum", "E-demo-001", "--out", run, cwd=project)
    assert res.returncode == 6 and "never modifies" in res.stderr

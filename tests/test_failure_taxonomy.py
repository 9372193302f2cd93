"""The failure taxonomy applied, never rewriting the run (seed 000, "Failure taxonomy", "Run procedure" step 8).

The rules as a class (every outcome, every check category, every validator family and every
trace fact gives a taxonomy id in the right tier), the compile-time refusal of a label that is
not one (LRC6108) or is in the wrong tier (LRC6116), partial vs pass, review burden, and
`lrc categorize` through a real subprocess: append-only, shown beside the derived categories.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from lrc.runtime import failures, grading
from lrc.runtime.checks.results import result
from lrc.runtime.lock import artifact_validators
from lrc.runtime.lock import format as lockformat
from helpers.shared import small_demo_lock
from support import REPO, pinned, run_lrc

OUTCOMES = ("step_cap", "budget_exceeded", "refusal", "no_answer", "invalid_output")


@pytest.fixture(scope="module")
def plan() -> dict:
    return lockformat.loads((REPO / "generated/demo/plan.lock").read_bytes())["plan"]


@pytest.fixture(scope="module")
def tiers(plan) -> dict[str, str]:
    return failures.taxonomy_ids(plan)


def _derive(plan, found: dict, verdict: str = "fail", system=None):
    facts = {k: [] for k in ("outcome", "category", "validator", "trace", "judge", "verdict")}
    facts.update(found)
    facts["verdict"] = [verdict]
    return failures.derive(failures.rules_of(plan), facts, verdict, system)


def _assert_ids(failure, tiers):
    assert failure is not None
    assert tiers[failure["primary"]] == "primary", failure
    assert all(tiers[s] == "secondary" for s in failure["secondary"]), failure
    assert failure["primary"] not in failure["secondary"]


# -- the rules as a class -------------------------------------------------------------------

def test_the_demo_lock_carries_the_pinned_taxonomy_and_its_rules(plan):
    assert plan["taxonomy"]["ref"] == pinned("failure-taxonomy")
    assert failures.rules_of(plan)


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_every_run_outcome_gives_a_primary_category(plan, tiers, outcome):
    failure = _derive(plan, {"outcome": [outcome]})
    _assert_ids(failure, tiers)
    expected = {"step_cap": "budget-exceeded", "budget_exceeded": "budget-exceeded", "refusal": "refusal",
                "no_answer": "task-incomplete", "invalid_output": "artifact-integrity"}[outcome]
    assert failure["primary"] == expected


def test_every_category_a_check_can_declare_gives_a_primary_category(plan, tiers):
    for category in tiers:
        if category in ("partial-completion", "review-burden", "tool-misuse", "budget-exceeded", "refusal"):
            continue  # a run outcome, the verdict, the judge or the trace gives them; a check declaring one is refused (LRC6116)
        failure = _derive(plan, {"category": [category]})
        _assert_ids(failure, tiers)
        if tiers[category] == "primary":
            assert failure["primary"] == category
        else:
            assert category in failure["secondary"]


def test_unexpected_change_is_a_secondary_category_of_an_integrity_failure(plan):
    failure = _derive(plan, {"category": ["unexpected-change"], "validator": ["fa.unchanged-outside"]})
    assert failure == {"primary": "artifact-integrity", "secondary": ["unexpected-change"], "rule": "unexpected-change"}


@pytest.mark.parametrize("validator", sorted(artifact_validators.VALIDATORS) if hasattr(artifact_validators, "VALIDATORS")
                         else ["fa.identities"])
def test_every_validator_family_maps_to_a_taxonomy_id(plan, tiers, validator):
    """Even a check without a declared category (the catch-all gives the wrong answer's category)."""
    failure = _derive(plan, {"validator": [validator]})
    _assert_ids(failure, tiers)
    if validator in ("fa.formula-presence", "fa.reference-integrity", "fa.preservation"):
        assert failure["primary"] == "artifact-integrity" and failure["rule"] == "integrity-validator"


def test_trace_facts_tool_errors_and_unpermitted_tools(plan):
    run = {"events": [{"event": "tool_call", "tool": "read_range", "error": True},
                      {"event": "tool_call", "tool": "delete_sheet", "error": False}]}
    evaluation = {"verdict": "fail", "outcome": "answered", "failed_checks": [], "results": []}
    found = failures.facts(evaluation, run, permitted_tools=["read_range", "save"])
    assert found["trace"] == ["tool-error", "unpermitted-tool"]
    failure = failures.categorize(evaluation, run, plan, permitted_tools=["read_range", "save"])["failure"]
    assert failure == {"primary": "unsafe-action", "secondary": ["tool-misuse"], "rule": "unpermitted-tool"}
    only_error = failures.categorize(evaluation, run, plan, permitted_tools=None)["failure"]
    assert only_error["primary"] == "task-incomplete" and only_error["secondary"] == ["tool-misuse"]


def test_a_judge_verdict_is_categorized(plan, tiers):
    for judge, rule in (("invalid", "judge-invalid"), ("below-threshold", "judge-below-threshold")):
        failure = _derive(plan, {"judge": [judge]})
        _assert_ids(failure, tiers)
        assert failure["rule"] == rule and "review-burden" in failure["secondary"]


def test_a_system_spec_overrides_the_primary_of_its_outcomes(plan):
    system = {"ref": "direct.v9", "spec": {"failure_categories": {"no_answer": "refusal"}}}
    assert _derive(plan, {"outcome": ["no_answer"]}, system=system) == \
        {"primary": "refusal", "secondary": [], "rule": "direct.v9/failure_categories/no_answer"}


def test_a_pass_has_no_category_and_an_infrastructure_exclusion_is_none(plan):
    assert _derive(plan, {}, verdict="pass") is None
    passed = failures.categorize({"verdict": "pass", "outcome": "answered", "failed_checks": [], "results": []}, {}, plan)
    assert passed["failure"] is None and passed["failure_categories"] == []
    ids = failures.taxonomy_ids(plan)
    assert not any("infra" in i or "exclu" in i for i in ids)  # an exclusion is a reason, never a category


def test_the_five_workloads_declare_their_wrong_answer(plan, tiers):
    declared = {ref.rsplit(".v", 1)[0]: [c.get("failure_category") for c in wl["spec"]["grading"]["checks"]
                                          if c.get("severity", "error") == "error"]
                for ref, wl in plan["workloads"].items()}
    assert declared["triage.ap-inbox"] == ["wrong-classification"]
    assert declared["reconcile.ledger"] == ["financial-incorrectness"]
    for name in ("extract.invoice", "query.nl2sql", "execute.month-end"):
        assert declared[name] and all(tiers[c] == "primary" for c in declared[name])


# -- partial vs pass, review burden -----------------------------------------------------------

class _Checks:
    """A grading component with two blocking validators whose outcome the test sets."""

    def __init__(self, first: str, second: str):
        self.VALIDATORS = {
            "a": lambda answer, key, params: [result("t.a", 1, first)],
            "b": lambda answer, key, params: [result("t.b", 1, second), result("t.b.note", 1, "fail", severity="info"),
                                              result("t.b.style", 1, "fail", severity="warning")],
        }
        self.__name__ = "t"


def _workload():
    return {"spec": {"grading": {"checks": [{"check": "t.grading.v1", "validator": "a", "failure_category": "financial-incorrectness"},
                                            {"check": "t.grading.v1", "validator": "b", "failure_category": "wrong-classification"}]},
                     "output": {"schema": {"type": "object"}}}}


def _graded(plan, first: str, second: str) -> dict:
    run = {"outcome": "answered", "steps": 1, "submitted": True, "answer": {}}
    evaluation = grading.grade(_workload(), run, {}, {"t.grading.v1": _Checks(first, second)})
    return failures.categorize(evaluation, run, plan)


def test_some_but_not_all_blocking_checks_met_is_partial_never_pass(plan):
    partial = _graded(plan, "pass", "fail")
    assert partial["verdict"] == "partial"
    assert partial["failure"] == {"primary": "wrong-classification", "secondary": ["partial-completion"], "rule": "classification-check"}
    assert partial["failure_categories"] == ["wrong-classification", "partial-completion"]
    failed = _graded(plan, "fail", "fail")
    assert failed["verdict"] == "fail" and failed["failure"]["primary"] == "financial-incorrectness"
    assert "partial-completion" not in failed["failure"]["secondary"]
    passed = _graded(plan, "pass", "pass")
    assert passed["verdict"] == "pass" and passed["failure"] is None


def test_review_burden_counts_material_issues_by_severity(plan):
    # contract (pass), t.a, t.b, t.b.note (info: a note, not an issue), t.b.style (warning)
    assert _graded(plan, "fail", "fail")["review_burden"] == {"error": 2, "warning": 1}
    assert _graded(plan, "pass", "pass")["review_burden"] == {"error": 0, "warning": 1}
    assert failures.review_burden([result("x", 1, "error"), result("y", 1, "not_applicable")]) == {"error": 1, "warning": 0}


# -- compile time: a label that is not a taxonomy id, or in the wrong tier ---------------------

def test_hostile_labels_are_refused_with_their_location(tmp_path: Path):
    root = tmp_path
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    triage = root / "specs/workloads/triage.ap-inbox/workload.yaml"
    triage.write_text(triage.read_text().replace("failure_category: wrong-classification", "failure_category: wrong-answer"))
    direct = root / "specs/systems/direct.yaml"
    direct.write_text(direct.read_text().replace("no_answer: task-incomplete", "no_answer: partial-completion"))
    taxonomy = root / "specs/taxonomies/failure-taxonomy.yaml"
    taxonomy.write_text(taxonomy.read_text().replace("secondary: [tool-misuse]", "secondary: [unsafe-action]", 1))
    diags = [d for d in compile_project(root).diagnostics.items if d.code in ("LRC6108", "LRC6116")]
    found = {(d.code, d.path, d.pointer): d for d in diags}
    unknown = found[("LRC6108", "specs/workloads/triage.ap-inbox/workload.yaml", "/grading/checks/0/failure_category")]
    line = triage.read_text().splitlines()[unknown.line - 1]
    assert "wrong-answer" in line and line.index("wrong-answer") + 1 == unknown.column
    assert unknown.hint and unknown.summary == "unknown failure category 'wrong-answer'"
    tier = found[("LRC6116", "specs/systems/direct.yaml", "/failure_categories/no_answer")]
    assert "secondary" in tier.summary and "task-incomplete" in tier.hint
    assert ("LRC6116", "specs/taxonomies/failure-taxonomy.yaml", "/rules/0/secondary/0") in found


# -- lrc categorize: append-only, both shown ---------------------------------------------------

@pytest.fixture(scope="module")
def small_lock(tmp_path_factory) -> Path:
    """The small demo's lock (helpers.shared): the same workloads, models and systems as the demo,
    fewer items, so the execute and report of a one-cell subset do not generate the full demo's."""
    return small_demo_lock(tmp_path_factory)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, small_lock) -> Path:
    out = tmp_path_factory.mktemp("categorize") / "run"
    res = run_lrc("execute", small_lock, "--out", out, "--workloads", pinned("triage.ap-inbox"),
                  "--models", "lrc/null", "--limit", "1", timeout=600)
    assert res.returncode == 0, res.stderr
    return out


def _evaluation(run_dir: Path) -> tuple[str, Path]:
    path = next((run_dir / "runs").glob("*/lrc__null/single-shot/*/evaluation.json"))
    item, rep = path.parent.name.rsplit(".r", 1)
    return f"{pinned('triage.ap-inbox')}|lrc/null|single-shot|{item}|r{rep}", path


def test_categorize_appends_and_the_report_shows_assigned_beside_derived(run_dir: Path, small_lock: Path):
    key, path = _evaluation(run_dir)
    derived = json.loads(path.read_text())["failure"]
    assert derived["primary"] == "task-incomplete"
    run_record = [line for line in (run_dir / "journal.jsonl").read_text().splitlines() if '"type":"run"' in line]
    first = run_lrc("categorize", run_dir, "--plan", small_lock, "--run", key, "--primary", "refusal", "--note", "it said it could not", "--reviewer", "ana")
    assert first.returncode == 0, first.stderr
    second = run_lrc("categorize", run_dir, "--plan", small_lock, "--run", key, "--primary", "wrong-classification", "--secondary", "review-burden",
                     "--note", "on second reading: labels, not a refusal")
    assert second.returncode == 0, second.stderr
    lines = (run_dir / "journal.jsonl").read_text().splitlines()
    assigned = [json.loads(line) for line in lines if '"type":"categorization"' in line]
    assert [a["primary"] for a in assigned] == ["refusal", "wrong-classification"]  # both kept
    assert [a["seq"] for a in assigned] == [1, 2]  # numbered under the folder lock
    assert [line for line in lines if '"type":"run"' in line] == run_record  # the run record is untouched
    rep = run_lrc("report", small_lock, "--out", run_dir)
    assert rep.returncode in (0, 3), rep.stderr
    evaluation = json.loads(path.read_text())
    assert evaluation["failure"] == derived
    assert evaluation["assigned_failure"]["primary"] == "wrong-classification"
    assert evaluation["assigned_failure"]["secondary"] == ["review-burden"] and evaluation["assigned_failure"]["assignments"] == 2
    cells = {(c["workload"], c["model"], c["system"]): c for c in json.loads((run_dir / "summary.json").read_text())["failure_categories"]}
    cell = cells[(pinned("triage.ap-inbox"), "lrc/null", "single-shot")]
    assert cell["derived"] == {"task-incomplete": 1} and cell["assigned"] == {"wrong-classification": 1}
    assert cell["review_burden"]["error"] >= 1


@pytest.mark.parametrize(("args", "message"), [
    (("--run", "no|such|run|key|r1", "--primary", "refusal", "--note", "x"), "no graded run 'no|such|run|key|r1'"),
    (("--primary", "wrong-answer", "--note", "x"), "--primary 'wrong-answer' is not a category of"),
    (("--primary", "review-burden", "--note", "x"), "is a secondary category"),
    (("--primary", "refusal", "--secondary", "refusal", "--note", "x"), "is a primary category"),
    (("--primary", "refusal", "--note", "  "), "--note is empty"),
])
def test_categorize_refuses_bad_input_with_exit_1(run_dir: Path, small_lock: Path, args, message):
    key, _ = _evaluation(run_dir)
    before = (run_dir / "journal.jsonl").read_bytes()
    full = args if "--run" in args else ("--run", key, *args)
    res = run_lrc("categorize", run_dir, "--plan", small_lock, *full)
    assert res.returncode == 1 and message in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert (run_dir / "journal.jsonl").read_bytes() == before


def test_categorize_refuses_a_missing_run_dir(tmp_path: Path):
    for folder in (tmp_path / "missing", tmp_path):
        res = run_lrc("categorize", folder, "--run", "a|b|c|d|r1", "--primary", "refusal", "--note", "x")
        assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
        assert "lrc categorize:" in res.stderr
    assert not (tmp_path / "missing").exists()


def test_the_latest_assignment_is_the_highest_number_whatever_the_line_order():
    """`lrc merge` orders records by content: the latest assignment must come from the records'
    own numbering, never from their position."""
    from types import SimpleNamespace

    from lrc.runtime.review.categorize import latest

    first = {"type": "categorization", "run": "k", "seq": 1, "primary": "task-incomplete", "secondary": [], "note": "a"}
    second = {"type": "categorization", "run": "k", "seq": 2, "primary": "refusal", "secondary": [], "note": "b"}
    for order in ([first, second], [second, first]):
        got = latest(SimpleNamespace(categorizations={"k": order}), "k")
        assert got["primary"] == "refusal" and got["assignments"] == 2
    assert latest(SimpleNamespace(categorizations={}), "k") is None

"""The reliability report of a task edition (lrc.runtime.report.reliability; seed 000's
"Empty reporting template", "Run procedure" steps 1, 9 and 10).

- the pre-registration page comes from the lock alone: every result field reads "not run",
  the frozen task hashes and systems are the lock's, a tampered lock is refused, a spec where
  a lock belongs is a usage error;
- the figures are read back from run folders (built here by hand, so the expected values are
  known): completion pass / partial / fail, financial-correctness and integrity runs by the
  checks' categories, review burden by severity, pass^k over declared repetitions, efficiency
  "not run" until the edition declares it released, exclusions with their reasons;
- the demo execute writes the page and the same data into summary.json.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.project import run_lrc
from lrc.runtime.report import reliability
from support import REPO

LOCK = REPO / "generated" / "demo" / "plan.lock"


@pytest.fixture(scope="module")
def plan() -> dict:
    return json.loads(LOCK.read_text(encoding="utf-8"))["plan"]


def test_preregister_prints_the_template_from_the_lock_alone_every_result_not_run(plan):
    res = run_lrc("preregister", LOCK)
    assert res.returncode == 0, res.stdout + res.stderr
    page = res.stdout
    rows = [line for line in page.splitlines() if line.startswith("| fa.") and "| not run |" in line]
    expected_rows = len(plan["tasks"]) * len(plan["edition"]["spec"]["models"]) * len(reliability._task_systems(plan))
    assert len(rows) == expected_rows and all(line.count("not run") == 8 for line in rows)
    for ref, entry in plan["tasks"].items():
        assert entry["task_hash"] in page and ref in page
    for system in reliability._task_systems(plan):
        assert any(r.startswith(system + ".v") for r in plan["systems"]) and f"| {system} |" in page
    assert "## Important failures\n\nnot run" in page
    assert "Excluded (infrastructure failures after retries): not run" in page
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    assert lock["root_digest"] in page


def test_preregister_writes_the_page_and_refuses_a_tampered_lock_or_a_spec(tmp_path):
    out = tmp_path / "pages" / "prereg.md"
    res = run_lrc("preregister", LOCK, "--out", out)
    assert res.returncode == 0 and out.read_text(encoding="utf-8").startswith("# Reliability report: edition demo.v")
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    first = next(iter(lock["plan"]["tasks"].values()))
    first["task_hash"] = "sha256:" + "0" * 64
    tampered = tmp_path / "plan.lock"
    tampered.write_text(json.dumps(lock), encoding="utf-8")
    res = run_lrc("preregister", tampered)
    assert res.returncode == 4 and "Traceback" not in res.stderr and "lrc preregister:" in res.stderr
    res = run_lrc("preregister", REPO / "specs" / "editions" / "demo.yaml")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    res = run_lrc("preregister", LOCK, "--out", blocked / "prereg.md")
    assert res.returncode == 6 and "cannot write" in res.stderr and "Traceback" not in res.stderr  # exit 6: output unusable


def _check(status: str, severity: str = "error", **kw) -> dict:
    return {"id": kw.get("id", "fa.x"), "version": 1, "status": status, "severity": severity, "observed": None,
            "expected": None, "location": kw.get("location"), "message": kw.get("message", "m")}


def _write_run(folder: Path, task: str, model: str, system: str, item: str, rep: int, verdict: str, statuses: list,
               calls: int = 2, tool_calls: int = 3) -> None:
    run_dir = folder / "runs" / task / model.replace("/", "__") / system / f"{item}.r{rep}"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({
        "task_id": item, "repetition": rep, "model": {"id": model}, "system": {"config": {"id": system}}}))
    (run_dir / "trace.json").write_text(json.dumps({
        "messages": [{"role": "assistant", "content": None,
                      "tool_calls": [{"function": {"name": "submit", "arguments": "{}"}}]}],
        "calls": [{"usage": {"input": 100, "output": 10}, "attempts": 1 + (i == 0)} for i in range(calls)],
        "events": [{"event": "tool_call"}] * tool_calls, "cost_usd": "0.0125"}))
    (run_dir / "evaluation.json").write_text(json.dumps({
        "verdict": verdict, "validators": statuses,
        "primary_failure_category": None if verdict == "pass" else "financial-incorrectness"}))


@pytest.fixture
def task_plan(plan) -> dict:
    """The demo plan with three repetitions declared and one task, fa.fix-sign."""
    p = copy.deepcopy(plan)
    p["edition"]["spec"]["repetitions"] = 3
    p["tasks"] = {"fa.fix-sign.v5": p["tasks"]["fa.fix-sign.v5"]}
    return p


def _statuses(plan: dict, failing: dict[str, tuple[str, str]]) -> list:
    """One result per check of fa.fix-sign, in the spec's order; `failing`: validator -> (status, severity)."""
    out = []
    for check in plan["tasks"]["fa.fix-sign.v5"]["spec"]["checks"]:
        status, severity = failing.get(check["validator"], ("pass", "error"))
        out.append(_check(status, severity, id=check["validator"], location="IS!D7", message=f"{check['validator']} said so"))
    return out


def test_the_figures_are_read_back_from_the_run_folders_with_known_values(task_plan, tmp_path):
    checks = task_plan["tasks"]["fa.fix-sign.v5"]["spec"]["checks"]
    financial = next(c["validator"] for c in checks if c["failure_category"] == "financial-incorrectness")
    integrity = next(c["validator"] for c in checks if c["failure_category"] == "artifact-integrity")
    system = reliability._task_systems(task_plan)[0]
    # baseline: r1 pass, r2 partial (an integrity check failed, a warning too), r3 fail (financial + integrity)
    _write_run(tmp_path, "fa.fix-sign.v5", "lrc/baseline", system, "fa.fix-sign", 1, "pass", _statuses(task_plan, {}))
    _write_run(tmp_path, "fa.fix-sign.v5", "lrc/baseline", system, "fa.fix-sign", 2, "partial",
               _statuses(task_plan, {integrity: ("fail", "error"), financial: ("fail", "warning")}))
    _write_run(tmp_path, "fa.fix-sign.v5", "lrc/baseline", system, "fa.fix-sign", 3, "fail",
               [_check("fail", id=c["validator"]) for c in checks])
    report = reliability.data(task_plan, tmp_path, [{"run": "k1", "reason": "retries-exhausted after 3 attempt(s)"}], [])
    cell = next(c for c in report["cells"] if c["model"] == "lrc/baseline" and c["system"] == system)
    r = cell["result"]
    assert (r["runs"], r["pass"], r["partial"], r["fail"]) == (3, 1, 1, 1)
    # r2's warning failure is a failure of the check; one item, three repetitions: clustered by item
    assert {k: r["financial_correctness"][k] for k in ("passes", "runs", "items")} == {"passes": 1, "runs": 3, "items": 1}
    assert {k: r["integrity"][k] for k in ("passes", "runs", "items")} == {"passes": 1, "runs": 3, "items": 1}
    assert r["completion"]["estimate"] == 0.3333 and 0 < r["completion"]["low"] < 0.3333 < r["completion"]["high"] < 1
    assert r["review_burden"] == {"error": 1 + len(checks), "warning": 1}
    # one item, passes in 1 of 3 repetitions: pass^1 = 1/3, pass^2 = pass^3 = 0
    assert r["items"] == 1 and r["pass_hat_k"] == {"1": 0.3333, "2": 0.0, "3": 0.0}
    assert r["pass_hat_k_items"] == {"1": 1, "2": 1, "3": 1}
    assert r["efficiency"] == reliability.NOT_RUN  # the demo edition has not declared efficiency released
    others = [c for c in report["cells"] if c["model"] != "lrc/baseline"]
    assert others and all(c["result"] == reliability.NOT_RUN for c in others)  # no run folder: nothing invented
    page = reliability.markdown(report)
    low, high = r["completion"]["low"], r["completion"]["high"]
    assert f"| fa.fix-sign.v5 | dev | lrc/baseline | {system} | 1 / 1 / 1 of 3 | 1/3 · 1 items × 3 ({low:.2f}–{high:.2f}) |" in page
    assert "pass^3" in page and "0.00 (1 items × 3)" in page
    assert "k1: retries-exhausted after 3 attempt(s)" in page
    assert "IS!D7" in page and "runs/fa.fix-sign.v5/lrc__baseline/" in page  # an important failure, with where to look

    task_plan["edition"]["spec"]["efficiency_reporting"] = "released"
    r = next(c for c in reliability.data(task_plan, tmp_path)["cells"] if c["model"] == "lrc/baseline")["result"]
    assert r["efficiency"] == {"tokens": 3 * 2 * 110, "tool_calls": 9, "retries": 3, "cost_usd": "0.0375"}


def test_pass_hat_k_is_na_when_an_item_has_fewer_repetitions_than_declared(task_plan, tmp_path):
    system = reliability._task_systems(task_plan)[0]
    for rep in (1, 2):  # the third repetition was never made
        _write_run(tmp_path, "fa.fix-sign.v5", "lrc/oracle", system, "fa.fix-sign", rep, "pass", _statuses(task_plan, {}))
    r = next(c for c in reliability.data(task_plan, tmp_path)["cells"] if c["model"] == "lrc/oracle")["result"]
    assert r["runs"] == 2 and r["pass_hat_k"] == {"1": 1.0, "2": 1.0, "3": None}  # no item reached k = 3
    assert "| not run |" in reliability._cell_row({"task": "t", "split": "dev", "model": "m", "system": "s", "result": r}, 3)


def test_a_damaged_run_file_is_left_out_never_a_crash(task_plan, tmp_path):
    system = reliability._task_systems(task_plan)[0]
    _write_run(tmp_path, "fa.fix-sign.v5", "lrc/oracle", system, "fa.fix-sign", 1, "pass", _statuses(task_plan, {}))
    bad = tmp_path / "runs" / "fa.fix-sign.v5" / "lrc__oracle" / system / "fa.fix-sign.r2"
    bad.mkdir()
    (bad / "manifest.json").write_text("{not json")
    (bad / "evaluation.json").write_text("[]")
    r = next(c for c in reliability.data(task_plan, tmp_path)["cells"] if c["model"] == "lrc/oracle")["result"]
    assert r["runs"] == 1


@pytest.mark.slow  # reads the full demo run (conftest.py `demo_run`: 865 runs)
def test_the_demo_execute_writes_the_reliability_report_and_its_data(demo_run):
    out, res = demo_run
    assert res.returncode == 0, res.stdout + res.stderr
    page = (out / "reliability-report.md").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    data = summary["tasks"]["reliability_report"]
    assert data["stage"] == "results" and data["exclusions"] == [] and data["not_made"] == []
    assert "reliability-report.md" in res.stdout
    graded = [c for c in data["cells"] if c["result"] != reliability.NOT_RUN]
    assert graded and all(c["result"]["runs"] >= 1 for c in graded)
    oracle = [c["result"] for c in graded if c["model"] == "lrc/oracle"]
    assert oracle and all(r["pass"] == r["runs"] and r["review_burden"] == {} for r in oracle)
    assert "## Important failures" in page and "not run" not in page.split("## Important failures")[1].split("##")[0]


def _side(system: str, passes: int, runs: int, cpo: str | None) -> dict:
    return {"system": system, "passes": passes, "runs": runs, "pass_rate": passes / runs, "cpo_usd": cpo, "cost_usd": "0.5",
            "steps": 4 * runs, "steps_per_run": "4", "steps_per_success": None, "failure_categories": {}}


def test_the_paired_section_shows_only_the_task_pairs_with_interval_sign_test_and_categories(task_plan, tmp_path):
    row = {"workload": "fa.fix-sign.v5", "a": _side("direct", 0, 3, None), "b": _side("orchestrated", 2, 3, "0.75"),
           "diff": 0.6667, "diff_low": 0.3333, "diff_high": 1.0, "sign_test_p": 0.25, "items": 1,
           "categories": {"removed": ["artifact-integrity"], "added": [], "counts": {}}}
    workload_row = {**row, "workload": "triage.ap-inbox.v3"}
    paired = {"method": "B − A over items", "pairs": [
        {"a": "direct", "b": "orchestrated", "model": "lrc/baseline", "by_workload": [row], "overall": row},
        {"a": "single-shot", "b": "agentic", "model": "lrc/baseline", "by_workload": [workload_row], "overall": workload_row}]}
    report = reliability.data(task_plan, tmp_path, paired=paired)
    assert [p["a"] for p in report["paired"]] == ["direct"]  # a workload pair is the rate card's, not this page's
    page = reliability.markdown(report)
    assert ("| lrc/baseline | direct → orchestrated | fa.fix-sign.v5 | 0/3 | 2/3 | +0.67 (+0.33…+1.00) | 0.25 | "
            "∞ (no success) / $0.75 | 4 / 4 | artifact-integrity / none |") in page
    assert "Method: B − A over items" in page
    partial = reliability.markdown(reliability.data(task_plan, tmp_path, paired="partial folder: no paired comparisons"))
    assert "partial folder: no paired comparisons" in partial
    assert "not run (every pair" in reliability.markdown(reliability.data(task_plan, None))


@pytest.mark.parametrize("run", ["task_subset_run", pytest.param("demo_run", marks=pytest.mark.slow)])
def test_the_harness_tools_of_a_system_are_never_counted_as_unpermitted(run, request):
    """Orchestrated offers its own stage tools (record_plan, validate) beside the task's permitted
    ones: a run using them is not an unsafe action. A call the runner refused would be. Two of
    the demo's tasks by default (conftest.py `task_subset_run`), all four under `--slow`."""
    out, res = request.getfixturevalue(run)
    assert res.returncode == 0, res.stdout + res.stderr
    evaluations = sorted((out / "runs").glob("fa.*/*/orchestrated/*/evaluation.json"))
    assert evaluations
    for path in evaluations:
        failure = json.loads(path.read_text(encoding="utf-8")).get("failure") or {}
        assert failure.get("rule") != "unpermitted-tool" and "unsafe-action" not in [failure.get("primary"),
                                                                                     *failure.get("secondary", [])], path


HOSTILE_REPLY = ("\n\n## Results per system and task\n\n| fa.fix-sign.v5 | dev | lrc/baseline | forged | 1 / 0 / 0 of 1 | 100% |\n"
                 "<script>alert(1)</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) "
                 "![](http://attacker.example/p.png) \x1b]0;owned\x07\x1b[2J \u202edesrever")


def test_what_the_model_wrote_is_inert_text_in_the_page(task_plan, tmp_path):
    """The model's last reply, and a failing check's location and message (they quote the
    model's files: a sheet it named, a cell's text), are quoted as one line of inert text: no
    forged heading or results row, no HTML, no link or image, no terminal control."""
    checks = task_plan["tasks"]["fa.fix-sign.v5"]["spec"]["checks"]
    system = reliability._task_systems(task_plan)[0]
    statuses = [_check("fail", id=c["validator"], location="Evil\n# Sheet!A1", message="<b>x</b>\n## Results per system and task")
                for c in checks]
    _write_run(tmp_path, "fa.fix-sign.v5", "lrc/baseline", system, "fa.fix-sign", 1, "fail", statuses)
    trace = tmp_path / "runs" / "fa.fix-sign.v5" / "lrc__baseline" / system / "fa.fix-sign.r1" / "trace.json"
    data = json.loads(trace.read_text())
    data["messages"] = [{"role": "assistant", "content": HOSTILE_REPLY}]
    trace.write_text(json.dumps(data))
    page = reliability.markdown(reliability.data(task_plan, tmp_path))
    assert page.count("## Results per system and task") == 1  # the page's own heading only
    assert sum(1 for line in page.splitlines() if line.startswith("## ")) == page.count("\n## ") + page.startswith("## ")
    assert not any(line.startswith(("| fa.fix-sign.v5 | dev | lrc/baseline | forged", "# Sheet")) for line in page.splitlines())
    for raw in ("<script", "<img", "<b>", "![](", "\x1b", "\x07", "\u202e"):
        assert raw not in page, raw
    import re

    assert not re.search(r"(?<!\\)\]\(", page)  # no link or image: every ']' before '(' is escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the text is still there to read


_MARKUP_CHARS = set("\\`*_[]|~#")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80))
def test_inline_text_is_one_line_with_no_control_html_or_unescaped_markup(text):
    from lrc.runtime.report.mdtext import inline

    out = inline(text)
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
                   for ch in out)
    assert "<" not in out and ">" not in out
    i = 0
    while i < len(out):  # every markup character comes escaped by a backslash
        if out[i] == "\\":
            assert i + 1 < len(out) and out[i + 1] in _MARKUP_CHARS, (text, out)
            i += 2
            continue
        assert out[i] not in _MARKUP_CHARS, (text, out)
        i += 1

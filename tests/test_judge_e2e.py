"""The judge protocol end to end (issue 12, seed 001 §5): a judge model behind the local
OpenAI-compatible stub server grades generate.variance-commentary runs of the embedded
reference models, through litellm, the journal and the report.

- a deterministic fail is a fail and is never shown to the judge, whatever it would say;
- a malformed or out-of-range judge reply is an invalid judgment: counted, never a pass,
  never retried;
- a killed execute resumes in the middle of its judge calls without paying one twice;
- the judge sees the rubric verbatim and an anonymized output, and its cost is grading cost,
  outside CPO.
"""

from __future__ import annotations

import json
from decimal import Decimal
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers.project import _ZERO_PRICE, KEY_ENV, LRC, PROFILE, REPO, journal_records, lrc_env, run_lrc, with_profile
from helpers.stub_server import StubServer
from support import pinned

KEY = "sk-lrc-judge-test-7c1d2e3f"
JUDGE = "openai/stub-judge"
WORKLOAD = pinned("generate.variance-commentary")
RUBRIC_TEXT_START = "You are reviewing a short budget-versus-actual commentary"

EDITION = """\
kind: edition
id: judged
version: 1
title: Judge protocol test edition
date: "2026-12-01"
standard: {standard}
analysis: {analysis}
workloads:
  - {workload}
systems:
  - {single_shot}
models:
  - id: lrc/oracle
    role: infrastructure-check
    sampling: {{temperature: 0}}
  - id: lrc/null
    role: floor-check
    sampling: {{temperature: 0}}
  - id: lrc/baseline
    role: baseline
    sampling: {{temperature: 0}}
judge:
  model: {judge}
  sampling: {{temperature: 0, max_tokens: 256}}
human_review:
  spot_check_rate: "0.20"
  disagreement_threshold: "0.10"
pricing:
{pricing}
n_per_cell: 15
repetitions: 1
window_hours: 72
seed: {{policy: public, value: ledgerrate-demo-2026-11}}
qualifying: {{min_pass_rate: "0.80"}}
brand: LedgerRate
footer: test
disclaimer: test edition, not a measurement
errata: []
"""

ZERO = _ZERO_PRICE  # an embedded model's explicit zero price, as the local test editions write it
JUDGE_PRICE = """\
  {model}:
    currency: USD
    per_tokens: 1000000
    input: "2"
    cached_input: "0.5"
    output: "8"
    as_of: "2026-12-01"
    source: test price of the stub judge
"""


@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from lrc.compiler.pipeline import compile_project

    root = tmp_path_factory.mktemp("judged-project")
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    pricing = "".join(ZERO.format(model=m) for m in ("lrc/oracle", "lrc/null", "lrc/baseline")) + JUDGE_PRICE.format(model=JUDGE)
    (root / "specs/editions/judged.yaml").write_text(EDITION.format(
        standard=pinned("ledgerrate"), analysis=pinned("lrc.analysis"), workload=WORKLOAD, single_shot=pinned("single-shot"),
        judge=JUDGE, pricing=pricing), encoding="utf-8")
    (root / PROFILE).write_text(f"kind: run-profile\nmodels:\n  {JUDGE}:\n    api_base: {stub.api_base}\n"
                                f"    api_key_env: {KEY_ENV}\n    max_concurrency: 2\n", encoding="utf-8")
    result = compile_project(root)
    assert not result.diagnostics.has_errors, "\n".join(str(d) for d in result.diagnostics.sorted())
    return root / "generated" / "judged" / "plan.lock"


def _completion(body: dict, content: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-judge", "object": "chat.completion", "created": 1764374400, "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
    }).encode("utf-8")


def _cells(out: Path) -> dict[str, dict]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return {c["model"]: c for c in summary["judge"]["cells"]}


def _csv_cells(out: Path) -> dict[str, dict]:
    import csv

    with open(out / "cells.csv", newline="", encoding="utf-8") as fh:
        return {row["model"]: row for row in csv.DictReader(fh)}


def test_a_deterministic_fail_is_never_judged_and_a_perfect_score_cannot_rescue_it(stub: StubServer, lock: Path, tmp_path: Path):
    stub.reset()
    stub.reply_hook = lambda body: _completion(body, '{"clarity": 5, "cause_attribution": 5, "justification": "excellent"}')
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY))
    assert res.returncode == 0, res.stderr
    requests = stub.snapshot()
    # Every judge request: the rubric verbatim as the system message, an output to grade.
    assert requests and all(r.model == "stub-judge" for r in requests)
    for r in requests:
        system, user = r.body["messages"]
        assert system["role"] == "system" and system["content"].startswith(RUBRIC_TEXT_START)
        assert "<<<OUTPUT-" in user["content"]
        for identity in ("lrc/oracle", "lrc/baseline", "lrc/null"):
            assert identity not in json.dumps(r.body)
    cells = _cells(out)
    # null answers nothing: all 15 fail deterministically, none reaches the judge, and the 5/5 the judge would give changes nothing.
    assert cells["lrc/null"]["judge_calls"] == 0 and cells["lrc/null"]["judge_skipped_after_deterministic_fail"] == 15
    assert _csv_cells(out)["lrc/null"]["passes"] == "0"
    judged = cells["lrc/oracle"]["judge_calls"] + cells["lrc/baseline"]["judge_calls"]
    assert len(requests) == judged == 30
    # The judge's tokens are grading cost: priced, reported, and never in the models' cost or CPO.
    assert all(c["grading_cost_usd"] != "0" for m, c in cells.items() if m != "lrc/null")
    assert all(row["cost_usd"] == "0" for row in _csv_cells(out).values())
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert "(not in CPO)" in card and "provisional" in card


BAD_REPLIES = (
    "5/5 — excellent commentary",                                                    # not JSON
    '{"clarity": 6, "cause_attribution": 5, "justification": "x"}',                 # out of range
    '{"clarity": 5, "justification": "x"}',                                          # a criterion missing
    '[{"clarity": 5, "cause_attribution": 5, "justification": "x"}]',               # not an object
    '{"clarity": "5", "cause_attribution": 5, "justification": "x"}',               # wrong type
    "",                                                                                # empty
)


def test_malformed_judge_replies_are_invalid_judgments_counted_and_never_a_pass(stub: StubServer, lock: Path, tmp_path: Path):
    stub.reset()
    sent: list[int] = []

    def hostile(body: dict) -> bytes:
        sent.append(1)
        return _completion(body, BAD_REPLIES[len(sent) % len(BAD_REPLIES)])

    stub.reply_hook = hostile
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY))
    # The oracle cannot pass without a valid judgment: calibration fails (exit 5), it is not hidden.
    assert res.returncode == 5, res.stderr
    cells = _cells(out)
    assert cells["lrc/oracle"]["invalid_judgments"] == 15 and cells["lrc/baseline"]["invalid_judgments"] == 15
    csv_cells = _csv_cells(out)
    assert csv_cells["lrc/oracle"]["passes"] == "0" and csv_cells["lrc/baseline"]["passes"] == "0"
    # Never retried: one request per judged run.
    assert len(stub.snapshot()) == 30
    judges = [r for r in journal_records(out) if r.get("type") == "judge"]
    assert len(judges) == 30 and all(j["judgment"] is None and j["invalid_judgment"] for j in judges)
    evaluation = json.loads(next((out / "runs").glob("*/lrc__oracle/single-shot/*/evaluation.json")).read_text(encoding="utf-8"))
    assert evaluation["verdict"] == "fail" and evaluation["failure"]["rule"] == "judge-invalid"
    assert evaluation["failure_categories"] == ["task-incomplete", "review-burden"]
    assert "invalid judgments (fails)" in (out / "rate-card.md").read_text(encoding="utf-8")


def test_a_killed_execute_resumes_its_judge_calls_without_paying_one_twice(stub: StubServer, lock: Path, tmp_path: Path):
    stub.reset()
    valid = '{"clarity": 4, "cause_attribution": 4, "justification": "good"}'

    def slow(body: dict) -> bytes:
        time.sleep(0.15)
        return _completion(body, valid)

    stub.reply_hook = slow
    out = tmp_path / "out"
    proc = subprocess.Popen([*LRC, *with_profile(["execute", lock, "--out", out, "--no-progress"])], env=lrc_env(KEY), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            journal = out / "journal.jsonl"
            if journal.exists() and journal.read_text(encoding="utf-8").count('"type":"judge"') >= 6:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the judge calls never started")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    journaled_before = sum(1 for r in journal_records(out) if r.get("type") == "judge")
    assert 6 <= journaled_before < 30
    stub.reply_hook = lambda body: _completion(body, valid)  # the resume need not be slow: nothing is killed
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY))
    assert res.returncode == 0, res.stderr
    judges = [r for r in journal_records(out) if r.get("type") == "judge"]
    assert len(judges) == 30 and len({(j["run"], j["role"]) for j in judges}) == 30
    # Calls in flight when the process died were paid and not journaled: at most the judge's concurrency (2).
    assert len(stub.snapshot()) <= 30 + 2
    assert _csv_cells(out)["lrc/oracle"]["passes"] == "15"


# -- the human spot-check through the real demo run (lrc review export / import, then lrc report) ----

def _fill(book: Path, values: dict[str, object], target: Path) -> Path:
    """A reviewer's workbook: every input cell of every sheet typed with `values` (by column name)."""
    from openpyxl import load_workbook

    from lrc.runtime.review import workbook as wbk

    wb = load_workbook(book)
    for ws in wb.worksheets:
        if ws.title in (wbk.META_SHEET, wbk.INFO_SHEET):
            continue
        headers = [(c.value or "").split(" (")[0] for c in ws[wbk.HEADER_ROW]]
        for r in range(wbk.FIRST_ROW, ws.max_row + 1):
            for col, name in enumerate(headers, start=1):
                if col > len(wbk._BASE_COLUMNS) and name in values:
                    ws.cell(row=r, column=col, value=values[name])
    wb.save(target)
    return target


def test_a_disagreeing_spot_check_of_the_demo_flags_its_cells_on_the_rate_card(small_demo_run, tmp_path: Path):
    """On the small demo (every workload and model of the demo at 2 items a cell)."""
    plan, source, res = small_demo_run
    assert res.returncode == 0, res.stderr
    out = tmp_path / "demo"
    shutil.copytree(source, out)
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert "provisional: judged results await the human spot-check" in card
    book = tmp_path / "review.xlsx"
    res = run_lrc("review", "export", out, "--out", book, "--plan", plan)
    assert res.returncode == 0, res.stderr
    # A reviewer who fails every commentary the judge passed, and finds every fact.
    filled = _fill(book, {"clarity": 1, "cause_attribution": 1, "justification": "no", "present": "yes", "evidence": "seen"},
                   tmp_path / "filled.xlsx")
    before = sum(1 for r in journal_records(out) if r.get("type") == "judge")
    res = run_lrc("review", "import", out, filled, "--plan", plan)
    assert res.returncode == 0, res.stderr
    records = journal_records(out)
    assert sum(1 for r in records if r.get("type") == "judge") == before  # the judge's records are never rewritten
    assert any(r.get("type") == "adjudication" for r in records)
    res = run_lrc("report", plan, "--out", out)
    assert res.returncode == 0, res.stderr
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert "MANUAL REGRADE REQUIRED" in card and "manual regrade required" in card
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    flagged = {(c["workload"], c["model"]) for c in summary["judge"]["cells"] if c["review"] == "manual regrade required"}
    assert (pinned("generate.variance-commentary"), "lrc/oracle") in flagged
    assert all("methodology_note" in c for c in summary["judge"]["cells"] if c["review"] == "manual regrade required")
    # A tampered workbook is refused and appends nothing.
    from openpyxl import load_workbook

    wb = load_workbook(filled)
    data = next(ws for ws in wb.worksheets if ws.title not in ("lrc", "Instructions"))
    data.cell(row=4, column=4, value="a better output")
    wb.save(tmp_path / "tampered.xlsx")
    size = (out / "journal.jsonl").stat().st_size
    res = run_lrc("review", "import", out, tmp_path / "tampered.xlsx", "--plan", plan)
    assert res.returncode == 1 and (out / "journal.jsonl").stat().st_size == size
    # A human grade the rubric's answer schema refuses, appended by hand, was counted as a pass
    # (found by a sweep of damaged adjudications): refused by `lrc report`, as is a grade naming
    # another rubric than its run's workload's, or a run this folder does not hold.
    grade = next(r for r in journal_records(out) if r.get("type") == "adjudication" and "clarity" in r["judgment"])
    journal = (out / "journal.jsonl").read_bytes()
    for damage, said in [({"judgment": {"clarity": 5, "cause_attribution": 5}}, "not a valid"),
                         ({"judgment": {"clarity": 5, "cause_attribution": 5, "justification": ["x"]}}, "not a valid"),
                         ({"rubric": "board-brief.v1"}, "names rubric 'board-brief.v1'"),
                         ({"run": grade["run"] + "9"}, "holds no judged run of that key")]:
        (out / "journal.jsonl").write_bytes(journal + (json.dumps({**grade, **damage}) + "\n").encode("utf-8"))
        res = run_lrc("report", plan, "--out", out)
        assert res.returncode == 4 and said in res.stderr and "it was not written by `lrc review import`" in res.stderr, res.stderr


def test_a_judge_of_a_graded_models_family_is_disclosed_and_a_second_judge_grades_a_sample(stub: StubServer, tmp_path: Path):
    """Seed §5.4: the stub judge is of the family of the graded stub model (both `openai/`), so the
    edition must fix a second judge (here the embedded reference judge), which grades a seeded
    sample of at least 20% of the workload's judged runs; the agreement is shown per cell."""
    from lrc.compiler.pipeline import compile_project

    root = tmp_path / "project"
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    pricing = "".join(ZERO.format(model=m) for m in ("lrc/oracle", "lrc/null", "lrc/baseline", "lrc/judge")) \
        + JUDGE_PRICE.format(model=JUDGE) + JUDGE_PRICE.format(model="openai/stub-model")
    text = EDITION.format(standard=pinned("ledgerrate"), analysis=pinned("lrc.analysis"), workload=WORKLOAD,
                          single_shot=pinned("single-shot"), judge=JUDGE, pricing=pricing)
    text = text.replace("judge:\n  model: openai/stub-judge\n", "judge:\n  model: openai/stub-judge\n  second_model: lrc/judge\n")
    text = text.replace("  - id: lrc/baseline\n", "  - id: openai/stub-model\n    role: candidate\n    sampling: {temperature: 0}\n"
                        "  - id: lrc/baseline\n")
    (root / "specs/editions/judged.yaml").write_text(text, encoding="utf-8")
    (root / PROFILE).write_text(f"kind: run-profile\nmodels:\n" + "".join(
        f"  {m}:\n    api_base: {stub.api_base}\n    api_key_env: {KEY_ENV}\n    max_concurrency: 2\n" for m in (JUDGE, "openai/stub-model")),
        encoding="utf-8")
    result = compile_project(root)
    assert not result.diagnostics.has_errors, "\n".join(str(d) for d in result.diagnostics.sorted())
    lock = root / "generated" / "judged" / "plan.lock"
    stub.reset()
    stub.reply_hook = lambda body: _completion(body, '{"clarity": 5, "cause_attribution": 5, "justification": "fine"}') \
        if body.get("model") == "stub-judge" else None
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY))
    assert res.returncode == 0, res.stderr
    records = journal_records(out)
    primary = [r for r in records if r.get("type") == "judge" and r["role"] == "primary"]
    second = [r for r in records if r.get("type") == "judge" and r["role"] == "second"]
    assert len(primary) == 30  # oracle and baseline pass every deterministic check; the stub model's triage answers fail them
    assert len(second) == 6 and {r["run"] for r in second} <= {r["run"] for r in primary}  # ceil(0.20 x 30)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge"]["same_family_models"] == ["openai/stub-model"]
    graded = sum((c["second_judge"] or {}).get("graded", 0) for c in summary["judge"]["cells"])
    agreed = sum((c["second_judge"] or {}).get("agreed", 0) for c in summary["judge"]["cells"])
    assert graded == 6 and 0 <= agreed <= 6
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert "Disclosure: the judge is of the same family as openai/stub-model" in card and "second judge agreed" in card
    # The same sample on a rerun: nothing more is called.
    before = len(stub.snapshot())
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY))
    assert res.returncode == 0 and len(stub.snapshot()) == before


def test_a_run_whose_judge_step_did_not_run_is_never_a_pass():
    """`judged` without a judge record: held out ("missing"), never a pass, whatever the deterministic checks said."""
    from lrc.runtime.judging import judged
    from lrc.runtime.lock import format as lockformat

    plan = lockformat.loads((REPO / "generated/demo/plan.lock").read_bytes())["plan"]
    workload = plan["workloads"][WORKLOAD]
    passed = {"results": [], "verdict": "pass", "outcome": "answered", "failed_checks": [], "answer": {}}
    evaluation = judged(passed, workload, plan, {}, None, None)
    assert evaluation["verdict"] == "fail" and evaluation["judge"] == "missing"
    failed = {**passed, "verdict": "fail"}
    assert judged(failed, workload, plan, {}, None, None)["judge"] == "skipped"


def test_the_estimate_forecasts_the_judge_calls_apart_from_the_models(lock: Path):
    res = run_lrc("estimate", lock, "--format", "json")
    assert res.returncode == 0, res.stderr
    fc = json.loads(res.stdout)
    [grading] = fc["grading"]
    assert (grading["workload"], grading["judge"]) == (WORKLOAD, JUDGE)
    assert grading["low"]["cost_usd"] == "0" and grading["low"]["input_tokens"] == 0
    expected, high = Decimal(grading["expected"]["cost_usd"]), Decimal(grading["high"]["cost_usd"])
    assert 0 < expected <= high
    # 45 runs (3 models x 15 items), one judgment each at the expected level, priced at the judge's frozen price.
    assert grading["expected"]["output_tokens"] == 45 * 120
    assert fc["total"]["expected"]["cost_usd"] == "0"  # the models are free; the judge is grading cost, counted apart
    assert any("judge calls (grading cost" in a for a in fc["assumptions"])
    text = run_lrc("estimate", lock)
    assert "Judge calls (grading cost" in text.stdout and "total with the judge" in text.stdout

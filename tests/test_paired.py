"""Paired comparisons of two systems on one model and the same items (runtime/report/paired.py)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from lrc.runtime.report.aggregate import aggregate, derived
from lrc.runtime.report.paired import categories_of, compare
from lrc.runtime.report.ratecard import rate_card_markdown
from lrc.runtime.report.stats import paired_bootstrap, sign_test

WL, TASK = "triage.ap-inbox.v1", "fa.fix-sign.v5"
ED = {"id": "t", "version": 1, "date": "2026-12-01", "brand": "LedgerRate", "footer": "f", "disclaimer": "d",
      "qualifying_threshold": "0.80", "bootstrap_seed": "seed", "repetitions": 1,
      "models": [{"id": "m/a", "role": "candidate"}, {"id": "lrc/oracle", "role": "infrastructure-check"}],
      "workloads": {WL: {"job": "Sort 1,000 AP emails", "volume_units": 1000, "units_per_item": 20, "unit": "email"}}}


def rec(workload: str, system: str, i: int, verdict: str, *, rep: int = 1, cost: str = "0.01", steps: int = 1,
        model: str = "m/a", categories: list[str] | None = None, failure: dict | None = None) -> dict:
    out = {"workload": workload, "model": model, "system": system, "item": f"item-{i:02d}", "item_index": i,
           "repetition": rep, "status": "graded", "verdict": verdict, "outcome": "answered",
           "usage": {"calls": steps}, "cost_usd": cost, "infra_retries": 0, "steps": steps,
           "failure_categories": categories if categories is not None else ([] if verdict == "pass" else ["wrong-answer"])}
    if failure:
        out["failure"] = failure
    return out


def demo_records() -> list[dict]:
    # 10 items: A (direct) passes 4, B (orchestrated) passes 8; B loses item 3, gains items 4-8.
    a = [rec(TASK, "direct", i, "pass" if i < 4 else "fail", cost="0.02",
             categories=["tool-error"] if i % 2 else ["wrong-answer"]) for i in range(10)]
    b = [rec(TASK, "orchestrated", i, "pass" if (i < 9 and i != 3) else "fail", cost="0.05", steps=4,
             categories=["step-or-budget-cap"] if i == 3 else ["wrong-answer"]) for i in range(10)]
    return a + b


def test_pair_figures():
    out = compare(demo_records(), ED)
    assert [(p["model"], p["a"], p["b"]) for p in out["pairs"]] == [("m/a", "direct", "orchestrated")]
    row = out["pairs"][0]["by_workload"][0]
    assert row["workload"] == TASK and row["items"] == 10
    assert row["diff"] == pytest.approx(0.8 - 0.4)
    assert (row["items_b_better"], row["items_a_better"], row["items_tied"]) == (5, 1, 4)
    assert row["sign_test_p"] == sign_test(5, 1) == pytest.approx(2 * 7 / 64)
    assert row["diff_low"] < row["diff"] < row["diff_high"]
    diffs = [Fraction(0)] * 3 + [Fraction(-1)] + [Fraction(1)] * 5 + [Fraction(0)]
    boot = paired_bootstrap(f"seed/{TASK}", diffs)
    assert (row["diff_low"], row["diff_high"]) == (boot["low"], boot["high"])
    a, b = row["a"], row["b"]
    assert (a["passes"], b["passes"]) == (4, 8)
    assert a["cpo_usd"] == "0.05" and b["cpo_usd"] == "0.0625"  # 0.20 / 4 and 0.50 / 8
    assert a["steps_per_run"] == "1" and b["steps_per_run"] == "4" and b["steps_per_success"] == "5"
    assert row["categories"]["removed"] == ["tool-error"]
    assert row["categories"]["added"] == ["step-or-budget-cap"]
    assert row["categories"]["counts"]["wrong-answer"] == {"a": 3, "b": 1}
    overall = out["pairs"][0]["overall"]
    assert overall["workloads"] == 1 and overall["diff"] == row["diff"] and overall["items"] == 10
    assert overall["diff_low"] < overall["diff"] < overall["diff_high"]


def test_pairs_only_on_shared_items_and_scored_models():
    records = demo_records()
    records = [r for r in records if not (r["system"] == "orchestrated" and r["item"] == "item-09")]
    records += [rec(TASK, "direct", i, "pass", model="lrc/oracle") for i in range(10)]
    records += [rec(TASK, "orchestrated", i, "pass", model="lrc/oracle") for i in range(10)]
    out = compare(records, ED)
    assert [p["model"] for p in out["pairs"]] == ["m/a"]  # the reference checks are not compared
    assert out["pairs"][0]["by_workload"][0]["items"] == 9 and out["pairs"][0]["by_workload"][0]["a"]["runs"] == 9


def test_overall_pools_workloads_and_order_is_stable():
    records = demo_records()
    records += [rec(WL, "agentic", i, "pass") for i in range(6)] + [rec(WL, "single-shot", i, "fail") for i in range(6)]
    out = compare(records, ED)
    assert [(p["a"], p["b"]) for p in out["pairs"]] == [("single-shot", "agentic"), ("direct", "orchestrated")]
    ss = out["pairs"][0]["by_workload"][0]
    assert ss["diff"] == 1.0 and ss["diff_low"] is None  # every item +1: no made-up [1, 1] interval
    assert ss["sign_test_p"] == pytest.approx(2 / 64)
    shuffled = list(records)
    random.Random(5).shuffle(shuffled)
    assert compare(shuffled, ED) == out


def test_overall_over_tasks_resamples_the_tasks():
    # Six tasks, one item each: per task no interval (one item); overall the tasks are resampled.
    records = []
    for t in range(6):
        task = f"fa.task-{t}.v1"
        records += [rec(task, "direct", 0, "fail"), rec(task, "orchestrated", 0, "pass" if t < 4 else "fail")]
    pair = compare(records, ED)["pairs"][0]
    assert all(r["items"] == 1 and r["diff_low"] is None for r in pair["by_workload"])
    overall = pair["overall"]
    assert overall["workloads"] == 6 and overall["items"] == 6 and overall["diff"] == pytest.approx(4 / 6)
    assert overall["diff_low"] < overall["diff"] < overall["diff_high"]  # never a zero-width interval
    assert overall["sign_test_p"] == sign_test(4, 0) == 0.125


def test_repetitions_pair_per_item_fractions():
    records = [rec(WL, "single-shot", i, "pass" if r == 1 else "fail", rep=r) for i in range(4) for r in (1, 2)]
    records += [rec(WL, "agentic", i, "pass", rep=r) for i in range(4) for r in (1, 2)]
    row = compare(records, ED)["pairs"][0]["by_workload"][0]
    assert row["items"] == 4 and row["diff"] == 0.5 and row["a"]["pass_rate"] == 0.5 and row["a"]["runs"] == 8


def test_no_pair_and_degenerate():
    assert compare([rec(WL, "single-shot", 0, "pass")], ED)["pairs"] == []
    assert compare([], ED)["pairs"] == []
    # All fail on both sides: difference 0, no interval, no invented CPO.
    records = [rec(WL, s, i, "fail") for s in ("single-shot", "agentic") for i in range(3)]
    row = compare(records, ED)["pairs"][0]["by_workload"][0]
    assert row["diff"] == 0 and row["diff_low"] is None and row["a"]["cpo_usd"] is None and row["sign_test_p"] == 1.0


def test_categories_prefer_primary_and_secondary():
    assert categories_of({"failure": {"primary": "wrong-answer", "secondary": ["tool-error"]},
                          "failure_categories": ["x"]}) == ["tool-error", "wrong-answer"]
    assert categories_of({"failure_categories": ["b", "a", "b"]}) == ["a", "b"]
    assert categories_of({}) == []


def test_rate_card_table():
    records = demo_records()
    ed = {**ED, "workloads": {}}
    cells = aggregate(records, ed)
    text = rate_card_markdown(cells, derived(cells, ed), ed, paired=compare(records, ed))
    assert "## Paired comparisons (same model, same items and repetitions)" in text
    assert "| m/a | direct → orchestrated | fa.fix-sign.v5 | 10 | 0.400 | 0.800 | +0.400 [" in text
    assert "| m/a | direct → orchestrated | **overall** | 10 |" in text
    assert "tool-error | step-or-budget-cap |" in text
    assert "seeded cluster bootstrap" in text

"""Paired comparisons: two systems on the same model, the same items and the same repetitions.

Seed 000 asks whether a harness, not the model, makes the difference (direct vs orchestrated);
the LedgerRate demo asks the same of single-shot vs agentic. Comparing two cells as if they were
independent samples throws away the pairing: both systems saw the same items, and an item that
is hard for one is usually hard for the other. So every figure here is over the items both
systems graded, and the interval resamples those items with their pairing kept
(`stats.PAIRED_METHOD` states the method; it is printed beside the table).

Pairs are every two systems that ran one workload or task on one scored model (flagship,
candidate, baseline; the reference checks are not compared), A the simpler system in a fixed
order (single-shot, agentic, direct, orchestrated, then by name), so the output order is stable.
Per pair: per workload or task and overall, the difference B − A of the mean per-item pass
fraction, its paired interval and an exact sign test; each system's cost per successful
outcome and steps per run and per success on the shared items; and the failure categories of
the runs that did not pass -- those only A shows (B removes them) and those only B shows (B
adds them).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable, Mapping

from lrc.runtime.pricing import decimal_str
from lrc.runtime.report.aggregate import CPO_PLACES, DEFAULT_REPLICATES, RATIO_PLACES, SCORED_ROLES, _quantize
from lrc.runtime.report.stats import MONEY_CONTEXT, PAIRED_METHOD, paired_bootstrap, sign_test

#: Which system of a pair is A (the baseline harness) and which is B.
SYSTEM_ORDER = {"single-shot": 0, "agentic": 1, "direct": 2, "orchestrated": 3}


def _order(system: str) -> tuple[int, str]:
    return SYSTEM_ORDER.get(system, 99), system


def categories_of(record: Mapping[str, Any]) -> list[str]:
    """A run's failure categories: `failure.primary` and `failure.secondary` when the
    taxonomy recorded them, else the record's `failure_categories` list; each once."""
    failure = record.get("failure")
    if isinstance(failure, Mapping) and failure.get("primary"):
        found = [failure["primary"], *(failure.get("secondary") or [])]
    else:
        found = list(record.get("failure_categories") or [])
    return sorted({str(c) for c in found})


def _decimal(num: Fraction | None) -> str | None:
    if num is None:
        return None
    exact = MONEY_CONTEXT.divide(Decimal(num.numerator), Decimal(num.denominator))
    return decimal_str(_quantize(exact, RATIO_PLACES))


def _side(system: str, runs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """One system's figures over the shared items' graded runs."""
    passes = sum(1 for r in runs if r["verdict"] == "pass")
    cost = sum((Decimal(r["cost_usd"]) for r in runs), Decimal(0))
    steps = sum(int(r.get("steps", 0)) for r in runs)
    fractions: dict[str, list[int]] = {}
    for r in runs:
        fractions.setdefault(r["item"], []).append(int(r["verdict"] == "pass"))
    rate = (sum((Fraction(sum(v), len(v)) for v in fractions.values()), Fraction(0)) / len(fractions)) if fractions else None
    counts: dict[str, int] = {}
    for r in runs:
        if r["verdict"] != "pass":
            for cat in categories_of(r):
                counts[cat] = counts.get(cat, 0) + 1
    cpo = None if not passes else decimal_str(_quantize(MONEY_CONTEXT.divide(cost, Decimal(passes)), CPO_PLACES))
    return {
        "system": system, "runs": len(runs), "passes": passes,
        "pass_rate": None if rate is None else float(rate),
        "cost_usd": decimal_str(cost), "cpo_usd": cpo,
        "steps": steps,
        "steps_per_run": _decimal(Fraction(steps, len(runs))) if runs else None,
        "steps_per_success": _decimal(Fraction(steps, passes)) if passes else None,
        "failure_categories": dict(sorted(counts.items())),
    }


def _categories(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, Any]:
    names = sorted({*a, *b})
    return {
        "removed": [c for c in names if a.get(c) and not b.get(c)],
        "added": [c for c in names if b.get(c) and not a.get(c)],
        "counts": {c: {"a": a.get(c, 0), "b": b.get(c, 0)} for c in names},
    }


def _row(seed: str, diffs: list[Fraction], a_runs: list, b_runs: list, a: str, b: str,
         replicates: int) -> dict[str, Any]:
    boot = paired_bootstrap(seed, diffs, replicates)
    side_a, side_b = _side(a, a_runs), _side(b, b_runs)
    better, worse = sum(1 for d in diffs if d > 0), sum(1 for d in diffs if d < 0)
    return {
        "items": len(diffs),
        "diff": None if boot["estimate"] is None else float(boot["estimate"]),
        "diff_low": boot["low"], "diff_high": boot["high"],
        "items_b_better": better, "items_a_better": worse, "items_tied": len(diffs) - better - worse,
        "sign_test_p": sign_test(better, worse),
        "a": side_a, "b": side_b,
        "categories": _categories(side_a["failure_categories"], side_b["failure_categories"]),
    }


def compare(records: Iterable[Mapping[str, Any]], edition: Mapping[str, Any]) -> dict[str, Any]:
    """summary.json's `paired`: every pair of systems sharing a scored model and a workload or
    task, per workload or task and overall (see the module docstring)."""
    roles = {m["id"]: m["role"] for m in edition.get("models", [])}
    seed = str(edition["bootstrap_seed"])
    replicates = int(edition.get("bootstrap_replicates", DEFAULT_REPLICATES))
    graded: dict[tuple[str, str, str], dict[str, list[Mapping[str, Any]]]] = {}
    for r in records:
        if r.get("status") != "graded" or roles.get(r["model"]) not in SCORED_ROLES:
            continue
        graded.setdefault((r["workload"], r["model"], r["system"]), {}).setdefault(r["item"], []).append(r)
    pairs: dict[tuple[str, str, str], list[tuple[str, dict, dict]]] = {}
    for workload, model in sorted({(w, m) for w, m, _ in graded}):
        systems = sorted({s for w, m, s in graded if (w, m) == (workload, model)}, key=_order)
        for i, a in enumerate(systems):
            for b in systems[i + 1:]:
                pairs.setdefault((model, a, b), []).append(
                    (workload, graded[(workload, model, a)], graded[(workload, model, b)]))
    out = []
    for (model, a, b), per_workload in sorted(pairs.items(), key=lambda kv: (kv[0][0], _order(kv[0][1]), _order(kv[0][2]))):
        rows, diffs_all, a_all, b_all = [], [], [], []
        for workload, runs_a, runs_b in per_workload:
            shared = sorted(set(runs_a) & set(runs_b), key=lambda item: (runs_a[item][0].get("item_index", 0), item))
            diffs = [_fraction(runs_b[i]) - _fraction(runs_a[i]) for i in shared]
            a_runs = [r for i in shared for r in runs_a[i]]
            b_runs = [r for i in shared for r in runs_b[i]]
            rows.append({"workload": workload, **_row(f"{seed}/{workload}", diffs, a_runs, b_runs, a, b, replicates)})
            diffs_all += diffs
            a_all += a_runs
            b_all += b_runs
        if len(rows) == 1:  # one workload or task: the overall is its row (and no second set of draws)
            overall = {k: v for k, v in rows[0].items() if k != "workload"}
        else:
            overall = _row(f"{seed}/paired/{model}/{a}/{b}", diffs_all, a_all, b_all, a, b, replicates)
        out.append({"model": model, "a": a, "b": b, "by_workload": rows, "overall": {"workloads": len(rows), **overall}})
    return {"method": PAIRED_METHOD, "order": "A is the first system of each pair in the order "
            + ", ".join(SYSTEM_ORDER) + " (then by name); differences are B − A", "pairs": out}


def _fraction(runs: list[Mapping[str, Any]]) -> Fraction:
    return Fraction(sum(1 for r in runs if r["verdict"] == "pass"), len(runs))

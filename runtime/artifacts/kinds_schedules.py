"""Roll-forward task kinds: roll one schedule (debt, fixed assets, deferred revenue) into a new quarter.

Why: a roll-forward is where finance models break most quietly — an opening typed in rather
than linked to the previous closing, a movement left out of the closing, a value pasted where
a formula belongs — and the statements downstream look plausible either way.

The agent receives a five-quarter model whose statements and Inputs already hold the fifth
quarter, but whose one schedule has an empty fifth column (column G, the period header kept):
the balance sheet therefore does not balance there. It must roll the schedule forward with
the formulas of the quarters before. Region: that schedule's column G, the line rows only.

| kind | schedule | baseline (lrc/baseline's partial job) |
|---|---|---|
| roll-debt-forward | Debt: opening, drawdowns, repayments, closing, interest | types the right numbers as values (fails fa.formula-presence) |
| roll-fixed-assets-forward | FixedAssets: opening, additions, disposals, depreciation, closing | leaves depreciation out of the closing (fails fa.rollforward) |
| roll-deferred-revenue-forward | DeferredRevenue: opening, billings, recognised, closing | copies the previous opening instead of linking the previous closing (fails fa.rollforward) |
"""

from __future__ import annotations

from typing import Callable

from lrc.runtime.artifacts import model
from lrc.runtime.artifacts.deterministic import workbook_bytes
from lrc.runtime.artifacts.task_common import MODEL, Task, balance_checks, formula_check, with_formula_check

NEW = 4  # the fifth quarter, 0-based


def _blank(a: model.Assumptions, sheet: str):
    wb = model.build(a)
    c = model.col(NEW)
    for row, _text, _ in model.STATEMENTS[sheet]:
        wb[sheet][f"{c}{row}"] = None
    return wb


def _values(a: model.Assumptions, sheet: str):
    wb = model.build(a)
    values = model.reference_values(a)
    c = model.col(NEW)
    for row, _text, _ in model.STATEMENTS[sheet]:
        wb[sheet][f"{c}{row}"] = values[(sheet, f"{c}{row}")]
    return wb


def _with(a: model.Assumptions, sheet: str, row: int, template: str):
    wb = model.build(a)
    wb[sheet][f"{model.col(NEW)}{row}"] = model.formula(template, NEW)
    return wb


BASELINES: dict[str, Callable[[model.Assumptions], object]] = {
    "Debt": lambda a: _values(a, "Debt"),
    "FixedAssets": lambda a: _with(a, "FixedAssets", 8, "={c}4+{c}5-{c}6"),
    "DeferredRevenue": lambda a: _with(a, "DeferredRevenue", 4, "={p}4"),
}
NOUN = {"Debt": "debt", "FixedAssets": "fixed-asset", "DeferredRevenue": "deferred-revenue"}


def roll_forward(kind: str, sheet: str, seed: str) -> Task:
    a = model.assumptions(seed, 5)
    c = model.col(NEW)
    lines = model.STATEMENTS[sheet]
    region = [f"{sheet}!{c}{lines[0][0]}:{c}{lines[-1][0]}"]
    checks = with_formula_check(balance_checks(list(a.periods), region, []),
                                formula_check([(sheet, text) for _, text, _ in lines], [c]))
    return Task(kind, seed,
                f"The {NOUN[sheet]} schedule (sheet {sheet}) stops at {a.periods[NEW - 1]}. Roll it forward into "
                f"{a.periods[NEW]} (column {c}) with the same formulas as the quarters before: the opening is the previous "
                f"closing, the movements come from Inputs column {c}, the closing foots. The statements already link to it; "
                "change nothing else.",
                {MODEL: workbook_bytes(_blank(a, sheet))}, MODEL, workbook_bytes(model.build(a)), checks,
                workbook_bytes(BASELINES[sheet](a)))


MAKERS: dict[str, Callable[[str], Task]] = {
    "roll-debt-forward": lambda seed: roll_forward("roll-debt-forward", "Debt", seed),
    "roll-fixed-assets-forward": lambda seed: roll_forward("roll-fixed-assets-forward", "FixedAssets", seed),
    "roll-deferred-revenue-forward": lambda seed: roll_forward("roll-deferred-revenue-forward", "DeferredRevenue", seed),
}

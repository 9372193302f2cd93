"""Seeded task kinds of seed 000: input artifacts, the oracle (expected) artifact, the checks.

Why: a task is gradable only if its expected artifact exists and the deterministic checks
tell it apart from doing nothing. Each kind here makes, from a seed, the files the agent
receives, the file it must hand back as the oracle would, and the declared checks (validator
id + params, the shape a task spec's `checks` will carry) with the permitted region.

| kind | the agent receives | it must | region |
|---|---|---|---|
| extend-quarter | model.xlsx: 4 quarters, Inputs already holding the 5th | add the 5th quarter to every statement and schedule, every formula kept, names extended | column G of IS, BS, CF and the schedules; the defined names over periods |
| fix-cash-flow | model.xlsx whose cash from operations leaves out a line in one quarter (the cash flow does not tie, the balance sheet does not balance) | repair the cash-flow statement | CF!C4:F17 |
| fix-sign | model.xlsx with one operating-expense formula of the wrong sign | correct that sign, nothing else | the one cell |
| refresh-deck-table | model.xlsx after a late accrual, deck.pptx built before it | refresh the deck's key-figures table from the model | slide 2's table |

The null output (the input handed back) fails each kind's checks; the oracle passes all of
them (tests/test_artifacts_calibration.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from lrc.runtime.artifacts import deck, model
from lrc.runtime.artifacts.deterministic import presentation_bytes, workbook_bytes
from lrc.runtime.checks.rng import Stream

MODEL, DECK = "model.xlsx", "deck.pptx"
KINDS = ("extend-quarter", "fix-cash-flow", "fix-sign", "refresh-deck-table")
STATEMENT_SHEETS = tuple(model.STATEMENTS)


@dataclass(frozen=True)
class Task:
    kind: str
    seed: str
    objective: str
    inputs: dict[str, bytes]
    output: str  # the file the agent hands back
    oracle: bytes  # the expected content of `output`
    checks: list[dict[str, Any]]


def _balance_checks(periods: list[str], region: list[str], names: list[str], extends: bool = False) -> list[dict[str, Any]]:
    """The workbook checks every model task declares (with the task's region)."""
    rows = {sheet: [label for _, label, _ in lines] for sheet, lines in model.STATEMENTS.items()}
    rows["Inputs"] = [label for _, label, _, _ in model.INPUT_ROWS]
    return [
        {"validator": "fa.identities", "params": {
            "file": MODEL,
            "balance": {"sheet": "BS", "assets": "Total assets", "liabilities_equity": "Total liabilities and equity"},
            "cash": {"sheet": "CF", "net_change": "Net change in cash", "closing": "Closing cash", "balance_sheet": "BS", "cash": "Cash"}}},
        {"validator": "fa.rollforward", "params": {"file": MODEL, "schedules": [
            {"sheet": "FixedAssets", "opening": "Opening", "additions": ["Additions"], "reductions": ["Disposals", "Depreciation"],
             "closing": "Closing", "summary": {"sheet": "BS", "row": "Fixed assets, net"}},
            {"sheet": "Debt", "opening": "Opening", "additions": ["Drawdowns"], "reductions": ["Repayments"],
             "closing": "Closing", "summary": {"sheet": "BS", "row": "Debt"}},
            {"sheet": "DeferredRevenue", "opening": "Opening", "additions": ["Billings"], "reductions": ["Recognised"],
             "closing": "Closing", "summary": {"sheet": "BS", "row": "Deferred revenue"}}]}},
        {"validator": "fa.reference-integrity", "params": {"file": MODEL, "names": {
            **{n: {"sheet": s, "row": _label(s, r)} for n, (s, r) in sorted(model.NAMED_ROWS.items())},
            "TaxRate": {"cell": "!".join(model.TAX_RATE_CELL)}}}},
        {"validator": "fa.required-parts", "params": {"file": MODEL, "sheets": list(model.SHEETS), "rows": rows}},
        {"validator": "fa.conventions", "params": {"file": MODEL, "unit": model.UNIT, "sheets": list(model.SHEETS),
                                                   "expense_rows": {s: list(v) for s, v in model.EXPENSE_ROWS.items()},
                                                   "periods": periods}},
        {"validator": "fa.preservation", "params": {"file": MODEL, "region": region, "extends": extends}},
        {"validator": "fa.unchanged-outside", "params": {"file": MODEL, "region": region, "names": names}},
    ]


def _label(sheet: str, row: int) -> str:
    return next(label for r, label, _ in model.STATEMENTS[sheet] if r == row)


# The key formulas a model must keep: totals, links and the roll-forward closings
# (not every line, so a planted value elsewhere is seen by the family that owns it).
KEY_FORMULAS = (
    ("IS", "Tax"), ("IS", "Net income"), ("BS", "Cash"), ("BS", "Total assets"), ("BS", "Total liabilities and equity"),
    ("CF", "Cash from operations"), ("CF", "Net change in cash"), ("CF", "Closing cash"),
    ("FixedAssets", "Opening"), ("FixedAssets", "Closing"), ("Debt", "Closing"), ("DeferredRevenue", "Closing"),
)


def _pattern(sheet: str, label: str) -> str:
    return next(t for _, l, t in model.STATEMENTS[sheet] if l == label)


def _formula_check(cells: list[tuple[str, str]], columns: Any = "periods") -> dict[str, Any]:
    return {"validator": "fa.formula-presence", "params": {"file": MODEL, "cells": [
        {"sheet": s, "row": label, "columns": columns, "pattern": _pattern(s, label)} for s, label in cells]}}


def extend_quarter(seed: str) -> Task:
    a = model.assumptions(seed, 5)
    new = model.col(4)
    given = workbook_bytes(model.build(a, statement_periods=4))
    oracle = workbook_bytes(model.build(a))
    region = [f"{s}!{new}:{new}" for s in STATEMENT_SHEETS]
    checks = _balance_checks(list(a.periods), region, sorted(model.NAMED_ROWS), extends=True)
    checks.insert(2, _formula_check(list(KEY_FORMULAS), [new]))
    return Task("extend-quarter", seed,
                f"Extend the model by one quarter ({a.periods[4]}): add it to every statement and schedule with the same "
                f"formulas as the quarters before, using the assumptions already in Inputs column {new}, and extend the "
                "defined names over the new quarter. Change nothing else.",
                {MODEL: given}, MODEL, oracle, checks)


def fix_cash_flow(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    k = 1 + Stream(seed, "artifacts.tasks", "fix-cash-flow").below(3)
    c = model.col(k)
    broken = replace(a, adjustments={("CF", f"{c}8"): f"=SUM({c}4:{c}6)"})
    region = [f"CF!{model.col(0)}4:{model.col(3)}17"]
    checks = _balance_checks(list(a.periods), region, [])
    checks.insert(2, _formula_check([("CF", "Cash from operations"), ("CF", "Net change in cash"), ("CF", "Closing cash")]))
    return Task("fix-cash-flow", seed,
                "The cash-flow statement does not tie to the balance sheet's change in cash in one quarter. Find the "
                "error in the cash-flow statement and repair its formula so the statements tie; change nothing outside "
                "the cash-flow statement.",
                {MODEL: workbook_bytes(model.build(broken))}, MODEL, workbook_bytes(model.build(a)), checks)


def fix_sign(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    k = Stream(seed, "artifacts.tasks", "fix-sign").below(4)
    c = model.col(k)
    broken = replace(a, adjustments={("IS", f"{c}7"): f"=Inputs!{c}6"})
    region = [f"IS!{c}7"]
    checks = _balance_checks(list(a.periods), region, [])
    checks.insert(2, _formula_check([("IS", "Operating expenses"), ("IS", "Net income")]))
    return Task("fix-sign", seed,
                "One expense in the income statement carries the wrong sign. Correct that one formula and touch "
                "nothing else.",
                {MODEL: workbook_bytes(model.build(broken))}, MODEL, workbook_bytes(model.build(a)), checks)


def refresh_deck_table(seed: str) -> Task:
    before = model.assumptions(seed, 4)
    accrual = Stream(seed, "artifacts.tasks", "refresh-deck-table").money(1_000, 3_000)
    after = model.with_input(before, "opex", 3, before.inputs["opex"][3] + accrual)
    stale = presentation_bytes(deck.build(before, model.reference_values(before)))
    fresh = presentation_bytes(deck.build(after, model.reference_values(after)))
    rows = [{"label": label, "sheet": sheet, "row": _label(sheet, row)} for label, sheet, row in deck.TABLE_ROWS]
    checks = [
        {"validator": "fa.required-parts", "params": {"file": DECK, "slides": [
            {"title": deck.SLIDE_TITLES[0]},
            {"title": deck.SLIDE_TITLES[1], "objects": [{"shape": deck.TABLE_SHAPE}]},
            {"title": deck.SLIDE_TITLES[2], "objects": [{"shape": deck.CHART_SHAPE}]},
            {"title": deck.SLIDE_TITLES[3]}]}},
        {"validator": "fa.summary-ties", "params": {"file": DECK, "model_file": MODEL, "slide": 2, "shape": deck.TABLE_SHAPE,
                                                    "rows": rows}},
        {"validator": "fa.preservation", "params": {"file": DECK}},
        {"validator": "fa.unchanged-outside", "params": {"file": DECK, "region": [{"slide": 2, "shape": deck.TABLE_SHAPE}]}},
    ]
    return Task("refresh-deck-table", seed,
                f"A late accrual was booked in {before.periods[3]} after the board deck was made. Refresh the deck's "
                "key-figures table from the model so every figure matches it; keep the table an editable table and "
                "change nothing else in the deck.",
                {MODEL: workbook_bytes(model.build(after)), DECK: stale}, DECK, fresh, checks)


MAKERS = {"extend-quarter": extend_quarter, "fix-cash-flow": fix_cash_flow, "fix-sign": fix_sign,
          "refresh-deck-table": refresh_deck_table}


def make(kind: str, seed: str) -> Task:
    return MAKERS[kind](seed)

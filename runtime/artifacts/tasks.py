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

Their baselines (lrc/baseline's partial job): extend-quarter leaves the defined names over the
old quarters; fix-cash-flow and fix-sign type the right number over the faulty formula;
refresh-deck-table retypes the net-income row only.

The other kinds live in their own modules, each with its table: `kinds_schedules`
(roll-debt-forward, roll-fixed-assets-forward, roll-deferred-revenue-forward), `kinds_dcf`
(build-dcf, fix-dcf, add-sensitivity-table, budget-vs-actual), `kinds_repairs`
(fix-broken-reference, restore-defined-name, fix-period-header-order, fix-units) and
`kinds_deck` (refresh-deck-chart, refresh-deck-text, add-required-slide). `make(kind, seed)`
is the one entry point for all of them; a task spec names a kind `lrc.task.<kind>`.

The null output (the input handed back) fails each kind's checks, the baseline fails some and
passes others, the oracle passes all of them (tests/test_artifacts_calibration.py).
"""

from __future__ import annotations

from dataclasses import replace

from openpyxl.workbook.defined_name import DefinedName

from lrc.runtime.artifacts import deck, kinds_dcf, kinds_deck, kinds_repairs, kinds_schedules, model
from lrc.runtime.artifacts.deterministic import presentation_bytes, workbook_bytes
from lrc.runtime.artifacts.task_common import (
    DECK, MODEL, STATEMENT_SHEETS, Task, balance_checks as _balance_checks, formula_check as _formula_check,
    label as _label, load_deck,
)
from lrc.runtime.checks.rng import Stream

__all__ = ["DECK", "KINDS", "MODEL", "Task", "make"]

# The key formulas a model must keep: totals, links and the roll-forward closings
# (not every line, so a planted value elsewhere is seen by the family that owns it).
KEY_FORMULAS = (
    ("IS", "Tax"), ("IS", "Net income"), ("BS", "Cash"), ("BS", "Total assets"), ("BS", "Total liabilities and equity"),
    ("CF", "Cash from operations"), ("CF", "Net change in cash"), ("CF", "Closing cash"),
    ("FixedAssets", "Opening"), ("FixedAssets", "Closing"), ("Debt", "Closing"), ("DeferredRevenue", "Closing"),
)


def extend_quarter(seed: str) -> Task:
    a = model.assumptions(seed, 5)
    new = model.col(4)
    given = workbook_bytes(model.build(a, statement_periods=4))
    oracle = workbook_bytes(model.build(a))
    # baseline: every statement extended, the defined names left over the four old quarters
    half = model.build(a)
    for name, (sheet, row) in sorted(model.NAMED_ROWS.items()):
        half.defined_names[name] = DefinedName(name, attr_text=f"{sheet}!${model.col(0)}${row}:${model.col(3)}${row}")
    region = [f"{s}!{new}:{new}" for s in STATEMENT_SHEETS]
    checks = _balance_checks(list(a.periods), region, sorted(model.NAMED_ROWS), extends=True)
    checks.insert(2, _formula_check(list(KEY_FORMULAS), [new]))
    return Task("extend-quarter", seed,
                f"Extend the model by one quarter ({a.periods[4]}): add it to every statement and schedule with the same "
                f"formulas as the quarters before, using the assumptions already in Inputs column {new}, and extend the "
                "defined names over the new quarter. Change nothing else.",
                {MODEL: given}, MODEL, oracle, checks, workbook_bytes(half))


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
                {MODEL: workbook_bytes(model.build(broken))}, MODEL, workbook_bytes(model.build(a)), checks,
                _plugged(a, "CF", f"{c}8"))


def _plugged(a: model.Assumptions, sheet: str, coord: str) -> bytes:
    """The baseline's repair: the right number typed over the cell (the totals tie, the formula is gone)."""
    wb = model.build(a)
    wb[sheet][coord] = model.reference_values(a)[(sheet, coord)]
    return workbook_bytes(wb)


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
                {MODEL: workbook_bytes(model.build(broken))}, MODEL, workbook_bytes(model.build(a)), checks,
                _plugged(a, "IS", f"{c}7"))


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
                {MODEL: workbook_bytes(model.build(after)), DECK: stale}, DECK, fresh, checks, _half_refreshed(stale, after))


def _half_refreshed(stale: bytes, after: model.Assumptions) -> bytes:
    """The baseline's refresh: the net-income row retyped, the rows it feeds left stale."""
    prs = load_deck(stale)
    values = model.reference_values(after)
    table = next(s for s in prs.slides[1].shapes if s.name == deck.TABLE_SHAPE).table
    i = next(k for k, (text, _, _) in enumerate(deck.TABLE_ROWS, start=1) if text == "Net income")
    for j in range(len(after.periods)):
        table.cell(i, j + 1).text_frame.paragraphs[0].runs[0].text = deck.figure_text(values[("IS", f"{model.col(j)}13")])
    return presentation_bytes(prs)


MAKERS = {"extend-quarter": extend_quarter, "fix-cash-flow": fix_cash_flow, "fix-sign": fix_sign,
          "refresh-deck-table": refresh_deck_table,
          **kinds_schedules.MAKERS, **kinds_dcf.MAKERS, **kinds_repairs.MAKERS, **kinds_deck.MAKERS}
KINDS = tuple(MAKERS)


def make(kind: str, seed: str) -> Task:
    """The one entry point: task `kind` (a task spec's `lrc.task.<kind>`) made from `seed`."""
    if kind not in MAKERS:
        raise KeyError(f"unknown task kind {kind!r} (known: {', '.join(KINDS)})")
    return MAKERS[kind](seed)

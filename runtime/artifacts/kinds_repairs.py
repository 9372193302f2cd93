"""Repair task kinds: one planted fault in an otherwise sound model, to be mended in place.

Why: the protocol's "correct X without touching anything else" tasks test two things at
once — that the fault is found and fixed the way the model's own formulas say, and that the
fix stays inside its region (fa.unchanged-outside). Each fault here is one a reviewer meets
in real models, and each has a tempting shortcut, which is lrc/baseline's partial job.

| kind | the planted fault | the fix (region) | baseline |
|---|---|---|---|
| fix-broken-reference | one quarter's `BS` fixed-assets line reads `=FixedAssets!#REF!` | link it to the schedule's closing again (that cell) | types the right number over it |
| restore-defined-name | the name `TaxRate` refers to `Inputs!#REF!`: every tax line is #REF! | point it at Inputs!$B$17 (the name only) | points it one row off, at the blank B16 |
| fix-period-header-order | two adjacent quarter headers swapped on IS and on CF | put them back in order (those header cells) | fixes IS only |
| fix-units | the Debt schedule's opening is in dollars (×1000) and its unit line says "USD" | restate the opening in thousands and the unit line (Debt!A2, Debt!B7) | corrects the unit line only |
"""

from __future__ import annotations

from typing import Callable

from openpyxl.workbook.defined_name import DefinedName

from lrc.runtime.artifacts import model
from lrc.runtime.artifacts.deterministic import workbook_bytes
from lrc.runtime.artifacts.task_common import MODEL, Task, balance_checks, formula_check, with_formula_check
from lrc.runtime.checks.rng import Stream


def _quarter(seed: str, kind: str, n: int = 4) -> int:
    return Stream(seed, "artifacts.kinds_repairs", kind).below(n)


def fix_broken_reference(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    c = model.col(_quarter(seed, "fix-broken-reference"))
    coord = f"{c}6"
    broken = model.build(a)
    broken["BS"][coord] = "=FixedAssets!#REF!"
    plugged = model.build(a)
    plugged["BS"][coord] = model.reference_values(a)[("BS", coord)]
    checks = with_formula_check(balance_checks(list(a.periods), [f"BS!{coord}"], []),
                                formula_check([("BS", "Fixed assets, net"), ("BS", "Total assets")]))
    return Task("fix-broken-reference", seed,
                "A formula on the balance sheet refers to a range that was deleted and shows #REF!, so nothing below it "
                "computes. Restore the reference the way the other quarters have it; change nothing else.",
                {MODEL: workbook_bytes(broken)}, MODEL, workbook_bytes(model.build(a)), checks, workbook_bytes(plugged))


def _tax_name(wb, text: str):
    wb.defined_names["TaxRate"] = DefinedName("TaxRate", attr_text=text)
    return wb


def restore_defined_name(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    sheet, coord = model.TAX_RATE_CELL
    checks = balance_checks(list(a.periods), [], ["TaxRate"])
    return Task("restore-defined-name", seed,
                f"The defined name TaxRate no longer refers to the tax-rate assumption, and every tax line shows #REF!. "
                f"Point the name at the tax rate on {sheet} again; do not change any formula or cell.",
                {MODEL: workbook_bytes(_tax_name(model.build(a), f"{sheet}!#REF!"))}, MODEL, workbook_bytes(model.build(a)),
                checks, workbook_bytes(_tax_name(model.build(a), f"{sheet}!${coord[0]}${int(coord[1:]) - 1}")))


SWAPPED = ("IS", "CF")


def _swap(a: model.Assumptions, k: int, sheets: tuple[str, ...]):
    wb = model.build(a)
    first, second = f"{model.col(k)}{model.HEADER_ROW}", f"{model.col(k + 1)}{model.HEADER_ROW}"
    for sheet in sheets:
        ws = wb[sheet]
        ws[first].value, ws[second].value = ws[second].value, ws[first].value
    return wb


def fix_period_header_order(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    k = _quarter(seed, "fix-period-header-order", 3)
    region = [f"{s}!{model.col(k)}{model.HEADER_ROW}:{model.col(k + 1)}{model.HEADER_ROW}" for s in SWAPPED]
    checks = balance_checks(list(a.periods), region, [])
    return Task("fix-period-header-order", seed,
                "On some statements two quarter headers are out of order, so the columns read as the wrong quarters. "
                "Put every period header back in chronological order without moving any figures; change nothing else.",
                {MODEL: workbook_bytes(_swap(a, k, SWAPPED))}, MODEL, workbook_bytes(model.build(a)), checks,
                workbook_bytes(_swap(a, k, SWAPPED[1:])))


def _units(a: model.Assumptions, label: str, factor: int):
    wb = model.build(a)
    wb["Debt"]["A2"] = label
    wb["Debt"]["B7"] = a.opening["debt"] * factor
    return wb


def fix_units(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    checks = balance_checks(list(a.periods), ["Debt!A2", "Debt!B7"], [])
    return Task("fix-units", seed,
                f"The debt schedule was pasted in from a system that reports in dollars: its unit line and its opening "
                f"balance are not in {model.UNIT} like the rest of the model, and the balance sheet no longer balances. "
                "Restate that schedule's opening and unit line; change nothing else.",
                {MODEL: workbook_bytes(_units(a, "USD", 1000))}, MODEL, workbook_bytes(model.build(a)), checks,
                workbook_bytes(_units(a, model.UNIT, 1000)))


MAKERS: dict[str, Callable[[str], Task]] = {
    "fix-broken-reference": fix_broken_reference, "restore-defined-name": restore_defined_name,
    "fix-period-header-order": fix_period_header_order, "fix-units": fix_units,
}

"""Valuation and planning task kinds: a DCF sheet, its sensitivity grid, a budget-vs-actual template.

Why: seed 000 names a DCF sheet and a budget template among its artifacts, and their usual
faults are formula faults — discounting by the year instead of the quarter, a terminal value
with the wrong sign in its denominator, a grid of pasted numbers, an actual column typed in —
that only a check of the formulas and of their totals sees.

The model gains two assumptions on Inputs (`WACC` in B19, `TerminalGrowth` in B20, both
defined names, annual rates) and, depending on the kind, these sheets (same layout as the
statements: A1 title, A2 unit, row 3 headers, labels in column A):

- DCF: per quarter free cash flow (= cash from operations + cash from investing), the period
  number, the discount factor `ROUND(1/(1+WACC)^(t/4),6)` and the present value; then in
  column C the terminal value (Gordon growth on the last quarter's annualised free cash flow),
  its present value and the enterprise value (= Σ present values + PV of terminal value);
- Sensitivity: the enterprise value recomputed for five WACCs (rows, B5:B9) by five terminal
  growth rates (columns, C4:G4), every cell a formula over the DCF's cash flows; the centre
  cell (E7) is the DCF's own case;
- Budget: one quarter's budget per line (values), and the actual (linked to the income
  statement), the variance and the variance % the agent fills in.

| kind | the agent receives | it must | region | baseline |
|---|---|---|---|---|
| build-dcf | the model with WACC and growth on Inputs | add the DCF sheet | the new sheet DCF | stops before the terminal value |
| fix-dcf | the model with a DCF that discounts by years and adds growth to WACC in the terminal value | correct both formulas | DCF!C6:F6, DCF!C9 | corrects the discounting only |
| add-sensitivity-table | the model, its DCF, and a Sensitivity template with its axes | fill the grid with formulas | Sensitivity!C5:G9 | ignores the growth axis (every column the centre growth) |
| budget-vs-actual | the model and a Budget template holding the budget | fill actual, variance, variance % | Budget!D4:F10 | leaves variance % empty |
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

from openpyxl.styles import Font
from openpyxl.workbook.defined_name import DefinedName

from lrc.runtime.artifacts import model
from lrc.runtime.artifacts.deterministic import workbook_bytes
from lrc.runtime.artifacts.task_common import MODEL, Task, balance_checks, with_formula_check
from lrc.runtime.checks.rng import Stream

N = 4  # quarters
BOLD, BLUE = Font(bold=True), Font(color="FF0000FF")
WACC_CELL, GROWTH_CELL = "B19", "B20"
DEFINED = {"WACC": {"cell": f"Inputs!{WACC_CELL}"}, "TerminalGrowth": {"cell": f"Inputs!{GROWTH_CELL}"}}
LAST = model.col(N - 1)  # F
# DCF rows: (row, label, formula template, columns) -- columns "periods" or one column
DCF_ROWS = (
    (4, "Free cash flow", "=CF!{c}8+CF!{c}11", "periods"),
    (6, "Discount factor", "=ROUND(1/(1+WACC)^({c}5/4),6)", "periods"),
    (7, "Present value", "=ROUND({c}4*{c}6,2)", "periods"),
    (9, "Terminal value", f"=ROUND({LAST}4*4*(1+TerminalGrowth)/(WACC-TerminalGrowth),2)", "C"),
    (10, "PV of terminal value", f"=ROUND(C9*{LAST}6,2)", "C"),
    (11, "Enterprise value", f"=SUM(C7:{LAST}7)+C10", "C"),
)
PERIOD_ROW = (5, "Period")
EV_TIE = {"cell": "DCF!C11", "equals": [f"DCF!C7:{LAST}7", "DCF!C10"]}
GRID_ROWS, GRID_COLS = range(5, 10), ("C", "D", "E", "F", "G")
BUDGET_LINES = ((4, "Revenue", 4), (5, "Cost of sales", 5), (6, "Gross profit", 6), (7, "Operating expenses", 7),
                (8, "Depreciation", 8), (9, "Operating profit", 9), (10, "Net income", 13))
BUDGET_PATTERNS = (("D", "=IS!" + LAST + "{i}"), ("E", "=D{r}-C{r}"), ("F", "=IF(C{r}=0,0,ROUND(E{r}/ABS(C{r}),4))"))


def rates(seed: str) -> tuple[Decimal, Decimal]:
    """The seeded annual WACC (8.0–12.0%) and terminal growth (1.0–3.0%), in steps of 0.1%."""
    s = Stream(seed, "artifacts.kinds_dcf")
    return Decimal(s.child("wacc").between(80, 120)) / 1000, Decimal(s.child("growth").between(10, 30)) / 1000


def base(seed: str):
    """The four-quarter model with WACC and terminal growth on Inputs (and their names)."""
    a = model.assumptions(seed, N)
    wb = model.build(a)
    ws = wb["Inputs"]
    wacc, growth = rates(seed)
    for coord, text, value in ((WACC_CELL, "WACC (annual)", wacc), (GROWTH_CELL, "Terminal growth (annual)", growth)):
        ws[f"A{coord[1:]}"] = text
        ws[coord] = value
        ws[coord].number_format = model.RATE_FORMAT
        ws[coord].font = BLUE
    for name, spec in DEFINED.items():
        sheet, coord = spec["cell"].split("!")
        wb.defined_names[name] = DefinedName(name, attr_text=f"{sheet}!${coord[0]}${coord[1:]}")
    return a, wb


def _sheet(wb, a: model.Assumptions, name: str, title: str, headers: list[str]):
    ws = wb.create_sheet(name)
    ws["A1"], ws["A2"] = f"{a.company}: {title}", model.UNIT
    ws["A1"].font = BOLD
    for j, text in enumerate(["Line item", "", *headers], start=1):
        if text:
            ws.cell(model.HEADER_ROW, j, text).font = BOLD
    ws.column_dimensions["A"].width = 34
    return ws


def add_dcf(wb, a: model.Assumptions, rows=DCF_ROWS, overrides: dict[int, str] | None = None) -> None:
    """The DCF sheet; `overrides` replaces a row's template (a planted fault)."""
    ws = _sheet(wb, a, "DCF", "Discounted cash flow", list(a.periods[:N]))
    ws.cell(PERIOD_ROW[0], 1, PERIOD_ROW[1])
    for i in range(N):
        ws.cell(PERIOD_ROW[0], model.FIRST_COL + i, i + 1).font = BLUE
    for row, text, template, columns in rows:
        template = (overrides or {}).get(row, template)
        ws.cell(row, 1, text).font = BOLD if row == 11 else Font()
        targets = range(N) if columns == "periods" else [0]
        for i in targets:
            c = ws.cell(row, model.FIRST_COL + i, model.formula(template, i))
            c.number_format = "0.000000" if row == 6 else model.MONEY_FORMAT


def dcf_checks(a: model.Assumptions, region: list[str], with_sheet: bool = True) -> list[dict[str, Any]]:
    checks = balance_checks(list(a.periods), region, [], sheets=(*model.SHEETS, "DCF"),
                            rows={"DCF": [text for _, text, _, _ in DCF_ROWS]}, defined=DEFINED, ties=[EV_TIE])
    cells = [{"sheet": "DCF", "row": text, "columns": columns if columns == "periods" else [columns], "pattern": template}
             for _, text, template, columns in DCF_ROWS]
    return with_formula_check(checks, {"validator": "fa.formula-presence", "params": {"file": MODEL, "cells": cells}})


def build_dcf(seed: str) -> Task:
    a, given = base(seed)
    _, done = base(seed)
    add_dcf(done, a)
    _, half = base(seed)
    add_dcf(half, a, rows=DCF_ROWS[:3])
    return Task("build-dcf", seed,
                "Add a sheet DCF valuing the company from the model: per quarter, free cash flow (cash from operations "
                "plus cash from investing), the period number, the quarterly discount factor from the annual WACC on "
                "Inputs and the present value; then a Gordon-growth terminal value on the last quarter's annualised free "
                "cash flow, its present value, and the enterprise value. Use the defined names WACC and TerminalGrowth; "
                "every number a formula. Change no other sheet.",
                {MODEL: workbook_bytes(given)}, MODEL, workbook_bytes(done), dcf_checks(a, ["DCF"]), workbook_bytes(half))


WRONG_DISCOUNT = "=ROUND(1/(1+WACC)^{c}5,6)"
WRONG_TERMINAL = f"=ROUND({LAST}4*4*(1+TerminalGrowth)/(WACC+TerminalGrowth),2)"


def fix_dcf(seed: str) -> Task:
    a, given = base(seed)
    add_dcf(given, a, overrides={6: WRONG_DISCOUNT, 9: WRONG_TERMINAL})
    _, done = base(seed)
    add_dcf(done, a)
    _, half = base(seed)
    add_dcf(half, a, overrides={9: WRONG_TERMINAL})
    region = [f"DCF!C6:{LAST}6", "DCF!C9"]
    return Task("fix-dcf", seed,
                "Two rows of the DCF sheet carry a wrong formula: one in the discounting and "
                "one in the terminal value. The periods are quarters and the rates on Inputs are annual. Correct the "
                "faulty formulas (every cell of a faulty row) and change nothing else.",
                {MODEL: workbook_bytes(given)}, MODEL, workbook_bytes(done), dcf_checks(a, region), workbook_bytes(half))


def grid_formula(c: str, r: int, growth: str | None = None) -> str:
    """Sensitivity cell {c}{r}: the DCF's enterprise value, rounded as the DCF rounds, at WACC $B{r}
    and growth {c}$4 (or `growth`, the baseline's fixed cell)."""
    g = growth or f"{c}$4"
    w = f"$B{r}"
    pv = "+".join(f"ROUND(DCF!${x}$4*ROUND(1/(1+{w})^(DCF!${x}$5/4),6),2)" for x in ("C", "D", "E", LAST))
    tv = f"ROUND(DCF!${LAST}$4*4*(1+{g})/({w}-{g}),2)"
    return f"={pv}+ROUND({tv}*ROUND(1/(1+{w})^(DCF!${LAST}$5/4),6),2)"


def add_sensitivity(wb, a: model.Assumptions, seed: str, fill: str = "") -> None:
    """The Sensitivity template (axes and labels); `fill` "oracle" or "baseline" fills the grid."""
    wacc, growth = rates(seed)
    ws = wb.create_sheet("Sensitivity")
    ws["A1"], ws["A2"] = f"{a.company}: Enterprise value sensitivity (WACC by terminal growth)", model.UNIT
    ws["A1"].font = BOLD
    ws["A4"] = "Terminal growth"
    ws.column_dimensions["A"].width = 34
    for j, c in enumerate(GRID_COLS):
        cell = ws[f"{c}4"]
        cell.value, cell.number_format, cell.font = growth + Decimal(j - 2) / 200, model.RATE_FORMAT, BLUE
    for i, r in enumerate(GRID_ROWS):
        w = wacc + Decimal(i - 2) / 100
        ws[f"A{r}"] = grid_label(i)
        ws[f"B{r}"] = w
        ws[f"B{r}"].number_format, ws[f"B{r}"].font = model.RATE_FORMAT, BLUE
        for c in GRID_COLS:
            cell = ws[f"{c}{r}"]
            cell.number_format = model.MONEY_FORMAT
            if fill:
                cell.value = grid_formula(c, r, "$E$4" if fill == "baseline" else None)


def grid_label(i: int) -> str:
    return f"WACC case {i + 1}"


def add_sensitivity_table(seed: str) -> Task:
    a = model.assumptions(seed, N)
    books = []
    for fill in ("", "oracle", "baseline"):
        _, wb = base(seed)
        add_dcf(wb, a)
        add_sensitivity(wb, a, seed, fill)
        books.append(workbook_bytes(wb))
    region = ["Sensitivity!C5:G9"]
    checks = balance_checks(list(a.periods), region, [], sheets=(*model.SHEETS, "DCF", "Sensitivity"),
                            rows={"Sensitivity": [grid_label(i) for i in range(len(GRID_ROWS))]}, defined=DEFINED,
                            ties=[EV_TIE, {"cell": "Sensitivity!E7", "equals": ["DCF!C11"]}])
    cells = [{"sheet": "Sensitivity", "row": grid_label(i), "columns": list(GRID_COLS), "pattern": grid_formula("{c}", r)}
             for i, r in enumerate(GRID_ROWS)]
    checks = with_formula_check(checks, {"validator": "fa.formula-presence", "params": {"file": MODEL, "cells": cells}})
    return Task("add-sensitivity-table", seed,
                "Fill the Sensitivity sheet's grid (C5:G9): each cell the enterprise value the DCF sheet would give at "
                "the row's WACC (column B) and the column's terminal growth (row 4), as a formula over the DCF's free "
                "cash flows and periods, rounded as the DCF rounds; the centre cell is the DCF's own case. Change nothing "
                "else.",
                {MODEL: books[0]}, MODEL, books[1], checks, books[2])


def add_budget(wb, a: model.Assumptions, seed: str, columns: tuple[str, ...] = ()) -> None:
    """The Budget template for the last quarter; `columns` ("D", "E", "F") are filled with formulas."""
    values = model.reference_values(a)
    ws = _sheet(wb, a, "Budget", f"Budget vs actual, {a.periods[N - 1]}", ["Budget", "Actual", "Variance", "Variance %"])
    s = Stream(seed, "artifacts.kinds_dcf", "budget")
    for r, text, is_row in BUDGET_LINES:
        ws.cell(r, 1, text)
        actual = values[("IS", f"{LAST}{is_row}")]
        deviation = Decimal(s.child(r).between(-80, 80)) / 1000
        ws[f"C{r}"] = (actual * (1 + deviation)).quantize(model.CENT)
        ws[f"C{r}"].number_format, ws[f"C{r}"].font = model.MONEY_FORMAT, BLUE
        for c, template in BUDGET_PATTERNS:
            cell = ws[f"{c}{r}"]
            cell.number_format = model.RATE_FORMAT if c == "F" else model.MONEY_FORMAT
            if c in columns:
                cell.value = template.format(r=r, i=is_row)


def budget_vs_actual(seed: str) -> Task:
    a = model.assumptions(seed, N)
    books = []
    for columns in ((), ("D", "E", "F"), ("D", "E")):
        wb = model.build(a)
        add_budget(wb, a, seed, columns)
        books.append(workbook_bytes(wb))
    region = ["Budget!D4:F10"]
    ties = [{"cell": f"Budget!E{r}", "equals": [f"IS!{LAST}{i}", f"-Budget!C{r}"]} for r, _, i in BUDGET_LINES]
    checks = balance_checks(list(a.periods), region, [], sheets=(*model.SHEETS, "Budget"),
                            rows={"Budget": [text for _, text, _ in BUDGET_LINES]}, ties=ties)
    cells = [{"sheet": "Budget", "row": text, "columns": [c], "pattern": template.replace("{i}", str(i))}
             for _, text, i in BUDGET_LINES for c, template in BUDGET_PATTERNS]
    checks = with_formula_check(checks, {"validator": "fa.formula-presence", "params": {"file": MODEL, "cells": cells}})
    return Task("budget-vs-actual", seed,
                f"Complete the Budget sheet for {a.periods[N - 1]}: for every line, Actual links to the income statement, "
                "Variance is actual minus budget, and Variance % is the variance over the budget's absolute value "
                "(rounded to 4 places, 0 when the budget is 0), all as formulas. Change nothing else.",
                {MODEL: books[0]}, MODEL, books[1], checks, books[2])


MAKERS: dict[str, Callable[[str], Task]] = {
    "build-dcf": build_dcf, "fix-dcf": fix_dcf, "add-sensitivity-table": add_sensitivity_table,
    "budget-vs-actual": budget_vs_actual,
}

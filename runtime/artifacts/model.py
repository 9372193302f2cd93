"""The seeded three-statement model workbook: seed 000's main input artifact.

Why: seed 000's tasks hand an agent a working finance spreadsheet. This module writes one
from a seed — the same seed, the same bytes — with every statement linked by real formulas,
so an agent that pastes values, breaks a link or flips a sign is visible to the validators.

Layout (every sheet): A1 the title, A2 the unit ("USD thousands"), row 3 the headers (A3
"Line item", B3 "Opening", C3 onwards one quarter each, "Q1 FY26"), line items from row 4
with their label in column A. Column B holds the opening balances (balance sheet and
schedules); the income and cash-flow statements leave it empty.

- Inputs: the assumptions per quarter (plain values: money in exact cents, rates as exact
  decimals) and the tax rate in B17 (defined name `TaxRate`);
- IS, BS, CF: the income statement, balance sheet and cash-flow statement, all formulas;
  expenses are negative on the IS (the sign convention the validators check); cash on the
  balance sheet is the cash-flow statement's closing cash, so A = L + E holds by formulas;
- FixedAssets, Debt, DeferredRevenue: roll-forward schedules (opening + additions −
  reductions = closing, each period's opening the previous closing), feeding the statements.

Defined names: `TaxRate` (used by the tax formula) and `Revenue`, `NetIncome`,
`ClosingCash`, `TotalAssets` over the statement rows of every period.

Money never passes through a float: assumptions are Decimal cents (openpyxl writes a
Decimal's exact text), and `reference_values` computes every cell in Decimal with Excel's
ROUND (half away from zero), which is what the oracle deck and the engine tests use.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal

from openpyxl.utils import get_column_letter

from lrc.runtime.artifacts.deterministic import workbook_bytes
from lrc.runtime.checks.rng import Stream

UNIT = "USD thousands"
HEADER_ROW = 3
OPENING_COL = 2  # column B
FIRST_COL = 3  # column C: the first quarter
MONEY_FORMAT = "#,##0.00;(#,##0.00)"
RATE_FORMAT = "0.00%"
CENT = Decimal("0.01")
COMPANIES = ("Harbor Ridge Supply Co.", "Northwind Fabrication Ltd", "Bluestem Analytics Inc.",
             "Copperline Logistics plc", "Meridian Dental Group", "Tallgrass Software AG")

# Inputs: (row, label, key, kind) -- kind "money" or "rate"
INPUT_ROWS = (
    (4, "Revenue", "revenue", "money"),
    (5, "Cost of sales % of revenue", "cogs_pct", "rate"),
    (6, "Operating expenses", "opex", "money"),
    (7, "Capital expenditure", "capex", "money"),
    (8, "Disposals at net book value", "disposals", "money"),
    (9, "Depreciation", "depreciation", "money"),
    (10, "Debt drawdowns", "drawdowns", "money"),
    (11, "Debt repayments", "repayments", "money"),
    (12, "Interest rate per quarter", "interest_rate", "rate"),
    (13, "Billings", "billings", "money"),
    (14, "Revenue recognised from deferred", "recognised", "money"),
    (15, "Receivables at period end", "receivables", "money"),
)
TAX_RATE_CELL = ("Inputs", "B17")

# Statements and schedules: (row, label, formula template); {c} is the period's column, {p} the one before.
STATEMENTS: dict[str, tuple[tuple[int, str, str], ...]] = {
    "IS": (
        (4, "Revenue", "=Inputs!{c}4"),
        (5, "Cost of sales", "=-ROUND({c}4*Inputs!{c}5,2)"),
        (6, "Gross profit", "={c}4+{c}5"),
        (7, "Operating expenses", "=-Inputs!{c}6"),
        (8, "Depreciation", "=-FixedAssets!{c}7"),
        (9, "Operating profit", "=SUM({c}6:{c}8)"),
        (10, "Interest expense", "=-Debt!{c}8"),
        (11, "Profit before tax", "={c}9+{c}10"),
        (12, "Tax", "=-ROUND({c}11*TaxRate,2)"),
        (13, "Net income", "={c}11+{c}12"),
    ),
    "BS": (
        (4, "Cash", "=CF!{c}17"),
        (5, "Receivables", "=Inputs!{c}15"),
        (6, "Fixed assets, net", "=FixedAssets!{c}8"),
        (7, "Total assets", "=SUM({c}4:{c}6)"),
        (8, "Deferred revenue", "=DeferredRevenue!{c}7"),
        (9, "Debt", "=Debt!{c}7"),
        (10, "Total liabilities", "=SUM({c}8:{c}9)"),
        (11, "Share capital", "={p}11"),
        (12, "Retained earnings", "={p}12+IS!{c}13"),
        (13, "Total equity", "=SUM({c}11:{c}12)"),
        (14, "Total liabilities and equity", "={c}10+{c}13"),
    ),
    "CF": (
        (4, "Net income", "=IS!{c}13"),
        (5, "Depreciation", "=FixedAssets!{c}7"),
        (6, "Change in receivables", "=BS!{p}5-BS!{c}5"),
        (7, "Change in deferred revenue", "=BS!{c}8-BS!{p}8"),
        (8, "Cash from operations", "=SUM({c}4:{c}7)"),
        (9, "Capital expenditure", "=-FixedAssets!{c}5"),
        (10, "Disposal proceeds", "=FixedAssets!{c}6"),
        (11, "Cash from investing", "=SUM({c}9:{c}10)"),
        (12, "Debt drawdowns", "=Debt!{c}5"),
        (13, "Debt repayments", "=-Debt!{c}6"),
        (14, "Cash from financing", "=SUM({c}12:{c}13)"),
        (15, "Net change in cash", "={c}8+{c}11+{c}14"),
        (16, "Opening cash", "=BS!{p}4"),
        (17, "Closing cash", "={c}16+{c}15"),
    ),
    "FixedAssets": (
        (4, "Opening", "={p}8"),
        (5, "Additions", "=Inputs!{c}7"),
        (6, "Disposals", "=Inputs!{c}8"),
        (7, "Depreciation", "=Inputs!{c}9"),
        (8, "Closing", "={c}4+{c}5-{c}6-{c}7"),
    ),
    "Debt": (
        (4, "Opening", "={p}7"),
        (5, "Drawdowns", "=Inputs!{c}10"),
        (6, "Repayments", "=Inputs!{c}11"),
        (7, "Closing", "={c}4+{c}5-{c}6"),
        (8, "Interest", "=ROUND({c}4*Inputs!{c}12,2)"),
    ),
    "DeferredRevenue": (
        (4, "Opening", "={p}7"),
        (5, "Billings", "=Inputs!{c}13"),
        (6, "Recognised", "=Inputs!{c}14"),
        (7, "Closing", "={c}4+{c}5-{c}6"),
    ),
}
SHEETS = ("Inputs", *STATEMENTS)
TITLES = {"Inputs": "Assumptions", "IS": "Income statement", "BS": "Balance sheet", "CF": "Cash-flow statement",
          "FixedAssets": "Fixed-asset roll-forward", "Debt": "Debt roll-forward",
          "DeferredRevenue": "Deferred-revenue roll-forward"}
# The opening column: (sheet, row) -> an opening value's key, or a formula in column B
OPENING = {
    ("BS", 4): "cash", ("BS", 5): "receivables", ("BS", 6): "=FixedAssets!B8", ("BS", 7): "=SUM(B4:B6)",
    ("BS", 8): "=DeferredRevenue!B7", ("BS", 9): "=Debt!B7", ("BS", 10): "=SUM(B8:B9)",
    ("BS", 11): "share_capital", ("BS", 12): "retained_earnings", ("BS", 13): "=SUM(B11:B12)", ("BS", 14): "=B10+B13",
    ("FixedAssets", 8): "fixed_assets", ("Debt", 7): "debt", ("DeferredRevenue", 7): "deferred_revenue",
}
# Defined names over a statement row (every period), and the single-cell TaxRate
NAMED_ROWS = {"Revenue": ("IS", 4), "NetIncome": ("IS", 13), "ClosingCash": ("CF", 17), "TotalAssets": ("BS", 7)}
EXPENSE_ROWS = {"IS": ("Cost of sales", "Operating expenses", "Depreciation", "Interest expense", "Tax")}
RATE_ROWS = {5, 12}  # Inputs rows that are rates


@dataclass(frozen=True)
class Assumptions:
    """Everything a model is built from; `periods` are the quarter headers, in order."""

    company: str
    periods: tuple[str, ...]
    inputs: dict[str, tuple[Decimal, ...]]  # key -> one value per period
    opening: dict[str, Decimal]
    tax_rate: Decimal
    adjustments: dict[tuple[str, str], str] = field(default_factory=dict)  # (sheet, coord) -> replacement formula


def quarter_label(fy: int, q: int) -> str:
    return f"Q{q} FY{fy % 100:02d}"


def assumptions(seed: str, n_periods: int = 5) -> Assumptions:
    """Seeded assumptions for `n_periods` quarters (the first four a fiscal year)."""
    s = Stream(seed, "artifacts.model")
    fy = 24 + s.child("fy").below(4)
    periods = tuple(quarter_label(fy + (i // 4), i % 4 + 1) for i in range(n_periods))
    draws = {
        "revenue": (90_000, 150_000), "opex": (15_000, 25_000), "capex": (2_000, 6_000), "disposals": (0, 1_000),
        "depreciation": (2_000, 4_000), "drawdowns": (0, 10_000), "repayments": (0, 8_000),
        "billings": (5_000, 12_000), "recognised": (4_000, 11_000), "receivables": (20_000, 40_000),
    }
    inputs: dict[str, tuple[Decimal, ...]] = {}
    for key, (lo, hi) in draws.items():
        st = s.child("inputs", key)
        inputs[key] = tuple(st.money(lo, hi) for _ in periods)
    st = s.child("inputs", "cogs_pct")
    inputs["cogs_pct"] = tuple(Decimal(st.between(3_500, 5_500)) / 10_000 for _ in periods)
    st = s.child("inputs", "interest_rate")
    inputs["interest_rate"] = tuple(Decimal(st.between(100, 250)) / 10_000 for _ in periods)
    so = s.child("opening")
    opening = {k: so.money(lo, hi) for k, (lo, hi) in {
        "cash": (10_000, 30_000), "receivables": (20_000, 40_000), "fixed_assets": (50_000, 90_000),
        "debt": (50_000, 90_000), "deferred_revenue": (10_000, 20_000), "share_capital": (20_000, 40_000)}.items()}
    opening["retained_earnings"] = (opening["cash"] + opening["receivables"] + opening["fixed_assets"]
                                    - opening["debt"] - opening["deferred_revenue"] - opening["share_capital"])
    tax_rate = Decimal(s.child("tax").between(20, 30)) / 100
    return Assumptions(COMPANIES[s.child("company").below(len(COMPANIES))], periods, inputs, opening, tax_rate)


def col(i: int) -> str:
    """Column letter of period i (0-based)."""
    return get_column_letter(FIRST_COL + i)


def formula(template: str, i: int) -> str:
    return template.format(c=col(i), p=get_column_letter(FIRST_COL + i - 1))


def build(a: Assumptions, statement_periods: int | None = None):
    """The openpyxl Workbook: Inputs for every period of `a`, statements for the first
    `statement_periods` (all by default)."""
    from openpyxl import Workbook
    from openpyxl.styles import Font
    from openpyxl.workbook.defined_name import DefinedName

    n_in = len(a.periods)
    n_st = n_in if statement_periods is None else statement_periods
    bold, blue = Font(bold=True), Font(color="FF0000FF")
    wb = Workbook()
    wb.remove(wb.active)
    for name in SHEETS:
        ws = wb.create_sheet(name)
        n = n_in if name == "Inputs" else n_st
        ws["A1"] = f"{a.company}: {TITLES[name]}"
        ws["A1"].font = bold
        ws["A2"] = UNIT
        ws.cell(HEADER_ROW, 1, "Line item").font = bold
        if name != "Inputs":
            ws.cell(HEADER_ROW, OPENING_COL, "Opening").font = bold
        for i in range(n):
            ws.cell(HEADER_ROW, FIRST_COL + i, a.periods[i]).font = bold
        ws.column_dimensions["A"].width = 34
        for i in range(n_in + 1):
            ws.column_dimensions[get_column_letter(OPENING_COL + i)].width = 13
        ws.freeze_panes = "C4"
    ws = wb["Inputs"]
    for row, label, key, kind in INPUT_ROWS:
        ws.cell(row, 1, label)
        for i in range(n_in):
            c = ws.cell(row, FIRST_COL + i, a.inputs[key][i])
            c.number_format = RATE_FORMAT if kind == "rate" else MONEY_FORMAT
            c.font = blue
    ws[TAX_RATE_CELL[1]] = a.tax_rate
    ws[TAX_RATE_CELL[1]].number_format = RATE_FORMAT
    ws[TAX_RATE_CELL[1]].font = blue
    ws["A17"] = "Tax rate"
    for sheet, lines in STATEMENTS.items():
        ws = wb[sheet]
        for row, label, template in lines:
            ws.cell(row, 1, label)
            total = label.startswith(("Total", "Net ", "Closing", "Cash from", "Gross", "Operating profit", "Profit"))
            if total:
                ws.cell(row, 1).font = bold
            opening = OPENING.get((sheet, row))
            if opening is not None:
                c = ws.cell(row, OPENING_COL, opening if opening.startswith("=") else a.opening[opening])
                c.number_format = MONEY_FORMAT
                if not opening.startswith("="):
                    c.font = blue
            for i in range(n_st):
                c = ws.cell(row, FIRST_COL + i, formula(template, i))
                c.number_format = MONEY_FORMAT
                if total:
                    c.font = bold
    for (sheet, coord), text in sorted(a.adjustments.items()):
        wb[sheet][coord] = text
    wb.defined_names["TaxRate"] = DefinedName("TaxRate", attr_text=f"Inputs!${TAX_RATE_CELL[1][0]}${TAX_RATE_CELL[1][1:]}")
    for name, (sheet, row) in sorted(NAMED_ROWS.items()):
        wb.defined_names[name] = DefinedName(name, attr_text=f"{sheet}!${col(0)}${row}:${col(n_st - 1)}${row}")
    return wb


def three_statement(seed: str, periods: int = 4) -> bytes:
    """The seeded model with `periods` quarters, as deterministic xlsx bytes."""
    a = assumptions(seed, periods)
    return workbook_bytes(build(a))


# -- the reference computation (Decimal, Excel semantics) -------------------------------------

def _round(x: Decimal, places: int = 2) -> Decimal:
    return x.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def reference_values(a: Assumptions, statement_periods: int | None = None) -> dict[tuple[str, str], Decimal]:
    """Every statement and schedule cell's value, computed in Decimal the way the formulas say
    (without `a.adjustments`: this is what a correct model computes)."""
    n = len(a.periods) if statement_periods is None else statement_periods
    v: dict[tuple[str, str], Decimal] = {}
    o = a.opening
    v[("FixedAssets", "B8")], v[("Debt", "B7")], v[("DeferredRevenue", "B7")] = o["fixed_assets"], o["debt"], o["deferred_revenue"]
    v[("BS", "B4")], v[("BS", "B5")], v[("BS", "B6")] = o["cash"], o["receivables"], o["fixed_assets"]
    v[("BS", "B7")] = o["cash"] + o["receivables"] + o["fixed_assets"]
    v[("BS", "B8")], v[("BS", "B9")] = o["deferred_revenue"], o["debt"]
    v[("BS", "B10")] = o["deferred_revenue"] + o["debt"]
    v[("BS", "B11")], v[("BS", "B12")] = o["share_capital"], o["retained_earnings"]
    v[("BS", "B13")] = o["share_capital"] + o["retained_earnings"]
    v[("BS", "B14")] = v[("BS", "B10")] + v[("BS", "B13")]
    for i in range(n):
        c, p = col(i), get_column_letter(FIRST_COL + i - 1)
        x = {k: vals[i] for k, vals in a.inputs.items()}
        g = lambda sheet, row, cc=c: v[(sheet, f"{cc}{row}")]  # noqa: E731
        def put(sheet, row, value, cc=c):
            v[(sheet, f"{cc}{row}")] = value
        put("FixedAssets", 4, g("FixedAssets", 8, p)); put("FixedAssets", 5, x["capex"])
        put("FixedAssets", 6, x["disposals"]); put("FixedAssets", 7, x["depreciation"])
        put("FixedAssets", 8, g("FixedAssets", 4) + x["capex"] - x["disposals"] - x["depreciation"])
        put("Debt", 4, g("Debt", 7, p)); put("Debt", 5, x["drawdowns"]); put("Debt", 6, x["repayments"])
        put("Debt", 7, g("Debt", 4) + x["drawdowns"] - x["repayments"])
        put("Debt", 8, _round(g("Debt", 4) * x["interest_rate"]))
        put("DeferredRevenue", 4, g("DeferredRevenue", 7, p)); put("DeferredRevenue", 5, x["billings"])
        put("DeferredRevenue", 6, x["recognised"])
        put("DeferredRevenue", 7, g("DeferredRevenue", 4) + x["billings"] - x["recognised"])
        put("IS", 4, x["revenue"]); put("IS", 5, -_round(x["revenue"] * x["cogs_pct"]))
        put("IS", 6, g("IS", 4) + g("IS", 5)); put("IS", 7, -x["opex"]); put("IS", 8, -x["depreciation"])
        put("IS", 9, g("IS", 6) + g("IS", 7) + g("IS", 8)); put("IS", 10, -g("Debt", 8))
        put("IS", 11, g("IS", 9) + g("IS", 10)); put("IS", 12, -_round(g("IS", 11) * a.tax_rate))
        put("IS", 13, g("IS", 11) + g("IS", 12))
        put("BS", 5, x["receivables"]); put("BS", 6, g("FixedAssets", 8)); put("BS", 8, g("DeferredRevenue", 7))
        put("BS", 9, g("Debt", 7)); put("BS", 10, g("BS", 8) + g("BS", 9))
        put("BS", 11, g("BS", 11, p)); put("BS", 12, g("BS", 12, p) + g("IS", 13))
        put("BS", 13, g("BS", 11) + g("BS", 12)); put("BS", 14, g("BS", 10) + g("BS", 13))
        put("CF", 4, g("IS", 13)); put("CF", 5, x["depreciation"]); put("CF", 6, g("BS", 5, p) - g("BS", 5))
        put("CF", 7, g("BS", 8) - g("BS", 8, p)); put("CF", 8, sum((g("CF", r) for r in (4, 5, 6, 7)), Decimal(0)))
        put("CF", 9, -x["capex"]); put("CF", 10, x["disposals"]); put("CF", 11, g("CF", 9) + g("CF", 10))
        put("CF", 12, x["drawdowns"]); put("CF", 13, -x["repayments"]); put("CF", 14, g("CF", 12) + g("CF", 13))
        put("CF", 15, g("CF", 8) + g("CF", 11) + g("CF", 14)); put("CF", 16, g("BS", 4, p))
        put("CF", 17, g("CF", 16) + g("CF", 15))
        put("BS", 4, g("CF", 17)); put("BS", 7, g("BS", 4) + g("BS", 5) + g("BS", 6))
    return v


def with_input(a: Assumptions, key: str, period: int, value: Decimal) -> Assumptions:
    """`a` with one assumption changed (a late adjustment, a perturbation)."""
    vals = list(a.inputs[key])
    vals[period] = value
    return replace(a, inputs={**a.inputs, key: tuple(vals)})

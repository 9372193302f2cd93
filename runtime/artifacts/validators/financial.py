"""Financial correctness: families 1 (identities), 2 (roll-forwards, a deck tied to the model)
and 6 (unit, sign and period conventions)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from openpyxl.utils import get_column_letter, range_boundaries

from lrc.runtime.artifacts import model
from lrc.runtime.artifacts.deck import figure_text
from lrc.runtime.artifacts.views import DeckView, Submission, as_decimal, money, previous
from lrc.runtime.artifacts.validators.common import (
    DEFAULT_TOLERANCE, Finding, Undecidable, open_book, close, open_deck, number, reading_order, period_columns, row_of,
)


# -- 1. identities ----------------------------------------------------------------------------

def identities(sub: Submission, *, file: str, tolerance: str = DEFAULT_TOLERANCE, balance: dict[str, str] | None = None,
               cash: dict[str, str] | None = None, ties: list[dict[str, Any]] = ()) -> list[Finding]:
    """The balance-sheet and cash identities per period, and declared single-cell ties
    (`{"cell": "DCF!C11", "equals": ["DCF!C7:F7", "DCF!C10"]}`: a cell is the sum of
    cells and ranges, a leading "-" subtracting one): a valuation's total is the sum of its parts."""
    if (balance is None) != (cash is None) or (balance is None and not ties):
        raise TypeError("fa.identities declares nothing to check: give balance and cash, or ties")  # an error, never a pass
    book = open_book(sub, file)
    tol = Decimal(tolerance)
    findings: list[Finding] = _ties(book, ties, tol, tolerance)
    if balance is None or cash is None:
        return sorted(findings, key=lambda f: reading_order(f[0]))
    bs = balance["sheet"]
    assets, le = row_of(book, bs, balance["assets"]), row_of(book, bs, balance["liabilities_equity"])
    if assets is None or le is None:
        return [(f"{bs}!A:A", None, f"rows {balance['assets']!r} and {balance['liabilities_equity']!r}",
                 "the balance sheet's total rows are missing")]
    for c in period_columns(book, bs):
        a, l = number(book, bs, f"{c}{assets}"), number(book, bs, f"{c}{le}")
        if not close(a, l, tol):
            findings.append((f"{bs}!{c}{le}", {"assets": money(a), "liabilities_and_equity": money(l)},
                             f"total assets = total liabilities and equity (within {tolerance})",
                             f"the balance sheet does not balance in {c}: assets {money(a)}, liabilities and equity {money(l)}"))
    cf, cash_bs = cash["sheet"], cash["balance_sheet"]
    net, closing, cash_row = row_of(book, cf, cash["net_change"]), row_of(book, cf, cash["closing"]), row_of(book, cash_bs, cash["cash"])
    if net is None or closing is None or cash_row is None:
        return findings + [(f"{cf}!A:A", None, "the cash rows", "the cash-flow statement's cash rows are missing")]
    for c in period_columns(book, cf):
        p = previous(c)
        change = number(book, cf, f"{c}{net}")
        bs_now, bs_before = number(book, cash_bs, f"{c}{cash_row}"), number(book, cash_bs, f"{p}{cash_row}")
        delta = None if bs_now is None or bs_before is None else bs_now - bs_before
        if not close(change, delta, tol):
            findings.append((f"{cf}!{c}{net}", {"net_change_in_cash": money(change), "balance_sheet_change": money(delta)},
                             f"net change in cash = {cash_bs}!{c}{cash_row} - {cash_bs}!{p}{cash_row} (within {tolerance})",
                             f"the cash-flow statement does not tie to the change in cash in {c}"))
        end = number(book, cf, f"{c}{closing}")
        if not close(end, bs_now, tol):
            findings.append((f"{cf}!{c}{closing}", {"closing_cash": money(end), "balance_sheet_cash": money(bs_now)},
                             f"closing cash = {cash_bs}!{c}{cash_row} (within {tolerance})",
                             f"closing cash differs from the balance sheet's cash in {c}"))
    return sorted(findings, key=lambda f: reading_order(f[0]))


def _cells(ref: str) -> list[tuple[str, str]]:
    sheet, _, area = ref.partition("!")
    min_col, min_row, max_col, max_row = range_boundaries(area.replace("$", ""))
    return [(sheet, f"{get_column_letter(c)}{r}") for r in range(min_row, max_row + 1) for c in range(min_col, max_col + 1)]


def _ties(book, ties: list[dict[str, Any]], tol: Decimal, tolerance: str) -> list[Finding]:
    findings: list[Finding] = []
    for tie in ties:
        sheet, _, coord = tie["cell"].partition("!")
        if not book.has(sheet):
            findings.append((tie["cell"], None, tie["equals"], f"{tie['cell']}: the sheet {sheet} is missing"))
            continue
        total: Decimal | None = Decimal(0)
        for term in tie["equals"]:
            sign = -1 if term.startswith("-") else 1
            for s2, c2 in _cells(term.lstrip("-")):
                v = number(book, s2, c2) if book.has(s2) else None
                total = None if v is None or total is None else total + sign * v
        got = number(book, sheet, coord)
        if not close(got, total, tol):
            findings.append((tie["cell"], {"value": money(got), "sum_of_parts": money(total)},
                             f"= {' + '.join(tie['equals'])} (within {tolerance})",
                             f"{tie['cell']} is {money(got)}, not the sum of its parts {money(total)}"))
    return findings


# -- 2. reconciliation ------------------------------------------------------------------------

def rollforward(sub: Submission, *, file: str, schedules: list[dict[str, Any]],
                tolerance: str = DEFAULT_TOLERANCE) -> list[Finding]:
    book = open_book(sub, file)
    tol = Decimal(tolerance)
    findings: list[Finding] = []
    for s in schedules:
        sheet = s["sheet"]
        rows = {k: row_of(book, sheet, s[k]) for k in ("opening", "closing")}
        adds = [row_of(book, sheet, label) for label in s.get("additions", [])]
        reds = [row_of(book, sheet, label) for label in s.get("reductions", [])]
        if None in rows.values() or None in adds or None in reds:
            findings.append((f"{sheet}!A:A", None, "the schedule's rows", f"the {sheet} schedule's rows are missing"))
            continue
        summary = s.get("summary")
        summary_row = row_of(book, summary["sheet"], summary["row"]) if summary else None
        if summary and summary_row is None:
            findings.append((f"{summary['sheet']}!A:A", None, summary["row"], f"the summary row {summary['row']!r} is missing"))
        for c in period_columns(book, sheet):
            opening = number(book, sheet, f"{c}{rows['opening']}")
            before = number(book, sheet, f"{previous(c)}{rows['closing']}")
            if not close(opening, before, tol):
                findings.append((f"{sheet}!{c}{rows['opening']}", {"opening": money(opening), "previous_closing": money(before)},
                                 "opening = the previous period's closing", f"{sheet}: {c}'s opening is not the previous closing"))
            moves = [number(book, sheet, f"{c}{r}") for r in adds + reds]
            closing = number(book, sheet, f"{c}{rows['closing']}")
            if opening is None or None in moves:
                computed = None
            else:
                computed = opening + sum(moves[:len(adds)], Decimal(0)) - sum(moves[len(adds):], Decimal(0))
            if not close(computed, closing, tol):
                findings.append((f"{sheet}!{c}{rows['closing']}", {"closing": money(closing), "opening_plus_movements": money(computed)},
                                 "opening + additions - reductions = closing", f"{sheet}: the roll-forward does not foot in {c}"))
            if summary_row is not None:
                target = number(book, summary["sheet"], f"{c}{summary_row}")
                if not close(target, closing, tol):
                    findings.append((f"{summary['sheet']}!{c}{summary_row}", {"summary": money(target), "schedule_closing": money(closing)},
                                     f"= {sheet}!{c}{rows['closing']}", f"{summary['sheet']} does not take the {sheet} schedule's closing in {c}"))
    return findings


_FIGURE = re.compile(r"^\(?-?[0-9][0-9,]*(\.[0-9]+)?\)?$")


def parse_figure(text: str) -> Decimal | None:
    t = text.strip().replace("\u2212", "-")
    if not _FIGURE.match(t):
        return None
    negative = t.startswith("(") and t.endswith(")")
    value = Decimal(t.strip("()").replace(",", ""))
    return -value if negative else value


def summary_ties(sub: Submission, *, file: str, model_file: str, slide: int, shape: str,
                 rows: list[dict[str, str]] = (), series: list[dict[str, str]] = (), figures: list[dict[str, str]] = (),
                 tolerance: str = DEFAULT_TOLERANCE) -> list[Finding]:
    """A deck object shows the model's numbers: a table's `rows`, a chart's `series` (point by
    point, categories matched to the model's period headers), or `figures` quoted in a text
    shape (each as the model formats it, `1,234.50`)."""
    deck = open_deck(sub, file)
    book = open_book(sub, model_file, side="input")
    tol = Decimal(tolerance)
    where = f'slide {slide}/shape "{shape}"'
    slides = deck.slides()
    frame = DeckView.shape(slides[slide - 1], shape) if 0 < slide <= len(slides) else None
    if series:
        return _chart_ties(book, frame, where, series, model_file, tol)
    if figures:
        return _text_ties(book, frame, where, figures)
    if frame is None or not getattr(frame, "has_table", False):
        return [(where, None, "a table", "the table to tie is not there (fa.required-parts / fa.preservation say why)")]
    table = frame.table
    header = [table.cell(0, j).text.strip() for j in range(len(table.columns))]
    labels = {table.cell(i, 0).text.strip(): i for i in range(1, len(table.rows))}
    findings: list[Finding] = []
    for spec in rows:
        sheet = spec["sheet"]
        model_row = row_of(book, sheet, spec["row"])
        if model_row is None:
            raise Undecidable(f"the model has no row {spec['row']!r} on {sheet}")
        i = labels.get(spec["label"])
        if i is None:
            findings.append((f'{where}/row "{spec["label"]}"', None, spec["label"], f"the table has no row {spec['label']!r}"))
            continue
        for letter, period in book.periods(sheet):
            j = header.index(period) if period in header else None
            if j is None:
                findings.append((f'{where}/column "{period}"', header, period, f"the table has no column {period!r}"))
                continue
            text = table.cell(i, j).text
            shown, source = parse_figure(text), number(book, sheet, f"{letter}{model_row}")
            if not close(shown, source, tol):
                findings.append((f'{where}/cell r{i + 1}c{j + 1} ("{spec["label"]}", "{period}")',
                                 {"shown": text, "model": money(source)}, f"= {model_file} {sheet}!{letter}{model_row}",
                                 f"the deck shows {text!r} for {spec['label']} {period}; the model computes {money(source)}"))
    return findings


def _model_number(book, spec: dict[str, str]) -> dict[str, tuple[str, Decimal | None]]:
    """period header -> (model cell, value) for the model row `spec` names."""
    model_row = row_of(book, spec["sheet"], spec["row"])
    if model_row is None:
        raise Undecidable(f"the model has no row {spec['row']!r} on {spec['sheet']}")
    return {str(period): (f"{spec['sheet']}!{letter}{model_row}", number(book, spec["sheet"], f"{letter}{model_row}"))
            for letter, period in book.periods(spec["sheet"])}


def _chart_ties(book, frame, where: str, series: list[dict[str, str]], model_file: str, tol: Decimal) -> list[Finding]:
    if frame is None or not getattr(frame, "has_chart", False):
        return [(where, None, "a chart", "the chart to tie is not there (fa.required-parts / fa.preservation say why)")]
    plot = frame.chart.plots[0] if frame.chart.plots else None
    shown = {s.name: s for s in plot.series} if plot is not None else {}
    categories = [str(c) for c in plot.categories] if plot is not None else []
    findings: list[Finding] = []
    for spec in series:
        source = _model_number(book, spec)
        s = shown.get(spec["label"])
        if s is None:
            findings.append((f'{where}/series "{spec["label"]}"', sorted(shown), spec["label"], f"the chart has no series {spec['label']!r}"))
            continue
        values = list(s.values)
        for period, (cell, value) in source.items():
            j = categories.index(period) if period in categories else None
            point = as_decimal(values[j]) if j is not None and j < len(values) else None
            if not close(point, value, tol):
                findings.append((f'{where}/series "{spec["label"]}"/point "{period}"', {"shown": money(point), "model": money(value)},
                                 f"= {model_file} {cell}", f"the chart shows {money(point)} for {spec['label']} {period}; the model computes {money(value)}"))
    return findings


def _text_ties(book, frame, where: str, figures: list[dict[str, str]]) -> list[Finding]:
    if frame is None or not getattr(frame, "has_text_frame", False) or not frame.has_text_frame:
        return [(where, None, "a text shape", "the text to tie is not there (fa.required-parts says why)")]
    text = frame.text_frame.text
    findings: list[Finding] = []
    for spec in figures:
        cell, value = _model_number(book, spec).get(spec["period"], (None, None))
        if value is None:
            raise Undecidable(f"the model has no value for {spec['row']!r} in {spec['period']}")
        want = figure_text(value)
        if want not in text:
            findings.append((f'{where}/figure "{spec["row"]} {spec["period"]}"', text, f"mentions {want} (= {cell})",
                             f"the text does not quote {spec['row']} {spec['period']} as the model computes it ({want})"))
    return findings


# -- 6. unit, sign and period consistency -----------------------------------------------------

_QUARTER = re.compile(r"^Q([1-4]) FY(\d{2})$")


def conventions(sub: Submission, *, file: str, unit: str, sheets: list[str], expense_rows: dict[str, list[str]],
                periods: list[str] | None = None) -> list[Finding]:
    book = open_book(sub, file)
    findings: list[Finding] = []
    for sheet in sheets:
        if not book.has(sheet):
            continue  # family 5's finding
        shown = book.wb[sheet]["A2"].value
        if shown != unit:
            findings.append((f"{sheet}!A2", shown, unit, f"{sheet} states its unit as {shown!r}, not {unit!r}"))
        headers = book.periods(sheet)
        before = None
        for i, (letter, header) in enumerate(headers):
            location = f"{sheet}!{letter}{model.HEADER_ROW}"
            m = _QUARTER.match(header.strip()) if isinstance(header, str) else None
            index = int(m.group(2)) * 4 + int(m.group(1)) if m else None
            if periods is not None:
                if i >= len(periods) or header != periods[i]:
                    findings.append((location, header, periods[i] if i < len(periods) else None,
                                     f"{location}: period header {header!r} out of order or unexpected"))
            elif index is None:
                findings.append((location, header, "Qn FYyy", f"{location}: {header!r} is not a quarter header"))
            elif before is not None and index != before + 1:
                findings.append((location, header, "the quarter after the previous column", f"{location}: period headers out of order"))
            before = index
        if periods is not None and len(headers) < len(periods):
            letter = model.col(len(headers))
            findings.append((f"{sheet}!{letter}{model.HEADER_ROW}", None, periods[len(headers)],
                             f"{sheet} has no column for {periods[len(headers)]}"))
    for sheet, labels in sorted(expense_rows.items()):
        for label in labels:
            r = row_of(book, sheet, label)
            if r is None:
                continue  # family 5's finding
            for c in period_columns(book, sheet):
                v = number(book, sheet, f"{c}{r}")
                if v is not None and v > 0:
                    findings.append((f"{sheet}!{c}{r}", money(v), "<= 0 (expenses are negative)",
                                     f"{sheet}!{c}{r}: {label} is positive; expenses are shown negative"))
    return findings

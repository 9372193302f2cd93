"""Financial correctness: families 1 (identities), 2 (roll-forwards, a deck tied to the model)
and 6 (unit, sign and period conventions)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from lrc.runtime.artifacts import model
from lrc.runtime.artifacts.views import DeckView, Submission, money, previous
from lrc.runtime.artifacts.validators.common import (
    DEFAULT_TOLERANCE, Finding, Undecidable, open_book, close, open_deck, number, reading_order, period_columns, row_of,
)


# -- 1. identities ----------------------------------------------------------------------------

def identities(sub: Submission, *, file: str, tolerance: str = DEFAULT_TOLERANCE,
               balance: dict[str, str], cash: dict[str, str]) -> list[Finding]:
    book = open_book(sub, file)
    tol = Decimal(tolerance)
    findings: list[Finding] = []
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
                 rows: list[dict[str, str]], tolerance: str = DEFAULT_TOLERANCE) -> list[Finding]:
    deck = open_deck(sub, file)
    book = open_book(sub, model_file, side="input")
    tol = Decimal(tolerance)
    where = f'slide {slide}/shape "{shape}"'
    slides = deck.slides()
    frame = DeckView.shape(slides[slide - 1], shape) if 0 < slide <= len(slides) else None
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

"""The eight deterministic validator families of seed 000, over a task's workbook and deck.

Why: seed 000 wants the decision carried by deterministic checks wherever correctness is
computable, each returning a machine-readable result with an id, version, severity, observed
value, expected condition and location (`lrc.runtime.checks.results.result`). Each family here
is one validator id (family 2 has two: roll-forwards in a workbook, and a deck table tied to
the model); `run(check, submission)` runs one declared check `{"validator": id, "params": …}`.

| family | id | reads |
|---|---|---|
| 1 identities | fa.identities | A = L + E per period; cash-flow net change = Δ balance-sheet cash; closing cash = balance-sheet cash |
| 2 reconciliation | fa.rollforward, fa.summary-ties | opening + additions − reductions = closing, opening = previous closing, the summary row takes the closing; a deck table's figures = the model's |
| 3 formulas | fa.formula-presence | a required cell is a formula of the declared shape, not a pasted value |
| 4 references | fa.reference-integrity | after recalculation no #REF!/#DIV/0!/#NAME?/#VALUE!/…; defined names resolve and cover every period |
| 5 existence | fa.required-parts | required sheets, row labels, slides (by title) and the objects on them |
| 6 conventions | fa.conventions | the unit line, the expense sign, the period headers (the declared ones, consecutive quarters) |
| 7 preservation | fa.preservation | sheets and styles kept (a new period column takes its neighbour's number format); in a deck, layouts and masters unchanged, a chart stays a chart with its data range, a table stays a table |
| 8 change | fa.unchanged-outside | every cell's value, formula and style, every defined name, and every slide shape, outside the permitted region, equal to the input |

One finding, one family. Families do not report what another family owns, so a planted fault
fails exactly one validator (tests/test_artifacts_calibration.py): a missing sheet or slide is
family 5's (7 and 8 compare what exists in both), and a shape whose kind changed (a chart
become a picture) is family 7's (8 compares the content of shapes that kept their kind).
Every family still fails the run on its own: a deterministic fail is a fail.

Status. `fail` when the artifact breaks the check (a file that is missing or refused by
`safezip` is the agent's invalid output: a fail); `error` when the check could not be decided
(the recalculation engine cannot evaluate a formula or load the book, a declared parameter
names nothing) — never a pass. Numbers are compared in Decimal at the declared tolerance
(money: 0.005). One result per check: the location is the first failure in reading order,
`observed` says how many more.
"""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal
from typing import Any, Callable

from openpyxl.utils import column_index_from_string, range_boundaries

from lrc.runtime.artifacts import model, recalc
from lrc.runtime.artifacts.views import BookView, DeckView, Submission, as_decimal, money, previous
from lrc.runtime.checks.results import ValidatorResult, result

VERSION = 1
DEFAULT_TOLERANCE = "0.005"
Finding = tuple[str, Any, Any, str]  # (location, observed, expected, message)


class Undecidable(Exception):
    """The check cannot be decided (status error)."""


class Unreadable(Exception):
    """The agent's artifact cannot be read (status fail)."""


def _book(sub: Submission, name: str, side: str = "output") -> BookView:
    view = sub.book(name, side)
    if not view.ok:
        if side == "input":
            raise Undecidable(f"the task's input {name} cannot be read: {view.reason}")
        raise Unreadable(f"{name}: {view.reason}")
    return view


def _deck(sub: Submission, name: str, side: str = "output") -> DeckView:
    view = sub.deck(name, side)
    if not view.ok:
        if side == "input":
            raise Undecidable(f"the task's input {name} cannot be read: {view.reason}")
        raise Unreadable(f"{name}: {view.reason}")
    return view


def _calculated(view: BookView) -> recalc.Recalc:
    calc = view.calc()
    if calc.failure:
        raise Undecidable(calc.failure)
    if calc.unsupported:
        sheet, coord, fn = calc.unsupported[0]
        raise Undecidable(f"{sheet}!{coord} calls {fn}, which the recalculation engine ({recalc.ENGINE} "
                          f"{recalc.ENGINE_VERSION}) does not evaluate: the check cannot be decided")
    return calc


def _number(view: BookView, sheet: str, coord: str) -> Decimal | None:
    _calculated(view)
    return as_decimal(view.value(sheet, coord))


def _row(view: BookView, sheet: str, label: str) -> int | None:
    return view.row(sheet, label)


def _periods(view: BookView, sheet: str) -> list[str]:
    return [letter for letter, _ in view.periods(sheet)]


def _close(a: Decimal | None, b: Decimal | None, tol: Decimal) -> bool:
    return a is not None and b is not None and abs(a - b) <= tol


def _finish(vid: str, findings: list[Finding], checked: str) -> ValidatorResult:
    if not findings:
        return result(vid, VERSION, "pass", message=checked)
    location, observed, expected, message = findings[0]
    more = len(findings) - 1
    return result(vid, VERSION, "fail", observed=observed if not more else {"first": observed, "more_failures": more},
                  expected=expected, location=location, message=message + (f" ({more} more)" if more else ""))


# -- 1. identities ----------------------------------------------------------------------------

def identities(sub: Submission, *, file: str, tolerance: str = DEFAULT_TOLERANCE,
               balance: dict[str, str], cash: dict[str, str]) -> list[Finding]:
    book = _book(sub, file)
    tol = Decimal(tolerance)
    findings: list[Finding] = []
    bs = balance["sheet"]
    assets, le = _row(book, bs, balance["assets"]), _row(book, bs, balance["liabilities_equity"])
    if assets is None or le is None:
        return [(f"{bs}!A:A", None, f"rows {balance['assets']!r} and {balance['liabilities_equity']!r}",
                 "the balance sheet's total rows are missing")]
    for c in _periods(book, bs):
        a, l = _number(book, bs, f"{c}{assets}"), _number(book, bs, f"{c}{le}")
        if not _close(a, l, tol):
            findings.append((f"{bs}!{c}{le}", {"assets": money(a), "liabilities_and_equity": money(l)},
                             f"total assets = total liabilities and equity (within {tolerance})",
                             f"the balance sheet does not balance in {c}: assets {money(a)}, liabilities and equity {money(l)}"))
    cf, cash_bs = cash["sheet"], cash["balance_sheet"]
    net, closing, cash_row = _row(book, cf, cash["net_change"]), _row(book, cf, cash["closing"]), _row(book, cash_bs, cash["cash"])
    if net is None or closing is None or cash_row is None:
        return findings + [(f"{cf}!A:A", None, "the cash rows", "the cash-flow statement's cash rows are missing")]
    for c in _periods(book, cf):
        p = previous(c)
        change = _number(book, cf, f"{c}{net}")
        bs_now, bs_before = _number(book, cash_bs, f"{c}{cash_row}"), _number(book, cash_bs, f"{p}{cash_row}")
        delta = None if bs_now is None or bs_before is None else bs_now - bs_before
        if not _close(change, delta, tol):
            findings.append((f"{cf}!{c}{net}", {"net_change_in_cash": money(change), "balance_sheet_change": money(delta)},
                             f"net change in cash = {cash_bs}!{c}{cash_row} - {cash_bs}!{p}{cash_row} (within {tolerance})",
                             f"the cash-flow statement does not tie to the change in cash in {c}"))
        end = _number(book, cf, f"{c}{closing}")
        if not _close(end, bs_now, tol):
            findings.append((f"{cf}!{c}{closing}", {"closing_cash": money(end), "balance_sheet_cash": money(bs_now)},
                             f"closing cash = {cash_bs}!{c}{cash_row} (within {tolerance})",
                             f"closing cash differs from the balance sheet's cash in {c}"))
    return sorted(findings, key=lambda f: _order(f[0]))


def _order(location: str) -> tuple:
    sheet, _, coord = location.partition("!")
    m = re.match(r"([A-Z]+)(\d+)", coord)
    return (sheet, column_index_from_string(m.group(1)), int(m.group(2))) if m else (sheet, 0, 0)


# -- 2. reconciliation ------------------------------------------------------------------------

def rollforward(sub: Submission, *, file: str, schedules: list[dict[str, Any]],
                tolerance: str = DEFAULT_TOLERANCE) -> list[Finding]:
    book = _book(sub, file)
    tol = Decimal(tolerance)
    findings: list[Finding] = []
    for s in schedules:
        sheet = s["sheet"]
        rows = {k: _row(book, sheet, s[k]) for k in ("opening", "closing")}
        adds = [_row(book, sheet, label) for label in s.get("additions", [])]
        reds = [_row(book, sheet, label) for label in s.get("reductions", [])]
        if None in rows.values() or None in adds or None in reds:
            findings.append((f"{sheet}!A:A", None, "the schedule's rows", f"the {sheet} schedule's rows are missing"))
            continue
        summary = s.get("summary")
        summary_row = _row(book, summary["sheet"], summary["row"]) if summary else None
        if summary and summary_row is None:
            findings.append((f"{summary['sheet']}!A:A", None, summary["row"], f"the summary row {summary['row']!r} is missing"))
        for c in _periods(book, sheet):
            opening = _number(book, sheet, f"{c}{rows['opening']}")
            before = _number(book, sheet, f"{previous(c)}{rows['closing']}")
            if not _close(opening, before, tol):
                findings.append((f"{sheet}!{c}{rows['opening']}", {"opening": money(opening), "previous_closing": money(before)},
                                 "opening = the previous period's closing", f"{sheet}: {c}'s opening is not the previous closing"))
            moves = [_number(book, sheet, f"{c}{r}") for r in adds + reds]
            closing = _number(book, sheet, f"{c}{rows['closing']}")
            if opening is None or None in moves:
                computed = None
            else:
                computed = opening + sum(moves[:len(adds)], Decimal(0)) - sum(moves[len(adds):], Decimal(0))
            if not _close(computed, closing, tol):
                findings.append((f"{sheet}!{c}{rows['closing']}", {"closing": money(closing), "opening_plus_movements": money(computed)},
                                 "opening + additions - reductions = closing", f"{sheet}: the roll-forward does not foot in {c}"))
            if summary_row is not None:
                target = _number(book, summary["sheet"], f"{c}{summary_row}")
                if not _close(target, closing, tol):
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
    deck = _deck(sub, file)
    book = _book(sub, model_file, side="input")
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
        model_row = _row(book, sheet, spec["row"])
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
            shown, source = parse_figure(text), _number(book, sheet, f"{letter}{model_row}")
            if not _close(shown, source, tol):
                findings.append((f'{where}/cell r{i + 1}c{j + 1} ("{spec["label"]}", "{period}")',
                                 {"shown": text, "model": money(source)}, f"= {model_file} {sheet}!{letter}{model_row}",
                                 f"the deck shows {text!r} for {spec['label']} {period}; the model computes {money(source)}"))
    return findings


# -- 3. formula presence and pattern ---------------------------------------------------------

def _normal_formula(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("$", "").upper()


def formula_presence(sub: Submission, *, file: str, cells: list[dict[str, Any]]) -> list[Finding]:
    book = _book(sub, file)
    findings: list[Finding] = []
    for spec in cells:
        sheet = spec["sheet"]
        r = _row(book, sheet, spec["row"])
        if r is None:
            findings.append((f"{sheet}!A:A", None, spec["row"], f"{sheet} has no row {spec['row']!r}"))
            continue
        columns = _periods(book, sheet) if spec.get("columns", "periods") == "periods" else spec["columns"]
        for c in columns:
            cell = book.wb[sheet][f"{c}{r}"]
            expected = spec["pattern"].format(c=c, p=previous(c))
            location = f"{sheet}!{c}{r}"
            if cell.data_type != "f" or not isinstance(cell.value, str):
                what = "is empty" if cell.value is None else "holds a value, not a formula"
                findings.append((location, {"value": _jsonable(cell.value)}, {"formula": expected},
                                 f"{location} {what} ({spec['row']} must be {expected})"))
            elif _normal_formula(cell.value) != _normal_formula(expected):
                findings.append((location, {"formula": cell.value}, {"formula": expected},
                                 f"{location} is {cell.value}, not of the shape {expected}"))
    return findings


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return money(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


# -- 4. reference and range integrity --------------------------------------------------------

def reference_integrity(sub: Submission, *, file: str, names: dict[str, dict[str, str]]) -> list[Finding]:
    book = _book(sub, file)
    findings: list[Finding] = []
    for ws in book.wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type == "f" and isinstance(cell.value, str) and "#REF!" in cell.value.upper():
                    findings.append((f"{ws.title}!{cell.coordinate}", {"formula": cell.value}, "no #REF! in a formula",
                                     f"{ws.title}!{cell.coordinate} refers to a deleted range"))
    calc = _calculated(book)
    for (sheet, coord), value in sorted(calc.values.items(), key=lambda kv: _order(f"{kv[0][0]}!{kv[0][1]}")):
        if isinstance(value, recalc.XlError) and sheet in book.wb.sheetnames:
            findings.append((f"{sheet}!{coord}", {"value": value.code}, "a value, not an Excel error",
                             f"{sheet}!{coord} evaluates to {value.code} after recalculation"))
    defined = book.wb.defined_names
    for name, spec in sorted(names.items()):
        location = f'name "{name}"'
        dn = defined.get(name)
        if dn is None:
            findings.append((location, None, "defined", f"the defined name {name} is missing"))
            continue
        text = dn.attr_text or ""
        try:
            destinations = list(dn.destinations)
        except Exception:  # noqa: BLE001 - an unparseable name is a broken name
            destinations = []
        if "#REF!" in text.upper() or len(destinations) != 1 or destinations[0][0] not in book.wb.sheetnames:
            findings.append((location, {"refers_to": text}, "a range of an existing sheet", f"the defined name {name} does not resolve ({text})"))
            continue
        sheet, ref = destinations[0]
        try:
            min_col, min_row, max_col, max_row = range_boundaries(ref.replace("$", ""))
        except (ValueError, TypeError):
            findings.append((location, {"refers_to": text}, "a valid range", f"the defined name {name} is not a valid range"))
            continue
        if "cell" in spec:
            want = spec["cell"]
            if f"{sheet}!{ref.replace('$', '')}" != want:
                findings.append((location, {"refers_to": text}, want, f"{name} should refer to {want}"))
            continue
        r = _row(book, spec["sheet"], spec["row"])
        periods = _periods(book, spec["sheet"])
        if r is None or not periods:
            findings.append((location, {"refers_to": text}, spec, f"{name}'s row is missing"))
            continue
        first, last = column_index_from_string(periods[0]), column_index_from_string(periods[-1])
        if (sheet, min_row, max_row, min_col, max_col) != (spec["sheet"], r, r, first, last):
            findings.append((location, {"refers_to": text}, f"{spec['sheet']}!${periods[0]}${r}:${periods[-1]}${r}",
                             f"{name} does not cover every period of {spec['row']!r}"))
    return findings


# -- 5. existence -----------------------------------------------------------------------------

def required_parts(sub: Submission, *, file: str, sheets: list[str] = (), rows: dict[str, list[str]] | None = None,
                   slides: list[dict[str, Any]] = ()) -> list[Finding]:
    findings: list[Finding] = []
    if sheets or rows:
        book = _book(sub, file)
        for sheet in sheets:
            if not book.has(sheet):
                findings.append((f"sheet {sheet}", book.wb.sheetnames, sheet, f"the sheet {sheet} is missing"))
        for sheet, labels in sorted((rows or {}).items()):
            if book.has(sheet):
                for label in labels:
                    if _row(book, sheet, label) is None:
                        findings.append((f"{sheet}!A:A", None, label, f"{sheet} has no row {label!r}"))
    if slides:
        deck = _deck(sub, file)
        present = deck.slides()
        titles = [DeckView.title(s) for s in present]
        for n, spec in enumerate(slides, start=1):
            matches = [i for i, t in enumerate(titles) if spec["title"] in t]
            if not matches:
                findings.append((f"slide {n}", titles, spec["title"], f"no slide titled {spec['title']!r} (expected as slide {n})"))
                continue
            slide = present[matches[0]]
            for obj in spec.get("objects", []):
                shape = DeckView.shape(slide, obj["shape"])
                if shape is None:
                    findings.append((f'slide {matches[0] + 1}/shape "{obj["shape"]}"', None, obj, f"the slide has no shape {obj['shape']!r}"))
    return findings


# -- 6. unit, sign and period consistency -----------------------------------------------------

_QUARTER = re.compile(r"^Q([1-4]) FY(\d{2})$")


def conventions(sub: Submission, *, file: str, unit: str, sheets: list[str], expense_rows: dict[str, list[str]],
                periods: list[str] | None = None) -> list[Finding]:
    book = _book(sub, file)
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
            r = _row(book, sheet, label)
            if r is None:
                continue  # family 5's finding
            for c in _periods(book, sheet):
                v = _number(book, sheet, f"{c}{r}")
                if v is not None and v > 0:
                    findings.append((f"{sheet}!{c}{r}", money(v), "<= 0 (expenses are negative)",
                                     f"{sheet}!{c}{r}: {label} is positive; expenses are shown negative"))
    return findings


# -- 7. editable objects and template ----------------------------------------------------------

def _region_cells(region: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Region entries as (sheet, min_col, min_row, max_col, max_row); 'Sheet' alone is the whole sheet."""
    out = []
    for entry in region:
        sheet, _, ref = entry.partition("!")
        if not ref:
            out.append((sheet, 1, 1, 16_384, 1_048_576))
            continue
        min_col, min_row, max_col, max_row = range_boundaries(ref)
        out.append((sheet, min_col or 1, min_row or 1, max_col or 16_384, max_row or 1_048_576))
    return out


def _inside(cells, sheet: str, col: int, row: int) -> bool:
    return any(s == sheet and c0 <= col <= c1 and r0 <= row <= r1 for s, c0, r0, c1, r1 in cells)


def preservation(sub: Submission, *, file: str, region: list[str] = (), extends: bool = False) -> list[Finding]:
    if file.endswith(".pptx"):
        return _deck_preservation(sub, file)
    out, before = _book(sub, file), _book(sub, file, side="input")
    findings: list[Finding] = []
    kept = [s for s in out.wb.sheetnames if s in before.wb.sheetnames]
    expected_order = [s for s in before.wb.sheetnames if s in out.wb.sheetnames]
    if kept != expected_order:
        findings.append(("workbook/sheet order", kept, expected_order, "the sheets were reordered"))
    for sheet in expected_order:
        if out.wb[sheet].sheet_state != before.wb[sheet].sheet_state:
            findings.append((f"sheet {sheet}", out.wb[sheet].sheet_state, before.wb[sheet].sheet_state, f"{sheet}'s visibility changed"))
    cells = _region_cells(list(region))
    for sheet, c0, r0, c1, r1 in cells:
        if sheet not in out.wb.sheetnames or sheet not in before.wb.sheetnames:
            continue
        ws, ws0 = out.wb[sheet], before.wb[sheet]
        for row in range(r0, min(r1, max(ws.max_row, ws0.max_row)) + 1):
            for col in range(c0, min(c1, max(ws.max_column, ws0.max_column)) + 1):
                cell, old = ws.cell(row, col), ws0.cell(row, col)
                if old.value is not None:
                    template = old
                elif extends and cell.value is not None and col > 1:
                    template = ws.cell(row, col - 1)
                else:
                    continue
                if cell.number_format != template.number_format or bool(cell.font.b) != bool(template.font.b):
                    findings.append((f"{sheet}!{cell.coordinate}", {"number_format": cell.number_format, "bold": bool(cell.font.b)},
                                     {"number_format": template.number_format, "bold": bool(template.font.b)},
                                     f"{sheet}!{cell.coordinate} lost the template's style"))
    return findings


def _chart_refs(chart) -> list[str]:
    return [e.text for e in chart._chartSpace.iter("{http://schemas.openxmlformats.org/drawingml/2006/chart}f")]


def _kind(shape) -> str:
    if getattr(shape, "has_chart", False):
        return "chart"
    if getattr(shape, "has_table", False):
        return "table"
    if shape.is_placeholder:
        return "placeholder"
    return str(shape.shape_type).split(".")[-1].split(" ")[0].lower() if shape.shape_type is not None else "shape"


def _template_parts(deck: DeckView) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in deck.package.parts.items()
            if name.startswith(("ppt/slideLayouts/", "ppt/slideMasters/", "ppt/theme/"))}


def _deck_preservation(sub: Submission, file: str) -> list[Finding]:
    out, before = _deck(sub, file), _deck(sub, file, side="input")
    findings: list[Finding] = []
    now, then = _template_parts(out), _template_parts(before)
    for name in sorted(set(now) | set(then)):
        if now.get(name) != then.get(name):
            findings.append((name, "changed" if name in now and name in then else ("added" if name in now else "removed"),
                             "unchanged", f"the deck's template part {name} changed (layouts, masters and themes are preserved)"))
    by_id = {s.slide_id: (i, s) for i, s in enumerate(out.slides(), start=1)}
    for slide0 in before.slides():
        if slide0.slide_id not in by_id:
            continue  # family 5's finding
        n, slide = by_id[slide0.slide_id]
        if slide.slide_layout.name != slide0.slide_layout.name:
            findings.append((f"slide {n}", slide.slide_layout.name, slide0.slide_layout.name, f"slide {n}'s layout changed"))
        for shape0 in slide0.shapes:
            kind0 = _kind(shape0)
            if kind0 not in ("chart", "table", "placeholder"):
                continue
            shape = DeckView.shape(slide, shape0.name)
            where = f'slide {n}/shape "{shape0.name}"'
            if shape is None:
                continue  # a missing shape is a change: family 8's finding
            kind = _kind(shape)
            if kind != kind0:
                findings.append((where, kind, kind0, f"{where} was a {kind0} and is now a {kind}: editable objects stay editable"))
            elif kind == "chart":
                if shape.chart.chart_type != shape0.chart.chart_type:
                    findings.append((where, str(shape.chart.chart_type), str(shape0.chart.chart_type), f"{where}: the chart type changed"))
                elif _chart_refs(shape.chart) != _chart_refs(shape0.chart):
                    findings.append((where, _chart_refs(shape.chart), _chart_refs(shape0.chart), f"{where}: the chart's data range changed"))
            elif kind == "table":
                shape_now, shape_then = (len(shape.table.rows), len(shape.table.columns)), (len(shape0.table.rows), len(shape0.table.columns))
                if shape_now != shape_then:
                    findings.append((where, shape_now, shape_then, f"{where}: the table's rows and columns changed"))
    return findings


# -- 8. unexpected change outside the permitted region ----------------------------------------

def _cell_state(cell) -> tuple:
    v = cell.value
    n = as_decimal(v)
    value = ("n", n.normalize()) if n is not None else ("v", v if isinstance(v, (str, type(None), bool)) else str(v))
    f = cell.font
    return (value, cell.number_format, bool(f.b), bool(f.i), str(f.color.rgb) if f.color is not None else None,
            str(cell.fill.fgColor.rgb) if cell.fill is not None and cell.fill.fill_type else None)


def unchanged_outside(sub: Submission, *, file: str, region: list[Any] = (), names: list[str] = ()) -> list[Finding]:
    if file.endswith(".pptx"):
        return _deck_unchanged(sub, file, region)
    out, before = _book(sub, file), _book(sub, file, side="input")
    cells = _region_cells([r for r in region if isinstance(r, str)])
    findings: list[Finding] = []
    for sheet in out.wb.sheetnames:
        if sheet not in before.wb.sheetnames:
            findings.append((f"sheet {sheet}", "added", "no new sheets", f"a sheet {sheet} was added outside the permitted region"))
    for sheet in before.wb.sheetnames:
        if sheet not in out.wb.sheetnames:
            continue  # family 5's finding
        ws, ws0 = out.wb[sheet], before.wb[sheet]
        coords = {(c.row, c.column) for r in ws.iter_rows() for c in r if c.value is not None or c.has_style}
        coords |= {(c.row, c.column) for r in ws0.iter_rows() for c in r if c.value is not None or c.has_style}
        for row, col in sorted(coords, key=lambda rc: (rc[1], rc[0])):
            if _inside(cells, sheet, col, row):
                continue
            cell, old = ws.cell(row, col), ws0.cell(row, col)
            if _cell_state(cell) != _cell_state(old):
                findings.append((f"{sheet}!{cell.coordinate}", {"value": _jsonable(cell.value), "number_format": cell.number_format},
                                 {"value": _jsonable(old.value), "number_format": old.number_format},
                                 f"{sheet}!{cell.coordinate} changed outside the permitted region"))
    now = {n: d.attr_text for n, d in out.wb.defined_names.items()}
    then = {n: d.attr_text for n, d in before.wb.defined_names.items()}
    for name in sorted(set(now) | set(then)):
        if name not in names and now.get(name) != then.get(name):
            findings.append((f'name "{name}"', now.get(name), then.get(name), f"the defined name {name} changed outside the permitted region"))
    return findings


def _shape_content(shape) -> tuple:
    kind = _kind(shape)
    content: Any = None
    if kind == "table":
        content = tuple(tuple(c.text for c in row.cells) for row in shape.table.rows)
    elif kind == "chart":
        content = hashlib.sha256(shape.chart.part.blob).hexdigest()
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        content = shape.text_frame.text
    elif kind == "picture":
        content = hashlib.sha256(shape.image.blob).hexdigest()
    return (kind, shape.left, shape.top, shape.width, shape.height, content)


def _deck_unchanged(sub: Submission, file: str, region: list[Any]) -> list[Finding]:
    out, before = _deck(sub, file), _deck(sub, file, side="input")
    allowed = {(r["slide"], r["shape"]) for r in region if isinstance(r, dict)}
    findings: list[Finding] = []
    then_ids = {s.slide_id for s in before.slides()}
    for n, slide in enumerate(out.slides(), start=1):
        if slide.slide_id not in then_ids:
            findings.append((f"slide {n}", "added", "no new slides", f"slide {n} was added outside the permitted region"))
    by_id = {s.slide_id: (i, s) for i, s in enumerate(out.slides(), start=1)}
    for m, slide0 in enumerate(before.slides(), start=1):
        if slide0.slide_id not in by_id:
            continue  # family 5's finding
        n, slide = by_id[slide0.slide_id]
        names0 = [s.name for s in slide0.shapes]
        for shape in slide.shapes:
            if shape.name not in names0 and (m, shape.name) not in allowed:
                findings.append((f'slide {n}/shape "{shape.name}"', "added", "no new shapes", f"a shape was added to slide {n}"))
        for shape0 in slide0.shapes:
            if (m, shape0.name) in allowed:
                continue
            where = f'slide {n}/shape "{shape0.name}"'
            shape = DeckView.shape(slide, shape0.name)
            if shape is None:
                findings.append((where, "missing", "unchanged", f"{where} was removed outside the permitted region"))
                continue
            now, then = _shape_content(shape), _shape_content(shape0)
            if now[0] != then[0]:
                continue  # a changed kind is family 7's finding
            if now != then:
                findings.append((where, {"geometry": list(now[1:5]), "content": _jsonable(now[5])},
                                 {"geometry": list(then[1:5]), "content": _jsonable(then[5])},
                                 f"{where} changed outside the permitted region"))
    return findings


# -- the registry -----------------------------------------------------------------------------

FAMILIES: dict[str, tuple[int, Callable[..., list[Finding]], str]] = {
    "fa.identities": (1, identities, "balance-sheet and cash-flow identities hold in every period"),
    "fa.rollforward": (2, rollforward, "every schedule rolls forward and the summary takes its closing"),
    "fa.summary-ties": (2, summary_ties, "the deck table shows the model's figures"),
    "fa.formula-presence": (3, formula_presence, "every required cell is a formula of the declared shape"),
    "fa.reference-integrity": (4, reference_integrity, "no error values; defined names resolve and cover every period"),
    "fa.required-parts": (5, required_parts, "every required sheet, row and slide is present"),
    "fa.conventions": (6, conventions, "unit, expense sign and period headers are consistent"),
    "fa.preservation": (7, preservation, "template, styles and editable objects are preserved"),
    "fa.unchanged-outside": (8, unchanged_outside, "nothing changed outside the permitted region"),
}


def run(check: dict[str, Any], sub: Submission) -> ValidatorResult:
    """Run one declared check `{"validator": id, "params": {...}}` on a submission."""
    vid = check["validator"]
    if vid not in FAMILIES:
        return result(vid, VERSION, "error", message=f"unknown validator {vid}")
    _family, fn, checked = FAMILIES[vid]
    params = check.get("params", {})
    location = params.get("file")
    try:
        findings = fn(sub, **params)
    except Unreadable as exc:
        return result(vid, VERSION, "fail", observed="unreadable", expected="a readable Office file",
                      location=location, message=str(exc))
    except Undecidable as exc:
        return result(vid, VERSION, "error", location=location, message=str(exc))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return result(vid, VERSION, "error", location=location, message=f"the check could not run: {type(exc).__name__}: {exc}")
    return _finish(vid, findings, checked)


def run_all(checks: list[dict[str, Any]], sub: Submission) -> list[ValidatorResult]:
    return [run(c, sub) for c in checks]

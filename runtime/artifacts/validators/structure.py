"""Artifact structure: families 3 (formula presence and shape), 4 (references and defined
names after recalculation) and 5 (required sheets, rows and slides)."""

from __future__ import annotations

import re
from typing import Any

from openpyxl.utils import column_index_from_string, range_boundaries

from lrc.runtime.artifacts import recalc
from lrc.runtime.artifacts.views import DeckView, Submission, previous
from lrc.runtime.artifacts.validators.common import Finding, open_book, calculated, open_deck, jsonable, reading_order, period_columns, row_of


# -- 3. formula presence and pattern ---------------------------------------------------------

def _normal_formula(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("$", "").upper()


def formula_presence(sub: Submission, *, file: str, cells: list[dict[str, Any]]) -> list[Finding]:
    book = open_book(sub, file)
    findings: list[Finding] = []
    for spec in cells:
        sheet = spec["sheet"]
        r = row_of(book, sheet, spec["row"])
        if r is None:
            findings.append((f"{sheet}!A:A", None, spec["row"], f"{sheet} has no row {spec['row']!r}"))
            continue
        columns = period_columns(book, sheet) if spec.get("columns", "periods") == "periods" else spec["columns"]
        for c in columns:
            cell = book.wb[sheet][f"{c}{r}"]
            expected = spec["pattern"].format(c=c, p=previous(c), r=r)  # {r}: the row, for grids and templates
            location = f"{sheet}!{c}{r}"
            if cell.data_type != "f" or not isinstance(cell.value, str):
                what = "is empty" if cell.value is None else "holds a value, not a formula"
                findings.append((location, {"value": jsonable(cell.value)}, {"formula": expected},
                                 f"{location} {what} ({spec['row']} must be {expected})"))
            elif _normal_formula(cell.value) != _normal_formula(expected):
                findings.append((location, {"formula": cell.value}, {"formula": expected},
                                 f"{location} is {cell.value}, not of the shape {expected}"))
    return findings


# -- 4. reference and range integrity --------------------------------------------------------

def reference_integrity(sub: Submission, *, file: str, names: dict[str, dict[str, str]]) -> list[Finding]:
    book = open_book(sub, file)
    findings: list[Finding] = []
    for ws in book.wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type == "f" and isinstance(cell.value, str) and "#REF!" in cell.value.upper():
                    findings.append((f"{ws.title}!{cell.coordinate}", {"formula": cell.value}, "no #REF! in a formula",
                                     f"{ws.title}!{cell.coordinate} refers to a deleted range"))
    calc = calculated(book)
    for (sheet, coord), value in sorted(calc.values.items(), key=lambda kv: reading_order(f"{kv[0][0]}!{kv[0][1]}")):
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
        r = row_of(book, spec["sheet"], spec["row"])
        periods = period_columns(book, spec["sheet"])
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
        book = open_book(sub, file)
        for sheet in sheets:
            if not book.has(sheet):
                findings.append((f"sheet {sheet}", book.wb.sheetnames, sheet, f"the sheet {sheet} is missing"))
        for sheet, labels in sorted((rows or {}).items()):
            if book.has(sheet):
                for label in labels:
                    if row_of(book, sheet, label) is None:
                        findings.append((f"{sheet}!A:A", None, label, f"{sheet} has no row {label!r}"))
    if slides:
        deck = open_deck(sub, file)
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

"""Preservation: families 7 (template, styles, editable objects) and 8 (nothing changed
outside the permitted region). Family 7 owns a changed kind of object, family 5 a missing
sheet or slide; family 8 compares what kept its kind in both."""

from __future__ import annotations

import hashlib
from typing import Any

from openpyxl.utils import range_boundaries

from lrc.runtime.artifacts.views import DeckView, Submission, as_decimal
from lrc.runtime.artifacts.validators.common import Finding, open_book, open_deck, jsonable


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
    out, before = open_book(sub, file), open_book(sub, file, side="input")
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
    out, before = open_deck(sub, file), open_deck(sub, file, side="input")
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
    out, before = open_book(sub, file), open_book(sub, file, side="input")
    cells = _region_cells([r for r in region if isinstance(r, str)])
    findings: list[Finding] = []
    whole = {r for r in region if isinstance(r, str) and "!" not in r}  # a whole sheet: it may be new
    for sheet in out.wb.sheetnames:
        if sheet not in before.wb.sheetnames and sheet not in whole:
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
                findings.append((f"{sheet}!{cell.coordinate}", {"value": jsonable(cell.value), "number_format": cell.number_format},
                                 {"value": jsonable(old.value), "number_format": old.number_format},
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
    out, before = open_deck(sub, file), open_deck(sub, file, side="input")
    allowed = {(r["slide"], r["shape"]) for r in region if isinstance(r, dict) and "shape" in r}
    new_titles = [r["new_slide"] for r in region if isinstance(r, dict) and "new_slide" in r]  # a slide the task adds
    findings: list[Finding] = []
    then_ids = {s.slide_id for s in before.slides()}
    for n, slide in enumerate(out.slides(), start=1):
        if slide.slide_id not in then_ids and not any(t in DeckView.title(slide) for t in new_titles):
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
                findings.append((where, {"geometry": list(now[1:5]), "content": jsonable(now[5])},
                                 {"geometry": list(then[1:5]), "content": jsonable(then[5])},
                                 f"{where} changed outside the permitted region"))
    return findings

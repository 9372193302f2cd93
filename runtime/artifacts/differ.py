"""The differ: the artifact-toolbox calls that turn a task's input file into its oracle file.

Why: `lrc/oracle` on a task must prove that the toolbox can produce a passing artifact — the
infrastructure check of seed 000 — without a hand-written script per task kind (another
engineer adds kinds; each would need its own). So the oracle's calls are derived by
comparing the two files, generically:

Workbook (cell by cell, in sheet order, column by column):
- a sheet only the oracle has -> add_sheet (first, so later writes can reach it);
- a cell whose content differs (a formula's text, or a value) -> a write_cells entry with
  the oracle's formula or value (null clears);
- a cell whose style differs -> `style_from` an input cell that already has the oracle's
  whole style (the same row's nearest cell to the left first) and keeps it during the plan;
  else its number format and bold, if that is all that differs;
- a workbook-level defined name that differs -> set_defined_name (null deletes).
Rows or columns are never inserted: writing every cell expresses the same final state.

Deck (slides by position, or aligned by layout and title when the count changes; shapes by
name): a table cell's text -> edit_table_cell; a chart's categories or values ->
set_chart_data; a text frame's text -> edit_slide_text; a slide only the oracle has ->
add_slide from its layout with its title (first, in final order, so later edits name final
slide numbers), then its placeholders' text and each chart -> add_chart (type, data, number
format, box, legend).

What the tools cannot express is listed in `Plan.uncovered`, never silently dropped: a sheet
removed or reordered, a cell style other than number format / bold with no input cell to copy
it from, a date or a text starting with "=", sheet-level names, column widths, row heights,
merged cells, freeze panes, slides removed, shapes added to an existing slide (or, on a new
slide, anything but its layout's placeholders and charts), shapes removed, moved or of another
kind, chart types changed. tests/test_artifacts_policies.py runs every task kind through
the toolbox and requires `uncovered == []` and a passing artifact.

An edit is one unit (one cell entry, one name, one slide edit); `batch` groups consecutive
cell entries of one file into write_cells calls of at most `Limits.max_write_cells`.
"""

from __future__ import annotations

import datetime
import io
from dataclasses import dataclass, field
from typing import Any

from openpyxl.utils import get_column_letter

from lrc.runtime.artifacts import decktools, safezip
from lrc.runtime.artifacts.booktools import quote
from lrc.runtime.artifacts.toolargs import Limits

Call = tuple[str, dict[str, Any]]


@dataclass
class Plan:
    edits: list[Call] = field(default_factory=list)  # one unit each; write_cells with a single entry
    uncovered: list[str] = field(default_factory=list)


# -- workbooks ----------------------------------------------------------------------------------

def _style_key(cell) -> tuple:
    return (repr(cell.font), repr(cell.fill), repr(cell.border), repr(cell.alignment), cell.number_format, repr(cell.protection))


def _content(cell) -> tuple:
    v = cell.value
    if cell.data_type == "f" and isinstance(v, str):
        return ("f", v)
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return ("v", v)
    if isinstance(v, (int, float)):
        from decimal import Decimal

        return ("n", Decimal(repr(v)) if isinstance(v, float) else Decimal(v))
    return ("other", str(v))


def _used(ws) -> set[tuple[int, int]]:
    return {(c.row, c.column) for row in ws.iter_rows() for c in row if c.value is not None or c.has_style}


def _cell_entry(sheet: str, coord: str, cell, plan: Plan) -> dict[str, Any] | None:
    where = f"{quote(sheet)}!{coord}"
    v = cell.value
    if cell.data_type == "f" and isinstance(v, str):
        return {"cell": where, "formula": v}
    if isinstance(v, str) and v.startswith("="):
        plan.uncovered.append(f"{where}: a text value starting with '=' cannot be written")
        return None
    if isinstance(v, (datetime.date, datetime.time, datetime.timedelta)):
        plan.uncovered.append(f"{where}: a date or time value ({v}) has no tool")
        return None
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"cell": where, "value": v}
    plan.uncovered.append(f"{where}: a value of type {type(v).__name__} has no tool")
    return None


def _book_plan(given: bytes, wanted: bytes, file: str, plan: Plan) -> None:
    wb0, p0 = safezip.open_workbook(given)
    wb1, p1 = safezip.open_workbook(wanted)
    if wb0 is None or wb1 is None:
        plan.uncovered.append(f"{file}: cannot be opened ({(p0 if wb0 is None else p1).reason})")
        return
    removed = [s for s in wb0.sheetnames if s not in wb1.sheetnames]
    if removed:
        plan.uncovered.append(f"{file}: sheets removed ({', '.join(removed)}): there is no tool to delete a sheet")
    kept = [s for s in wb1.sheetnames if s in wb0.sheetnames]
    if kept != [s for s in wb0.sheetnames if s in wb1.sheetnames]:
        plan.uncovered.append(f"{file}: sheets reordered: there is no tool to move a sheet")
    for i, sheet in enumerate(wb1.sheetnames):
        if sheet not in wb0.sheetnames:
            args: dict[str, Any] = {"file": file, "sheet": sheet}
            if i > 0:
                args["after"] = wb1.sheetnames[i - 1]
            plan.edits.append(("add_sheet", args))

    restyled: set[tuple[str, int, int]] = set()
    changes: list[tuple[str, int, int]] = []
    for sheet in wb1.sheetnames:
        ws1 = wb1[sheet]
        ws0 = wb0[sheet] if sheet in wb0.sheetnames else None
        coords = _used(ws1) | (_used(ws0) if ws0 is not None else set())
        for row, col in sorted(coords, key=lambda rc: (rc[1], rc[0])):
            new = ws1.cell(row, col)
            old = ws0.cell(row, col) if ws0 is not None else None
            if old is None or _content(old) != _content(new) or _style_key(old) != _style_key(new):
                changes.append((sheet, row, col))
            if old is None or _style_key(old) != _style_key(new):
                restyled.add((sheet, row, col))
        if ws0 is not None:
            _sheet_layout(ws0, ws1, file, plan)
    sources = _style_sources(wb0, restyled)
    for sheet, row, col in changes:
        new = wb1[sheet].cell(row, col)
        coord = f"{get_column_letter(col)}{row}"
        old = wb0[sheet].cell(row, col) if sheet in wb0.sheetnames else None
        entry: dict[str, Any] | None = {"cell": f"{quote(sheet)}!{coord}"}
        if old is None or _content(old) != _content(new):
            entry = _cell_entry(sheet, coord, new, plan)
            if entry is None:
                continue
        if (sheet, row, col) in restyled:
            source = _source(sources, _style_key(new), sheet, row, col)
            if source is not None:
                entry["style_from"] = source
            elif not _simple_style(old, new, entry) and not _near_style(sources, wb0, new, sheet, row, col, entry):
                plan.uncovered.append(f"{quote(sheet)}!{coord}: its style (beyond number format and bold) has no "
                                      "input cell to copy it from")
        if len(entry) > 1:
            plan.edits.append(("write_cells", {"file": file, "cells": [entry]}))
    names0 = {n: d.attr_text for n, d in wb0.defined_names.items()}
    names1 = {n: d.attr_text for n, d in wb1.defined_names.items()}
    for name in sorted(set(names0) | set(names1)):
        if names0.get(name) != names1.get(name):
            plan.edits.append(("set_defined_name", {"file": file, "name": name, "refers_to": names1.get(name)}))
    for sheet in wb1.sheetnames:
        ws0 = wb0[sheet] if sheet in wb0.sheetnames else None
        local0 = dict(ws0.defined_names.items()) if ws0 is not None else {}
        local1 = dict(wb1[sheet].defined_names.items())
        if {n: d.attr_text for n, d in local0.items()} != {n: d.attr_text for n, d in local1.items()}:
            plan.uncovered.append(f"{file}: the sheet-level names of {sheet} differ: no tool sets a sheet-level name")


def _simple_style(old, new, entry: dict[str, Any]) -> bool:
    """Express the style difference as number_format / bold, if that is all that differs."""
    from copy import copy

    if old is None:
        return False
    base = list(_style_key(old))
    font = copy(old.font)
    font.b = new.font.b
    base[0], base[4] = repr(font), new.number_format
    if tuple(base) != _style_key(new):
        return False
    if new.number_format != old.number_format:
        entry["number_format"] = new.number_format
    if bool(new.font.b) != bool(old.font.b):
        entry["bold"] = bool(new.font.b)
    return True


def _near_style(sources, wb0, new, sheet: str, row: int, col: int, entry: dict[str, Any]) -> bool:
    """Copy the style of an input cell that differs from `new`'s only in number format and bold,
    then set those two (write_cells applies style_from first): how a new sheet's cells get a
    style no input cell has whole, e.g. a plain-font label beside bold ones, or a blue input
    with another number format."""
    key = _style_key(new)
    for candidate in sources:
        if candidate[1:4] != key[1:4] or candidate[5] != key[5]:
            continue
        s, r, c = sources[candidate][0]
        probe: dict[str, Any] = {}
        if _simple_style(wb0[s].cell(r, c), new, probe):
            found = _source(sources, candidate, sheet, row, col)
            if found is not None:
                entry["style_from"] = found
                entry.update(probe)
                return True
    return False


def _style_sources(wb0, restyled: set[tuple[str, int, int]]) -> dict[tuple, list[tuple[str, int, int]]]:
    """style key -> input cells with that style that the plan leaves alone (safe to copy from)."""
    sources: dict[tuple, list[tuple[str, int, int]]] = {}
    for ws in wb0.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if (ws.title, c.row, c.column) not in restyled:
                    sources.setdefault(_style_key(c), []).append((ws.title, c.row, c.column))
    return sources


def _source(sources, key: tuple, sheet: str, row: int, col: int) -> str | None:
    found = sources.get(key)
    if not found:
        return None
    same_row = [s for s in found if s[0] == sheet and s[1] == row and s[2] < col]
    same_sheet = [s for s in found if s[0] == sheet]
    best = max(same_row, key=lambda s: s[2]) if same_row else (same_sheet[0] if same_sheet else found[0])
    return f"{quote(best[0])}!{get_column_letter(best[2])}{best[1]}"


def _sheet_layout(ws0, ws1, file: str, plan: Plan) -> None:
    where = f"{file}: {ws0.title}"
    widths0 = {k: d.width for k, d in ws0.column_dimensions.items() if d.width}
    widths1 = {k: d.width for k, d in ws1.column_dimensions.items() if d.width}
    if widths0 != widths1:
        plan.uncovered.append(f"{where}: column widths differ: no tool sets a width")
    heights0 = {k: d.height for k, d in ws0.row_dimensions.items() if d.height}
    heights1 = {k: d.height for k, d in ws1.row_dimensions.items() if d.height}
    if heights0 != heights1:
        plan.uncovered.append(f"{where}: row heights differ: no tool sets a height")
    if sorted(map(str, ws0.merged_cells.ranges)) != sorted(map(str, ws1.merged_cells.ranges)):
        plan.uncovered.append(f"{where}: merged cells differ: no tool merges cells")
    if ws0.freeze_panes != ws1.freeze_panes or ws0.sheet_state != ws1.sheet_state:
        plan.uncovered.append(f"{where}: freeze panes or visibility differ: no tool sets them")


# -- decks --------------------------------------------------------------------------------------

def _slide_key(slide) -> tuple[str, str]:
    return (slide.slide_layout.name, decktools.title(slide))


def _pairs(slides0: list, slides1: list, file: str, plan: Plan) -> tuple[list[tuple[int, Any, Any]], list[tuple[int, Any]]]:
    """(final number, input slide, oracle slide) pairs and (final number, oracle slide) additions.

    The same count pairs by position (an edited title is an edit, not a new slide); otherwise
    slides are aligned by (layout, title), so a slide inserted in the middle is an addition and
    the slides after it keep their partners."""
    if len(slides0) == len(slides1):
        return [(n, a, b) for n, (a, b) in enumerate(zip(slides0, slides1), start=1)], []
    import difflib

    pairs: list[tuple[int, Any, Any]] = []
    added: list[tuple[int, Any]] = []
    matcher = difflib.SequenceMatcher(a=[_slide_key(s) for s in slides0], b=[_slide_key(s) for s in slides1], autojunk=False)
    for tag, i0, i1, j0, j1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i1 - i0 == j1 - j0):
            pairs.extend((j + 1, slides0[i], slides1[j]) for i, j in zip(range(i0, i1), range(j0, j1)))
        else:
            if i1 > i0:
                plan.uncovered.append(f"{file}: slides {i0 + 1}-{i1} of the input are removed or replaced: no tool removes a slide")
            added.extend((j + 1, slides1[j]) for j in range(j0, j1))
    return pairs, added


def _deck_plan(given: bytes, wanted: bytes, file: str, plan: Plan) -> None:
    prs0, p0 = safezip.open_presentation(given)
    prs1, p1 = safezip.open_presentation(wanted)
    if prs0 is None or prs1 is None:
        plan.uncovered.append(f"{file}: cannot be opened ({(p0 if prs0 is None else p1).reason})")
        return
    pairs, added = _pairs(list(prs0.slides), list(prs1.slides), file, plan)
    layouts0 = {layout.name for layout in prs0.slide_layouts}
    for n, slide in added:  # in final order first, so every later edit names a slide by its final number
        _new_slide(slide, n, layouts0, file, plan)
    for n, s0, s1 in pairs:
        if s0.slide_layout.name != s1.slide_layout.name:
            plan.uncovered.append(f"{file}: slide {n}'s layout changes: no tool swaps a layout")
        names0 = {sh.name: sh for sh in s0.shapes}
        for shape in s1.shapes:
            old = names0.get(shape.name)
            where = f"slide {n}/{shape.name}"
            if old is None:
                plan.uncovered.append(f"{file}: {where} is new: no tool adds a shape to an existing slide")
                continue
            _shape_plan(old, shape, n, file, where, plan)
        for name in names0:
            if name not in {sh.name for sh in s1.shapes}:
                plan.uncovered.append(f"{file}: slide {n}/{name} is removed: no tool removes a shape")


def _new_slide(slide, n: int, layouts0: set[str], file: str, plan: Plan) -> None:
    """add_slide from the slide's layout with its title, then its other placeholders' text and
    its charts (add_chart); any other new shape is uncovered."""
    layout = slide.slide_layout
    if layout.name not in layouts0:
        plan.uncovered.append(f"{file}: slide {n} uses layout {layout.name!r}, which the input deck lacks: no tool adds a layout")
        return
    plan.edits.append(("add_slide", {"file": file, "layout": layout.name, "title": decktools.title(slide), "position": n}))
    title = slide.shapes.title
    cloned = {p.name for p in layout.iter_cloneable_placeholders()}
    present = {sh.name for sh in slide.shapes}
    for name in sorted(cloned - present):
        plan.uncovered.append(f"{file}: slide {n}/{name} (a placeholder of its layout) is removed: no tool removes a shape")
    for shape in slide.shapes:
        where = f"slide {n}/{shape.name}"
        k = decktools.kind(shape)
        if title is not None and shape.shape_id == title.shape_id:
            continue
        if k == "chart":
            _new_chart(shape, n, file, where, plan)
        elif k == "placeholder" and shape.name in cloned and getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            if shape.text_frame.text:
                plan.edits.append(("edit_slide_text", {"file": file, "slide": n, "shape": shape.name, "text": shape.text_frame.text}))
        else:
            plan.uncovered.append(f"{file}: {where} is a new {k}: no tool adds one")


def _new_chart(shape, n: int, file: str, where: str, plan: Plan) -> None:
    data = decktools.chart_data(shape.chart)
    chart_type = data["type"].lower()
    if chart_type not in decktools.CHART_TYPES:
        plan.uncovered.append(f"{file}: {where} is a {chart_type} chart: add_chart makes {', '.join(decktools.CHART_TYPES)}")
        return
    chart = shape.chart
    legend = "none"
    if chart.has_legend:
        position = chart.legend.position
        legend = str(position).split(" ")[0].lower() if position is not None else "right"
        if legend not in decktools.LEGEND_POSITIONS:
            plan.uncovered.append(f"{file}: {where}'s legend position {legend} has no tool")
            return
    inch = decktools.EMU_PER_INCH
    plan.edits.append(("add_chart", {
        "file": file, "slide": n, "shape": shape.name, "chart_type": chart_type, "categories": data["categories"],
        "series": data["series"], "number_format": decktools.number_format(chart), "legend": legend,
        "left": shape.left / inch, "top": shape.top / inch, "width": shape.width / inch, "height": shape.height / inch}))


def _shape_plan(old, new, n: int, file: str, where: str, plan: Plan) -> None:
    kind0, kind1 = decktools.kind(old), decktools.kind(new)
    if kind0 != kind1:
        plan.uncovered.append(f"{file}: {where} changes from a {kind0} to a {kind1}")
        return
    if (old.left, old.top, old.width, old.height) != (new.left, new.top, new.width, new.height):
        plan.uncovered.append(f"{file}: {where} moves or is resized: no tool moves a shape")
    base = {"file": file, "slide": n, "shape": new.name}
    if kind1 == "table":
        t0, t1 = old.table, new.table
        if (len(t0.rows), len(t0.columns)) != (len(t1.rows), len(t1.columns)):
            plan.uncovered.append(f"{file}: {where}'s rows or columns change: no tool adds them")
            return
        for r in range(len(t1.rows)):
            for c in range(len(t1.columns)):
                text = t1.cell(r, c).text
                if t0.cell(r, c).text != text:
                    plan.edits.append(("edit_table_cell", {**base, "row": r + 1, "column": c + 1, "text": text}))
    elif kind1 == "chart":
        d0, d1 = decktools.chart_data(old.chart), decktools.chart_data(new.chart)
        if d0["type"] != d1["type"]:
            plan.uncovered.append(f"{file}: {where}'s chart type changes: no tool changes it")
        elif d0 != d1:
            plan.edits.append(("set_chart_data", {**base, "categories": d1["categories"], "series": d1["series"]}))
    elif getattr(new, "has_text_frame", False) and new.has_text_frame:
        if old.text_frame.text != new.text_frame.text:
            plan.edits.append(("edit_slide_text", {**base, "text": new.text_frame.text}))
    elif kind1 == "picture":
        if old.image.blob != new.image.blob:
            plan.uncovered.append(f"{file}: {where}'s picture changes: no tool replaces a picture")


# -- the plan -------------------------------------------------------------------------------------

def plan(given: bytes, wanted: bytes, file: str) -> Plan:
    """The edits that turn `given` into `wanted` (both the bytes of `file`)."""
    out = Plan()
    if given == wanted:
        return out
    lowered = file.lower()
    if lowered.endswith(".xlsx"):
        _book_plan(given, wanted, file, out)
    elif lowered.endswith(".pptx"):
        _deck_plan(given, wanted, file, out)
    else:
        out.uncovered.append(f"{file}: not an xlsx or pptx file")
    return out


def batch(edits: list[Call], limits: Limits = Limits()) -> list[Call]:
    """Consecutive single-entry write_cells edits of one file merged into calls of at most
    `limits.max_write_cells` entries; every other edit stays one call."""
    calls: list[Call] = []
    for name, args in edits:
        last = calls[-1] if calls else None
        if (name == "write_cells" and last is not None and last[0] == "write_cells" and last[1]["file"] == args["file"]
                and len(last[1]["cells"]) + len(args["cells"]) <= limits.max_write_cells):
            last[1]["cells"].extend(args["cells"])
        else:
            calls.append((name, {**args, "cells": list(args["cells"])} if name == "write_cells" else dict(args)))
    return calls

"""The workbook tools of the artifact toolbox: read and edit an openpyxl workbook in memory.

Why a module of its own: these are the edits seed 000's spreadsheet tasks need (read a
range, write values or formulas, insert rows or columns, keep defined names right, add a
sheet), each checked before anything changes — a call either applies completely or not at
all — and each change handed to `record` as (location, old, new) for the trace.

Each tool is `fn(wb, args, session) -> str` (the result text); a refused call raises
`ToolError`. Formulas are text: checked by `formulatext.check`, never evaluated here.

What insert_rows / insert_columns do and do not do (openpyxl moves cells and nothing else):
shifted — the references in every formula of every sheet and in every workbook-level defined
name (`formulatext.shift`, Excel's rule). Not shifted — row heights and column widths (they
stay with their index), charts that read the sheet, print areas and freeze panes. Refused —
a sheet with merged cells, tables, conditional formatting or data validation, which openpyxl
would leave pointing at the wrong cells.
"""

from __future__ import annotations

import json
import re
from copy import copy
from decimal import Decimal
from typing import Any, Callable, Mapping, Protocol

from openpyxl.utils import get_column_letter, range_boundaries

from lrc.runtime.artifacts import formulatext
from lrc.runtime.artifacts.views import money
from lrc.runtime.artifacts.toolargs import (NO_CONTROLS, RANGE, Limits, ToolError, boolean, check_reach, integer, items,
                                            number, only, sheet_and_cell, string)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,99}$")
_LOOKS_LIKE_CELL = re.compile(r"^[A-Za-z]{1,3}[0-9]{1,7}$|^[RrCc][0-9]*$")
_MAX_SHEET_NAME = 31
_BAD_SHEET_CHARS = set("[]:*?/\\'")
_RESERVED_SHEET_NAMES = ("history",)  # Excel keeps it for its change-tracking sheet
_MAX_NUMBER_FORMAT = 100  # Excel's own limit is 255


class Session(Protocol):
    limits: Limits

    def record(self, tool: str, location: str, old: Any, new: Any) -> None: ...


def content(cell) -> Any:
    """A cell's content for a result or a mutation record: formula text, or a JSON-able value."""
    v = cell.value
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return float(v)
    if isinstance(v, Decimal):
        return format(v, "f")
    return str(v)


def style(cell) -> dict[str, Any]:
    """What the validators compare of a cell's style (views: number format, bold, italic, colour, fill)."""
    f = cell.font
    color = None
    if f.color is not None:
        color = f.color.rgb if isinstance(f.color.rgb, str) else f"theme {f.color.theme}"
    return {"number_format": cell.number_format, "bold": bool(f.b), "italic": bool(f.i), "color": color,
            "fill": str(cell.fill.fgColor.rgb) if cell.fill is not None and cell.fill.fill_type else None}


def _sheet(wb, name: Any):
    name = string(name, "sheet", 64)
    if name not in wb.sheetnames:
        raise ToolError(f"no sheet {name!r}; the sheets are {', '.join(wb.sheetnames)}")
    return wb[name]


def quote(sheet: str) -> str:
    """A sheet name as a reference writes it (quoted when it is not a plain name)."""
    return sheet if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", sheet) else "'" + sheet.replace("'", "''") + "'"


# -- reading ------------------------------------------------------------------------------------

def list_sheets(wb, args: Mapping[str, Any], session: Session) -> str:
    only(args, "list_sheets", ("file",))
    sheets = [{"sheet": ws.title, "rows": ws.max_row, "columns": ws.max_column, "state": ws.sheet_state}
              for ws in wb.worksheets]
    names = [{"name": n, "refers_to": d.attr_text} for n, d in sorted(wb.defined_names.items())]
    return json.dumps({"sheets": sheets, "defined_names": names}, ensure_ascii=False)


def read_range(wb, args: Mapping[str, Any], session: Session, computed: Callable[[], Any] | None = None) -> str:
    """Non-empty cells of one range: values, formulas as text, and with `computed` the values
    the formulas give after recalculation (the toolbox's engine run on the current state)."""
    only(args, "read_range", ("file", "sheet", "range"), ("computed",))
    ws = _sheet(wb, args["sheet"])
    ref = string(args["range"], "range", 32).replace("$", "").upper()
    if not RANGE.match(ref):
        raise ToolError(f"range {ref!r} is not a range like A1:G20")
    c0, r0, c1, r1 = range_boundaries(ref if ":" in ref else f"{ref}:{ref}")
    span = (c1 - c0 + 1) * (r1 - r0 + 1)
    if span > session.limits.max_read_cells:
        raise ToolError(f"{ref} spans {span:,} cells; read at most {session.limits.max_read_cells:,} cells per call")
    want_values = "computed" in args and boolean(args["computed"], "computed")
    calc = computed() if want_values and computed is not None else None
    if calc is not None and not calc.ok:
        raise ToolError("the formulas cannot be computed: " + (calc.failure or f"{calc.unsupported[0][2]} is not supported"))
    cells = []
    for row in ws.iter_rows(min_row=r0, max_row=min(r1, ws.max_row), min_col=c0, max_col=min(c1, ws.max_column)):
        for c in row:
            if c.value is None:
                continue
            entry: dict[str, Any] = {"cell": c.coordinate}
            if c.data_type == "f" and isinstance(c.value, str):
                entry["formula"] = c.value
                if calc is not None:
                    got = calc.get(ws.title, c.coordinate)
                    entry["value"] = money(got) if isinstance(got, Decimal) else (None if got is None else str(got))
            else:
                entry["value"] = content(c)
            cells.append(entry)
    return json.dumps({"sheet": ws.title, "range": ref, "cells": cells}, ensure_ascii=False)


# -- writing ------------------------------------------------------------------------------------

def _planned(wb, entry: Any, n: int, session: Session) -> tuple:
    limits = session.limits
    if not isinstance(entry, Mapping):
        raise ToolError(f"cells[{n}] must be an object with cell and value or formula")
    only(entry, f"cells[{n}]", ("cell",), ("value", "formula", "number_format", "bold", "style_from"))
    sheet, coord, row, col = sheet_and_cell(entry["cell"], f"cells[{n}].cell", limits)
    if sheet not in wb.sheetnames:
        raise ToolError(f"cells[{n}]: no sheet {sheet!r}; the sheets are {', '.join(wb.sheetnames)}")
    if "value" in entry and "formula" in entry:
        raise ToolError(f"cells[{n}]: give value or formula, not both")
    write, new = False, None
    if "formula" in entry:
        try:
            new = formulatext.check(entry["formula"])
        except formulatext.FormulaRefused as exc:
            raise ToolError(f"cells[{n}] ({sheet}!{coord}): {exc}") from None
        string(new, f"cells[{n}].formula", formulatext.MAX_FORMULA_CHARS, controls=NO_CONTROLS)  # a file can hold it
        write = True
    elif "value" in entry:
        v = entry["value"]
        if v is None or isinstance(v, bool):
            new = v
        elif isinstance(v, str):
            new = string(v, f"cells[{n}].value", limits.max_text_chars, empty=True)
            if new.startswith("="):
                raise ToolError(f"cells[{n}]: a text value may not start with '=': give a formula as formula")
        else:
            new = number(v, f"cells[{n}].value")
        write = True
    fmt = (string(entry["number_format"], f"cells[{n}].number_format", _MAX_NUMBER_FORMAT, controls=NO_CONTROLS)
           if "number_format" in entry else None)
    bold = boolean(entry["bold"], f"cells[{n}].bold") if "bold" in entry else None
    source = None
    if "style_from" in entry:
        s_sheet, s_coord, _, _ = sheet_and_cell(entry["style_from"], f"cells[{n}].style_from", limits)
        if s_sheet not in wb.sheetnames:
            raise ToolError(f"cells[{n}].style_from: no sheet {s_sheet!r}")
        source = (s_sheet, s_coord)
    if not write and fmt is None and bold is None and source is None:
        raise ToolError(f"cells[{n}] changes nothing: give value, formula, number_format, bold or style_from")
    return sheet, coord, write, new, fmt, bold, source


def write_cells(wb, args: Mapping[str, Any], session: Session) -> str:
    """Set values or formulas (and optionally a number format, bold, or another cell's whole
    style); every entry is checked first, so a refused call changes nothing."""
    only(args, "write_cells", ("file", "cells"))
    entries = items(args["cells"], "cells", session.limits.max_write_cells)
    plans = [_planned(wb, e, n, session) for n, e in enumerate(entries)]
    targets = [(p[0], p[1]) for p in plans]
    if len(set(targets)) != len(targets):
        raise ToolError("a cell appears twice in one write_cells call")
    changed = 0
    for sheet, coord, write, new, fmt, bold, source in plans:
        c = wb[sheet][coord]
        where = f"{quote(sheet)}!{coord}"
        before, before_style = content(c), style(c)
        if write:
            c.value = new
            if content(c) != before:
                session.record("write_cells", where, before, content(c))
                changed += 1
        if source is not None:
            c._style = copy(wb[source[0]][source[1]]._style)
        if fmt is not None:
            c.number_format = fmt
        if bold is not None:
            font = copy(c.font)
            font.b = bold
            c.font = font
        if style(c) != before_style:
            session.record("write_cells", f"{where} style", before_style, style(c))
            changed += 1
    return f"wrote {len(plans)} cell(s); {changed} change(s) recorded"


def set_defined_name(wb, args: Mapping[str, Any], session: Session) -> str:
    """Create, move or (refers_to null) delete a workbook-level defined name over a range of
    an existing sheet (no formulas, no other files)."""
    only(args, "set_defined_name", ("file", "name", "refers_to"))
    from openpyxl.workbook.defined_name import DefinedName

    name = string(args["name"], "name", 100)
    if not _NAME.match(name) or _LOOKS_LIKE_CELL.match(name) or name.upper() in ("TRUE", "FALSE"):
        raise ToolError(f"{name!r} is not a usable defined name (letters, digits, _ and ., not a cell address)")
    old = wb.defined_names.get(name)
    old_text = old.attr_text if old is not None else None
    target = args["refers_to"]
    if target is None:
        if old is None:
            raise ToolError(f"there is no defined name {name!r} to delete")
        del wb.defined_names[name]
        session.record("set_defined_name", f'name "{name}"', old_text, None)
        return f"deleted the defined name {name}"
    text = string(target, "refers_to", 100)
    sheet, bang, ref = text.rpartition("!")
    if not bang:
        raise ToolError("refers_to must name a sheet and a range, like IS!$C$4:$G$4")
    plain = sheet[1:-1].replace("''", "'") if sheet.startswith("'") and sheet.endswith("'") else sheet
    if plain not in wb.sheetnames:
        raise ToolError(f"refers_to: no sheet {plain!r}; the sheets are {', '.join(wb.sheetnames)}")
    if not RANGE.match(ref):
        raise ToolError(f"refers_to: {ref!r} is not a range like $C$4:$G$4")
    c0, r0, c1, r1 = range_boundaries(ref.replace("$", "") if ":" in ref else f"{ref}:{ref}".replace("$", ""))
    check_reach(r1, c1, "refers_to", session.limits)
    if old is None and len(wb.defined_names) >= session.limits.max_names:
        raise ToolError(f"the workbook already holds {session.limits.max_names} defined names")
    new_text = f"{quote(plain)}!{ref}"
    wb.defined_names[name] = DefinedName(name, attr_text=new_text)
    if new_text != old_text:
        session.record("set_defined_name", f'name "{name}"', old_text, new_text)
    return f"{name} now refers to {new_text}"


def sheet_name(value: Any, what: str) -> str:
    """A new sheet's name by Excel's rules (stricter on quotes: none at all, so references stay
    simple): 1-31 characters (UTF-16 units, as Excel counts them), none of [ ] : * ? / \\ ' and
    no control character, no space at either end, not "History" (Excel reserves it). Uniqueness
    is the caller's check (it needs the workbook)."""
    name = string(value, what, _MAX_SHEET_NAME, controls=NO_CONTROLS)
    if len(name.encode("utf-16-le")) // 2 > _MAX_SHEET_NAME:  # Excel counts UTF-16 units: an emoji is two
        raise ToolError(f"{what} is {len(name.encode('utf-16-le')) // 2} UTF-16 units long in Excel's count "
                        f"(the limit is {_MAX_SHEET_NAME})")
    if set(name) & _BAD_SHEET_CHARS or name != name.strip():
        raise ToolError("a sheet name may not contain [ ] : * ? / \\ ' or start or end with a space")
    if name.lower() in _RESERVED_SHEET_NAMES:
        raise ToolError(f"{name!r} is reserved by Excel as a sheet name")
    return name


def add_sheet(wb, args: Mapping[str, Any], session: Session) -> str:
    """An empty sheet, after the named one (or at the end)."""
    only(args, "add_sheet", ("file", "sheet"), ("after",))
    name = sheet_name(args["sheet"], "sheet")
    if name.lower() in (s.lower() for s in wb.sheetnames):
        raise ToolError(f"a sheet {name!r} already exists")
    if len(wb.sheetnames) >= 100:
        raise ToolError("the workbook already has 100 sheets")
    index = len(wb.sheetnames)
    if "after" in args:
        index = wb.sheetnames.index(_sheet(wb, args["after"]).title) + 1
    wb.create_sheet(name, index)
    session.record("add_sheet", f"sheet {name}", None, {"position": index + 1})
    return f"added the sheet {name} as sheet {index + 1}"


# -- inserting ----------------------------------------------------------------------------------

def _insertable(ws) -> None:
    problems = []
    if ws.merged_cells.ranges:
        problems.append("merged cells")
    if getattr(ws, "tables", None):
        problems.append("tables")
    if ws.conditional_formatting:
        problems.append("conditional formatting")
    if ws.data_validations.dataValidation:
        problems.append("data validation")
    if problems:
        raise ToolError(f"{ws.title} has {', '.join(problems)}, which openpyxl would not move with the cells: "
                        "insertion is refused rather than leaving them on the wrong cells")


def _insert(wb, args: Mapping[str, Any], session: Session, axis: str) -> str:
    tool = "insert_rows" if axis == "row" else "insert_columns"
    only(args, tool, ("file", "sheet", "at"), ("count",))
    limits = session.limits
    ws = _sheet(wb, args["sheet"])
    at = integer(args["at"], "at", 1, limits.max_rows if axis == "row" else limits.max_columns)
    count = integer(args.get("count", 1), "count", 1, limits.max_insert)
    _insertable(ws)
    if axis == "row":
        check_reach(ws.max_row + count, 1, f"{ws.title} after the insertion", limits)
    else:
        check_reach(1, ws.max_column + count, f"{ws.title} after the insertion", limits)
    (ws.insert_rows if axis == "row" else ws.insert_cols)(at, count)
    where = (f"{quote(ws.title)}!{at}:{at + count - 1}" if axis == "row"
             else f"{quote(ws.title)}!{get_column_letter(at)}:{get_column_letter(at + count - 1)}")
    session.record(tool, where, None, f"{count} {'row' if axis == 'row' else 'column'}(s) inserted")
    shifted = 0
    for sheet in wb.worksheets:
        for row in sheet.iter_rows():
            for c in row:
                if c.data_type == "f" and isinstance(c.value, str):
                    new = formulatext.shift(c.value, sheet.title, ws.title, axis, at, count)
                    if new != c.value:
                        session.record(tool, f"{quote(sheet.title)}!{c.coordinate}", c.value, new)
                        c.value = new
                        shifted += 1
    names = 0
    for name, dn in sorted(wb.defined_names.items()):
        if dn.attr_text:
            new = formulatext.shift("=" + dn.attr_text, None, ws.title, axis, at, count)[1:]
            if new != dn.attr_text:
                session.record(tool, f'name "{name}"', dn.attr_text, new)
                dn.attr_text = new
                names += 1
    return (f"inserted {count} {'row' if axis == 'row' else 'column'}(s) at {where}; shifted the references of {shifted} "
            f"formula(s) and {names} defined name(s). Not shifted: row heights and column widths, charts, print areas, "
            "freeze panes, sheet-level names.")


def insert_rows(wb, args: Mapping[str, Any], session: Session) -> str:
    return _insert(wb, args, session, "row")


def insert_columns(wb, args: Mapping[str, Any], session: Session) -> str:
    return _insert(wb, args, session, "col")

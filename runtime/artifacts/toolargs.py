"""Argument checking for the artifact toolbox: every value a model sends is hostile.

Why: tool arguments arrive as JSON a model wrote (bounded in size and depth by
`boundedjson` before the toolbox sees them, but of any type). Each tool names the fields it
takes; anything unexpected, missing, of the wrong type or over a bound raises `ToolError`,
which the toolbox returns as an error result the model can act on — never an exception into
the run. JSON booleans are not integers here (Python says `True == 1`; a model does not).
A string holds nothing a file cannot (`string`'s `controls`): a character openpyxl, python-pptx
or the XML writer refuses only at save time would leave a file no later save could write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping

from openpyxl.utils import column_index_from_string, get_column_letter


class ToolError(Exception):
    """A tool call the toolbox refuses; the message goes back to the model."""


@dataclass(frozen=True)
class Limits:
    """The bounds of every read and write (a run's budget for one tool call)."""

    max_result_chars: int = 20_000  # any tool result, cut with a visible marker
    max_read_cells: int = 2_000  # cells one read_range may span
    max_write_cells: int = 500  # cells one write_cells may set
    max_text_chars: int = 2_000  # a text value, a number format, a slide text, a formula (formulatext caps it too)
    max_rows: int = 10_000  # no write or insert reaches past this row...
    max_columns: int = 200  # ...or this column (a cell at XFD1048576 would make every later scan slow)
    max_insert: int = 100  # rows or columns one insert adds
    max_names: int = 500  # defined names a workbook may hold after set_defined_name
    max_mutations: int = 20_000  # mutation records a run may make; past it every mutating tool refuses
    max_categories: int = 200  # chart categories
    max_series: int = 20  # chart series
    max_slides: int = 100  # slides a deck may hold after add_slide
    max_shapes: int = 100  # shapes a slide may hold after add_chart
    max_file_bytes: int = 20_000_000  # safezip's default cap on an Office file


CELL = re.compile(r"^\$?(?P<col>[A-Za-z]{1,3})\$?(?P<row>[0-9]{1,7})$")
RANGE = re.compile(r"^\$?[A-Za-z]{1,3}\$?[0-9]{1,7}(:\$?[A-Za-z]{1,3}\$?[0-9]{1,7})?$")
MAX_NUMBER = Decimal("1e15")


def only(args: Mapping[str, Any], tool: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    extra = sorted(str(k)[:40] for k in args if k not in required and k not in optional)
    if extra:
        takes = ", ".join(required + optional)
        raise ToolError(f"{tool} takes {takes} (unexpected: {', '.join(extra)})")
    missing = [k for k in required if k not in args]
    if missing:
        raise ToolError(f"{tool} needs {', '.join(missing)}")


# The control characters a text may hold, by use. Anything else below U+0020 (and a lone
# surrogate, U+FFFE, U+FFFF) no Office file can hold: openpyxl, python-pptx or the XML writer
# would refuse it only at save time, after which no save of that file could succeed.
TEXT_CONTROLS = "\t\n\r"  # a cell's text value, a note: what openpyxl writes and reads back
NO_CONTROLS = ""  # a name, a number format, a chart type: one line, nothing invisible
_CONTROL_NAMES = {"\n": "line breaks (\\n)", "\v": "line breaks inside a paragraph (\\v)", "\t": "tabs",
                  "\r": "carriage returns"}
# built, not a literal: the code fingerprint reads constants as text, and a lone surrogate is none
_UNWRITABLE = re.compile("[\x00-\x1f" + chr(0xD800) + "-" + chr(0xDFFF) + "\ufffe\uffff]")


def string(value: Any, what: str, max_chars: int, *, empty: bool = False, controls: str = TEXT_CONTROLS) -> str:
    """A string within bounds that a file can hold, holding no control characters but `controls`."""
    if not isinstance(value, str):
        raise ToolError(f"{what} must be a string")
    if len(value) > max_chars:
        raise ToolError(f"{what} is {len(value):,} characters long (the limit is {max_chars:,})")
    if not empty and not value.strip():
        raise ToolError(f"{what} must not be empty")
    if "\x00" in value:
        raise ToolError(f"{what} contains a NUL character")
    for m in _UNWRITABLE.finditer(value):
        ch = m.group()
        if ch in controls:
            continue
        where = f"U+{ord(ch):04X} at position {m.start() + 1}"
        if ord(ch) >= 32:
            raise ToolError(f"{what} contains {where}, a character no Office file can hold")
        allowed = [name for c, name in _CONTROL_NAMES.items() if c in controls]
        if not allowed:
            raise ToolError(f"{what} contains a control character ({where}): write it without control characters")
        listed = allowed[0] if len(allowed) == 1 else ", ".join(allowed[:-1]) + " and " + allowed[-1]
        raise ToolError(f"{what} contains a control character ({where}): {what} may contain {listed}, "
                        "but no other control characters")
    return value


def integer(value: Any, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{what} must be an integer")
    if not lo <= value <= hi:
        raise ToolError(f"{what} must be between {lo} and {hi}")
    return value


def boolean(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise ToolError(f"{what} must be true or false")
    return value


def number(value: Any, what: str) -> Decimal:
    """A JSON number as the exact Decimal of its text (a float's shortest repr), bounded."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError(f"{what} must be a number")
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, ValueError, OverflowError):
        raise ToolError(f"{what} is not a usable number") from None
    if not d.is_finite() or abs(d) >= MAX_NUMBER:
        raise ToolError(f"{what} must be a finite number below {MAX_NUMBER:,.0f} in size")
    return d


def items(value: Any, what: str, max_items: int) -> list[Any]:
    if not isinstance(value, list):
        raise ToolError(f"{what} must be a list")
    if not value:
        raise ToolError(f"{what} must not be empty")
    if len(value) > max_items:
        raise ToolError(f"{what} has {len(value):,} entries (the limit is {max_items:,} per call)")
    return value


def cell(value: Any, what: str, limits: Limits) -> tuple[str, int, int]:
    """'G5' -> ('G5', row 5, column 7), inside the toolbox's reach."""
    text = string(value, what, 16)
    m = CELL.match(text.strip())
    if m is None:
        raise ToolError(f"{what} {text!r} is not a cell like G5")
    col, row = column_index_from_string(m.group("col").upper()), int(m.group("row"))
    check_reach(row, col, what, limits)
    return f"{get_column_letter(col)}{row}", row, col


def check_reach(row: int, col: int, what: str, limits: Limits) -> None:
    if not 1 <= row <= limits.max_rows or not 1 <= col <= limits.max_columns:
        raise ToolError(f"{what} is outside the reach of this toolbox (rows 1-{limits.max_rows}, "
                        f"columns A-{get_column_letter(limits.max_columns)})")


def sheet_and_cell(value: Any, what: str, limits: Limits) -> tuple[str, str, int, int]:
    """'IS!G5' or "'My sheet'!G5" -> (sheet, 'G5', row, column)."""
    text = string(value, what, 64)
    sheet, bang, ref = text.rpartition("!")
    if not bang or not sheet:
        raise ToolError(f"{what} {text!r} must name its sheet, like IS!G5")
    if sheet.startswith("'") and sheet.endswith("'") and len(sheet) >= 2:
        sheet = sheet[1:-1].replace("''", "'")
    coord, row, col = cell(ref, what, limits)
    return sheet, coord, row, col

"""Read-only views of a task's files, shared by every validator of one run.

Why: eight validator families read the same workbook and deck; each file is checked by
`safezip`, opened and (for a workbook) recalculated once per run, not once per validator.
A `Submission` holds the task's input files and the agent's output files (name -> bytes);
`book(name)` / `deck(name)` give the output's view, `book(name, side="input")` the input's.

Rows are found by their label in column A (so a validator names "Total assets", not row 7)
and periods by the header row (row 3, from column C): an agent that inserts a row or adds a
quarter is judged on the content, not on coordinates the task author guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from openpyxl.utils import column_index_from_string, get_column_letter

from lrc.runtime.artifacts import model, recalc, safezip


def as_decimal(value: Any) -> Decimal | None:
    """A stored or recalculated number as a Decimal (None for text, blanks, errors, booleans)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal):
        return value
    if isinstance(value, (int, float)):
        try:
            return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        except InvalidOperation:
            return None
    return None


def money(value: Decimal | None) -> str | None:
    """A Decimal as JSON-able text, trailing float-noise zeros dropped ('278.45')."""
    if value is None:
        return None
    q = value.quantize(Decimal("0.000001")).normalize()
    return format(q, "f")


class BookView:
    """An xlsx file: its package check, its openpyxl workbook (formulas), its recalculation."""

    def __init__(self, data: bytes | None):
        self.data = data
        if data is None:
            self.wb, self.reason = None, "the file is missing"
            self.package = None
            return
        self.wb, self.package = safezip.open_workbook(data)
        self.reason = "" if self.wb is not None else self.package.reason
        self._calc: recalc.Recalc | None = None

    @property
    def ok(self) -> bool:
        return self.wb is not None

    def calc(self) -> recalc.Recalc:
        if self._calc is None:
            self._calc = recalc.recalculate(self.data, self.wb)
        return self._calc

    def has(self, sheet: str) -> bool:
        return sheet in self.wb.sheetnames

    def row(self, sheet: str, label: str) -> int | None:
        if not self.has(sheet):
            return None
        ws = self.wb[sheet]
        for (cell,) in ws.iter_rows(min_col=1, max_col=1):
            if isinstance(cell.value, str) and cell.value.strip() == label:
                return cell.row
        return None

    def periods(self, sheet: str) -> list[tuple[str, Any]]:
        """(column letter, header) of each period column: row 3 from column C to the first blank."""
        if not self.has(sheet):
            return []
        ws = self.wb[sheet]
        out = []
        c = model.FIRST_COL
        while True:
            header = ws.cell(model.HEADER_ROW, c).value
            if header is None or (isinstance(header, str) and not header.strip()):
                return out
            out.append((get_column_letter(c), header))
            c += 1

    def value(self, sheet: str, coord: str) -> Any:
        """The recalculated value of a cell (a formula's result, or the stored input)."""
        calc = self.calc()
        if (sheet, coord) in calc.values:
            return calc.values[(sheet, coord)]
        cell = self.wb[sheet][coord]
        return None if cell.data_type == "f" else cell.value


def previous(letter: str) -> str:
    return get_column_letter(column_index_from_string(letter) - 1)


class DeckView:
    """A pptx file: its package check and its python-pptx Presentation."""

    def __init__(self, data: bytes | None):
        self.data = data
        if data is None:
            self.prs, self.package, self.reason = None, None, "the file is missing"
            return
        self.prs, self.package = safezip.open_presentation(data)
        self.reason = "" if self.prs is not None else self.package.reason

    @property
    def ok(self) -> bool:
        return self.prs is not None

    def slides(self) -> list:
        return list(self.prs.slides)

    @staticmethod
    def title(slide) -> str:
        shape = slide.shapes.title
        return shape.text_frame.text.strip() if shape is not None and shape.has_text_frame else ""

    @staticmethod
    def shape(slide, name: str):
        for shape in slide.shapes:
            if shape.name == name:
                return shape
        return None


@dataclass
class Submission:
    """The task's input files and the agent's output files, each viewed at most once."""

    inputs: dict[str, bytes]
    outputs: dict[str, bytes]
    _views: dict[tuple[str, str], Any] = field(default_factory=dict)

    def _files(self, side: str) -> dict[str, bytes]:
        return self.inputs if side == "input" else self.outputs

    def book(self, name: str, side: str = "output") -> BookView:
        key = (side, name)
        if key not in self._views:
            self._views[key] = BookView(self._files(side).get(name))
        return self._views[key]

    def deck(self, name: str, side: str = "output") -> DeckView:
        key = (side, name)
        if key not in self._views:
            self._views[key] = DeckView(self._files(side).get(name))
        return self._views[key]

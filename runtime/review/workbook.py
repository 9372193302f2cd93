"""The review workbook: what goes in which cell, written with openpyxl to deterministic bytes,
and read back with every protected cell checked.

Layout. "Instructions" (an optional reviewer name in B2, the edition, the plan and sample
digests, the rubrics in full); one review sheet per rubric: row 3 the headers, one row per
judgment from row 4: row id (opaque), workload, item id, the anonymized output the judge saw,
the source (criteria rubric) or the fact to look for (facts rubric), the rubric text verbatim,
then the input cells (whole numbers on the rubric's scale, or yes/no per fact, with data
validation; free-text fields optional). The judge's verdict, the model and the run key are
never written. A very hidden, protected sheet "lrc" carries the format, plan digest, sample
digest, scope and a digest of every protected cell.

Tamper evidence. Sheets are protected with only the input cells unlocked (that stops accidents;
protection without a password is no security), so the import re-reads every cell that is not
an input and compares it with what the export writes for the same folder -- rebuilt from the
journal, not taken from the workbook -- and checks the stored content digest too. An edited
output, fact, row id or digest is refused, with the cells named.

Hostile text. Outputs are model text: non-strings are shown as JSON, line ends become "\n",
characters XML cannot hold become U+FFFD, a leading "=" stays text (never a formula), and text
over Excel's cell limit is cut with a note. The same function makes the expected content on
import, so a sanitized cell reads back equal.

Determinism. Workbook properties carry a fixed timestamp and the zip entries a fixed date,
so the same folder, plan and seed give the same bytes.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from lrc.runtime.review.rubric import RubricShape
from lrc.runtime.review.sample import ReviewError, Row, Sample, _sha

WORKBOOK_FORMAT = 1
CELL_LIMIT = 32_000  # Excel holds at most 32,767 characters in a cell
META_SHEET, INFO_SHEET = "lrc", "Instructions"
HEADER_ROW, FIRST_ROW = 3, 4
FIXED_TIME = datetime.datetime(2000, 1, 1, 0, 0, 0)
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_NOT_XML = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_BASE_COLUMNS = ("Row id", "Workload", "Item", "Output (anonymized)", "Source / fact to look for", "Rubric")


def cell_text(value: Any) -> str:
    """Any value as text a cell holds and reads back unchanged (see the module docstring)."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            value = "<a value that cannot be shown>"
    original = len(value)
    head = value[:2 * CELL_LIMIT + 2]  # a CR LF pair shrinks to one character: the cut still falls inside `head`
    value = head.replace("\r\n", "\n").replace("\r", "\n")
    if len(value) > CELL_LIMIT:
        left = len(value) - CELL_LIMIT + original - len(head)
        value = value[:CELL_LIMIT] + f"\n… [cut here: {left} more characters; the full text is in the run's trace]"
    return _NOT_XML.sub("\ufffd", value)


@dataclass(frozen=True)
class Input:
    """An unlocked cell the reviewer fills."""

    row: int
    col: int
    kind: str  # "score" | "yesno" | "text" | "name"
    name: str  # criterion id, "present", a text field, or "reviewer"
    row_id: str | None


@dataclass
class SheetModel:
    title: str
    cells: dict[tuple[int, int], str] = field(default_factory=dict)  # (row, col) -> protected text
    inputs: list[Input] = field(default_factory=list)
    rubric: RubricShape | None = None
    rows: list[Row] = field(default_factory=list)
    hidden: bool = False


@dataclass
class WorkbookModel:
    sheets: list[SheetModel]
    meta: dict[str, str]  # the hidden sheet's keys and values

    def inputs(self) -> list[tuple[SheetModel, Input]]:
        return [(s, i) for s in self.sheets for i in s.inputs]


def input_columns(rubric: RubricShape) -> list[tuple[str, str, str]]:
    """(kind, field, header) of the input columns of a rubric's sheet."""
    if rubric.facts:
        cols = [("yesno", "present", "present (yes/no)")]
    else:
        cols = [("score", c, f"{c} ({rubric.scale_min}-{rubric.scale_max})") for c in rubric.criteria]
    return cols + [("text", f, f"{f} (optional)") for f in rubric.text_fields]


def build(plan: dict[str, Any], journal, sample: Sample) -> WorkbookModel:
    """The workbook of a sample, from the plan and the journal alone (export and import share it)."""
    by_rubric: dict[str, list[Row]] = {}
    for row in sample.rows:
        by_rubric.setdefault(sample.rubrics[row.workload].ref, []).append(row)
    shapes = {r.ref: r for r in sample.rubrics.values()}
    sheets = [_info_sheet(plan, sample, [shapes[r] for r in sorted(by_rubric)])]
    for ref in sorted(by_rubric):
        sheet = _review_sheet(ref, shapes[ref], by_rubric[ref], journal)
        while sheet.title in {s.title for s in sheets} | {META_SHEET}:  # two long refs cut to one title
            sheet.title = sheet.title[:28] + f"~{len(sheets)}"
        sheets.append(sheet)
    meta = {"format": str(WORKBOOK_FORMAT), "plan": sample.plan_digest, "edition": plan["edition"]["ref"],
            "scope": sample.scope, "sample": sample.digest}
    meta["content"] = content_digest(meta, {s.title: s.cells for s in sheets})
    return WorkbookModel(sheets, meta)


def content_digest(meta: dict[str, str], cells: dict[str, dict[tuple[int, int], str]]) -> str:
    """A digest of every protected cell (the hidden sheet's entries except this digest itself)."""
    return _sha("review-workbook", {"meta": {k: v for k, v in sorted(meta.items()) if k != "content"},
                                    "sheets": [[t, [[r, c, v] for (r, c), v in sorted(cs.items())]] for t, cs in sorted(cells.items())]})


def _put(cells: dict[tuple[int, int], str], row: int, col: int, value: Any) -> None:
    text = cell_text(value)
    if text:  # an empty cell reads back as nothing
        cells[(row, col)] = text


def _info_sheet(plan: dict[str, Any], sample: Sample, rubrics: list[RubricShape]) -> SheetModel:
    sheet = SheetModel(INFO_SHEET)
    lines: list[tuple[str, str]] = [
        ("LedgerRate human review workbook", ""),
        ("Reviewer name", ""),  # B2: the reviewer's input (optional)
        ("Edition", plan["edition"]["ref"]),
        ("Plan digest", sample.plan_digest),
        ("Sample digest", sample.digest),
        ("Scope", sample.scope + (" (every judged run of one cell)" if sample.scope == "regrade" else
                                  " (a seeded sample of every cell's judged runs)")),
        ("Judgments", str(len(sample.rows))),
        ("", ""),
        ("How to review", "Grade every row of each review sheet in the yellow cells only: a score on the rubric's scale for "
                          "each criterion, or yes/no for whether the brief states the fact. The outputs are anonymized and "
                          "shuffled; the judge's verdict is not shown. Any other edit makes `lrc review import` refuse the "
                          "workbook. Save as .xlsx and return it."),
    ]
    for rubric in rubrics:
        lines += [("", ""), ("Rubric", rubric.ref), ("Rubric text", rubric.text)]
    for r, (key, value) in enumerate(lines, start=1):
        _put(sheet.cells, r, 1, key)
        _put(sheet.cells, r, 2, value)
    sheet.inputs.append(Input(2, 2, "name", "reviewer", None))
    return sheet


def _review_sheet(ref: str, rubric: RubricShape, rows: list[Row], journal) -> SheetModel:
    sheet = SheetModel(_sheet_title(ref), rubric=rubric, rows=rows)
    cols = input_columns(rubric)
    _put(sheet.cells, 1, 1, "Grade in the yellow cells; the judge's verdict and the model are not shown.")
    _put(sheet.cells, 2, 1, f"Rubric {ref}: " + ("one row per checklist fact; answer yes if the output states it"
                                               if rubric.facts else "one row per output; score every criterion"))
    for c, header in enumerate([*_BASE_COLUMNS, *(h for _, _, h in cols)], start=1):
        _put(sheet.cells, HEADER_ROW, c, header)
    for n, row in enumerate(rows):
        r = FIRST_ROW + n
        material = journal.judges[(row.run, "primary")].get("material")
        material = material if isinstance(material, dict) else {}
        if row.fact_id is None:
            shown = material.get("source", "")
        else:
            texts = {c.get("id"): c.get("text", "") for c in material.get("checks", []) if isinstance(c, dict)} \
                if isinstance(material.get("checks"), list) else {}
            shown = f"{row.fact_id}: {cell_text(texts.get(row.fact_id, ''))}"
        for c, value in enumerate((row.row_id, row.workload, row.item, material.get("output", ""), shown, rubric.text), start=1):
            _put(sheet.cells, r, c, value)
        for c, (kind, name, _) in enumerate(cols, start=len(_BASE_COLUMNS) + 1):
            sheet.inputs.append(Input(r, c, kind, name, row.row_id))
    return sheet


def _sheet_title(ref: str) -> str:
    return re.sub(r"[\[\]:*?/\\]", "-", ref)[:31]


# -- writing ---------------------------------------------------------------------------------

def write(model: WorkbookModel) -> bytes:
    """The workbook's bytes: the same model gives the same bytes (fixed times, fixed order)."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill, Protection
    from openpyxl.workbook.protection import WorkbookProtection
    from openpyxl.worksheet.datavalidation import DataValidation
    from openpyxl.writer.excel import ExcelWriter

    wb = Workbook()
    wb.remove(wb.active)
    fill = PatternFill("solid", start_color="FFFFF2CC", end_color="FFFFF2CC")
    wrap = Alignment(wrap_text=True, vertical="top")
    for sheet in [*model.sheets, SheetModel(META_SHEET, cells=_meta_cells(model.meta), hidden=True)]:
        ws = wb.create_sheet(sheet.title)
        for (r, c), text in sorted(sheet.cells.items()):
            cell = ws.cell(row=r, column=c, value=text)
            cell.data_type = "s"  # text, never a formula, whatever it starts with
            if sheet.rubric is not None and r >= FIRST_ROW:
                cell.alignment = wrap
            elif r == HEADER_ROW and sheet.rubric is not None:
                cell.font = Font(bold=True)
        validations: dict[str, DataValidation] = {}
        spans: dict[tuple[str, int], list[int]] = {}  # (validation, column) -> [first row, last row]
        for inp in sheet.inputs:
            cell = ws.cell(row=inp.row, column=inp.col)
            cell.protection = Protection(locked=False)
            cell.fill = fill
            cell.alignment = wrap
            if _validation(inp, sheet.rubric, validations) is not None:
                span = spans.setdefault((inp.kind, inp.col), [inp.row, inp.row])
                span[0], span[1] = min(span[0], inp.row), max(span[1], inp.row)
        for (kind, col), (first, last) in sorted(spans.items()):
            # one range per column (the input rows are contiguous): a short sqref, however many rows
            validations[kind].add(f"{ws.cell(row=first, column=col).coordinate}:{ws.cell(row=last, column=col).coordinate}")
        for _, dv in sorted(validations.items()):
            ws.add_data_validation(dv)
        if sheet.rubric is not None:
            for letter, width in zip("ABCDEF", (9, 24, 12, 70, 45, 40)):
                ws.column_dimensions[letter].width = width
            ws.freeze_panes = ws.cell(row=FIRST_ROW, column=2).coordinate
        elif sheet.title == INFO_SHEET:
            ws.column_dimensions["A"].width = 18
            ws.column_dimensions["B"].width = 100
        ws.protection.sheet = True
        ws.protection.formatColumns = False  # resizing columns and rows stays allowed
        ws.protection.formatRows = False
        if sheet.hidden:
            ws.sheet_state = "veryHidden"
    wb.security = WorkbookProtection(lockStructure=True)
    props = wb.properties
    props.creator, props.lastModifiedBy, props.title = "lrc", None, "LedgerRate human review"
    props.created = props.modified = FIXED_TIME
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()  # `save_workbook` would stamp the current time
    return _fixed_zip(buf.getvalue())


def _validation(inp: Input, rubric: RubricShape | None, made: dict[str, Any]):
    from openpyxl.worksheet.datavalidation import DataValidation

    if inp.kind == "score" and rubric is not None:
        if "score" not in made:
            made["score"] = DataValidation(type="whole", operator="between", formula1=str(rubric.scale_min),
                                           formula2=str(rubric.scale_max), allow_blank=True, showErrorMessage=True,
                                           errorTitle="Score", error=f"A whole number from {rubric.scale_min} to {rubric.scale_max}")
        return made["score"]
    if inp.kind == "yesno":
        if "yesno" not in made:
            made["yesno"] = DataValidation(type="list", formula1='"yes,no"', allow_blank=True, showErrorMessage=True,
                                           errorTitle="Present?", error="yes or no")
        return made["yesno"]
    return None


def _meta_cells(meta: dict[str, str]) -> dict[tuple[int, int], str]:
    cells = {}
    for r, (key, value) in enumerate(sorted(meta.items()), start=1):
        cells[(r, 1)] = key
        cells[(r, 2)] = value
    return cells


def _fixed_zip(data: bytes) -> bytes:
    """Re-pack the zip with a fixed date on every entry (zipfile stamps the clock)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=_ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


# -- reading ---------------------------------------------------------------------------------

@dataclass
class ReadBack:
    meta: dict[str, str]
    cells: dict[str, dict[tuple[int, int], Any]]  # sheet title -> (row, col) -> value, every non-empty cell


#: Bounds of a workbook a reviewer sends back -- an export holds one row per judgment and a dozen
#: columns, a few MB at most. Why: found by a probe (2026-12-07), a 13 KB file with one empty cell
#: at XFD1048576 made the read build 17 billion cells (exit 70, MemoryError, after a minute at
#: 2.6 GB), a merged range over a whole sheet did the same at load, a 1.6 MB file inflating to
#: 1.5 GB was read whole (3 GB in memory), and /dev/zero as the workbook path ended in MemoryError.
MAX_WORKBOOK_BYTES = 32 * 1024 * 1024
MAX_INFLATED_BYTES = 256 * 1024 * 1024  # every member of the .xlsx, as its zip directory declares them
MAX_MEMBERS = 10_000
MAX_ROWS, MAX_COLUMNS = 200_000, 100
MAX_MERGED_CELLS = 10_000  # cells covered by merged ranges, per sheet (an export merges none)
_MERGE_REF = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*\bref="([^"]{1,40})"')


def read_file(path: Any) -> bytes:
    """The workbook's bytes: a regular file of at most MAX_WORKBOOK_BYTES, read without waiting on a
    FIFO or reading a device (`lrc.runtime.filebytes.read_whole`; ReviewError otherwise)."""
    from lrc.runtime import filebytes

    try:
        return filebytes.read_whole(path, limit=MAX_WORKBOOK_BYTES)
    except filebytes.TooLarge:
        raise ReviewError(f"{path} holds more than a review workbook can ({MAX_WORKBOOK_BYTES:,} bytes)") from None
    except filebytes.NotRegular:
        raise ReviewError(f"{path} is not a regular file (a FIFO, a device or a folder); pass the .xlsx file") from None
    except OSError as exc:
        raise ReviewError(f"cannot read {path}: {exc.strerror or exc}") from None


def _check_container(data: bytes) -> None:
    """ReviewError unless the .xlsx is within the bounds above, checked from its zip directory and
    its sheets' merged ranges before openpyxl reads anything (a member never inflates past what the
    directory declares: zipfile stops reading there)."""
    from openpyxl.utils.cell import range_boundaries

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = zf.infolist()
            if len(members) > MAX_MEMBERS:
                raise ReviewError(f"not a review workbook: its .xlsx holds {len(members):,} parts (at most {MAX_MEMBERS:,})")
            inflated = sum(m.file_size for m in members)
            if inflated > MAX_INFLATED_BYTES:
                raise ReviewError(f"not a review workbook: its .xlsx inflates to {inflated:,} bytes "
                                  f"(at most {MAX_INFLATED_BYTES:,}); export a fresh one with `lrc review export`")
            for m in members:
                if not (m.filename.startswith("xl/worksheets/") and m.filename.endswith(".xml")):
                    continue
                merged = 0
                for ref in _MERGE_REF.findall(zf.read(m)):
                    try:
                        left, top, right, bottom = range_boundaries(ref.decode("ascii", "replace"))
                    except (ValueError, TypeError):
                        raise ReviewError(f"not a readable .xlsx workbook (a merged range {ref[:40]!r} in {m.filename})") from None
                    merged += (right - left + 1) * (bottom - top + 1)
                    if merged > MAX_MERGED_CELLS:
                        raise ReviewError(f"not a review workbook: {m.filename} merges more than {MAX_MERGED_CELLS:,} cells "
                                          f"(an export merges none)")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ReviewError(f"not a readable .xlsx workbook ({type(exc).__name__}: {str(exc)[:200]})") from None


def read(data: bytes) -> ReadBack:
    """Every non-empty cell of every sheet; ReviewError if it is not an lrc review workbook."""
    from openpyxl import load_workbook

    if len(data) > MAX_WORKBOOK_BYTES:
        raise ReviewError(f"the workbook holds {len(data):,} bytes, more than a review workbook can ({MAX_WORKBOOK_BYTES:,})")
    _check_container(data)
    try:
        wb = load_workbook(io.BytesIO(data), data_only=False)
    except Exception as exc:  # noqa: BLE001 - a damaged or foreign file of any kind is the user's to fix
        raise ReviewError(f"not a readable .xlsx workbook ({type(exc).__name__}: {str(exc)[:200]})") from None
    cells: dict[str, dict[tuple[int, int], Any]] = {}
    for ws in wb.worksheets:
        if ws.max_row > MAX_ROWS or ws.max_column > MAX_COLUMNS:  # before a walk of the whole rectangle
            raise ReviewError(f"not a review workbook: sheet {ws.title[:40]!r} reaches row {ws.max_row:,}, column "
                              f"{ws.max_column:,} (an export stays within {MAX_ROWS:,} rows and {MAX_COLUMNS} columns)")
        found = {}
        for row in ws.iter_rows():
            for cell in row:
                if cell.value is not None and cell.value != "":
                    found[(cell.row, cell.column)] = cell.value
        cells[ws.title] = found
    if META_SHEET not in cells:
        raise ReviewError("not an lrc review workbook (it has no hidden 'lrc' sheet); export one with `lrc review export`")
    raw = cells.pop(META_SHEET)
    meta = {str(raw[(r, 1)]): str(raw.get((r, 2), "")) for (r, c) in sorted(raw) if c == 1}
    return ReadBack(meta, cells)


def edited_cells(model: WorkbookModel, back: ReadBack) -> list[str]:
    """Where the workbook's protected content differs from what the export writes ("Sheet!D7 (row R0012)")."""
    from openpyxl.utils import get_column_letter

    problems: list[str] = []
    expected_titles = [s.title for s in model.sheets]
    extra = sorted(set(back.cells) - set(expected_titles))
    missing = [t for t in expected_titles if t not in back.cells]
    problems += [f"sheet {t!r} was added" for t in extra] + [f"sheet {t!r} was removed or renamed" for t in missing]
    for sheet in model.sheets:
        got = back.cells.get(sheet.title)
        if got is None:
            continue
        inputs = {(i.row, i.col) for i in sheet.inputs}
        row_ids = {i.row: i.row_id for i in sheet.inputs if i.row_id}
        for pos in sorted(set(sheet.cells) | (set(got) - inputs)):
            if pos in inputs:
                continue
            want, have = sheet.cells.get(pos), got.get(pos)
            if want != (have if have is None or isinstance(have, str) else f"<{have!r}>"):
                where = f"{sheet.title}!{get_column_letter(pos[1])}{pos[0]}"
                problems.append(where + (f" (row {row_ids[pos[0]]})" if pos[0] in row_ids else ""))
    if back.meta.get("content") != content_digest(back.meta, _protected(model, back)):
        problems.append("the stored content digest does not match the workbook's protected cells")
    if back.meta.get("content") != model.meta["content"]:
        problems.append("the stored content digest is not the one this folder's sample gives")
    return problems


def _protected(model: WorkbookModel, back: ReadBack) -> dict[str, dict[tuple[int, int], str]]:
    inputs = {s.title: {(i.row, i.col) for i in s.inputs} for s in model.sheets}
    return {t: {pos: (v if isinstance(v, str) else f"<{v!r}>") for pos, v in cs.items() if pos not in inputs.get(t, set())}
            for t, cs in back.cells.items()}


def workbook_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

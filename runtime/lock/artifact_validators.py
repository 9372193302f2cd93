"""The registry of seed 000's artifact validator ids: what a task spec's `checks` may name.

Why here, and why a module of plain data. A task spec names validators by id
(`fa.identities`) and the compiler must refuse an unknown id or a malformed parameter
before anything is locked, yet `lrc compile` may import only the lock-format part of the
runtime (pyproject.toml, [tool.importlinter]): the validators themselves
(`lrc.runtime.artifacts.validators`) pull in openpyxl, python-pptx and the recalculation
engine. So the ids, their versions and the JSON Schema of their parameters live here, in
the package both halves already share: the compiler reads this module, the runtime imports
it beside the validators, and `tests/test_task_validator_registry.py` holds the two to the
same ids and versions (and checks every check a task kind declares against these schemas).
A Python module rather than a JSON data file: it ships with the package with no data-file
plumbing, and the validators' code component (`lrc.artifact-validators`) imports it, so a
change of a parameter schema changes that component's fingerprint like any code change.

Each entry: the id's `version` (the one its results carry), its validator family (seed
000's list), what it observes (one line, for failure modes and `lrc explain`), the JSON
Schema of its `params`, the params that name a task file (`file_params`: each must be one
of the task's own files), and the params that hold the *expected artifact's* content
(`expected_params`, JSON pointers with `*` for any array index: such a value may never be
written in the task's objective, seed 000 inclusion rule 5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

COMPONENT = "lrc.artifact-validators"
"""The code component that implements these ids (runtime/artifacts/validators/component.py)."""


@dataclass(frozen=True)
class Validator:
    version: int
    family: int
    observes: str
    params: dict[str, Any]
    file_params: tuple[str, ...] = ("file",)
    expected_params: tuple[str, ...] = field(default=())


def _str(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "description": description}


def _labels(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string", "minLength": 1}, "description": description}


_TOLERANCE = {"type": "string", "pattern": "^(0|[1-9][0-9]*)(\\.[0-9]+)?$",
              "description": "Decimal tolerance of a comparison, as a string (money: 0.005, the default)."}
_FILE = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$", "description": "A file of the task, by name."}
_SHEET = _str("A sheet of the workbook, by name.")
_LABEL = _str("A row of a sheet, by its label in column A.")
_ROW = {"type": "object", "additionalProperties": False, "required": ["sheet", "row"],
        "description": "A labelled row of a sheet.", "properties": {"sheet": _SHEET, "row": _LABEL}}
_SLIDE = {"type": "integer", "minimum": 1, "description": "A slide of the deck, by number from 1."}
_SHAPE = _str("A shape of a slide, by its name.")
_CELL = {"type": "string", "pattern": "^[^!]+![A-Z]{1,3}[0-9]+$", "description": "One cell, Sheet!A1 (no $)."}
_TERM = {"type": "string", "pattern": "^-?[^!-][^!]*!\\$?[A-Z]{1,3}\\$?[0-9]+(:\\$?[A-Z]{1,3}\\$?[0-9]+)?$",
         "description": "A cell or range, Sheet!A1 or Sheet!A1:B2, summed; a leading - subtracts it."}
_MODEL_ROW = {"sheet": _str("The model sheet the figures come from."), "row": _str("The model row, by its label in column A.")}
_SUMMARY_KINDS = ("rows", "series", "figures")


def _params(required: list[str], properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties, **extra}


VALIDATORS: dict[str, Validator] = {
    "fa.identities": Validator(1, 1, "balance-sheet and cash-flow identities in every period, and declared single-cell ties", _params(
        ["file", "balance", "cash"], {
            "file": _FILE, "tolerance": _TOLERANCE,
            "balance": {"type": "object", "additionalProperties": False, "required": ["sheet", "assets", "liabilities_equity"],
                        "description": "Where the balance sheet's two totals are: assets = liabilities and equity per period.",
                        "properties": {"sheet": _str("The balance sheet, by sheet name."),
                                       "assets": _str("The total-assets row, by its label."),
                                       "liabilities_equity": _str("The total liabilities-and-equity row, by its label.")}},
            "cash": {"type": "object", "additionalProperties": False,
                     "required": ["sheet", "net_change", "closing", "balance_sheet", "cash"],
                     "description": "Where the cash identities are: net change = the balance sheet's change in cash, closing = its cash.",
                     "properties": {"sheet": _str("The cash-flow statement, by sheet name."),
                                    "net_change": _str("The cash-flow statement's net-change-in-cash row, by its label."),
                                    "closing": _str("The cash-flow statement's closing-cash row, by its label."),
                                    "balance_sheet": _str("The balance sheet the cash ties to, by sheet name."),
                                    "cash": _str("The balance sheet's cash row, by its label.")}},
            "ties": {"type": "array", "minItems": 1,
                     "description": "Single-cell identities: each cell equals the sum of its terms (a valuation's total = its parts).",
                     "items": {"type": "object", "additionalProperties": False, "required": ["cell", "equals"],
                               "description": "One tie: a cell and the terms it must equal the sum of.",
                               "properties": {"cell": _CELL,
                                              "equals": {"type": "array", "minItems": 1, "items": _TERM,
                                                         "description": "The terms the cell is the sum of (cells or ranges, - to subtract)."}}}}})),
    "fa.rollforward": Validator(1, 2, "schedule roll-forwards and their summary rows", _params(
        ["file", "schedules"], {
            "file": _FILE, "tolerance": _TOLERANCE,
            "schedules": {"type": "array", "minItems": 1, "description": "The schedules that roll forward, one entry each.", "items": {
                "type": "object", "additionalProperties": False, "required": ["sheet", "opening", "closing"],
                "description": "One schedule: opening + additions - reductions = closing, opening = the previous closing.",
                "properties": {"sheet": _str("The schedule's sheet, by name."), "opening": _str("The opening row, by its label."),
                               "closing": _str("The closing row, by its label."),
                               "additions": _labels("Rows added to the opening, by label."),
                               "reductions": _labels("Rows taken off the opening, by label."),
                               "summary": {**_ROW, "description": "The row of another sheet that takes the schedule's closing."}}}}})),
    "fa.summary-ties": Validator(1, 2, "a deck table's figures, a chart's points or a text's quoted figures against the model", _params(
        ["file", "model_file", "slide", "shape"], {
            "file": {**_FILE, "description": "The deck, a file of the task, by name."},
            "model_file": {**_FILE, "description": "The model the figures come from, an input of the task, by name."},
            "tolerance": _TOLERANCE, "slide": _SLIDE, "shape": _SHAPE,
            "rows": {"type": "array", "minItems": 1,
                     "description": "A table's rows: every period column of each row shows the model row's figure.", "items": {
                         "type": "object", "additionalProperties": False, "required": ["label", "sheet", "row"],
                         "description": "One table row and the model row it shows.",
                         "properties": {"label": _str("The table row, by the text of its first cell."), **_MODEL_ROW}}},
            "series": {"type": "array", "minItems": 1,
                       "description": "A chart's series: every point (category = the model's period header) is the model's figure.",
                       "items": {"type": "object", "additionalProperties": False, "required": ["label", "sheet", "row"],
                                 "description": "One chart series and the model row it plots.",
                                 "properties": {"label": _str("The series, by its name in the chart."), **_MODEL_ROW}}},
            "figures": {"type": "array", "minItems": 1,
                        "description": "Figures a text shape quotes: each appears in the model's number format (1,234.50).",
                        "items": {"type": "object", "additionalProperties": False, "required": ["sheet", "row", "period"],
                                  "description": "One quoted figure: a model row in one period.",
                                  "properties": {**_MODEL_ROW, "period": _str("The period, by the model's header text (Q1 FY26).")}}}},
        # exactly one of rows, series, figures (the validator would read only one): at most one
        # survives `partial`, at least one is a requirement like `required`
        anyOf=[{"required": [k]} for k in _SUMMARY_KINDS],
        **{"not": {"anyOf": [{"required": [a, b]} for i, a in enumerate(_SUMMARY_KINDS) for b in _SUMMARY_KINDS[i + 1:]]}}),
        file_params=("file", "model_file")),
    "fa.formula-presence": Validator(1, 3, "required cells hold formulas of the declared shape", _params(
        ["file", "cells"], {
            "file": _FILE,
            "cells": {"type": "array", "minItems": 1, "description": "The rows whose cells must hold formulas, one entry each.", "items": {
                "type": "object", "additionalProperties": False, "required": ["sheet", "row", "pattern"],
                "description": "One row: each of its columns holds the pattern's formula (spaces, $ and case ignored).",
                "properties": {"sheet": _SHEET, "row": _LABEL,
                               "pattern": {"type": "string", "pattern": "^=(?:[^{}]|\\{[cpr]\\})*$",
                                           "description": "The formula's shape; {c} is the cell's column, {p} the previous "
                                                          "column, {r} the cell's row number (grids, templates)."},
                               "columns": {"oneOf": [{"const": "periods"},
                                                     {"type": "array", "minItems": 1,
                                                      "items": {"type": "string", "pattern": "^[A-Z]{1,3}$"}}],
                                           "description": "\"periods\" (every period column of the sheet) or a list of column letters."}}}}}),
        expected_params=("/cells/*/pattern",)),
    "fa.reference-integrity": Validator(1, 4, "no error values; defined names resolve over every period", _params(
        ["file", "names"], {
            "file": _FILE,
            "names": {"type": "object", "description": "Defined names that must resolve: over a row's periods, or to one cell.",
                      "additionalProperties": {"oneOf": [
                          _ROW, {"type": "object", "additionalProperties": False, "required": ["cell"],
                                 "description": "A name over one cell.", "properties": {"cell": _CELL}}]}}})),
    "fa.required-parts": Validator(1, 5, "required sheets, rows, slides and objects exist", _params(
        ["file"], {
            "file": _FILE, "sheets": _labels("Sheets that must exist, by name."),
            "rows": {"type": "object", "additionalProperties": _labels("Row labels the sheet must have."),
                     "description": "Per sheet (the key), the row labels it must have in column A."},
            "slides": {"type": "array", "description": "Slides that must exist, in order, by title.", "items": {
                "type": "object", "additionalProperties": False, "required": ["title"], "description": "One required slide.",
                "properties": {"title": _str("The slide's title (contained in it)."),
                               "objects": {"type": "array", "description": "Shapes the slide must hold.", "items": {
                                   "type": "object", "additionalProperties": False, "required": ["shape"],
                                   "description": "One required shape.", "properties": {"shape": _SHAPE}}}}}}})),
    "fa.conventions": Validator(1, 6, "unit, expense sign and period headers", _params(
        ["file", "unit", "sheets", "expense_rows"], {
            "file": _FILE, "unit": _str("The unit every checked sheet states in A2 (USD thousands)."),
            "sheets": _labels("The sheets whose unit and period headers are checked."),
            "expense_rows": {"type": "object", "additionalProperties": _labels("Expense rows of the sheet, by label."),
                             "description": "Per sheet (the key), rows that must never be positive (expenses are negative)."},
            "periods": _labels("The period headers in order, when the task fixes them (else quarters in sequence).")})),
    "fa.preservation": Validator(1, 7, "template, styles and editable objects preserved", _params(
        ["file"], {"file": _FILE,
                   "region": _labels("The permitted region (ranges, or whole sheets) whose styles may change."),
                   "extends": {"type": "boolean", "description": "The task adds periods: new columns take the previous column's styles."}})),
    "fa.unchanged-outside": Validator(1, 8, "nothing changed outside the permitted region", _params(
        ["file"], {
            "file": _FILE, "names": _labels("Defined names the task may create or change."),
            "region": {"type": "array", "description": "The permitted region: what may change (everything else must equal the input).",
                       "items": {"oneOf": [
                           _str("A workbook range (Sheet!A1:B2, Sheet!G:G, a cell), or a sheet name alone: that "
                                "whole sheet, which may be new."),
                           {"type": "object", "additionalProperties": False, "required": ["slide", "shape"],
                            "description": "One shape of the input deck, which may change.",
                            "properties": {"slide": _SLIDE, "shape": _SHAPE}},
                           {"type": "object", "additionalProperties": False, "required": ["new_slide"],
                            "description": "A slide the task adds, recognised by its title.",
                            "properties": {"new_slide": _str("The added slide's title (contained in it).")}}]}}})),
}


def partial(schema: dict[str, Any]) -> dict[str, Any]:
    """The params schema without its top-level requirements (`required`, and `anyOf`, which
    only ever lists alternatives of `required`): a task with generated inputs states only the
    params that do not depend on the seed; the generator supplies the rest."""
    return {k: v for k, v in schema.items() if k not in ("required", "anyOf")}


def expected_values(vid: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON pointer, value) of every param of `params` that holds expected content."""
    entry = VALIDATORS.get(vid)
    out: list[tuple[str, str]] = []
    for pattern in entry.expected_params if entry else ():
        _collect(params, pattern.strip("/").split("/"), "", out)
    return out


def _collect(value: Any, parts: list[str], at: str, out: list[tuple[str, str]]) -> None:
    if not parts:
        if isinstance(value, str):
            out.append((at, value))
        return
    head, rest = parts[0], parts[1:]
    if head == "*" and isinstance(value, list):
        for i, v in enumerate(value):
            _collect(v, rest, f"{at}/{i}", out)
    elif isinstance(value, dict) and head in value:
        _collect(value[head], rest, f"{at}/{head}", out)

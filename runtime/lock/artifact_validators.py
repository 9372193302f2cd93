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


_STR = {"type": "string", "minLength": 1}
_LABELS = {"type": "array", "items": _STR}
_TOLERANCE = {"type": "string", "pattern": "^(0|[1-9][0-9]*)(\\.[0-9]+)?$", "description": "Decimal tolerance (money: 0.005)."}
_ROW = {"type": "object", "additionalProperties": False, "required": ["sheet", "row"],
        "properties": {"sheet": _STR, "row": _STR}}
_FILE = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$", "description": "A file of the task, by name."}


def _params(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties}


VALIDATORS: dict[str, Validator] = {
    "fa.identities": Validator(1, 1, "balance-sheet and cash-flow identities in every period", _params(
        ["file", "balance", "cash"], {
            "file": _FILE, "tolerance": _TOLERANCE,
            "balance": {"type": "object", "additionalProperties": False, "required": ["sheet", "assets", "liabilities_equity"],
                        "properties": {"sheet": _STR, "assets": _STR, "liabilities_equity": _STR}},
            "cash": {"type": "object", "additionalProperties": False,
                     "required": ["sheet", "net_change", "closing", "balance_sheet", "cash"],
                     "properties": {k: _STR for k in ("sheet", "net_change", "closing", "balance_sheet", "cash")}}})),
    "fa.rollforward": Validator(1, 2, "schedule roll-forwards and their summary rows", _params(
        ["file", "schedules"], {
            "file": _FILE, "tolerance": _TOLERANCE,
            "schedules": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["sheet", "opening", "closing"],
                "properties": {"sheet": _STR, "opening": _STR, "closing": _STR, "additions": _LABELS, "reductions": _LABELS,
                               "summary": _ROW}}}})),
    "fa.summary-ties": Validator(1, 2, "a deck table's figures against the model", _params(
        ["file", "model_file", "slide", "shape", "rows"], {
            "file": _FILE, "model_file": _FILE, "tolerance": _TOLERANCE,
            "slide": {"type": "integer", "minimum": 1}, "shape": _STR,
            "rows": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["label", "sheet", "row"],
                "properties": {"label": _STR, "sheet": _STR, "row": _STR}}}}),
        file_params=("file", "model_file")),
    "fa.formula-presence": Validator(1, 3, "required cells hold formulas of the declared shape", _params(
        ["file", "cells"], {
            "file": _FILE,
            "cells": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["sheet", "row", "pattern"],
                "properties": {"sheet": _STR, "row": _STR, "pattern": {"type": "string", "pattern": "^="},
                               "columns": {"oneOf": [{"const": "periods"},
                                                     {"type": "array", "minItems": 1,
                                                      "items": {"type": "string", "pattern": "^[A-Z]{1,3}$"}}]}}}}}),
        expected_params=("/cells/*/pattern",)),
    "fa.reference-integrity": Validator(1, 4, "no error values; defined names resolve over every period", _params(
        ["file", "names"], {
            "file": _FILE,
            "names": {"type": "object", "additionalProperties": {"oneOf": [
                _ROW, {"type": "object", "additionalProperties": False, "required": ["cell"],
                       "properties": {"cell": {"type": "string", "pattern": "^[^!]+![A-Z]{1,3}[0-9]+$"}}}]}}})),
    "fa.required-parts": Validator(1, 5, "required sheets, rows, slides and objects exist", _params(
        ["file"], {
            "file": _FILE, "sheets": _LABELS,
            "rows": {"type": "object", "additionalProperties": _LABELS},
            "slides": {"type": "array", "items": {
                "type": "object", "additionalProperties": False, "required": ["title"],
                "properties": {"title": _STR, "objects": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False, "required": ["shape"], "properties": {"shape": _STR}}}}}}})),
    "fa.conventions": Validator(1, 6, "unit, expense sign and period headers", _params(
        ["file", "unit", "sheets", "expense_rows"], {
            "file": _FILE, "unit": _STR, "sheets": _LABELS,
            "expense_rows": {"type": "object", "additionalProperties": _LABELS},
            "periods": _LABELS})),
    "fa.preservation": Validator(1, 7, "template, styles and editable objects preserved", _params(
        ["file"], {"file": _FILE, "region": _LABELS, "extends": {"type": "boolean"}})),
    "fa.unchanged-outside": Validator(1, 8, "nothing changed outside the permitted region", _params(
        ["file"], {
            "file": _FILE, "names": _LABELS,
            "region": {"type": "array", "items": {"oneOf": [
                _STR, {"type": "object", "additionalProperties": False, "required": ["slide", "shape"],
                       "properties": {"slide": {"type": "integer", "minimum": 1}, "shape": _STR}}]}}})),
}


def partial(schema: dict[str, Any]) -> dict[str, Any]:
    """The params schema without its top-level `required`: a task with generated inputs states
    only the params that do not depend on the seed; the generator supplies the rest."""
    return {k: v for k, v in schema.items() if k != "required"}


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

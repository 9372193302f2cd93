"""What every task kind shares: the `Task` record and the declared checks a model task carries.

Why a module of its own: the kinds live in several small modules (`tasks` for the first four,
`kinds_schedules`, `kinds_dcf`, `kinds_repairs`, `kinds_deck`), and each builds its checks
from the same pieces, so that a validator's params are spelled one way across the suite.
`tasks` re-exports these names; callers use `tasks.make(kind, seed)`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from lrc.runtime.artifacts import model

MODEL, DECK = "model.xlsx", "deck.pptx"
STATEMENT_SHEETS = tuple(model.STATEMENTS)


@dataclass(frozen=True)
class Task:
    """One seeded task: what the agent receives, what it must hand back, how that is checked.

    `oracle` is what lrc/oracle hands back (passes every check); `baseline` is lrc/baseline's
    plausible partial job (fails at least one check, passes at least one); the null model hands
    back `inputs[output]` unchanged."""

    kind: str
    seed: str
    objective: str
    inputs: dict[str, bytes]
    output: str  # the file the agent hands back
    oracle: bytes  # the expected content of `output`
    checks: list[dict[str, Any]]
    baseline: bytes = b""


def label(sheet: str, row: int) -> str:
    return next(text for r, text, _ in model.STATEMENTS[sheet] if r == row)


def pattern(sheet: str, text: str) -> str:
    return next(t for _, l, t in model.STATEMENTS[sheet] if l == text)


def balance_checks(periods: list[str], region: list[str], names: list[str], extends: bool = False,
                   sheets: tuple[str, ...] = model.SHEETS, rows: dict[str, list[str]] | None = None,
                   defined: dict[str, dict[str, str]] | None = None, ties: list[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The workbook checks every model task declares (with the task's region).

    `sheets` and `rows` add the task's own sheets (a DCF, a budget) to the required parts;
    `defined` adds defined names to check; `ties` adds single-cell identities."""
    required = {sheet: [text for _, text, _ in lines] for sheet, lines in model.STATEMENTS.items()}
    required["Inputs"] = [text for _, text, _, _ in model.INPUT_ROWS]
    required.update(rows or {})
    names_spec = {n: {"sheet": s, "row": label(s, r)} for n, (s, r) in sorted(model.NAMED_ROWS.items())}
    names_spec["TaxRate"] = {"cell": "!".join(model.TAX_RATE_CELL)}
    names_spec.update(defined or {})
    identities: dict[str, Any] = {
        "file": MODEL,
        "balance": {"sheet": "BS", "assets": "Total assets", "liabilities_equity": "Total liabilities and equity"},
        "cash": {"sheet": "CF", "net_change": "Net change in cash", "closing": "Closing cash", "balance_sheet": "BS", "cash": "Cash"}}
    if ties:
        identities["ties"] = list(ties)
    return [
        {"validator": "fa.identities", "params": identities},
        {"validator": "fa.rollforward", "params": {"file": MODEL, "schedules": [
            {"sheet": "FixedAssets", "opening": "Opening", "additions": ["Additions"], "reductions": ["Disposals", "Depreciation"],
             "closing": "Closing", "summary": {"sheet": "BS", "row": "Fixed assets, net"}},
            {"sheet": "Debt", "opening": "Opening", "additions": ["Drawdowns"], "reductions": ["Repayments"],
             "closing": "Closing", "summary": {"sheet": "BS", "row": "Debt"}},
            {"sheet": "DeferredRevenue", "opening": "Opening", "additions": ["Billings"], "reductions": ["Recognised"],
             "closing": "Closing", "summary": {"sheet": "BS", "row": "Deferred revenue"}}]}},
        {"validator": "fa.reference-integrity", "params": {"file": MODEL, "names": names_spec}},
        {"validator": "fa.required-parts", "params": {"file": MODEL, "sheets": list(sheets), "rows": required}},
        {"validator": "fa.conventions", "params": {"file": MODEL, "unit": model.UNIT, "sheets": list(model.SHEETS),
                                                   "expense_rows": {s: list(v) for s, v in model.EXPENSE_ROWS.items()},
                                                   "periods": periods}},
        {"validator": "fa.preservation", "params": {"file": MODEL, "region": region, "extends": extends}},
        {"validator": "fa.unchanged-outside", "params": {"file": MODEL, "region": region, "names": names}},
    ]


def formula_check(cells: list[tuple[str, str]], columns: Any = "periods") -> dict[str, Any]:
    """fa.formula-presence over statement rows, each with the model's own formula shape."""
    return {"validator": "fa.formula-presence", "params": {"file": MODEL, "cells": [
        {"sheet": s, "row": text, "columns": columns, "pattern": pattern(s, text)} for s, text in cells]}}


def with_formula_check(checks: list[dict[str, Any]], check: dict[str, Any]) -> list[dict[str, Any]]:
    """`checks` with the formula check third, after identities and roll-forwards, where the first four kinds put it."""
    return [*checks[:2], check, *checks[2:]]


def load(data: bytes):
    """An openpyxl workbook of generated bytes (formulas, not values), to derive a variant from."""
    from openpyxl import load_workbook

    return load_workbook(io.BytesIO(data))


def load_deck(data: bytes):
    from pptx import Presentation

    return Presentation(io.BytesIO(data))

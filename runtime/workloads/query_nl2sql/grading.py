"""Grading of query.nl2sql (LedgerRate §4.6): execution match, stricter than BIRD and Spider.

A run passes when the model's SQL runs in the SQL sandbox on *every* database of the item
(the one the question is asked on and its seeded variants) and each result equals the
reference result:

- rows are compared as a multiset: duplicates count, nothing is de-duplicated (BIRD's
  `set(pred) == set(gold)` accepts a missing duplicate; Spider's evaluator strips DISTINCT);
- rows stay whole: cells are never sorted column by column (Spider 2.0's `ignore_order`
  sorts each column on its own and so accepts row-misaligned answers);
- order counts only when the item declares it (the question asks for an order), never
  inferred from the text `ORDER BY`;
- the column count must match; columns are matched by name when the model's names are the
  expected ones in another order, otherwise by position;
- numbers compare as Decimal at 0.01 (ROUND_HALF_UP after removing binary float noise), so
  1 = 1.0 = '1.00' and 0.1 + 0.2 = 0.3; a text cell that is a plain decimal number compares
  as that number; other text compares after NFC and trimming; NULL equals only NULL.

Every failure says where: which database, which row or which rows are missing or extra,
which columns.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.checks.sqlsandbox import SqlSandbox

COMPONENT_ID = "query.nl2sql.grading"
COMPONENT_VERSION = 2

EXECUTION_MATCH = "query.nl2sql.execution-match"
DATABASE_MATCH = "query.nl2sql.database-match"
CENT = Decimal("0.01")
_NOISE = Decimal("0.000001")
_NUMERIC_TEXT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.S)
SHOW = 3  # rows quoted in a failure message

Cell = Any


def normalize(answer: Any) -> Any:
    """Trim the SQL and unwrap a Markdown fence around it; leave anything else to the contract."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("sql"), str):
        return answer
    sql = answer["sql"].strip()
    fenced = _FENCE.match(sql)
    if fenced:
        sql = fenced.group(1).strip()
    out = dict(answer)
    out["sql"] = sql
    return out


def cell(value: Any) -> Cell:
    """A comparable form of one result cell: ('n', '12.30'), ('s', 'text'), ('b', hex) or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, (bytes, bytearray)):
        return ("b", bytes(value).hex())
    text = unicodedata.normalize("NFC", str(value)).strip()
    if _NUMERIC_TEXT.match(text):
        return _number(text)
    return ("s", text)


def _number(value: int | float | str) -> Cell:
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        return ("n", str(d.quantize(_NOISE, rounding=ROUND_HALF_UP).quantize(CENT, rounding=ROUND_HALF_UP)))
    except (InvalidOperation, ValueError):  # inf, huge magnitudes: compare the text form
        return ("n", repr(value))


def show(row: Sequence[Cell]) -> list[Any]:
    """A row as readable JSON values for messages."""
    return [None if c is None else c[1] for c in row]


def _column_map(expected: Sequence[str], got: Sequence[str]) -> list[int] | None:
    """Indexes into `got` for each expected column, by name, if the names are a permutation."""
    want = [c.strip().casefold() for c in expected]
    have = [c.strip().casefold() for c in got]
    if len(set(have)) != len(have) or sorted(want) != sorted(have) or want == have:
        return None
    return [have.index(c) for c in want]


def compare(expected: Mapping[str, Any], columns: Sequence[str], rows: Sequence[Sequence[Any]], ordered: bool) -> dict[str, Any] | None:
    """None when the result matches the expected one; else {message, location, observed, expected}."""
    exp_cols = list(expected["columns"])
    if len(columns) != len(exp_cols):
        return {"message": f"expected {len(exp_cols)} column(s) ({', '.join(exp_cols)}), got {len(columns)} "
                           f"({', '.join(map(str, columns))})",
                "location": {"columns": list(columns)}, "observed": f"{len(columns)} columns", "expected": f"{len(exp_cols)} columns"}
    mapping = _column_map(exp_cols, columns)
    got = [tuple(cell(row[i]) for i in mapping) if mapping else tuple(cell(v) for v in row) for row in rows]
    want = [tuple(cell(v) for v in row) for row in expected["rows"]]
    if ordered:
        for i, (w, g) in enumerate(zip(want, got)):
            if w != g:
                return {"message": f"row {i + 1} differs (row order matters for this question): expected {show(w)}, got {show(g)}",
                        "location": {"row": i + 1}, "observed": show(g), "expected": show(w)}
        if len(want) != len(got):
            i = min(len(want), len(got))
            extra = got[i:i + SHOW] if len(got) > len(want) else []
            missing = want[i:i + SHOW] if len(want) > len(got) else []
            what = f"first extra row(s): {[show(r) for r in extra]}" if extra else f"first missing row(s): {[show(r) for r in missing]}"
            return {"message": f"expected {len(want)} row(s), got {len(got)}; {what}", "location": {"row": i + 1},
                    "observed": f"{len(got)} rows", "expected": f"{len(want)} rows"}
        return None
    missing = Counter(want) - Counter(got)
    extra = Counter(got) - Counter(want)
    if not missing and not extra:
        return None
    parts = [f"expected {len(want)} row(s), got {len(got)} (compared as a multiset: duplicates count, order ignored)"]
    if missing:
        sample = [show(r) for r in sorted(missing, key=repr)[:SHOW]]
        parts.append(f"{sum(missing.values())} expected row(s) missing, e.g. {sample}")
    if extra:
        sample = [show(r) for r in sorted(extra, key=repr)[:SHOW]]
        parts.append(f"{sum(extra.values())} unexpected row(s), e.g. {sample}")
    return {"message": "; ".join(parts),
            "location": {"rows_missing": [show(r) for r in sorted(missing, key=repr)[:SHOW]],
                         "rows_unexpected": [show(r) for r in sorted(extra, key=repr)[:SHOW]]},
            "observed": f"{len(got)} rows", "expected": f"{len(want)} rows"}


def execution_match(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any], item: Any) -> list[ValidatorResult]:
    """One blocking result; one info result per database that disagrees."""
    sql = answer.get("sql") if isinstance(answer, Mapping) else None
    max_rows = int(params.get("max_rows", 10000))
    databases: list[str] = list(key["databases"])
    details: list[ValidatorResult] = []
    failed: list[str] = []
    first: dict[str, Any] | None = None
    for name in databases:
        data = getattr(item, "files", {}).get(name) if item is not None else None
        if data is None:
            return [result(EXECUTION_MATCH, COMPONENT_VERSION, "error", observed="missing", expected=name, location={"database": name},
                           message=f"the item has no database file {name}; grading cannot run")]
        with SqlSandbox(data, max_rows=max_rows, max_bytes=50_000_000) as box:
            run = box.query(sql)
        if not run.ok:
            problem = {"message": f"the SQL does not run: {run.error}", "location": {}, "observed": run.kind, "expected": "a result"}
        elif run.truncated:
            problem = {"message": f"the result has more than {max_rows} rows", "location": {}, "observed": f"> {max_rows} rows",
                       "expected": f"{len(key['expected'][name]['rows'])} rows"}
        else:
            problem = compare(key["expected"][name], run.columns, run.rows, bool(key["ordered"]))
        if problem is None:
            continue
        failed.append(name)
        location = {"database": name, **problem["location"]}
        details.append(result(DATABASE_MATCH, COMPONENT_VERSION, "fail", severity="info", observed=problem["observed"],
                              expected=problem["expected"], location=location, message=f"{name}: {problem['message']}"))
        if first is None:
            first = {**problem, "location": location}
    if first is None:
        return [result(EXECUTION_MATCH, COMPONENT_VERSION, "pass", observed=f"matches on {len(databases)} of {len(databases)} databases",
                       expected="the reference result on every database", location={"databases": databases},
                       message="the query returns the reference result on every database")]
    summary = result(EXECUTION_MATCH, COMPONENT_VERSION, "fail",
                     observed=f"matches on {len(databases) - len(failed)} of {len(databases)} databases",
                     expected="the reference result on every database", location=first["location"],
                     message=f"{first['location']['database']}: {first['message']}"
                             + (f" (also differs on: {', '.join(failed[1:])})" if len(failed) > 1 else ""))
    return [summary, *details]


VALIDATORS = {"execution-match": execution_match}

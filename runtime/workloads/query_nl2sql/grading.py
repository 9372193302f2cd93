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
- numbers compare as exact Decimals (binary float noise below 1e-6 removed), at the
  tolerance the answer key declares per column around the exact reference, symmetric:
  money columns within half a cent (|observed - expected| <= 0.005), integer columns
  (counts, ranks) exactly; so 1 = 1.0 = '1.00' and 0.1 + 0.2 = 0.3. A text cell that is a
  plain decimal number compares as that number; other text compares after NFC and
  trimming; NULL equals only NULL (see compare.py, shared with the generator).

Every failure says where: which database, which row or which rows are missing or extra,
which columns.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.checks.sqlsandbox import SqlSandbox
from lrc.runtime.workloads.query_nl2sql.compare import cell, compare, show, tolerances

__all__ = ["DATABASE_MATCH", "EXECUTION_MATCH", "VALIDATORS", "cell", "compare", "execution_match", "normalize", "show"]

COMPONENT_ID = "query.nl2sql.grading"
COMPONENT_VERSION = 2

EXECUTION_MATCH = "query.nl2sql.execution-match"
DATABASE_MATCH = "query.nl2sql.database-match"
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.S)


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


def execution_match(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any], item: Any) -> list[ValidatorResult]:
    """One blocking result; one info result per database that disagrees."""
    sql = answer.get("sql") if isinstance(answer, Mapping) else None
    max_rows = int(params.get("max_rows", 10000))
    databases: list[str] = list(key.get("databases") or [])
    if not databases or any(name not in key.get("expected", {}) for name in databases):
        return [result(EXECUTION_MATCH, COMPONENT_VERSION, "error", observed=databases, expected="databases with reference results",
                       location={"databases": databases}, message="the answer key names no database with a reference result; "
                       "grading cannot run (a match on 0 databases proves nothing)")]
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
            problem = compare(key["expected"][name], run.columns, run.rows, bool(key["ordered"]),
                              key.get("tolerance") or tolerances(key["expected"][key["databases"][0]]))
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

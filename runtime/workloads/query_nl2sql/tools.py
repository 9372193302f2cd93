"""The agentic system's tools for query.nl2sql: run SQL in the sandbox, submit the final SQL.

Why it is built this way: the model explores the item's own database only, through the
read-only SQL sandbox (authorizer allow-list, no ATTACH, a deterministic work budget, a row
cap with an explicit truncation flag); every failure — a denied statement, a runaway query,
a syntax error, a bad argument — comes back as an error result and the loop goes on. One
sandbox per toolbox, and a fresh toolbox per run, so nothing leaks between runs.
"""

from __future__ import annotations

from typing import Any, Mapping

from lrc.runtime.checks.sqlsandbox import SqlSandbox
from lrc.runtime.workloads.base import Item, ToolOutcome
from lrc.runtime.workloads.kit import ToolDispatch, tool_error

COMPONENT_ID = "query.nl2sql.tools"
COMPONENT_VERSION = 2

DATABASE = "finance.db"
MAX_ROWS_SHOWN = 100


class Toolbox(ToolDispatch):
    """The tools of one run. `call` never raises."""

    def __init__(self, item: Item, max_result_chars: int = 20000):
        self._sql: SqlSandbox | None = None
        data = item.files.get(DATABASE)
        self._problem = None if data else f"the item has no {DATABASE}"
        if data:
            self._sql = SqlSandbox(data, max_rows=MAX_ROWS_SHOWN)
        super().__init__(max_result_chars, {
            "run_sql": self._run_sql,
            "submit_sql": self._submit_sql,
        })

    def _sql_argument(self, name: str, arguments: Mapping[str, Any]) -> tuple[str | None, ToolOutcome | None]:
        extra = sorted(str(k) for k in arguments if k != "sql")
        if extra:
            return None, tool_error(f"{name} takes only sql (unexpected: {', '.join(extra)})")
        sql = arguments.get("sql")
        if not isinstance(sql, str) or not sql.strip():
            return None, tool_error(f"{name} needs sql, a non-empty string with one SELECT statement")
        return sql, None

    def _run_sql(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        sql, problem = self._sql_argument("run_sql", arguments)
        if problem is not None:
            return problem
        if self._sql is None:
            return tool_error(self._problem or "no database")
        res = self._sql.query(sql)
        if not res.ok:
            return tool_error(res.error or "the query failed")
        return ToolOutcome(res.to_text(max_chars=self._max))

    def _submit_sql(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        sql, problem = self._sql_argument("submit_sql", arguments)
        if problem is not None:
            return problem
        return ToolOutcome("query received", terminal=True, answer={"sql": sql})

"""The agentic system's tools for execute.month-end: SQL, file read, journal-entry writer, submit.

Why it is built this way:

- `run_sql` goes through the read-only SQL sandbox over a private in-memory copy of the
  item's database (authorizer allow-list, no ATTACH, work budget, row cap).
- `read_file` goes through the file sandbox over the item's own documents only (the
  `docs/` files of the item, by clean relative path; no file system is involved), paged.
- `post_journal_entry` is the only way to change anything, and what it changes is this
  run's scratch ledger — a list inside this toolbox, never the source database. It checks
  every entry before accepting it: known, active accounts and departments; a date inside
  the close period; positive amounts with at most two decimals, one side per line; at
  least two lines; debits equal credits. A rejected entry comes back as a tool error that
  lists every problem, and nothing is posted.
- `submit_close` ends the run. Its answer is the scratch ledger's entries plus the summary,
  sealed (HMAC) so grading knows the entries came through this writer.
- `call` never raises: every failure is a tool result the model can act on.
"""

from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal
from typing import Any, Mapping

from lrc.runtime.checks.filesandbox import FileSandbox
from lrc.runtime.checks.sqlsandbox import SqlSandbox
from lrc.runtime.workloads.base import Item, ToolOutcome
from lrc.runtime.workloads.execute_month_end.ledger import parse_amount, seal
from lrc.runtime.workloads.kit import TRUNCATION_MARKER, ToolDispatch, tool_error

COMPONENT_ID = "execute.month-end.tools"
COMPONENT_VERSION = 2

DATABASE = "finance.db"
DOCS = "docs/"
MAX_ROWS_SHOWN = 100
MAX_ENTRIES = 60
MAX_LINES = 30
MAX_MEMO = 300
MAX_SUMMARY = 20_000
LINE_KEYS = {"account", "debit", "credit", "department", "memo"}
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


class Toolbox(ToolDispatch):
    """The tools and the scratch ledger of one run. `call` never raises."""

    def __init__(self, item: Item, max_result_chars: int = 20000):
        ctx = item.context
        self._period = ctx["close_period"]
        self._start = _dt.date.fromisoformat(ctx["period_start"])
        self._end = _dt.date.fromisoformat(ctx["period_end"])
        self._sql = SqlSandbox(item.files[DATABASE], max_rows=MAX_ROWS_SHOWN)
        self._files = FileSandbox({name[len(DOCS):]: data for name, data in item.files.items() if name.startswith(DOCS)})
        accounts = self._sql.query("SELECT account_id, name, is_active FROM accounts")
        departments = self._sql.query("SELECT department_id FROM departments")
        self._accounts = {str(a): (str(n), bool(active)) for a, n, active in accounts.rows}
        self._departments = {str(d) for (d,) in departments.rows}
        self._seal_key = str(item.answer_key.get("seal_key", ""))
        self._entries: list[dict[str, Any]] = []
        super().__init__(max_result_chars, {
            "run_sql": self._run_sql,
            "read_file": self._read_file,
            "post_journal_entry": self._post,
            "submit_close": self._submit,
        })

    @property
    def entries(self) -> list[dict[str, Any]]:
        """A copy of the scratch ledger."""
        return [dict(e, lines=[dict(ln) for ln in e["lines"]]) for e in self._entries]

    # -- read-only tools ----------------------------------------------------------------------
    def _run_sql(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "sql")
        if extra:
            return tool_error(f"run_sql takes only sql (unexpected: {', '.join(extra)})")
        res = self._sql.query(arguments.get("sql"))
        if not res.ok:
            return tool_error(res.error or "the query failed")
        return ToolOutcome(res.to_text(max_chars=self._max))

    def _read_file(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k not in ("path", "offset"))
        if extra:
            return tool_error(f"read_file takes path and optionally offset (unexpected: {', '.join(extra)})")
        offset = arguments.get("offset")
        got = self._files.read(arguments.get("path"), 0 if offset is None else offset)
        if not got.ok:
            return tool_error(got.error or "the file cannot be read")
        shown_to = got.offset + len(got.text.encode("utf-8"))
        head = f"{got.path} ({got.size} bytes" + (f"; bytes {got.offset}-{shown_to} shown" if got.truncated or got.offset else "") + ")"
        text = got.text
        room = self._max - len(head) - 200
        cut = None
        if len(text) > room:
            text = text[: max(0, room)]
            cut = got.offset + len(text.encode("utf-8"))
        more = cut if cut is not None else got.next_offset
        tail = f"\n{TRUNCATION_MARKER} more follows: call read_file with offset={more}" if more is not None else ""
        return ToolOutcome(f"{head}\n-----\n{text}\n-----{tail}")

    # -- the journal-entry writer -----------------------------------------------------------------
    def _post(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        problems: list[str] = []
        extra = sorted(str(k) for k in arguments if k not in ("date", "memo", "lines"))
        if extra:
            problems.append(f"unexpected field(s): {', '.join(extra)}")
        if len(self._entries) >= MAX_ENTRIES:
            return tool_error(f"entry rejected: the scratch ledger already holds {MAX_ENTRIES} entries")
        date = arguments.get("date")
        try:
            # only YYYY-MM-DD: Python 3.11's fromisoformat also reads ISO week dates ("2026-W13-2"),
            # which the output contract then refuses, turning the whole close into invalid output
            day = _dt.date.fromisoformat(date) if isinstance(date, str) and _DATE.match(date) else None
        except ValueError:
            day = None
        if day is None:
            problems.append("date must be a date 'YYYY-MM-DD'")
        elif not self._start <= day <= self._end:
            problems.append(f"date {date} is outside the close period {self._period} ({self._start} to {self._end})")
        memo = arguments.get("memo")
        if not isinstance(memo, str) or not memo.strip():
            problems.append("memo must be a non-empty string saying what the entry is for")
        elif len(memo) > MAX_MEMO:
            problems.append(f"memo is longer than {MAX_MEMO} characters")
        lines = arguments.get("lines")
        accepted: list[dict[str, Any]] = []
        debits = credits = Decimal(0)
        if not isinstance(lines, list) or len(lines) < 2:
            problems.append("lines must be a list of at least two lines")
            lines = lines if isinstance(lines, list) else []
        if len(lines) > MAX_LINES:
            problems.append(f"an entry may have at most {MAX_LINES} lines")
            lines = []
        for n, line in enumerate(lines, 1):
            if not isinstance(line, Mapping):
                problems.append(f"line {n}: must be an object with account and debit or credit")
                continue
            unknown = sorted(str(k) for k in line if k not in LINE_KEYS)
            if unknown:
                problems.append(f"line {n}: unexpected field(s) {', '.join(unknown)}")
            account = line.get("account")
            account = str(account).strip() if isinstance(account, (str, int)) and not isinstance(account, bool) else None
            if account is None or account not in self._accounts:
                problems.append(f"line {n}: account {line.get('account')!r} does not exist in the chart of accounts")
            elif not self._accounts[account][1]:
                problems.append(f"line {n}: account {account} ({self._accounts[account][0]}) is closed to postings")
            dept = line.get("department")
            if dept not in (None, "") and (not isinstance(dept, str) or dept not in self._departments):
                problems.append(f"line {n}: department {dept!r} does not exist")
            debit, why_d = parse_amount(line.get("debit"))
            credit, why_c = parse_amount(line.get("credit"))
            for why in (why_d, why_c):
                if why:
                    problems.append(f"line {n}: {why}")
            if debit is not None and credit is not None:
                if debit > 0 and credit > 0:
                    problems.append(f"line {n}: a line is either a debit or a credit, not both")
                elif debit == 0 and credit == 0:
                    problems.append(f"line {n}: needs a positive debit or credit")
                else:
                    debits += debit
                    credits += credit
            line_memo = line.get("memo")
            if line_memo is not None and (not isinstance(line_memo, str) or len(line_memo) > MAX_MEMO):
                problems.append(f"line {n}: memo must be a string of at most {MAX_MEMO} characters")
            accepted.append({"account": account, "debit": f"{debit or 0:.2f}", "credit": f"{credit or 0:.2f}",
                             "department": dept or None})
        if not problems and debits != credits:
            problems.append(f"debits {debits:,.2f} do not equal credits {credits:,.2f} (difference {debits - credits:,.2f})")
        if problems:
            return tool_error("entry rejected, nothing was posted:\n- " + "\n- ".join(problems))
        entry_id = f"JE-S{len(self._entries) + 1:03d}"
        self._entries.append({"entry_id": entry_id, "date": day.isoformat(), "memo": memo.strip(), "lines": accepted})
        total_lines = sum(len(e["lines"]) for e in self._entries)
        return ToolOutcome(f"posted {entry_id} to the scratch ledger: {date}, {len(accepted)} lines, debits {debits:,.2f} = "
                           f"credits {credits:,.2f}. The scratch ledger now holds {len(self._entries)} entries "
                           f"({total_lines} lines).")

    def _submit(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "summary")
        if extra:
            return tool_error(f"submit_close takes only summary (unexpected: {', '.join(extra)})")
        summary = arguments.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            return tool_error("submit_close needs summary, a short close summary")
        if len(summary) > MAX_SUMMARY:
            return tool_error(f"the summary is longer than {MAX_SUMMARY} characters")
        entries = self.entries
        return ToolOutcome(f"close submitted with {len(entries)} journal entries", terminal=True,
                           answer={"entries": entries, "summary": summary, "seal": seal(self._seal_key, entries)})

"""Policies of the embedded reference models for execute.month-end (agentic only).

- `oracle` (the infrastructure check): reads every document the prompt lists and runs one
  query (turn 1), posts the reference entries of every document it could read through the
  journal-entry writer (turn 2), and submits the close (turn 3). If a document did not
  reach it, the entries that come from that document are missing and the run fails, so a
  100% oracle proves documents, SQL, writer and seal all work end to end.
- `baseline`: an honest, deterministic, non-LLM clerk that posts only the obvious accruals.
  It reads what a model would read (documents, the vendor table), never the answer key:
  the payroll note's totals, each contract's fixed monthly fee, each supplier invoice's
  total (to AP), and the rent note's monthly amortization. It does not check the ledger
  for what is already booked, does not look at invoice dates or service periods, skips
  usage-based contracts, and does not reconcile the bank. It passes the clean closes and
  fails the ones with a trap.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Mapping, Sequence

from lrc.runtime.workloads.base import Item, Reply, ToolCall
from lrc.runtime.workloads.kit import message_text, next_turn, tool_exchanges

COMPONENT_ID = "execute.month-end.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]

_DOC = re.compile(r"^- (?P<path>[\w./-]+): (?P<title>.+)$", re.M)
_PERIOD = re.compile(r"for period (?P<period>\d{4}-\d{2}) \((?P<start>\d{4}-\d{2}-\d{2}) to (?P<end>\d{4}-\d{2}-\d{2})\)")
_VENDOR_SQL = "SELECT vendor_id, default_expense_account_id FROM vendors ORDER BY vendor_id"
_CHECK_SQL = "SELECT COUNT(*) AS gl_lines, ROUND(SUM(debit) - SUM(credit), 2) AS out_of_balance FROM gl_lines"
_MONEY = r"([\d,]+\.\d\d)"


def _user(messages: Sequence[Message]) -> str:
    return "\n".join(message_text(m.get("content")) for m in messages if m.get("role") == "user")


def _documents(messages: Sequence[Message]) -> list[str]:
    return [m.group("path") for m in _DOC.finditer(_user(messages))]


def _results(messages: Sequence[Message]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, content) of every tool result, in order; arguments that are
    not a JSON object read as {}."""
    return [(name, args if isinstance(args, dict) else {}, text) for name, args, text in tool_exchanges(messages)]


def _read(messages: Sequence[Message]) -> dict[str, str]:
    """path -> document text, for every successful read_file result."""
    docs: dict[str, str] = {}
    for name, args, content in _results(messages):
        if name == "read_file" and not content.startswith("error:"):
            body = content.split("\n-----\n", 1)[1] if "\n-----\n" in content else ""
            docs[str(args.get("path"))] = docs.get(str(args.get("path")), "") + body.rsplit("\n-----", 1)[0]
    return docs


def _calls(messages: Sequence[Message], calls: list[tuple[str, dict[str, Any]]]) -> Reply:
    step = next_turn(messages)
    return Reply(None, [ToolCall(f"call_{step}_{n}", name, args) for n, (name, args) in enumerate(calls, 1)])


def _read_everything(messages: Sequence[Message], sql: str) -> Reply:
    return _calls(messages, [("run_sql", {"sql": sql})] + [("read_file", {"path": p}) for p in _documents(messages)])


def _posted(messages: Sequence[Message]) -> bool:
    return any(name == "post_journal_entry" for name, _, _ in _results(messages))


# --------------------------------------------------------------------------------------
# oracle


def oracle(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None, item: Item) -> Reply:
    if tools is None:  # month-end is agentic only; nothing to answer without tools
        return Reply("")
    if not _results(messages):
        return _read_everything(messages, _CHECK_SQL)
    if not _posted(messages):
        seen = _read(messages)
        posts = [("post_journal_entry", {"date": e["date"], "memo": e["memo"],
                                         "lines": [{"account": ln["account"], "debit": ln["debit"], "credit": ln["credit"]}
                                                   for ln in e["lines"]]})
                 for e in item.answer_key["entries"] if e["source"] in seen]
        if posts:
            return _calls(messages, posts)
    rec = item.answer_key["reconciliation"]
    summary = (f"Close {item.answer_key['close_period']}: posted {len(item.answer_key['entries'])} entries. "
               f"Account {rec['account']}: ledger {rec['gl_balance_before']} before adjustments, bank {rec['bank_closing']}; "
               f"{len(rec['outstanding_checks'])} outstanding check(s), {len(rec['deposits_in_transit'])} deposit(s) in transit, "
               f"{len(rec['unrecorded'])} bank item(s) recorded.")
    return _calls(messages, [("submit_close", {"summary": summary})])


# --------------------------------------------------------------------------------------
# baseline


def _vendor_accounts(messages: Sequence[Message]) -> dict[str, str]:
    for name, args, content in _results(messages):
        if name == "run_sql" and args.get("sql") == _VENDOR_SQL and not content.startswith("error:"):
            try:
                return {str(v): str(a) for v, a in json.loads(content)["rows"]}
            except (ValueError, KeyError, TypeError):
                return {}
    return {}


def _find(pattern: str, text: str) -> str | None:
    found = re.search(pattern, text)
    return found.group(1).replace(",", "") if found else None


def _entry(date: str, memo: str, lines: list[tuple[str, str, str]]) -> tuple[str, dict[str, Any]]:
    return ("post_journal_entry", {"date": date, "memo": memo,
                                   "lines": [{"account": a, "debit": d, "credit": c} for a, d, c in lines]})


def obvious_entries(docs: Mapping[str, str], vendor_accounts: Mapping[str, str], date: str) -> list[tuple[str, dict[str, Any]]]:
    """The entries a clerk who only reads the documents would post."""
    posts = []
    for path in sorted(docs):
        text = docs[path]
        if path.startswith("payroll/"):
            gross = _find(r"Total gross wages\s+" + _MONEY, text)
            tax = _find(r"Employer payroll taxes[^:]*:\s*" + _MONEY, text)
            if gross and tax:
                total = f"{Decimal(gross) + Decimal(tax):.2f}"
                posts.append(_entry(date, "Payroll accrual", [("6000", gross, "0"), ("6050", tax, "0"), ("2200", "0", total)]))
        elif path.startswith("contracts/"):
            vendor = _find(r"vendor id (V\d+)", text)
            fee = _find(r"fixed monthly fee of \$" + _MONEY, text)
            if vendor in vendor_accounts and fee:
                posts.append(_entry(date, f"Contract accrual {path}", [(vendor_accounts[vendor], fee, "0"), ("2100", "0", fee)]))
        elif path.startswith("invoices/"):
            vendor = _find(r"vendor id (V\d+)", text)
            total = _find(r"Total due \(USD\)\s+" + _MONEY, text)
            if vendor in vendor_accounts and total:
                posts.append(_entry(date, f"Supplier invoice {path}", [(vendor_accounts[vendor], total, "0"), ("2000", "0", total)]))
        elif path.startswith("facilities/"):
            rent = _find(r"Monthly rent:\s+\$" + _MONEY, text)
            if rent:
                posts.append(_entry(date, "Rent amortization", [("6100", rent, "0"), ("1300", "0", rent)]))
    return posts


def baseline(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> Reply:
    if tools is None:
        return Reply("")
    if not _results(messages):
        return _read_everything(messages, _VENDOR_SQL)
    if not _posted(messages):
        period = _PERIOD.search(_user(messages))
        date = period.group("end") if period else ""
        posts = obvious_entries(_read(messages), _vendor_accounts(messages), date)
        if posts:
            return _calls(messages, posts)
    count = sum(1 for name, _, content in _results(messages) if name == "post_journal_entry" and content.startswith("posted"))
    return _calls(messages, [("submit_close", {"summary": f"Posted {count} accrual entries from the documents. "
                                                          f"The bank reconciliation was not performed."})])

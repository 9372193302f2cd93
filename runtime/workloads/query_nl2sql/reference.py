"""Policies of the embedded reference models for query.nl2sql.

- `oracle` (the infrastructure check) answers with the reference SQL, but only when the
  question it belongs to is visible in the conversation; in the agentic system it first
  runs the query through `run_sql` (proving the sandbox answers) and then submits it.
- `baseline` is an honest, deterministic, non-LLM heuristic: it reads the question text as
  a model would (never the answer key or the generator) and fills in SQL templates for the
  question shapes it recognizes — all the single-table questions and the plain join-and-sum
  one. For the rest it writes what a naive translator writes (an inner join where an
  anti-join is needed, a join that fans out before summing, DISTINCT where duplicates
  count) or, failing that, a placeholder with the right columns. So it passes some items
  and fails others, the same way in both systems.
"""

from __future__ import annotations

import calendar
import json
import re
from typing import Any, Mapping, Sequence

from lrc.runtime.workloads.base import Item, Reply, ToolCall
from lrc.runtime.workloads.kit import message_text, next_turn

COMPONENT_ID = "query.nl2sql.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]

_QUESTION = re.compile(r"^Question (?P<id>Q\d+) \((?P<difficulty>\w+)\):\n(?P<text>.+?)\n\nReturn exactly these columns, in this order: "
                       r"(?P<columns>[^\n]+)\.$", re.M | re.S)
_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}


def _question(messages: Sequence[Message]) -> dict[str, Any] | None:
    for m in messages:
        if m.get("role") == "user":
            found = _QUESTION.search(message_text(m.get("content")))
            if found:
                return {"id": found.group("id"), "text": " ".join(found.group("text").split()),
                        "columns": [c.strip() for c in found.group("columns").split(",")]}
    return None


def _ran_sql(messages: Sequence[Message]) -> bool:
    return any(m.get("role") == "tool" for m in messages)


def _agentic(messages: Sequence[Message], sql: str) -> Reply:
    step = next_turn(messages)
    if not _ran_sql(messages):
        return Reply(None, [ToolCall(f"call_{step}_1", "run_sql", {"sql": sql})])
    return Reply(None, [ToolCall(f"call_{step}_1", "submit_sql", {"sql": sql})])


# --------------------------------------------------------------------------------------
# oracle


def oracle(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None, item: Item) -> Reply:
    """The reference SQL, if this item's question reached the model."""
    seen = _question(messages)
    if seen is None or " ".join(item.context["question"].split()) != seen["text"]:
        return Reply(json.dumps({"sql": "SELECT 'the question was not in the prompt' AS error"}))
    sql = item.answer_key["reference_sql"]
    if tools is None:
        return Reply(json.dumps({"sql": sql}))
    return _agentic(messages, sql)


# --------------------------------------------------------------------------------------
# baseline: templates keyed on the question's wording


def _month(name: str, year: str) -> tuple[str, str]:
    m = _MONTHS[name]
    return f"{year}-{m:02d}-01", f"{year}-{m:02d}-{calendar.monthrange(int(year), m)[1]:02d}"


def _quarter(q: str, year: str) -> tuple[str, str]:
    last = 3 * int(q)
    return f"{year}-{last - 2:02d}-01", f"{year}-{last:02d}-{calendar.monthrange(int(year), last)[1]:02d}"


def _iso(day: str, month: str, year: str) -> str:
    return f"{year}-{_MONTHS[month]:02d}-{int(day):02d}"


_TEMPLATES: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"How many vendors are in the '(.+?)' category\?"),
     lambda m: f"SELECT COUNT(*) AS vendor_count FROM vendors WHERE category = '{m[1]}'"),
    (re.compile(r"every customer in the (\w+) region whose credit limit is at least ([\d,]+)"),
     lambda m: f"SELECT name, credit_limit FROM customers WHERE region = '{m[1]}' AND credit_limit >= {m[2].replace(',', '')}"),
    (re.compile(r"total amount of the supplier bills dated in (\w+) (\d{4}) \(by bill date\), excluding credit memos"),
     lambda m: "SELECT SUM(amount) AS total_amount FROM ap_bills WHERE bill_date BETWEEN '{}' AND '{}' AND is_credit_memo = 0"
     .format(*_month(m[1], m[2]))),
    (re.compile(r"every active (\w+) account, ordered by account number"),
     lambda m: f"SELECT account_id, name FROM accounts WHERE type = '{m[1]}' AND is_active = 1 ORDER BY account_id"),
    (re.compile(r"the (\d+) largest supplier payments made by (\w+) in Q(\d) (\d{4})"),
     lambda m: "SELECT payment_id, payment_date, amount FROM ap_payments WHERE method = '{}' AND payment_date BETWEEN '{}' AND '{}' "
               "ORDER BY amount DESC, payment_id LIMIT {}".format(m[2], *_quarter(m[3], m[4]), m[1])),
    (re.compile(r"For each vendor in the '(.+?)' category, what was the total paid to it in Q(\d) (\d{4})"),
     lambda m: "SELECT v.name AS vendor_name, SUM(p.amount) AS total_paid FROM vendors v JOIN ap_payments p ON p.vendor_id = v.vendor_id "
               "WHERE v.category = '{}' AND p.payment_date BETWEEN '{}' AND '{}' GROUP BY v.name".format(m[1], *_quarter(m[2], m[3]))),
    # Naive translations of the harder shapes (what a keyword-to-SQL translator writes):
    (re.compile(r"For every supplier payment made in (\w+) (\d{4}), give the vendor's category and the payment method"),
     lambda m: "SELECT DISTINCT v.category, p.method FROM ap_payments p JOIN vendors v ON v.vendor_id = p.vendor_id "
               "WHERE p.payment_date BETWEEN '{}' AND '{}'".format(*_month(m[1], m[2]))),
    (re.compile(r"Which vendors have no supplier bill \(credit memos included\) dated in (\w+) (\d{4})"),
     lambda m: "SELECT DISTINCT v.name AS vendor_name FROM vendors v JOIN ap_bills b ON b.vendor_id = v.vendor_id "
               "WHERE b.bill_date NOT BETWEEN '{}' AND '{}'".format(*_month(m[1], m[2]))),
    (re.compile(r"open accounts-payable balance at the end of (\d+) (\w+) (\d{4})"),
     lambda m: "SELECT v.name AS vendor_name, SUM(b.amount) - SUM(p.amount) AS open_balance FROM vendors v "
               "JOIN ap_bills b ON b.vendor_id = v.vendor_id JOIN ap_payments p ON p.vendor_id = v.vendor_id "
               "WHERE b.bill_date <= '{0}' AND p.payment_date <= '{0}' GROUP BY v.name ORDER BY open_balance DESC"
               .format(_iso(m[1], m[2], m[3]))),
)


def baseline_sql(question: str, columns: Sequence[str]) -> str:
    for pattern, build in _TEMPLATES:
        found = pattern.search(question)
        if found:
            return build(found)
    return "SELECT " + ", ".join(f"NULL AS {c}" for c in columns)


def baseline(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> Reply:
    seen = _question(messages)
    sql = baseline_sql(seen["text"], seen["columns"]) if seen else "SELECT NULL"
    if tools is None:
        return Reply(json.dumps({"sql": sql}))
    return _agentic(messages, sql)

"""The agentic system's tools for reconcile.ledger: summary, query the bank feed, query the ledger, submit.

Why it is built this way: a reconciler works from the two account listings with filters
(a date range, an amount or amount range, a word of the description); the tools offer
exactly that over the item's own month and nothing else. They are read-only, never raise
(a bad call is returned to the model as an error result), page their results (at most
`MAX_LIMIT` rows per call, with the total count and the next offset) and cap every result
with a visible marker.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Mapping

from lrc.runtime.checks.dates import DateError, parse_iso
from lrc.runtime.checks.money import MoneyError, parse_amount
from lrc.runtime.workloads.base import Item, ToolOutcome
from lrc.runtime.workloads.kit import TRUNCATION_MARKER, ToolDispatch, tool_error  # noqa: F401 - the marker of this toolbox's capped results

COMPONENT_ID = "reconcile.ledger.tools"
COMPONENT_VERSION = 2

DEFAULT_LIMIT = 50
MAX_LIMIT = 100
FILTERS = ("date_from", "date_to", "amount_min", "amount_max", "abs_amount", "text", "offset", "limit")


class Toolbox(ToolDispatch):
    """The tools of one month. `call` never raises."""

    def __init__(self, item: Item, max_result_chars: int = 20000):
        ctx = item.context
        self._ctx = ctx
        self._bank = [dict(t, _amount=Decimal(t["amount"])) for t in ctx["bank"]["transactions"]]
        self._ledger = [dict(e, _amount=Decimal(e["debit"] or "0") - Decimal(e["credit"] or "0")) for e in ctx["ledger"]["entries"]]
        super().__init__(max_result_chars, {
            "get_summary": self._summary,
            "query_bank": lambda a: self._query("query_bank", self._bank, a, ("description",)),
            "query_ledger": lambda a: self._query("query_ledger", self._ledger, a, ("description", "journal")),
            "submit_discrepancies": self._submit,
        })

    # tools ------------------------------------------------------------------------------
    def _summary(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        if arguments:
            return tool_error(f"get_summary takes no arguments (got: {', '.join(sorted(map(str, arguments)))})")
        c = self._ctx
        body = {
            "reconciliation_id": c["reconciliation_id"], "entity": c["entity"], "month": c["month"],
            "bank_account": c["bank_account"], "gl_account": c["gl_account"],
            "bank": {"opening_balance": c["bank"]["opening_balance"], "closing_balance": c["bank"]["closing_balance"],
                     "transactions": len(self._bank), "first_date": self._bank[0]["date"], "last_date": self._bank[-1]["date"]},
            "ledger": {"opening_balance": c["ledger"]["opening_balance"], "closing_balance": c["ledger"]["closing_balance"],
                       "entries": len(self._ledger), "first_date": self._ledger[0]["date"], "last_date": self._ledger[-1]["date"]},
        }
        return ToolOutcome(self._cap(json.dumps(body, ensure_ascii=False, indent=1)))

    def _query(self, name: str, rows: list[dict[str, Any]], arguments: Mapping[str, Any], text_fields: tuple[str, ...]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k not in FILTERS)
        if extra:
            return tool_error(f"{name} takes only {', '.join(FILTERS)} (unexpected: {', '.join(extra)})")
        try:
            date_from = parse_iso(arguments["date_from"]) if arguments.get("date_from") is not None else None
            date_to = parse_iso(arguments["date_to"]) if arguments.get("date_to") is not None else None
        except DateError as exc:
            return tool_error(f"{name}: {exc}")
        bounds: dict[str, Decimal | None] = {}
        for k in ("amount_min", "amount_max", "abs_amount"):
            try:
                bounds[k] = parse_amount(arguments[k], decimal_mark=".") if arguments.get(k) is not None else None
            except MoneyError:
                return tool_error(f"{name}: {k} must be an amount such as -1250.00")
        text = arguments.get("text")
        if text is not None and (not isinstance(text, str) or len(text) > 100):
            return tool_error(f"{name}: text must be a string of at most 100 characters")
        offset, limit = arguments.get("offset", 0), arguments.get("limit", DEFAULT_LIMIT)
        for k, v in (("offset", offset), ("limit", limit)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                return tool_error(f"{name}: {k} must be a non-negative integer")
        if not 1 <= limit <= MAX_LIMIT:
            return tool_error(f"{name}: limit must be between 1 and {MAX_LIMIT}")
        needle = text.strip().casefold() if isinstance(text, str) and text.strip() else None

        def keep(row: dict[str, Any]) -> bool:
            day = parse_iso(row["date"])
            if (date_from and day < date_from) or (date_to and day > date_to):
                return False
            a = row["_amount"]
            if (bounds["amount_min"] is not None and a < bounds["amount_min"]) or (bounds["amount_max"] is not None and a > bounds["amount_max"]):
                return False
            if bounds["abs_amount"] is not None and abs(a) != abs(bounds["abs_amount"]):
                return False
            return needle is None or any(needle in str(row[f]).casefold() for f in text_fields)

        hits = [row for row in rows if keep(row)]
        page = [{k: v for k, v in row.items() if not k.startswith("_")} for row in hits[offset:offset + limit]]
        nxt = offset + limit if offset + limit < len(hits) else None
        body = {"total": len(hits), "offset": offset, "returned": len(page), "next_offset": nxt, "rows": page}
        return ToolOutcome(self._cap(json.dumps(body, ensure_ascii=False)))

    def _submit(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "discrepancies")
        if extra:
            return tool_error(f"submit_discrepancies takes only discrepancies (unexpected: {', '.join(extra)})")
        found = arguments.get("discrepancies")
        if not isinstance(found, list):
            return tool_error('submit_discrepancies needs discrepancies, a list of {"type", "refs", "amount"} objects')
        return ToolOutcome("discrepancies received", terminal=True, answer={"discrepancies": found})

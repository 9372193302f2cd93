"""Policies of the embedded reference models for reconcile.ledger.

Why two models:

- `oracle` is the infrastructure check: it reports the answer key's discrepancies, but only
  those whose transactions it can *see* — rows of the rendered prompt, or rows the query
  tools returned. If the plumbing drops rows, the oracle misses what they hold and fails,
  so a 100% oracle pass proves the whole month reached the model.
- `baseline` is an honest, deterministic, non-LLM exact-match reconciler of the kind a
  spreadsheet macro implements: pair bank and ledger rows on the exact amount within the
  timing window; a second ledger row with a paired amount is a duplicate; an unpaired row
  with the same amount up to one week away is a date drift; an unpaired ledger row within
  the window that shares a word of the description is an amount mismatch; any other
  unpaired bank row is a missing entry. It never looks further than a week, so it misses
  long date drifts (and then reports a false missing entry). It sees exactly what a model
  sees, never the answer key or the generator.

Both speak OpenAI message semantics; tool-call ids derive from the turn number.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping, Sequence

from lrc.runtime.checks.money import plain
from lrc.runtime.workloads.base import Item, Reply, ToolCall
from lrc.runtime.workloads.kit import message_text, next_turn, tool_results

COMPONENT_ID = "reconcile.ledger.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]

PAGE_LIMIT = 100
EXTENDED_DAYS = 7
_BANK_ROW = re.compile(r"^(BK-\d+) \| (\d{4}-\d{2}-\d{2}) \| (.*?) \| (-?\d+\.\d{2})\s*$", re.M)
_LEDGER_ROW = re.compile(r"^(GL-\d+) \| (\d{4}-\d{2}-\d{2}) \| (\S*) \| (.*?) \| (\d+\.\d{2})? ?\| ?(\d+\.\d{2})?\s*$", re.M)
_WINDOW = re.compile(r"within (\d+) calendar days")
_STOP = {"payment", "debit", "credit", "deposit", "receipt", "wire", "check", "transfer", "batch", "settlement", "card", "direct",
         "invoice", "from", "bill", "items", "checks", "lockbox", "payroll", "bank", "charges", "savings", "account"}


@dataclass(frozen=True)
class Row:
    id: str
    date: _dt.date
    text: str
    amount: Decimal


# --------------------------------------------------------------------------------------
# reading the conversation


def _date(text: str) -> _dt.date:
    return _dt.date(int(text[:4]), int(text[5:7]), int(text[8:10]))


def _prompt_rows(messages: Sequence[Message]) -> tuple[dict[str, Row], dict[str, Row]]:
    bank: dict[str, Row] = {}
    ledger: dict[str, Row] = {}
    for m in messages:
        if m.get("role") != "user":
            continue
        text = message_text(m.get("content"))
        for b in _BANK_ROW.finditer(text):
            bank[b.group(1)] = Row(b.group(1), _date(b.group(2)), b.group(3), Decimal(b.group(4)))
        for g in _LEDGER_ROW.finditer(text):
            amount = Decimal(g.group(5) or "0") - Decimal(g.group(6) or "0")
            ledger[g.group(1)] = Row(g.group(1), _date(g.group(2)), f"{g.group(3)} {g.group(4)}", amount)
    return bank, ledger


def _results(messages: Sequence[Message], name: str) -> list[Any]:
    """Every tool result for tool `name` parsed as JSON, in order; results that are not JSON
    (errors) are skipped."""
    out = []
    for _, text in tool_results(messages, name):
        try:
            out.append(json.loads(text))
        except ValueError:
            continue
    return out


def _tool_rows(messages: Sequence[Message]) -> tuple[dict[str, Row], dict[str, Row]]:
    bank: dict[str, Row] = {}
    ledger: dict[str, Row] = {}
    for body in _results(messages, "query_bank"):
        for t in body.get("rows", []) if isinstance(body, Mapping) else []:
            bank[t["id"]] = Row(t["id"], _date(t["date"]), t["description"], Decimal(t["amount"]))
    for body in _results(messages, "query_ledger"):
        for e in body.get("rows", []) if isinstance(body, Mapping) else []:
            amount = Decimal(e["debit"] or "0") - Decimal(e["credit"] or "0")
            ledger[e["id"]] = Row(e["id"], _date(e["date"]), f"{e['journal']} {e['description']}", amount)
    return bank, ledger


def _agentic_rows(messages: Sequence[Message]) -> tuple[Reply | None, tuple[dict[str, Row], dict[str, Row]]]:
    """Summary, then every page of both listings in one turn; returns (next call, rows)."""
    step = next_turn(messages)
    summaries = [s for s in _results(messages, "get_summary") if isinstance(s, Mapping)]
    if not summaries:
        return Reply(None, [ToolCall(f"call_{step}_1", "get_summary", {})]), ({}, {})
    if not _results(messages, "query_bank"):
        s = summaries[0]
        calls = []
        for name, count in (("query_bank", s["bank"]["transactions"]), ("query_ledger", s["ledger"]["entries"])):
            for offset in range(0, count, PAGE_LIMIT):
                calls.append(ToolCall(f"call_{step}_{len(calls) + 1}", name, {"offset": offset, "limit": PAGE_LIMIT}))
        return Reply(None, calls), ({}, {})
    return None, _tool_rows(messages)


def _submit(messages: Sequence[Message], found: list[dict[str, Any]]) -> Reply:
    return Reply(None, [ToolCall(f"call_{next_turn(messages)}_1", "submit_discrepancies", {"discrepancies": found})])


# --------------------------------------------------------------------------------------
# oracle


def _oracle_answer(bank: Mapping[str, Row], ledger: Mapping[str, Row], item: Item) -> list[dict[str, Any]]:
    seen = set(bank) | set(ledger)
    return [{"type": d["type"], "refs": d["bank_refs"] + d["ledger_refs"], "amount": d["amount"]}
            for d in item.answer_key["discrepancies"] if set(d["bank_refs"] + d["ledger_refs"]) <= seen]


def oracle(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None, item: Item) -> Reply:
    """The planted discrepancies whose rows the conversation shows."""
    if tools is None:
        bank, ledger = _prompt_rows(messages)
        return Reply(json.dumps({"discrepancies": _oracle_answer(bank, ledger, item)}))
    pending, (bank, ledger) = _agentic_rows(messages)
    if pending is not None:
        return pending
    return _submit(messages, _oracle_answer(bank, ledger, item))


# --------------------------------------------------------------------------------------
# baseline: exact-amount matching


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if len(w) >= 4 and w not in _STOP}


def reconcile(bank: Mapping[str, Row], ledger: Mapping[str, Row], window: int) -> list[dict[str, Any]]:
    """The baseline's discrepancy list for one month."""
    banks = sorted(bank.values(), key=lambda r: (r.date, r.id))
    free = dict(sorted(ledger.items()))
    pairs: dict[str, Row] = {}  # bank id -> ledger row

    def nearest(b: Row, days: int, same_amount: bool = True) -> Row | None:
        cands = [g for g in free.values() if abs((g.date - b.date).days) <= days and (g.amount == b.amount) == same_amount]
        return min(cands, key=lambda g: (abs((g.date - b.date).days), g.id)) if cands else None

    for b in banks:  # 1. exact amount within the timing window
        g = nearest(b, window)
        if g is not None:
            pairs[b.id] = free.pop(g.id)
    found: list[dict[str, Any]] = []
    for g in list(free.values()):  # 2. a second ledger row for a paired bank row
        twin = next((b for b in banks if b.id in pairs and b.amount == g.amount and abs((g.date - b.date).days) <= window), None)
        if twin is not None:
            found.append({"type": "duplicate", "refs": [twin.id, g.id], "amount": plain(twin.amount)})
            free.pop(g.id)
    rest = [b for b in banks if b.id not in pairs]
    left: list[Row] = []
    for b in rest:  # 3. same amount up to a week away
        g = nearest(b, EXTENDED_DAYS)
        if g is not None:
            free.pop(g.id)
            found.append({"type": "date_drift", "refs": [b.id, g.id], "amount": plain(b.amount)})
        else:
            left.append(b)
    for b in left:  # 4. a different amount within the window, sharing a word; 5. nothing: missing
        words = _words(b.text)
        cands = [g for g in free.values() if abs((g.date - b.date).days) <= window and words & _words(g.text)]
        if cands:
            g = min(cands, key=lambda g: (abs((g.date - b.date).days), g.id))
            free.pop(g.id)
            found.append({"type": "amount_mismatch", "refs": [b.id, g.id], "amount": plain(b.amount - g.amount)})
        else:
            found.append({"type": "missing_entry", "refs": [b.id], "amount": plain(b.amount)})
    return found


def _window(messages: Sequence[Message]) -> int:
    for m in messages:
        found = _WINDOW.search(message_text(m.get("content")))
        if found:
            return int(found.group(1))
    return 3


def baseline(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> Reply:
    """Exact-match reconciliation: answer at once (single-shot) or page through both listings, then submit."""
    if tools is None:
        bank, ledger = _prompt_rows(messages)
        return Reply(json.dumps({"discrepancies": reconcile(bank, ledger, _window(messages))}))
    pending, (bank, ledger) = _agentic_rows(messages)
    if pending is not None:
        return pending
    return _submit(messages, reconcile(bank, ledger, _window(messages)))

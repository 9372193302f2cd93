"""End-state grading of execute.month-end (LedgerRate §4.7).

A close passes when the scratch ledger the agent left behind is the reference one:

- `writer-seal`: the entries are the ones this run's journal-entry writer accepted (an
  answer typed into a final message, or edited after submission, is not an end state);
- `entries-balance`: every entry's debits equal its credits, to the cent;
- `entries-match`: the entries have the reference effect on every account — for each
  account, the net of debits minus credits equals the reference net within $0.01. This
  checks accounts, direction and amounts, and it is about the end state: booking one
  accrual per line or all accruals in one entry, or splitting payroll by department, is
  the same ledger; a missing, extra, duplicated, reversed or mis-stated entry is not. Each
  disagreeing account is reported with the documents whose entries touch it, and a
  difference that equals a document needing no entry (a next-month invoice, an invoice
  already in AP, a timing difference on the bank statement) is named as such;
- `trial-balance`: the source ledger plus the entries balances (|debits - credits| <= 0.005);
- `close-summary`: informational — the summary is kept in the record, not graded.

Exceeding the 25-step cap fails before any of this (the runtime's agentic system).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.checks.sqlsandbox import SqlSandbox
from lrc.runtime.workloads.execute_month_end.ledger import seal

COMPONENT_ID = "execute.month-end.grading"
COMPONENT_VERSION = 2

SEAL = "execute.month-end.writer-seal"
BALANCE = "execute.month-end.entries-balance"
MATCH = "execute.month-end.entries-match"
ACCOUNT = "execute.month-end.account-net"
TRIAL = "execute.month-end.trial-balance"
SUMMARY = "execute.month-end.close-summary"
DATABASE = "finance.db"
ZERO = Decimal("0.00")


def normalize(answer: Any) -> Any:
    """The answer as submitted: entries are sealed, so nothing about them is rewritten."""
    return answer


def _amount(value: Any) -> Decimal:
    try:
        return Decimal(str(value)) if value not in (None, "") else ZERO
    except InvalidOperation:
        return ZERO


def _entries(answer: Any) -> list[Mapping[str, Any]]:
    entries = answer.get("entries") if isinstance(answer, Mapping) else None
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _money(d: Decimal) -> str:
    return f"{d:,.2f}"


def _side(net: Decimal) -> str:
    return f"net debit {_money(net)}" if net > 0 else (f"net credit {_money(-net)}" if net < 0 else "no net effect")


def writer_seal(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    given = answer.get("seal") if isinstance(answer, Mapping) else None
    expected = seal(str(key.get("seal_key", "")), list(answer.get("entries", [])) if isinstance(answer, Mapping) else [])
    ok = isinstance(given, str) and given == expected
    return [result(SEAL, COMPONENT_VERSION, "pass" if ok else "fail", observed="sealed by the writer" if ok else "no valid seal",
                   expected="entries posted through post_journal_entry and submitted with submit_close", location="/seal",
                   message="the entries are the ones this run's journal-entry writer accepted" if ok else
                   "the entries were not posted through this run's journal-entry writer (or were changed afterwards); "
                   "only entries posted with post_journal_entry and submitted with submit_close count")]


def entries_balance(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    bad = []
    for n, e in enumerate(_entries(answer), 1):
        lines = e.get("lines") if isinstance(e.get("lines"), list) else []
        dr = sum((_amount(ln.get("debit")) for ln in lines if isinstance(ln, Mapping)), ZERO)
        cr = sum((_amount(ln.get("credit")) for ln in lines if isinstance(ln, Mapping)), ZERO)
        if dr != cr or len(lines) < 2:
            bad.append({"entry": e.get("entry_id", f"#{n}"), "debits": _money(dr), "credits": _money(cr)})
    count = len(_entries(answer))
    if not bad:
        return [result(BALANCE, COMPONENT_VERSION, "pass", observed=f"{count} balanced entries", expected="debits = credits per entry",
                       location=None, message=f"all {count} entries balance")]
    return [result(BALANCE, COMPONENT_VERSION, "fail", observed=bad, expected="debits = credits per entry",
                   location=[b["entry"] for b in bad],
                   message="unbalanced: " + "; ".join(f"{b['entry']} debits {b['debits']} != credits {b['credits']}" for b in bad))]


def _net(entries: Sequence[Mapping[str, Any]]) -> dict[str, Decimal]:
    net: dict[str, Decimal] = {}
    for e in entries:
        for ln in e.get("lines") or []:
            if isinstance(ln, Mapping):
                account = str(ln.get("account"))
                net[account] = net.get(account, ZERO) + _amount(ln.get("debit")) - _amount(ln.get("credit"))
    return net


def entries_match(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    tolerance = Decimal(str(params.get("tolerance", "0.01")))
    agent = _entries(answer)
    got = _net(agent)
    want = {a: Decimal(v) for a, v in key["net_by_account"].items()}
    sources: dict[str, list[str]] = {}
    documents: dict[str, list[str]] = {}
    for ref in key["entries"]:
        for ln in ref["lines"]:
            d = Decimal(ln["debit"]) - Decimal(ln["credit"])
            sources.setdefault(ln["account"], []).append(f"{'Dr' if d > 0 else 'Cr'} {_money(abs(d))} ({ref['kind']}, {ref['source']})")
            if ref["source"] not in documents.setdefault(ln["account"], []):
                documents[ln["account"]].append(ref["source"])
    posted: dict[str, list[str]] = {}
    for e in agent:
        for ln in e.get("lines") or []:
            if isinstance(ln, Mapping):
                d = _amount(ln.get("debit")) - _amount(ln.get("credit"))
                posted.setdefault(str(ln.get("account")), []).append(f"{'Dr' if d > 0 else 'Cr'} {_money(abs(d))} in {e.get('entry_id', '?')}")
    traps = [(Decimal(t["amount"]), t) for t in key.get("no_entry", [])]
    details: list[ValidatorResult] = []
    wrong: list[str] = []
    for account in sorted(set(want) | set(got)):
        w, g = want.get(account, ZERO), got.get(account, ZERO)
        delta = g - w
        if abs(delta) <= tolerance:
            continue
        wrong.append(account)
        why = [f"account {account}: expected {_side(w)}, got {_side(g)} (difference {_money(delta)})"]
        if sources.get(account):
            why.append("reference: " + ", ".join(sources[account]))
        if posted.get(account):
            why.append("posted: " + ", ".join(posted[account]))
        for amount, trap in traps:
            if abs(abs(delta) - amount) <= tolerance:
                why.append(f"the difference equals {trap['source']} ({trap['kind']}), which needs no entry: {trap['why']}")
                break
        else:
            if g != 0 and w != 0 and abs(g + w) <= tolerance:
                why.append("the direction is reversed")
        details.append(result(ACCOUNT, COMPONENT_VERSION, "fail", severity="info", observed=_side(g), expected=_side(w),
                              location={"account": account, "documents": documents.get(account, [])},
                              message="; ".join(why)))
    if not wrong:
        return [result(MATCH, COMPONENT_VERSION, "pass", observed=f"{len(want)} accounts as expected",
                       expected=f"reference effect on {len(want)} accounts within {tolerance}", location=None,
                       message=f"the entries have the reference effect on every account ({len(key['entries'])} reference entries)")]
    summary = result(MATCH, COMPONENT_VERSION, "fail", observed={a: _side(got.get(a, ZERO)) for a in wrong},
                     expected={a: _side(want.get(a, ZERO)) for a in wrong}, location={"accounts": wrong},
                     message=f"{len(wrong)} account(s) differ from the reference close: " + " | ".join(d["message"] for d in details))
    return [summary, *details]


def trial_balance(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any], item: Any) -> list[ValidatorResult]:
    data = getattr(item, "files", {}).get(DATABASE) if item is not None else None
    if data is None:
        return [result(TRIAL, COMPONENT_VERSION, "error", observed="missing", expected=DATABASE, location=DATABASE,
                       message=f"the item has no {DATABASE}; the trial balance cannot be computed")]
    with SqlSandbox(data) as box:
        totals = box.query("SELECT ROUND(SUM(debit), 2), ROUND(SUM(credit), 2) FROM gl_lines")
    if not totals.ok:
        return [result(TRIAL, COMPONENT_VERSION, "error", observed=totals.error, expected="ledger totals", location=DATABASE,
                       message=f"the ledger totals cannot be read: {totals.error}")]
    dr = _amount(repr(totals.rows[0][0])).quantize(Decimal("0.01"))
    cr = _amount(repr(totals.rows[0][1])).quantize(Decimal("0.01"))
    for e in _entries(answer):
        for ln in e.get("lines") or []:
            if isinstance(ln, Mapping):
                dr += _amount(ln.get("debit"))
                cr += _amount(ln.get("credit"))
    ok = abs(dr - cr) <= Decimal("0.005")
    return [result(TRIAL, COMPONENT_VERSION, "pass" if ok else "fail", observed=f"debits {_money(dr)}, credits {_money(cr)}",
                   expected="total debits = total credits", location="trial balance after the close",
                   message="the trial balance balances after the close" if ok else
                   f"the trial balance is out by {_money(dr - cr)} after the close")]


def close_summary(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    text = answer.get("summary") if isinstance(answer, Mapping) else None
    size = len(text) if isinstance(text, str) else 0
    return [result(SUMMARY, COMPONENT_VERSION, "pass", severity="info", observed=f"{size} characters", expected="kept, not graded",
                   location="/summary", message="the close summary is kept in the record; it is not graded")]


VALIDATORS = {
    "writer-seal": writer_seal,
    "entries-balance": entries_balance,
    "entries-match": entries_match,
    "trial-balance": trial_balance,
    "close-summary": close_summary,
}

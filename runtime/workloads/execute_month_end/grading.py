"""End-state grading of execute.month-end (LedgerRate §4.7).

Seed §4.7: the proposed journal entries must match the reference set (accounts, amounts
within $0.01, direction) and the resulting trial balance must balance. So:

- `writer-seal`: the entries are the ones this run's journal-entry writer accepted (an
  answer typed into a final message, or edited after submission, is not an end state);
- `entries-balance`: every entry's debits equal its credits, to the cent;
- `entries-match`: the entries match the reference entries *one to one*. An entry's effect
  is its net debit (+) or credit (-) per account (lines on one account, e.g. payroll split
  by department, are added up); a posted entry matches a reference entry when it is in
  the same period and its effect agrees on every account within the declared tolerance
  (|posted - reference| <= $0.01 per account, symmetric). Matching is a maximum one-to-one
  matching, so every reference entry needs its own posted entry and every posted entry
  must be a reference entry: two entries that net to zero, an extra entry and its
  reversal, a duplicate, or all accruals lumped into one entry fail, even when the
  account totals agree. Each unmatched reference entry ("missing") and each unmatched
  posted entry ("extra") is reported on its own, with the document it comes from, the
  closest entry on the other side and how it differs, and whether an extra entry equals a
  document that needs no entry (a next-month invoice, an invoice already in AP, a timing
  difference on the bank statement) or is a reference entry reversed;
- `trial-balance`: the item's source ledger plus the entries balances (|debits - credits|
  <= 0.005);
- `close-summary`: informational — the summary is kept in the record, not graded.

Why `entries-balance` and `trial-balance` stay separate checks although the writer refuses
unbalanced entries: the seed names the balanced trial balance as a pass criterion of its
own, and both are recomputed here from the submitted entries and the item's own ledger,
independently of the writer. They fail when the entries did not come out of a correct
writer (a forged seal after a leaked key, a writer bug) or the item's ledger is damaged;
tests/test_month_end.py shows each of those failing. A close that posts nothing has
nothing to seal, balance or add: those three checks are then `not_applicable`, so the
verdict is "fail", never "partial".

Exceeding the 25-step cap fails before any of this (the runtime's agentic system).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

from lrc.runtime.checks.money import MoneyError, tolerance, within
from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.checks.sqlsandbox import SqlSandbox
from lrc.runtime.workloads.execute_month_end.ledger import seal

COMPONENT_ID = "execute.month-end.grading"
COMPONENT_VERSION = 2

SEAL = "execute.month-end.writer-seal"
BALANCE = "execute.month-end.entries-balance"
MATCH = "execute.month-end.entries-match"
ENTRY = "execute.month-end.entry"
TRIAL = "execute.month-end.trial-balance"
SUMMARY = "execute.month-end.close-summary"
DATABASE = "finance.db"
ZERO = Decimal("0.00")


def normalize(answer: Any) -> Any:
    """The answer as submitted: entries are sealed, so nothing about them is rewritten."""
    return answer


def _amount(value: Any) -> Decimal:
    """An amount as the writer wrote it; anything else (not a number, not finite, beyond any
    amount the writer accepts) reads as zero — such entries never carry a valid seal."""
    try:
        d = Decimal(str(value)) if value not in (None, "") and not isinstance(value, (bool, Mapping, list)) else ZERO
    except (InvalidOperation, ValueError):
        return ZERO
    return d if d.is_finite() and d.adjusted() <= 12 else ZERO


def _entries(answer: Any) -> list[Mapping[str, Any]]:
    entries = answer.get("entries") if isinstance(answer, Mapping) else None
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _money(d: Decimal) -> str:
    return f"{d:,.2f}"


def _side(net: Decimal) -> str:
    return f"net debit {_money(net)}" if net > 0 else (f"net credit {_money(-net)}" if net < 0 else "no net effect")


def _nothing_posted(check: str, what: str) -> list[ValidatorResult]:
    return [result(check, COMPONENT_VERSION, "not_applicable", observed="no entries", expected=what, location="/entries",
                   message=f"nothing was posted, so there is nothing to check here ({what}); the close fails on entries-match")]


def writer_seal(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    given = answer.get("seal") if isinstance(answer, Mapping) else None
    expected = seal(str(key.get("seal_key", "")), list(answer.get("entries", [])) if isinstance(answer, Mapping) else [])
    ok = isinstance(given, str) and given == expected
    if ok and not _entries(answer):
        return _nothing_posted(SEAL, "entries posted through post_journal_entry")
    return [result(SEAL, COMPONENT_VERSION, "pass" if ok else "fail", observed="sealed by the writer" if ok else "no valid seal",
                   expected="entries posted through post_journal_entry and submitted with submit_close", location="/seal",
                   message="the entries are the ones this run's journal-entry writer accepted" if ok else
                   "the entries were not posted through this run's journal-entry writer (or were changed afterwards); "
                   "only entries posted with post_journal_entry and submitted with submit_close count")]


def entries_balance(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    if not _entries(answer):
        return _nothing_posted(BALANCE, "debits = credits per entry")
    bad = []
    for n, e in enumerate(_entries(answer), 1):
        lines = e.get("lines") if isinstance(e.get("lines"), list) else []
        dr = sum((_amount(ln.get("debit")) for ln in lines if isinstance(ln, Mapping)), ZERO)
        cr = sum((_amount(ln.get("credit")) for ln in lines if isinstance(ln, Mapping)), ZERO)
        if dr != cr or len(lines) < 2:
            bad.append({"entry": _entry_id(e, n), "debits": _money(dr), "credits": _money(cr)})
    count = len(_entries(answer))
    if not bad:
        return [result(BALANCE, COMPONENT_VERSION, "pass", observed=f"{count} balanced entries", expected="debits = credits per entry",
                       location=None, message=f"all {count} entries balance")]
    return [result(BALANCE, COMPONENT_VERSION, "fail", observed=bad, expected="debits = credits per entry",
                   location=[b["entry"] for b in bad],
                   message="unbalanced: " + "; ".join(f"{b['entry']} debits {b['debits']} != credits {b['credits']}" for b in bad))]


def _entry_id(e: Mapping[str, Any], n: int) -> str:
    return str(e.get("entry_id") or f"#{n}")


def _effect(lines: Any) -> dict[str, Decimal]:
    """Net debit (+) / credit (-) per account of one entry's lines; accounts that net to zero are dropped."""
    net: dict[str, Decimal] = {}
    for ln in lines if isinstance(lines, list) else []:
        if isinstance(ln, Mapping):
            account = str(ln.get("account"))
            net[account] = net.get(account, ZERO) + _amount(ln.get("debit")) - _amount(ln.get("credit"))
    return {a: v for a, v in sorted(net.items()) if v != 0}


def _period(date: Any) -> str | None:
    return date[:7] if isinstance(date, str) and len(date) >= 7 else None


def _show_effect(effect: Mapping[str, Decimal]) -> str:
    return ", ".join(f"{'Dr' if v > 0 else 'Cr'} {a} {_money(abs(v))}" for a, v in effect.items()) or "no net effect"


def _differences(got: Mapping[str, Decimal], want: Mapping[str, Decimal], tol: Decimal) -> list[str]:
    out = []
    for account in sorted(set(got) | set(want)):
        g, w = got.get(account, ZERO), want.get(account, ZERO)
        if not within(g, w, tol):
            out.append(f"account {account}: expected {_side(w)}, got {_side(g)} (difference {_money(g - w)})")
    return out


def _matches(got: Mapping[str, Decimal], got_period: str | None, want: Mapping[str, Decimal], want_period: str | None,
             tol: Decimal) -> bool:
    return got_period == want_period and not _differences(got, want, tol)


def _closest(effect: Mapping[str, Decimal], others: Sequence[tuple[Any, Mapping[str, Decimal]]]) -> tuple[Any, Mapping[str, Decimal]] | None:
    """The entry among `others` sharing the most accounts with `effect` (then the smallest total difference)."""
    best = None
    for ident, other in others:
        shared = len(set(effect) & set(other))
        if not shared:
            continue
        gap = sum((abs(effect.get(a, ZERO) - other.get(a, ZERO)) for a in set(effect) | set(other)), ZERO)
        score = (-shared, gap)
        if best is None or score < best[0]:
            best = (score, (ident, other))
    return best[1] if best else None


def match_entries(posted: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]],
                  tol: Decimal) -> tuple[dict[int, int], list[int], list[int]]:
    """A maximum one-to-one matching of posted entries to reference entries (augmenting paths).

    Returns ({posted index: reference index}, unmatched reference indexes, unmatched posted indexes).
    """
    got = [(_effect(e.get("lines")), _period(e.get("date"))) for e in posted]
    want = [(_effect(r["lines"]), _period(r["date"])) for r in reference]
    edges = [[j for j, (g, gp) in enumerate(got) if _matches(g, gp, w, wp, tol)] for (w, wp) in want]
    owner: dict[int, int] = {}  # posted index -> reference index

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    matched = {i for i in range(len(want)) if augment(i, set())}
    return owner, [i for i in range(len(want)) if i not in matched], [j for j in range(len(got)) if j not in owner]


def entries_match(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    try:
        tol = tolerance(params.get("tolerance", "0.01"))
    except MoneyError as exc:
        return [result(MATCH, COMPONENT_VERSION, "error", observed="invalid tolerance", expected="a decimal string such as \"0.01\"",
                       location="params", message=f"the spec's grading params are invalid: {exc}")]
    agent = _entries(answer)
    reference = list(key["entries"])
    owner, missing, extra = match_entries(agent, reference, tol)
    close_period = _period(key.get("close_period")) or (_period(reference[0]["date"]) if reference else None)
    ref_effects = [(n, _effect(r["lines"])) for n, r in enumerate(reference)]
    traps = [(Decimal(t["amount"]), t) for t in key.get("no_entry", [])]
    details: list[ValidatorResult] = []
    left_posted = [(_entry_id(agent[j], j + 1), _effect(agent[j].get("lines"))) for j in extra]
    for i in missing:
        ref = reference[i]
        want = _effect(ref["lines"])
        why = [f"missing: no posted entry matches the reference {ref['kind']} entry from {ref['source']} ({_show_effect(want)})"]
        near = _closest(want, left_posted)
        if near is not None:
            ident, got = near
            diffs = _differences(got, want, tol)
            if diffs:
                why.append(f"closest posted entry {ident}: " + "; ".join(diffs))
            else:
                why.append(f"posted entry {ident} has this effect but is dated outside {_period(ref['date'])}")
        details.append(result(ENTRY, COMPONENT_VERSION, "fail", severity="info", observed=_show_effect(near[1]) if near else "no entry",
                              expected=_show_effect(want),
                              location={"missing": ref["source"], "kind": ref["kind"], "reference_entry": i + 1,
                                        "accounts": sorted(want)},
                              message="; ".join(why)))
    for j in extra:
        e = agent[j]
        ident = _entry_id(e, j + 1)
        got = _effect(e.get("lines"))
        why = [f"extra: posted entry {ident} ({_show_effect(got)}) matches no reference entry"]
        if not got:
            why.append("its lines cancel out: an entry with no net effect is not part of a close")
        if _period(e.get("date")) != close_period:
            why.append(f"it is dated {e.get('date')!r}, outside the close period {close_period}")
        reversed_of = next((reference[n] for n, w in ref_effects if got and not _differences(got, {a: -v for a, v in w.items()}, tol)), None)
        total = sum((v for v in got.values() if v > 0), ZERO)
        trap = next((t for amount, t in traps if got and within(total, amount, tol)), None)
        if trap is not None:
            why.append(f"its amount equals {trap['source']} ({trap['kind']}), which needs no entry: {trap['why']}")
        elif reversed_of is not None:
            why.append(f"it is the reference {reversed_of['kind']} entry from {reversed_of['source']} with the direction reversed")
        elif owner and any(not _differences(got, _effect(reference[i]["lines"]), tol) for i in owner.values()):
            dup = next(reference[i] for i in owner.values() if not _differences(got, _effect(reference[i]["lines"]), tol))
            why.append(f"it duplicates the reference {dup['kind']} entry from {dup['source']}, which another entry already matches")
        else:
            near = _closest(got, [(reference[n]["source"], w) for n, w in ref_effects])
            if near is not None:
                why.append(f"closest reference entry, from {near[0]}: " + "; ".join(_differences(got, near[1], tol)))
        details.append(result(ENTRY, COMPONENT_VERSION, "fail", severity="info", observed=_show_effect(got), expected="no such entry",
                              location={"extra": ident, "accounts": sorted(got)}, message="; ".join(why)))
    if not missing and not extra:
        return [result(MATCH, COMPONENT_VERSION, "pass", observed=f"{len(agent)} entries, each matching one reference entry",
                       expected=f"the {len(reference)} reference entries, one to one, within {tol} per account",
                       location=None, message=f"the entries match the {len(reference)} reference entries one to one")]
    parts = []
    if not agent:
        parts.append(f"nothing was posted: all {len(reference)} reference entries are missing")
    else:
        parts.append(f"{len(reference) - len(missing)} of {len(reference)} reference entries matched"
                     f"{f', {len(missing)} missing' if missing else ''}{f', {len(extra)} extra posted' if extra else ''}")
    summary = result(MATCH, COMPONENT_VERSION, "fail",
                     observed={"posted": len(agent), "matched": len(owner), "extra": [_entry_id(agent[j], j + 1) for j in extra]},
                     expected={"reference": len(reference), "missing": [reference[i]["source"] for i in missing]},
                     location={"missing": [{"source": reference[i]["source"], "kind": reference[i]["kind"]} for i in missing],
                               "extra": [_entry_id(agent[j], j + 1) for j in extra]},
                     message="; ".join(parts) + " | " + " | ".join(d["message"] for d in details))
    return [summary, *details]


def trial_balance(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any], item: Any) -> list[ValidatorResult]:
    if not _entries(answer):
        return _nothing_posted(TRIAL, "total debits = total credits after the close")
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

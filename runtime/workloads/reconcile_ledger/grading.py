"""Grading of reconcile.ledger answers: one-to-one matching of reported to planted discrepancies.

Why it is built this way:

- §4.3: pass = recall 100% of the planted discrepancies AND at most one false positive.
  The spec's check `params` declare the rules; this module implements them and refuses
  rules it does not know.
- Matching is one-to-one and keyed by type and referenced transactions: a report matches a
  planted discrepancy when the types are equal, it references exactly the one bank
  transaction the discrepancy concerns, its ledger references satisfy the type's rule
  (`none`, `exact`, or `nonempty-subset` for a duplicate, whose two entries are
  interchangeable) and its amount, read as an exact Decimal from the string, is within the
  declared tolerance of the planted amount, symmetric (|reported - planted| <= 0.005). Each planted discrepancy consumes at most one report; a
  second report of the same discrepancy is a false positive. Every planted discrepancy
  concerns a different bank transaction, so matching in report order is optimal.
- `normalize` (before the output contract) forgives spelling, not judgement: "Amount
  Mismatch" or "date-drift" mean the declared type ids, " bk-0042 " means BK-0042.
- Every miss and every false positive gets an info result that names the transactions
  and says why it did not match, so a failure is traceable to the row.
"""

from __future__ import annotations

import copy
import re
from decimal import Decimal
from typing import Any, Mapping

import cerberus

from lrc.runtime.checks.money import MoneyError, parse_amount, plain, tolerance, within
from lrc.runtime.checks.results import ValidatorResult, result

COMPONENT_ID = "reconcile.ledger.grading"
COMPONENT_VERSION = 2

DISCREPANCIES = "reconcile.ledger.discrepancies"
RECALL_BY_TYPE = "reconcile.ledger.recall-by-type"
MISSED = "reconcile.ledger.missed"
FALSE_POSITIVE = "reconcile.ledger.false-positive"

REF_RULES = ("none", "exact", "nonempty-subset")


class RulesError(ValueError):
    pass


def _canon_type(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return re.sub(r"_+", "_", re.sub(r"[\s\-]+", "_", value.strip().casefold())).strip("_")


def _canon_ref(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


_SCHEMA: dict[str, Any] = {
    "discrepancies": {
        "type": "list",
        "schema": {"type": "dict", "schema": {"type": {"coerce": _canon_type}, "refs": {"type": "list", "schema": {"coerce": _canon_ref}}}},
    },
}


def normalize(answer: Any) -> Any:
    """Canonical type spellings and reference ids; anything unexpected comes back unchanged."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("discrepancies"), list):
        return answer
    try:
        out = cerberus.Validator(_SCHEMA, allow_unknown=True).normalized(copy.deepcopy(dict(answer)), always_return_document=True)
    except Exception:  # noqa: BLE001 - normalization never raises; the output contract decides
        return answer
    return out if isinstance(out, dict) else answer


# --------------------------------------------------------------------------------------
# declared rules


def _rules(params: Mapping[str, Any]) -> dict[str, Any]:
    allowed = {"recall", "max_false_positives", "amount", "refs", "id_prefixes"}
    extra = sorted(set(params) - allowed)
    if extra:
        raise RulesError(f"unknown rule(s) {', '.join(extra)}")
    if params.get("recall") != "all":
        raise RulesError("recall must be 'all' (every planted discrepancy)")
    max_fp = params.get("max_false_positives")
    if isinstance(max_fp, bool) or not isinstance(max_fp, int) or max_fp < 0:
        raise RulesError("max_false_positives must be a non-negative integer")
    amount = params.get("amount")
    if not isinstance(amount, Mapping) or amount.get("parse") != "decimal-string" or set(amount) != {"parse", "tolerance"}:
        raise RulesError("amount must be {parse: decimal-string, tolerance: \"0.005\"}")
    try:
        amount_tolerance = tolerance(amount.get("tolerance"))
    except MoneyError as exc:
        raise RulesError(f"amount.tolerance: {exc}") from exc
    refs = params.get("refs")
    if not isinstance(refs, Mapping) or not refs:
        raise RulesError("refs must give a rule per discrepancy type")
    for kind, rule in refs.items():
        if not isinstance(rule, Mapping) or rule.get("bank") != "exact" or rule.get("ledger") not in REF_RULES or set(rule) != {"bank", "ledger"}:
            raise RulesError(f"refs.{kind} must be {{bank: exact, ledger: one of {', '.join(REF_RULES)}}}")
    prefixes = params.get("id_prefixes")
    if not isinstance(prefixes, Mapping) or set(prefixes) != {"bank", "ledger"} or not all(isinstance(v, str) and v for v in prefixes.values()):
        raise RulesError("id_prefixes must give the bank and ledger id prefixes")
    return {"max_fp": max_fp, "tolerance": amount_tolerance, "refs": dict(refs),
            "bank": prefixes["bank"].upper(), "ledger": prefixes["ledger"].upper()}


def _money(value: Any, rules: Mapping[str, Any]) -> Decimal | None:
    try:
        return parse_amount(value)  # exact: compared at the declared tolerance
    except MoneyError:
        return None


def _label(kind: Any, refs: list[str]) -> str:
    return f"{kind} {' '.join(refs)}".strip()


# --------------------------------------------------------------------------------------
# the validator


def validate(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """One blocking result (recall and false positives), recall by type, then every miss and false positive."""
    try:
        rules = _rules(params)
    except RulesError as exc:
        return [result(DISCREPANCIES, COMPONENT_VERSION, "error", observed="invalid matching rules", expected="the rules this "
                       "validator implements", location="params", message=f"the spec's grading params are invalid: {exc}")]
    planted = list(key["discrepancies"])
    by_bank = {p["bank_refs"][0]: p for p in planted}
    noise = {ref for pair in key.get("noise", {}).get("identical_amounts", []) for ref in pair}
    reports = answer.get("discrepancies", []) if isinstance(answer, Mapping) else []
    reports = reports if isinstance(reports, list) else []

    matched: dict[str, int] = {}
    false_positives: list[tuple[int, str, list[str], str]] = []
    for n, rep in enumerate(reports, 1):
        rep = rep if isinstance(rep, Mapping) else {}
        kind = _canon_type(rep.get("type"))
        raw_refs = rep.get("refs") if isinstance(rep.get("refs"), list) else []
        refs = [_canon_ref(x) for x in raw_refs if isinstance(x, str)]
        bank = sorted({x for x in refs if x.startswith(rules["bank"])})
        ledger = sorted({x for x in refs if x.startswith(rules["ledger"])})
        other = sorted({x for x in refs if x not in bank and x not in ledger})
        amount = _money(rep.get("amount"), rules)
        reason = None
        p = by_bank.get(bank[0]) if len(bank) == 1 else None
        if len(bank) != 1:
            reason = f"references {len(bank)} bank transactions; a discrepancy concerns exactly one"
        elif p is None:
            reason = f"no planted discrepancy concerns {bank[0]}"
            if bank[0] in noise:
                reason += " (it shares its amount with another counterparty's payment: noise, not a discrepancy)"
        elif p["id"] in matched:
            reason = f"{p['type']} on {bank[0]} was already matched by report #{matched[p['id']]}"
        elif kind != p["type"]:
            reason = f"{bank[0]} is a planted {p['type']}, not {kind}"
        elif other or len(refs) != len(raw_refs):
            reason = f"unknown reference(s) {', '.join(other) or 'of the wrong type'}"
        else:
            rule = rules["refs"].get(p["type"], {}).get("ledger")
            want = set(p["ledger_refs"])
            ok = {"none": not ledger, "exact": set(ledger) == want, "nonempty-subset": bool(ledger) and set(ledger) <= want}.get(rule, False)
            if not ok:
                expected = "no ledger entry" if rule == "none" else ("one or both of " if rule == "nonempty-subset" else "") + " ".join(sorted(want))
                reason = f"ledger references {' '.join(ledger) or 'none'} do not match ({p['type']} expects {expected})"
            elif amount is None:
                reason = f"amount {rep.get('amount')!r} is not an amount"
            elif not within(amount, Decimal(p["amount"]), rules["tolerance"]):
                reason = f"amount {plain(amount)} differs from the expected {p['amount']} by more than {rules['tolerance']}"
        if reason is None and p is not None:
            matched[p["id"]] = n
        else:
            false_positives.append((n, str(kind), refs, reason or ""))

    missed = [p for p in planted if p["id"] not in matched]
    max_fp = rules["max_fp"]
    ok = not missed and len(false_positives) <= max_fp
    total = len(planted)
    miss_labels = [_label(p["type"], p["bank_refs"] + p["ledger_refs"]) for p in missed]
    fp_labels = [f"#{n} {_label(kind, refs)}" for n, kind, refs, _ in false_positives]
    message = f"recall {total - len(missed)}/{total}, {len(false_positives)} false positive(s) (at most {max_fp} allowed)."
    if miss_labels:
        message += " Missed: " + "; ".join(miss_labels) + "."
    if fp_labels:
        message += " Not planted: " + "; ".join(fp_labels) + "."
    summary = result(DISCREPANCIES, COMPONENT_VERSION, "pass" if ok else "fail",
                     observed=f"recall {total - len(missed)}/{total}, {len(false_positives)} false positive(s)",
                     expected=f"recall {total}/{total}, at most {max_fp} false positive(s)",
                     location={"missed": miss_labels, "false_positives": fp_labels}, message=message)
    by_type: dict[str, list[int]] = {}
    for p in planted:
        counts = by_type.setdefault(p["type"], [0, 0])
        counts[1] += 1
        counts[0] += p["id"] in matched
    recall = result(RECALL_BY_TYPE, COMPONENT_VERSION, "pass" if not missed else "fail", severity="info",
                    observed={t: f"{c[0]}/{c[1]}" for t, c in by_type.items()}, expected={t: f"{c[1]}/{c[1]}" for t, c in by_type.items()},
                    location="/discrepancies", message="recall by type: " + ", ".join(f"{t} {c[0]}/{c[1]}" for t, c in by_type.items()))
    details: list[ValidatorResult] = []
    for p in missed:
        refs = p["bank_refs"] + p["ledger_refs"]
        details.append(result(MISSED, COMPONENT_VERSION, "fail", severity="info", observed=None,
                              expected={"type": p["type"], "refs": refs, "amount": p["amount"]}, location=refs,
                              message=f"missed {p['type']} on {' / '.join(refs)} (amount {p['amount']}): {p['detail']}"))
    for n, kind, refs, reason in false_positives:
        rep = reports[n - 1] if isinstance(reports[n - 1], Mapping) else {}
        details.append(result(FALSE_POSITIVE, COMPONENT_VERSION, "fail", severity="info",
                              observed={"type": kind, "refs": refs, "amount": str(rep.get("amount"))}, expected="a planted discrepancy",
                              location=refs, message=f"report #{n} ({_label(kind, refs)}) is not a planted discrepancy: {reason}"))
    return [summary, recall, *details]


VALIDATORS = {"discrepancies": validate}

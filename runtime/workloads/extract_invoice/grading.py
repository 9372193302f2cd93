"""Grading of extract.invoice answers: declared normalization, then field-by-field equality.

Why it is built this way:

- §4.1: an answer passes when *every* required field equals the answer key after
  normalization. The normalization rules are not chosen here: the workload spec declares
  them in the check's `params` (`normalization` and `fields`), this module only implements
  the named rules, and it refuses rules it does not know instead of guessing. The same rules
  are applied to the answer key and to every model's answer.
- The rules themselves (`checks.money`, `checks.dates`): strings NFKC, trimmed, inner
  whitespace collapsed, casefolded; dates ISO 8601 calendar dates; amounts read as exact
  Decimals from their decimal string (a JSON number through its shortest repr) and
  compared with the exact reference at the declared tolerance, symmetric
  (|observed - expected| <= 0.005: 2.675 and 2.685 both match 2.68, 2.6749 does not);
  quantities exact decimals; line items a multiset of (description, quantity, unit price,
  amount) matched one to one, so order does not matter but a missing, extra or duplicated
  line does.
- Normalization runs through cerberus (`coerce` rules built from the declared kinds). A
  value that a rule cannot read is kept as `Unreadable`, which equals nothing: the field
  fails with the reason, and grading never raises.
- One blocking result carries the verdict and names every field that differs; beside it,
  one info result per field and a field-accuracy info result (the §4.1 diagnostic).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping

import cerberus

from lrc.runtime.checks.dates import DateError, iso, parse_iso
from lrc.runtime.checks.money import MoneyError, number_text, parse_amount, plain, tolerance, within
from lrc.runtime.checks.results import ValidatorResult, result

COMPONENT_ID = "extract.invoice.grading"
COMPONENT_VERSION = 2

ALL_FIELDS = "extract.invoice.all-fields"
FIELD = "extract.invoice.field"
ACCURACY = "extract.invoice.field-accuracy"

SCALAR_KINDS = ("text", "date", "money", "quantity")
UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
DATE_FORMS = {"YYYY-MM-DD": re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"), "YYYYMMDD": re.compile(r"^[0-9]{8}$")}  # ASCII digits
MAX_SHOWN_LINES = 5


class RulesError(ValueError):
    """The spec's normalization block names a rule this module does not implement."""


class Unreadable:
    """A value a normalization rule could not read; it equals nothing, not even itself."""

    __slots__ = ("raw", "reason")

    def __init__(self, raw: Any, reason: str):
        self.raw = raw
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def show(self) -> str:
        return f"unreadable {self.raw!r}: {self.reason}"


# --------------------------------------------------------------------------------------
# the declared rules


@dataclass(frozen=True)
class Rules:
    unicode: str
    casefold: bool
    collapse_whitespace: bool
    date_forms: tuple[str, ...]
    decimal_mark: str | None
    money_tolerance: Decimal
    fields: dict[str, Any]  # name -> kind, or {"multiset": {sub: kind}}


def _need(block: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(block, Mapping):
        raise RulesError(f"params.{name} must be a mapping")
    return block


def _only(block: Mapping[str, Any], name: str, allowed: set[str]) -> None:
    extra = sorted(set(block) - allowed)
    if extra:
        raise RulesError(f"params.{name}: unknown rule(s) {', '.join(extra)}")


def rules_from(params: Mapping[str, Any]) -> Rules:
    """The normalization rules the spec declares, checked. Raises RulesError."""
    norm = _need(params.get("normalization"), "normalization")
    _only(norm, "normalization", {"text", "date", "money", "quantity"})
    text = _need(norm.get("text"), "normalization.text")
    _only(text, "normalization.text", {"unicode", "casefold", "collapse_whitespace"})
    if text.get("unicode") not in UNICODE_FORMS:
        raise RulesError(f"normalization.text.unicode must be one of {', '.join(UNICODE_FORMS)}")
    date = _need(norm.get("date"), "normalization.date")
    _only(date, "normalization.date", {"format", "accept"})
    if date.get("format") != "ISO-8601":
        raise RulesError("normalization.date.format must be ISO-8601")
    forms = tuple(date.get("accept") or ())
    if not forms or any(f not in DATE_FORMS for f in forms):
        raise RulesError(f"normalization.date.accept must list forms among {', '.join(DATE_FORMS)}")
    money = _need(norm.get("money"), "normalization.money")
    _only(money, "normalization.money", {"parse", "decimal_mark", "tolerance"})
    quantity = _need(norm.get("quantity"), "normalization.quantity")
    _only(quantity, "normalization.quantity", {"parse", "decimal_mark", "compare"})
    if money.get("parse") != "decimal-string" or quantity.get("parse") != "decimal-string":
        raise RulesError("money and quantity must be parsed as decimal-string")
    if quantity.get("compare") != "exact":
        raise RulesError("normalization.quantity.compare must be exact")
    marks = {"auto": None, ".": ".", ",": ","}
    if money.get("decimal_mark") not in marks or quantity.get("decimal_mark") != money.get("decimal_mark"):
        raise RulesError("decimal_mark must be auto, '.' or ',' (the same for money and quantity)")
    try:
        money_tolerance = tolerance(money.get("tolerance"))
    except MoneyError as exc:
        raise RulesError(f"normalization.money.tolerance: {exc}") from exc
    fields = _need(params.get("fields"), "fields")
    if not fields:
        raise RulesError("params.fields must name the required fields")
    checked: dict[str, Any] = {}
    for name, kind in fields.items():
        if isinstance(kind, Mapping):
            sub = _need(kind.get("multiset"), f"fields.{name}.multiset")
            _only(kind, f"fields.{name}", {"multiset"})
            if not sub or any(k not in SCALAR_KINDS for k in sub.values()):
                raise RulesError(f"fields.{name}.multiset kinds must be among {', '.join(SCALAR_KINDS)}")
            checked[str(name)] = {"multiset": dict(sub)}
        elif kind in SCALAR_KINDS:
            checked[str(name)] = kind
        else:
            raise RulesError(f"fields.{name}: unknown kind {kind!r}")
    return Rules(text["unicode"], bool(text.get("casefold")), bool(text.get("collapse_whitespace")), forms,
                 marks[money["decimal_mark"]], money_tolerance, checked)


# --------------------------------------------------------------------------------------
# normalizers (one per kind), and the cerberus schema that applies them


def _normalizers(rules: Rules) -> dict[str, Callable[[Any], Any]]:
    def text(value: Any) -> Any:
        if not isinstance(value, str):
            return Unreadable(value, "not a string")
        out = unicodedata.normalize(rules.unicode, value)
        out = " ".join(out.split()) if rules.collapse_whitespace else out.strip()
        return out.casefold() if rules.casefold else out

    def date(value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str) or not any(DATE_FORMS[f].match(value.strip()) for f in rules.date_forms):
            return Unreadable(value, f"not an ISO 8601 date ({' or '.join(rules.date_forms)})")
        try:
            return iso(parse_iso(value))
        except DateError as exc:
            return Unreadable(value, str(exc))

    def money(value: Any) -> Any:
        try:
            return parse_amount(value, rules.decimal_mark)  # exact: compared at the declared tolerance
        except MoneyError as exc:
            return Unreadable(value, str(exc))

    def quantity(value: Any) -> Any:
        try:
            return number_text(parse_amount(value, rules.decimal_mark))
        except MoneyError as exc:
            return Unreadable(value, str(exc))

    return {"text": text, "date": date, "money": money, "quantity": quantity}


def _schema(rules: Rules) -> dict[str, Any]:
    fns = _normalizers(rules)
    schema: dict[str, Any] = {}
    for name, kind in rules.fields.items():
        if isinstance(kind, dict):
            schema[name] = {"type": "list", "schema": {"type": "dict", "schema": {
                sub: {"coerce": fns[k]} for sub, k in kind["multiset"].items()}}}
        else:
            schema[name] = {"coerce": fns[kind]}
    return schema


_SCHEMAS: dict[str, dict[str, Any]] = {}


def _cached_schema(rules: Rules) -> dict[str, Any]:
    """One cerberus schema (with the same coerce callables) per rule set, so cerberus's own
    schema-validation cache applies and grading does not re-validate the schema per answer."""
    key = repr(rules)
    schema = _SCHEMAS.get(key)
    if schema is None:
        schema = _SCHEMAS.setdefault(key, _schema(rules))
    return schema


def canonical(document: Any, rules: Rules) -> dict[str, Any]:
    """The document with every declared field normalized (missing fields become Unreadable)."""
    if not isinstance(document, Mapping):
        return {name: Unreadable(document, "the answer is not an object") for name in rules.fields}
    doc = copy.deepcopy(dict(document))
    try:
        out = cerberus.Validator(_cached_schema(rules), allow_unknown=True).normalized(doc, always_return_document=True)
    except Exception:  # noqa: BLE001 - cerberus on hostile shapes; every field then reads as unreadable
        out = None
    if not isinstance(out, dict):
        return {name: Unreadable(document.get(name), "cannot be normalized") for name in rules.fields}
    for name, kind in rules.fields.items():
        if name not in document:
            out[name] = Unreadable(None, "missing")
        elif isinstance(kind, dict):
            out[name] = _lines(out[name], kind["multiset"])
    return out


def _lines(value: Any, subs: Mapping[str, str]) -> Any:
    if not isinstance(value, list):
        return Unreadable(value, "not a list")
    rows = []
    for row in value:
        if not isinstance(row, Mapping):
            rows.append(tuple(Unreadable(row, "not an object") for _ in subs))
            continue
        rows.append(tuple(row[s] if s in row else Unreadable(None, f"missing {s}") for s in subs))
    return rows


def _show(value: Any) -> Any:
    if isinstance(value, Unreadable):
        return value.show()
    if isinstance(value, Decimal):
        return plain(value)
    return value


def _same(kind: str, got: Any, want: Any, rules: Rules) -> bool:
    """Equal after normalization; money within the declared tolerance of the exact reference."""
    if isinstance(got, Unreadable) or isinstance(want, Unreadable):
        return False
    if kind == "money":
        return isinstance(got, Decimal) and isinstance(want, Decimal) and within(got, want, rules.money_tolerance)
    return got == want


MAX_MATCHED_LINES = 1000  # returned lines beyond this are not matched (they are extra either way)


def _match_lines(gold: list[tuple], got: list[tuple], subs: Mapping[str, str], rules: Rules) -> tuple[list[int], list[int]]:
    """A maximum one-to-one matching of gold lines to returned lines (augmenting paths).
    Returns the indexes of unmatched gold lines and of unmatched returned lines."""
    kinds = list(subs.values())
    considered = got[:MAX_MATCHED_LINES]
    edges = [[j for j, g in enumerate(considered) if all(_same(k, a, b, rules) for k, a, b in zip(kinds, g, w))]
             for w in gold]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    matched = {i for i in range(len(gold)) if augment(i, set())}
    return [i for i in range(len(gold)) if i not in matched], [j for j in range(len(got)) if j not in owner]


def _show_row(row: tuple, subs: Mapping[str, str]) -> dict[str, Any]:
    return {s: _show(v) for s, v in zip(subs, row)}


# --------------------------------------------------------------------------------------
# the validator


def _compare_lines(name: str, got: Any, gold: list[tuple], subs: Mapping[str, str], rules: Rules) -> ValidatorResult:
    pointer = f"/{name}"
    if isinstance(got, Unreadable):
        return result(FIELD, COMPONENT_VERSION, "fail", severity="info", observed=got.show(), expected=f"{len(gold)} line(s)",
                      location=pointer, message=f"{name}: {got.reason}")
    readable = [r for r in got if not any(isinstance(v, Unreadable) for v in r)]
    unreadable = [r for r in got if any(isinstance(v, Unreadable) for v in r)]
    missing_ix, extra_ix = _match_lines(gold, readable, subs, rules)
    missing = [gold[i] for i in missing_ix]
    extra = [readable[j] for j in extra_ix] + unreadable
    matched = len(gold) - len(missing)
    if not missing and not extra:
        return result(FIELD, COMPONENT_VERSION, "pass", severity="info", observed=f"{matched}/{len(gold)} lines",
                      expected=f"{len(gold)}/{len(gold)} lines", location=pointer, message=f"{name} equal")
    parts = []
    if missing:
        shown = "; ".join(str(_show_row(r, subs)) for r in missing[:MAX_SHOWN_LINES])
        parts.append(f"{len(missing)} expected line(s) not found: {shown}")
    if extra:
        shown = "; ".join(str(_show_row(r, subs)) for r in extra[:MAX_SHOWN_LINES])
        parts.append(f"{len(extra)} line(s) not on the invoice: {shown}")
    return result(FIELD, COMPONENT_VERSION, "fail", severity="info",
                  observed={"matched": matched, "given": len(got), "extra": [_show_row(r, subs) for r in extra[:MAX_SHOWN_LINES]]},
                  expected={"lines": len(gold), "missing": [_show_row(r, subs) for r in missing[:MAX_SHOWN_LINES]]},
                  location=pointer, message=f"{name}: " + "; ".join(parts))


def validate(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """One blocking all-fields result, then one info result per field and the field accuracy."""
    try:
        rules = rules_from(params)
    except RulesError as exc:
        return [result(ALL_FIELDS, COMPONENT_VERSION, "error", observed="invalid normalization rules", expected="the rules "
                       "this validator implements", location="params", message=f"the spec's grading params are invalid: {exc}")]
    gold = canonical(key["fields"], rules)
    got = canonical(answer, rules)
    details: list[ValidatorResult] = []
    wrong: list[str] = []
    for name, kind in rules.fields.items():
        if isinstance(kind, dict):
            subs = kind["multiset"]
            res = _compare_lines(name, got[name], gold[name], subs, rules)
        else:
            ok = _same(kind, got[name], gold[name], rules)
            res = result(FIELD, COMPONENT_VERSION, "pass" if ok else "fail", severity="info", observed=_show(got[name]),
                         expected=_show(gold[name]), location=f"/{name}",
                         message=f"{name} equal" if ok else f"{name}: expected {_show(gold[name])!r}, got {_show(got[name])!r}")
        if res["status"] != "pass":
            wrong.append(name)
        details.append(res)
    total = len(rules.fields)
    right = total - len(wrong)
    accuracy = result(ACCURACY, COMPONENT_VERSION, "pass" if not wrong else "fail", severity="info",
                      observed=f"{right}/{total} fields", expected=f"{total}/{total} fields", location="/",
                      message=f"field-level accuracy {right}/{total}")
    if wrong:
        message = "fields that differ after normalization: " + "; ".join(
            next(d["message"] for d in details if d["location"] == f"/{n}") for n in wrong)
    else:
        message = f"all {total} required fields equal after normalization"
    summary = result(ALL_FIELDS, COMPONENT_VERSION, "fail" if wrong else "pass", observed=f"{right}/{total} fields equal",
                     expected=f"{total}/{total} fields equal", location=[f"/{n}" for n in wrong], message=message)
    return [summary, accuracy, *details]


VALIDATORS = {"invoice-fields": validate}

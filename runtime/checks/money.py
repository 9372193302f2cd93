"""Money as Decimal: one place for how amounts are read, rounded and printed.

Why it is built this way:

- Grading reads amounts as exact `Decimal`s *from the decimal string* (binary floating
  point would read "2.675" as 2.67499...). A JSON number that reached us as a Python float
  is read through `repr`, the shortest string that round-trips, i.e. the digits the model
  actually wrote.
- Grading compares an observed amount with the exact reference at a *declared tolerance*,
  symmetric: |observed - expected| <= tolerance (`within`). Money is declared at half a
  cent (`MONEY_TOLERANCE`), so 12.335 and 12.345 both match 12.34 and 12.3451 matches
  neither. Rounding both sides half-up to cents before comparing is not symmetric (12.335
  -> 12.34 passed, 12.345 -> 12.35 failed) and is not used for grading. Non-money numbers
  (quantities, ratios, percentages) are compared at their own declared precision with the
  same function (exact is tolerance 0). `quantize` is for building and printing amounts.
- Printed amounts come with currency symbols or ISO codes, thousands separators (",", ".",
  space, no-break space, apostrophe), a decimal point or a decimal comma, and negative
  signs written as "-", "−", a trailing "-" or parentheses. `parse_amount` reads them all
  under fixed, documented rules (below) instead of guessing per call site.
- Nothing here depends on the locale, the process or the platform.

Decimal-mark rules when the mark is not given (``decimal_mark=None``):

1. space, no-break space, narrow no-break space, thin space and apostrophes are grouping;
2. if both "." and "," occur, the one that occurs last is the decimal mark;
3. if only one of them occurs, more than once, it is grouping;
4. if only one occurs, once: "." is a decimal point; "," is grouping when exactly three
   digits follow it ("1,234" = 1234) and a decimal comma otherwise ("1,5" = 1.5);
5. grouping must be well formed: every group after the first has exactly three digits.
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Any

CENT = Decimal("0.01")
MONEY_TOLERANCE = Decimal("0.005")
"""Half a cent: the declared tolerance of a money amount around its exact (cents) reference."""

_GROUPING_ONLY = " \u00a0\u202f\u2009'\u2019"
_MINUS = "-\u2212"
_CURRENCY_PREFIX = re.compile(r"^(?:[A-Z]{3}|[A-Z]{1,2}\$|[$€£¥]|kr\.?|Fr\.?)\s*")
_CURRENCY_SUFFIX = re.compile(r"\s*(?:[A-Z]{3}|[$€£¥]|kr\.?|Fr\.?)$")
_BODY = re.compile(r"^[0-9][0-9.,]*$")


class MoneyError(ValueError):
    """A value that is not an amount under the rules above."""


def _strip_currency(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _CURRENCY_PREFIX.sub("", text).strip()
        text = _CURRENCY_SUFFIX.sub("", text).strip()
    return text


def _split_sign(text: str) -> tuple[bool, str]:
    negative = False
    if text.startswith("(") and text.endswith(")"):
        negative, text = True, text[1:-1].strip()
    text = _strip_currency(text)
    if text[:1] in _MINUS:
        negative, text = not negative, text[1:].strip()
    elif text[:1] == "+":
        text = text[1:].strip()
    elif text[-1:] in _MINUS:
        negative, text = not negative, text[:-1].strip()
    return negative, _strip_currency(text)


def _check_groups(groups: list[str], raw: str) -> None:
    if not groups[0] or len(groups[0]) > 3 and len(groups) > 1 or any(len(g) != 3 for g in groups[1:]):
        raise MoneyError(f"badly grouped digits in {raw!r}")


_FIRST_GROUP = re.compile(r"^[0-9]{1,3}$")
_MIDDLE_GROUP = re.compile(r"^[0-9]{3}$")
_LAST_GROUP = re.compile(r"^[0-9]{3}(?:[.,][0-9]*)?$")


def _check_spaced_groups(parts: list[str], raw: str) -> None:
    """Rule 5 for space and apostrophe grouping: "1 234 567,89" yes; "12 34", "1 2345.00", "1,234 567" no."""
    if not (_FIRST_GROUP.match(parts[0]) and all(_MIDDLE_GROUP.match(p) for p in parts[1:-1])
            and _LAST_GROUP.match(parts[-1])):
        raise MoneyError(f"badly grouped digits in {raw!r}")


def _decimal_text(body: str, decimal_mark: str | None, raw: str) -> str:
    """Digits with at most one '.', from a body of digits, '.' and ','."""
    if decimal_mark is None:
        dots, commas = body.count("."), body.count(",")
        if dots and commas:
            decimal_mark = "." if body.rfind(".") > body.rfind(",") else ","
        elif dots > 1 or commas > 1:
            decimal_mark = "," if dots else "."
        elif dots == 1:
            decimal_mark = "."
        elif commas == 1:
            decimal_mark = "," if len(body) - body.rfind(",") - 1 != 3 else "."
        else:
            decimal_mark = "."
    if decimal_mark not in (".", ","):
        raise MoneyError(f"unknown decimal mark {decimal_mark!r}")
    group_mark = "," if decimal_mark == "." else "."
    whole, sep, frac = body.partition(decimal_mark)
    if decimal_mark in frac or group_mark in frac or (sep and not frac):
        raise MoneyError(f"not an amount: {raw!r}")
    if group_mark in whole:
        _check_groups(whole.split(group_mark), raw)
        whole = whole.replace(group_mark, "")
    return whole + ("." + frac if sep else "")


def parse_amount(value: Any, decimal_mark: str | None = None) -> Decimal:
    """The exact Decimal an amount denotes (not rounded). Raises MoneyError."""
    if isinstance(value, bool) or value is None:
        raise MoneyError(f"not an amount: {value!r}")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise MoneyError(f"not a finite amount: {value!r}")
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MoneyError(f"not a finite amount: {value!r}")
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise MoneyError(f"not an amount: {value!r}")
    raw = value
    text = unicodedata.normalize("NFKC", value).strip()
    if not text or len(text) > 64:
        raise MoneyError(f"not an amount: {raw!r}")
    negative, text = _split_sign(text)
    for ch in _GROUPING_ONLY:
        if ch in text:
            _check_spaced_groups(text.split(ch), raw)
            text = text.replace(ch, "")
    if not _BODY.match(text):
        # ".5" is an amount too
        if _BODY.match("0" + text) and text[:1] in ".,":
            text = "0" + text
        else:
            raise MoneyError(f"not an amount: {raw!r}")
    try:
        amount = Decimal(_decimal_text(text, decimal_mark, raw))
    except InvalidOperation as exc:  # pragma: no cover - the grammar above admits only digits
        raise MoneyError(f"not an amount: {raw!r}") from exc
    return amount.copy_negate() if negative else amount  # exact: `-amount` would round to the context's 28 digits


def tolerance(value: Any) -> Decimal:
    """A declared tolerance ("0.005", "0"): a finite, non-negative decimal string. Raises MoneyError."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise MoneyError(f"a tolerance is a decimal string such as \"0.005\", not {value!r}")
    try:
        out = Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise MoneyError(f"a tolerance is a decimal string such as \"0.005\", not {value!r}") from exc
    if not out.is_finite() or out < 0:
        raise MoneyError(f"a tolerance must be finite and not negative, not {value!r}")
    return out


def within(observed: Decimal, expected: Decimal, tol: Decimal) -> bool:
    """|observed - expected| <= tol, in exact Decimal arithmetic: symmetric around the reference."""
    if not (observed.is_finite() and expected.is_finite()):
        return False
    with localcontext() as ctx:  # exact: parsed amounts have at most 64 characters, floats 17 digits
        ctx.prec = 400
        return abs(observed - expected) <= tol


def quantize(amount: Decimal, quantum: Decimal = CENT, rounding: str = ROUND_HALF_UP) -> Decimal:
    """Round to `quantum` (ROUND_HALF_UP unless told otherwise); -0.00 becomes 0.00."""
    out = amount.quantize(quantum, rounding=rounding)
    return out + 0 if out.is_zero() else out  # drop a negative zero


def to_cents(value: Any, decimal_mark: str | None = None) -> Decimal:
    """parse_amount, then quantize to 0.01 ROUND_HALF_UP: the grading form of money."""
    return quantize(parse_amount(value, decimal_mark))


def plain(amount: Decimal) -> str:
    """Canonical text of an amount: '-1234.50' (no grouping, '.' decimal point, no exponent)."""
    text = format(amount, "f")
    return text[1:] if text.startswith("-") and Decimal(text) == 0 else text


def number_text(amount: Decimal) -> str:
    """Canonical text of a quantity: exact, without trailing zeros ('3', '2.5', '-0.25')."""
    with localcontext() as ctx:  # exact: the default 28 digits would make 3.0000000000000000000000000001 read "3"
        ctx.prec = max(28, len(amount.as_tuple().digits))
        normalized = amount.normalize()
    text = format(normalized, "f")
    return "0" if Decimal(text) == 0 else text


def format_amount(amount: Decimal, *, group: str = ",", decimal: str = ".", places: int = 2,
                  negative: str = "minus") -> str:
    """Print an amount: group digits by three with `group`, `places` decimals after `decimal`.

    negative: "minus" ("-1,234.50") or "parentheses" ("(1,234.50)").
    """
    q = quantize(amount, Decimal(1).scaleb(-places)) if places else quantize(amount, Decimal(1))
    sign = q < 0
    whole, _, frac = format(abs(q), "f").partition(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    text = group.join(groups) + (decimal + frac if places else "")
    if not sign:
        return text
    return f"({text})" if negative == "parentheses" else "-" + text

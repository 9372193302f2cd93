"""Shared by the month-end tools and grading: money parsing, entry shape, the writer seal.

Not a component: it is fingerprinted as part of both components that import it, so a
change here is a change of the tools and of the grading alike.

The seal is an HMAC over the canonical JSON of the entries a run's journal-entry writer
accepted, keyed by a per-item secret that only the answer key and the toolbox see. A
submitted answer carries it, so grading can tell entries that were posted through the
writer (validated, balanced, in period) from entries typed into a final message.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

CENT = Decimal("0.01")
MAX_AMOUNT = Decimal("1000000000")
_AMOUNT = re.compile(r"^\$?\s*(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")


def parse_amount(value: Any) -> tuple[Decimal | None, str | None]:
    """(amount, None) for a positive money amount with at most two decimals, else (None, why).

    None, "" and 0 read as "no amount" and come back as (0, None).
    """
    if value is None or value == "" or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
        return Decimal(0), None
    if isinstance(value, bool):
        return None, "an amount must be a number or a decimal string"
    if isinstance(value, (int, float)):
        text = repr(value) if isinstance(value, float) else str(value)
    elif isinstance(value, str):
        text = value.strip()
        if not _AMOUNT.match(text):
            return None, f"{value!r} is not an amount like 1234.56"
        text = text.replace("$", "").replace(",", "").strip()
    else:
        return None, "an amount must be a number or a decimal string"
    try:
        amount = Decimal(text)
    except InvalidOperation:
        return None, f"{value!r} is not an amount"
    if not amount.is_finite() or amount < 0:
        return None, f"{value!r}: amounts are positive (put a credit in `credit`, not a negative debit)"
    if amount != amount.quantize(CENT):
        return None, f"{value!r} has more than two decimals"
    if amount > MAX_AMOUNT:
        return None, f"{value!r} is too large"
    return amount.quantize(CENT), None


def canonical(entries: Sequence[Mapping[str, Any]]) -> bytes:
    return json.dumps(list(entries), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def seal(key: str, entries: Sequence[Mapping[str, Any]]) -> str:
    return "hmac-sha256:" + hmac.new(key.encode("utf-8"), canonical(entries), hashlib.sha256).hexdigest()

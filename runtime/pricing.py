"""Attempt cost from token usage and the edition's frozen price table.

Cost is computed here, in our own code, from the provider's usage split into token classes
and the prices frozen in the lock -- never from litellm's `response_cost`, which silently
merges bundled prices and returns None or 0 for models it does not know (DESIGN §9). Money is
`decimal.Decimal` end to end: prices arrive as decimal strings and the products are exact.
An unknown price is an error, never $0 (DESIGN §5).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Any, Mapping

#: Token classes a price may carry, in the order costs are summed.
TOKEN_CLASSES: tuple[str, ...] = ("input", "cached_input", "cache_write", "output", "reasoning")
#: Keys every price must carry; the other token classes are optional.
REQUIRED_CLASSES: tuple[str, ...] = ("input", "output")
CURRENCY = "USD"

# Wide enough that tokens x price (and a sum of them) never rounds; only a division by a
# per_tokens that is not a power of ten could ever round, at the 60th digit.
_PRECISION = 60


class PricingError(Exception):
    """A cost cannot be computed honestly (missing price, unknown token class, bad value)."""


def _price_value(price: Mapping[str, Any], key: str) -> Decimal:
    raw = price[key]
    # Floats carry binary noise (0.15 is not 0.15); the lock stores decimal strings.
    if isinstance(raw, (float, bool)) or not isinstance(raw, (str, int, Decimal)):
        raise PricingError(f"price {key!r} must be a decimal string, got {raw!r}")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise PricingError(f"price {key!r} is not a decimal number: {raw!r}") from None
    if not value.is_finite() or value < 0:
        raise PricingError(f"price {key!r} must be a finite, non-negative number: {raw!r}")
    return value


def _per_tokens(price: Mapping[str, Any]) -> int:
    per = price.get("per_tokens")
    if isinstance(per, bool) or not isinstance(per, int) or per <= 0:
        raise PricingError(f"price needs a positive integer 'per_tokens', got {per!r}")
    return per


def call_cost(usage: Mapping[str, int], price: Mapping[str, Any]) -> Decimal:
    """Exact USD cost of one call: sum over token classes of tokens x price / per_tokens.

    A token class with tokens but no price raises (reasoning tokens are billed separately only
    when the price has a `reasoning` key; otherwise they must already be inside `output`).
    """
    currency = price.get("currency", CURRENCY)
    if currency != CURRENCY:
        raise PricingError(f"prices must be in {CURRENCY}, got {currency!r}")
    for key in REQUIRED_CLASSES:
        if key not in price:
            raise PricingError(f"price has no {key!r} entry")
    per = _per_tokens(price)
    total = Decimal(0)
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        for token_class, tokens in usage.items():
            if token_class not in TOKEN_CLASSES:
                raise PricingError(f"unknown token class {token_class!r}")
            if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
                raise PricingError(
                    f"{token_class!r} tokens must be a non-negative int, got {tokens!r}"
                )
            if tokens == 0:
                continue
            if token_class not in price:
                raise PricingError(
                    f"{tokens} {token_class!r} tokens but the price has no {token_class!r} entry "
                    "(unknown prices are errors, never $0)"
                )
            total += tokens * _price_value(price, token_class)
        return total / per


def price_for(pricing: Mapping[str, Mapping[str, Any]], model: str) -> Mapping[str, Any]:
    """The frozen price of `model`; a model without one is an error, never free."""
    try:
        return pricing[model]
    except KeyError:
        raise PricingError(f"no frozen price for model {model!r}") from None


def decimal_str(amount: Decimal) -> str:
    """A plain decimal string (no exponent, no trailing zeros) for files: '0.00000015', '12'."""
    if not amount.is_finite():
        raise ValueError(f"not a finite amount: {amount!r}")
    if amount.is_zero():
        return "0"
    return format(amount.normalize(), "f")


def format_usd(amount: Decimal, places: int = 2) -> str:
    """'$1,234.57' (ROUND_HALF_UP); a non-zero amount that would print as $0.00 keeps two
    significant digits instead ('$0.00042'), because a real cost must never read as free."""
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise ValueError(f"format_usd needs a finite Decimal, got {amount!r}")
    sign = "-" if amount < 0 else ""
    magnitude = abs(amount)
    rounded = magnitude.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if rounded.is_zero() and not magnitude.is_zero():
        # adjusted() is the exponent of the leading digit; keep it and the next one.
        two_digits = Decimal(1).scaleb(magnitude.adjusted() - 1)
        tiny = magnitude.quantize(two_digits, rounding=ROUND_HALF_UP).normalize()
        return f"{sign}${format(tiny, 'f')}"
    return f"{sign}${format(rounded, ',f')}"

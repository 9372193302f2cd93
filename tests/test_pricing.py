"""Attempt cost: exact Decimal arithmetic and loud failures for unknown prices."""

from decimal import Decimal

import pytest

from lrc.runtime.pricing import PricingError, call_cost, decimal_str, format_usd, price_for

PRICE = {
    "currency": "USD", "per_tokens": 1000000, "input": "0.15", "cached_input": "0.075",
    "cache_write": "0.1875", "output": "0.60", "as_of": "2026-11-29", "source": "https://example.test",
}


def usage(**kw):
    base = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0}
    base.update(kw)
    return base


def test_call_cost_exact():
    cost = call_cost(usage(input=1000, cached_input=200, cache_write=40, output=300), PRICE)
    # 1000*0.15 + 200*0.075 + 40*0.1875 + 300*0.60 = 150 + 15 + 7.5 + 180 = 352.5 per 1M
    assert cost == Decimal("0.0003525")
    assert isinstance(cost, Decimal)


def test_sum_of_calls_is_exact_where_floats_are_not():
    # 0.1, 0.2 and 0.7 per token are not binary-representable.
    price = {"currency": "USD", "per_tokens": 1, "input": "0.1", "output": "0.2"}
    calls = [usage(input=1, output=1), usage(input=2), usage(output=3)]
    total = sum((call_cost(u, price) for u in calls), Decimal(0))
    assert total == Decimal("0.3") + Decimal("0.2") + Decimal("0.6")
    assert total == Decimal("1.1")
    assert 0.1 + 0.2 != 0.3  # what float accumulation would have given
    price7 = {"currency": "USD", "per_tokens": 1000000, "input": "0.7", "output": "0.7"}
    three = sum((call_cost(usage(input=1, output=2), price7) for _ in range(3)), Decimal(0))
    assert three == Decimal("0.0000063")


def test_reasoning_billed_only_when_priced():
    priced = dict(PRICE, reasoning="2.40")
    assert call_cost(usage(output=10, reasoning=5), priced) == Decimal("0.000018")
    with pytest.raises(PricingError, match="reasoning"):
        call_cost(usage(output=10, reasoning=5), PRICE)
    # Zero tokens of an unpriced class are fine.
    assert call_cost(usage(output=10), PRICE) == Decimal("0.000006")


def test_cached_tokens_without_cached_price():
    price = {"currency": "USD", "per_tokens": 1000000, "input": "1", "output": "2"}
    with pytest.raises(PricingError, match="cached_input"):
        call_cost(usage(input=10, cached_input=5), price)


def test_unknown_token_class():
    with pytest.raises(PricingError, match="audio"):
        call_cost({"input": 1, "audio": 3}, PRICE)


@pytest.mark.parametrize("bad", [
    {"input": 0.15, "output": "0.6", "per_tokens": 1000000},   # float price
    {"input": "abc", "output": "0.6", "per_tokens": 1000000},
    {"input": "0.15", "output": "0.6"},                           # no per_tokens
    {"output": "0.6", "per_tokens": 1000000},                     # no input price
    {"input": "0.15", "output": "0.6", "per_tokens": 1000000, "currency": "EUR"},
])
def test_bad_prices(bad):
    with pytest.raises(PricingError):
        call_cost(usage(input=1, output=1), bad)


def test_bad_token_counts():
    with pytest.raises(PricingError):
        call_cost(usage(input=-1), PRICE)
    with pytest.raises(PricingError):
        call_cost({"input": 1.0}, PRICE)


def test_price_for():
    assert price_for({"m": PRICE}, "m") is PRICE
    with pytest.raises(PricingError, match="nope"):
        price_for({"m": PRICE}, "nope")


@pytest.mark.parametrize("amount,expected", [
    ("1234.565", "$1,234.57"),
    ("1234.5649", "$1,234.56"),
    ("0.005", "$0.01"),
    ("0", "$0.00"),
    ("0.00", "$0.00"),
    ("0.00042", "$0.00042"),
    ("0.000423", "$0.00042"),
    ("0.004", "$0.004"),
    ("0.00000015", "$0.00000015"),
    ("1000000", "$1,000,000.00"),
    ("-2.5", "-$2.50"),
])
def test_format_usd(amount, expected):
    assert format_usd(Decimal(amount)) == expected


def test_format_usd_never_prints_nonzero_as_zero():
    for exp in range(3, 15):
        assert format_usd(Decimal(1).scaleb(-exp)) != "$0.00"


def test_format_usd_places():
    assert format_usd(Decimal("0.012345"), 4) == "$0.0123"


def test_decimal_str_plain():
    assert decimal_str(Decimal("1.5E-7")) == "0.00000015"
    assert decimal_str(Decimal("1E+2")) == "100"
    assert decimal_str(Decimal("0.1000")) == "0.1"
    assert decimal_str(Decimal("0E-9")) == "0"

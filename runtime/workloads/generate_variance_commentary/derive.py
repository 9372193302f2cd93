"""The declared derivations of generate.variance-commentary: variance, % variance, their text.

Plain shared code, not a component (no COMPONENT_ID): the generator uses it to write the
answer key, the reference models to compute what a careful analyst would, so the three
cannot drift apart; a change here changes the fingerprints of the components importing it.

Declared rules (the prompt states the same ones):
- variance = actual - budget (signed; positive means actual above budget, for revenue and
  for costs alike);
- % variance = variance / budget x 100, exact to PERCENT_PLACES places for matching, and
  shown rounded half-up to one decimal (`pct_text`);
- the top-3 drivers are the three lines with the largest |variance| (the generator keeps a
  clear gap, so there are no ties).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext

PERCENT_PLACES = Decimal("0.000001")
SHOWN_PCT = Decimal("0.1")


def variance(budget: Decimal, actual: Decimal) -> Decimal:
    """actual - budget, exact."""
    with localcontext() as ctx:
        ctx.prec = 60
        return actual - budget


def variance_pct(budget: Decimal, actual: Decimal) -> Decimal:
    """variance / budget x 100 to six places (half-up); budget 0 gives 0 (the generator never makes one)."""
    if budget == 0:
        return Decimal(0)
    with localcontext() as ctx:
        ctx.prec = 60
        return (variance(budget, actual) / budget * 100).quantize(PERCENT_PLACES, rounding=ROUND_HALF_UP)


def money_text(amount: Decimal, signed: bool = False) -> str:
    """US grouping, no decimals for whole amounts: '1,234', '-52,341', '+62,400' when signed."""
    places = 0 if amount == amount.to_integral_value() else 2
    text = f"{abs(amount):,.{places}f}"
    if amount < 0:
        return "-" + text
    return ("+" if signed and amount > 0 else "") + text


def pct_text(pct: Decimal, signed: bool = True) -> str:
    """The shown % variance: one decimal, half-up, with its sign: '+5.0%', '-12.3%'."""
    shown = pct.quantize(SHOWN_PCT, rounding=ROUND_HALF_UP)
    if shown == 0:
        return "0.0%"
    return f"{'+' if signed and shown > 0 else ''}{shown}%"

"""Small-n statistics for pass rates and cost per successful outcome (CPO).

Cells hold n = 15 items, where CLT intervals are badly wrong (benchmark-method-anchors §7),
so pass rates get Wilson score intervals, qualification may be read as a Jeffreys posterior
probability, and CPO -- a ratio of sums -- gets a cluster bootstrap over items. Everything
is stdlib-only and deterministic: money stays Decimal under a fixed context (summed exactly,
as integers of its smallest unit), and the bootstrap draws from a SHAKE-256 stream named by
(seed, n), never `random`, so reports are byte-reproducible on every machine.
"""

from __future__ import annotations

import hashlib
import math
import sys
from array import array
from decimal import Context, Decimal, ROUND_HALF_EVEN
from functools import lru_cache

Z95 = 1.959963984540054
#: Fixed arithmetic context for money ratios, so results never depend on a caller's context.
MONEY_CONTEXT = Context(prec=28, rounding=ROUND_HALF_EVEN)
_Q_LOW = Decimal("0.025")
_Q_HIGH = Decimal("0.975")


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for successes/n; None for an empty denominator (never 100%)."""
    _check_counts(successes, n)
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # The closed-form edges are exactly 0 and 1; pin them so float noise never shows.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def cpo(total_cost: Decimal, successes: int) -> Decimal | None:
    """Cost per successful outcome: all attempts' cost / successes; None means infinite."""
    if successes < 0:
        raise ValueError(f"successes must be >= 0, got {successes}")
    if successes == 0:
        return None
    return MONEY_CONTEXT.divide(total_cost, Decimal(successes))


#: 64-bit words per SHAKE-256 block of the bootstrap stream (512 KiB): one C call per block.
_BLOCK_WORDS = 65536


def uniform_indices(seed: str, n: int, count: int) -> list[int]:
    """`count` uniform integers in [0, n), reproducible from (seed, n) alone.

    Block b of the stream is SHAKE-256(key || b as 8 big-endian bytes), read as 64-bit
    big-endian words; a word at or above the largest multiple of n below 2**64 is rejected
    (so every index is exactly uniform) and the others are taken mod n, in order. Why not the
    generators' `Stream`: it spends one SHA-256 call per draw, and a cell of 1,050 items with
    1,000 replicates needs a million draws -- ~2 ms of CPU per run in the report (issue 11 §4);
    one XOF call per 65,536 draws costs ~0.1 ms per thousand. Draws depend on nothing but
    (seed, n) and how many were taken before: the first k of `count` draws are the k draws.
    """
    if n <= 0:
        raise ValueError("uniform_indices needs n > 0")
    if count < 0:
        raise ValueError("uniform_indices needs count >= 0")
    key = hashlib.sha256("\x1f".join([seed, "cpo-bootstrap", str(n)]).encode("utf-8")).digest()
    limit = (1 << 64) - ((1 << 64) % n)
    out: list[int] = []
    block = 0
    while len(out) < count:
        words = array("Q", hashlib.shake_256(key + block.to_bytes(8, "big")).digest(8 * _BLOCK_WORDS))
        if sys.byteorder == "little":
            words.byteswap()  # the stream's words are big-endian on every machine
        out.extend(w % n for w in words if w < limit)
        block += 1
    del out[count:]
    return out


@lru_cache(maxsize=64)
def _resamples(seed: str, n: int, replicates: int) -> tuple[tuple[int, ...], ...]:
    """Item indices for each replicate; depends only on (seed, n, replicates).

    Cells of one workload that share a seed and n resample the same items, which makes
    cross-cell comparisons (agentic vs single-shot) paired rather than independent.
    """
    draws = uniform_indices(seed, n, n * replicates)
    return tuple(tuple(draws[r * n:(r + 1) * n]) for r in range(replicates))


def _scaled(values: list[Decimal]) -> tuple[list[int], int]:
    """(each value x 10**scale as an exact integer, scale): the fewest decimal places that hold
    every value, so sums of resampled costs are integer sums -- exact, and fast."""
    scale = 0
    for v in values:
        if not v.is_finite():
            raise ValueError(f"a cost must be a finite Decimal, got {v}")
        scale = max(scale, -v.as_tuple().exponent)
    out = []
    for v in values:
        sign, digits, exponent = v.as_tuple()
        whole = int("".join(map(str, digits)) or "0") * 10 ** (exponent + scale)
        out.append(-whole if sign else whole)
    return out, scale


def _percentile(sorted_values: list[Decimal], q: Decimal) -> Decimal:
    """Linear-interpolation percentile (numpy's default 'type 7'), in exact Decimal steps."""
    h = (len(sorted_values) - 1) * q
    lo = int(h)
    frac = h - lo
    if frac == 0 or lo + 1 >= len(sorted_values):
        return sorted_values[lo]
    a, b = sorted_values[lo], sorted_values[lo + 1]
    return MONEY_CONTEXT.add(a, MONEY_CONTEXT.multiply(frac, b - a))


def bootstrap_cpo(
    item_costs: list[Decimal],
    item_successes: list[int],
    seed: str,
    replicates: int = 2000,
) -> dict:
    """Percentile 95% interval of CPO from a cluster bootstrap over items.

    Each replicate resamples items with replacement (an item keeps its repetitions together).
    The interval is over replicates with at least one success; `p_no_success` is the share of
    replicates whose CPO is infinite, printed beside the interval so it is not hidden.
    """
    if len(item_costs) != len(item_successes):
        raise ValueError("item_costs and item_successes differ in length")
    if replicates <= 0:
        raise ValueError("replicates must be positive")
    n = len(item_costs)
    if n == 0 or sum(item_successes) == 0:
        # Every replicate has zero successes: CPO is infinite in all of them.
        return {"low": None, "high": None, "p_no_success": 1.0, "replicates": replicates}
    values: list[Decimal] = []
    units, scale = _scaled(item_costs)
    unit_at, successes_at = units.__getitem__, list(item_successes).__getitem__
    for draw in _resamples(seed, n, replicates):
        successes = sum(map(successes_at, draw))
        if successes:
            cost = Decimal(f"{sum(map(unit_at, draw))}E-{scale}")  # exact: the sum of the resampled costs
            values.append(MONEY_CONTEXT.divide(cost, Decimal(successes)))
    p_no_success = (replicates - len(values)) / replicates
    if not values:
        return {"low": None, "high": None, "p_no_success": p_no_success, "replicates": replicates}
    values.sort()
    return {
        "low": _percentile(values, _Q_LOW),
        "high": _percentile(values, _Q_HIGH),
        "p_no_success": p_no_success,
        "replicates": replicates,
    }


def pass_hat_k(counts: list[int], K: int) -> list[float]:
    """pass^k for k = 1..K: mean over items of C(c_i, k) / C(K, k) (tau-bench reliability).

    `counts[i]` is how many of item i's K repetitions passed.
    """
    if K <= 0:
        raise ValueError("K must be positive")
    if not counts:
        raise ValueError("pass^k needs at least one item")
    for c in counts:
        if c < 0 or c > K:
            raise ValueError(f"pass count {c} outside 0..{K}")
    return [
        sum(math.comb(c, k) for c in counts) / (math.comb(K, k) * len(counts))
        for k in range(1, K + 1)
    ]


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def jeffreys_p_at_least(successes: int, n: int, threshold: float) -> float | None:
    """P(p >= threshold | data) under the Jeffreys prior, i.e. Beta(s + 1/2, n - s + 1/2).

    The point rule "s/n >= 0.80" flips by chance at n = 15; this probability says how sure
    the qualification is. None for an empty denominator.
    """
    _check_counts(successes, n)
    if n == 0:
        return None
    return 1.0 - _betainc(successes + 0.5, n - successes + 0.5, float(threshold))

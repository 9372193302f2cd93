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
from fractions import Fraction
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


# ---------------------------------------------------------------- repetitions (issue 14)
#
# A cell with K repetitions per item is n clusters of K correlated runs, not n x K independent
# runs: a model that fails item 7 fails it every time. The pass rate is the mean of the items'
# pass fractions and its interval is clustered by item (`clustered_wilson`). Everything here is
# computed in exact fractions and rounded to float once, so the same journal gives the same
# bytes on every machine.

CLUSTERED_METHOD = (
    "Wilson 95% score interval on the effective sample size n_eff = p(1-p) / Var(p), where p is "
    "the mean of the items' pass fractions and Var(p) the between-item variance of those "
    "fractions divided by the number of items (a cluster-robust, item-level design effect); "
    "n_eff is at least the number of items and at most the number of graded runs, and equals "
    "the number of items when every item's repetitions agree. With one repetition per item it "
    "is exactly the Wilson interval of passes/n."
)


def _wilson_real(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's closed form for a proportion p observed on a (possibly fractional) sample n."""
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def item_fractions(passes: list[int], runs: list[int]) -> list[Fraction]:
    """Each item's pass fraction passes_i / runs_i (items with no graded run are left out)."""
    if len(passes) != len(runs):
        raise ValueError("passes and runs differ in length")
    out = []
    for c, m in zip(passes, runs):
        _check_counts(c, m)
        if m:
            out.append(Fraction(c, m))
    return out


def clustered_pass_rate(passes: list[int], runs: list[int], z: float = Z95) -> dict | None:
    """Pass rate over items with repetitions respected, and its item-clustered 95% interval.

    `passes[i]` of item i's `runs[i]` graded repetitions passed. The estimate is the mean of the
    items' pass fractions (each item weighs the same however many repetitions it has). Why
    Wilson on an effective sample size rather than a cluster bootstrap: it is closed-form and
    deterministic; it is exactly today's Wilson interval when every item ran once (so published
    single-repetition figures do not move); and it keeps Wilson's behaviour at the edges -- all
    items passing still gives a lower bound below 1 (15 items all passing: 0.796 however many
    repetitions), where a percentile bootstrap collapses to [1, 1], a made-up certainty.

    n_eff = p(1-p) / Var(p), Var(p) = sum((f_i - p)^2) / n_items^2: the cluster-robust (CR0)
    variance of a mean of item means, without the n/(n-1) small-sample factor, so that 0/1
    fractions (one repetition) give n_eff = n exactly. Var(p) <= p(1-p)/n_items always, so
    n_eff >= n_items; it is capped at the graded runs (a negative intra-item correlation never
    claims more than independent runs; every item at the same fraction, Var(p) = 0, is that cap).
    When every item's repetitions agree (p = 0 or 1 included), n_eff = n_items: repetitions that
    repeat the same outcome add no items.

    Returns None for an empty denominator (no item graded), never 100%.
    """
    fractions = item_fractions(passes, runs)
    items = len(fractions)
    if not items:
        return None
    graded = sum(runs)
    p = sum(fractions, Fraction(0)) / items
    var = sum(((f - p) ** 2 for f in fractions), Fraction(0)) / (items * items)
    if p in (0, 1):
        n_eff = Fraction(items)  # every run agrees: no more than one observation per item
    elif var == 0:
        n_eff = Fraction(graded)  # every item has the same fraction: the cap (no between-item spread)
    else:
        n_eff = min(Fraction(graded), p * (1 - p) / var)
    if all(m == 1 for m in runs if m):
        low_high = wilson(sum(passes), graded, z)  # the single-repetition case, bit for bit
        assert low_high is not None
    else:
        low, high = _wilson_real(float(p), float(n_eff), z)
        low_high = (0.0 if p == 0 else low, 1.0 if p == 1 else high)
    return {"estimate": p, "low": low_high[0], "high": low_high[1], "n_eff": n_eff,
            "design_effect": Fraction(graded) / n_eff, "items": items, "runs": graded}


def jeffreys_p_at_least_real(p: Fraction, n_eff: Fraction, threshold: float) -> float | None:
    """`jeffreys_p_at_least` on an effective sample: Beta(p n_eff + 1/2, (1 - p) n_eff + 1/2).
    With integer counts (one repetition) it is exactly `jeffreys_p_at_least`."""
    if n_eff <= 0:
        return None
    s = p * n_eff
    if s.denominator == 1 and n_eff.denominator == 1:
        return jeffreys_p_at_least(int(s), int(n_eff), threshold)
    return 1.0 - _betainc(float(s) + 0.5, float(n_eff - s) + 0.5, float(threshold))


def pass_k_curves(passes: list[int], runs: list[int], K: int) -> list[dict]:
    """pass^k and pass@k for k = 1..K, each over the items with at least k graded repetitions.

    pass^k (all k of k repetitions pass; tau-bench) = mean_i C(c_i, k) / C(m_i, k), pass@k (at
    least one of k passes; Chen et al. 2021) = mean_i 1 - C(m_i - c_i, k) / C(m_i, k): both
    unbiased estimators from item i's m_i repetitions with c_i passes. A k no item reached (k >
    repetitions made) has value None ("n/a"), never an extrapolation.
    """
    if K <= 0:
        raise ValueError("K must be positive")
    out = []
    for k in range(1, K + 1):
        eligible = [(c, m) for c, m in zip(passes, runs) if m >= k]
        for c, m in eligible:
            _check_counts(c, m)
        if not eligible:
            out.append({"k": k, "items": 0, "pass_hat": None, "pass_at": None})
            continue
        hat = sum((Fraction(math.comb(c, k), math.comb(m, k)) for c, m in eligible), Fraction(0)) / len(eligible)
        at = sum((1 - Fraction(math.comb(m - c, k), math.comb(m, k)) for c, m in eligible), Fraction(0)) / len(eligible)
        out.append({"k": k, "items": len(eligible), "pass_hat": float(hat), "pass_at": float(at)})
    return out


def consistency(passes: list[int], runs: list[int]) -> dict:
    """Outcome consistency: of the items with at least two graded repetitions, how many had
    every repetition agree (all pass or all fail). `share` is None when no item repeated."""
    repeated = [(c, m) for c, m in zip(passes, runs) if m >= 2]
    agree = sum(1 for c, m in repeated if c in (0, m))
    return {"items": len(repeated), "consistent": agree,
            "share": float(Fraction(agree, len(repeated))) if repeated else None}


# ---------------------------------------------------------------- paired comparisons

PAIRED_METHOD = (
    "difference B - A of the mean per-item pass fractions over the items both systems ran; "
    "95% percentile interval from a seeded cluster bootstrap over items (an item keeps its "
    "repetitions and its pairing; per workload or task the draws are the CPO bootstrap's, so the "
    "two are paired; overall the items of every workload or task are resampled together, so a "
    "task, one item, is resampled as one unit); and an exact two-sided sign test (McNemar's exact "
    "test with one repetition) over the items whose fractions differ. When every item differs by "
    "the same amount the bootstrap has no spread and the interval is n/a, never zero-width."
)


def sign_test(better: int, worse: int) -> float:
    """Exact two-sided sign test: P(a split at least this uneven | no difference), Bin(m, 1/2).
    With 0/1 outcomes per item this is McNemar's exact test on the discordant pairs."""
    m = better + worse
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, j) for j in range(min(better, worse) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** m)))


def paired_bootstrap(seed: str, diffs: list[Fraction], replicates: int = 2000) -> dict:
    """Percentile 95% interval of the mean per-item difference, resampling the items with
    replacement: `_resamples(seed, n, replicates)`, the CPO bootstrap's draws for a cell of n
    items, so a workload's paired interval and its cells' CPO intervals share resamples. Exact
    fractions, one float rounding at the end: deterministic on every machine."""
    if replicates <= 0:
        raise ValueError("replicates must be positive")
    if not diffs:
        return {"estimate": None, "low": None, "high": None, "replicates": replicates}
    n = len(diffs)
    estimate = sum(diffs, Fraction(0)) / n
    if len(set(diffs)) == 1:
        # Every item differs by the same amount: no resample can show spread. Say so (n/a)
        # rather than print [d, d] as if the difference were certain.
        return {"estimate": estimate, "low": None, "high": None, "replicates": replicates}
    # Integer numerators over a common denominator keep the resampled sums exact and fast.
    den = math.lcm(*(x.denominator for x in diffs))
    at = [int(x * den) for x in diffs].__getitem__
    values = sorted(Decimal(sum(map(at, draw))) for draw in _resamples(seed, n, replicates))
    scale = Decimal(den * n)
    low = MONEY_CONTEXT.divide(_percentile(values, _Q_LOW), scale)
    high = MONEY_CONTEXT.divide(_percentile(values, _Q_HIGH), scale)
    return {"estimate": estimate, "low": float(low), "high": float(high), "replicates": replicates}

"""Small-n statistics against known vectors (benchmark-method-anchors §7.4)."""

from decimal import Decimal

import pytest

from lrc.runtime.report.stats import (
    bootstrap_cpo, cpo, jeffreys_p_at_least, pass_hat_k, wilson,
)


def test_wilson_known_vectors():
    low, high = wilson(15, 15)
    assert low == pytest.approx(0.7961, abs=5e-5) and high == 1.0
    assert low < 0.80  # even 15/15 cannot certify p >= 0.80 at n = 15
    low, high = wilson(12, 15)
    assert (low, high) == (pytest.approx(0.5481, abs=5e-5), pytest.approx(0.9295, abs=5e-5))
    low, high = wilson(14, 15)
    assert (low, high) == (pytest.approx(0.7018, abs=5e-5), pytest.approx(0.9881, abs=5e-5))
    low, high = wilson(0, 15)
    assert low == 0.0 and high == pytest.approx(0.2039, abs=5e-5)


def test_wilson_empty_denominator_is_none():
    assert wilson(0, 0) is None


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError):
        wilson(16, 15)


def test_cpo():
    assert cpo(Decimal("1.50"), 3) == Decimal("0.5")
    assert cpo(Decimal("1.50"), 0) is None  # infinite: no success
    assert isinstance(cpo(Decimal("1"), 3), Decimal)


def test_pass_hat_k():
    # Three items, K = 3 runs each: 3/3, 2/3, 0/3.
    got = pass_hat_k([3, 2, 0], 3)
    assert got == pytest.approx([5 / 9, (1 + 1 / 3) / 3, 1 / 3])
    assert pass_hat_k([1, 0, 1, 1], 1) == [0.75]
    with pytest.raises(ValueError):
        pass_hat_k([4], 3)


def test_jeffreys_known_vectors():
    assert jeffreys_p_at_least(15, 15, 0.80) == pytest.approx(0.991, abs=5e-4)
    assert jeffreys_p_at_least(14, 15, 0.80) == pytest.approx(0.913, abs=5e-4)
    assert jeffreys_p_at_least(12, 15, 0.80) == pytest.approx(0.473, abs=5e-4)
    assert jeffreys_p_at_least(0, 0, 0.80) is None


COSTS = [Decimal("0.0123"), Decimal("0.0101"), Decimal("0.0456"), Decimal("0.0078"),
         Decimal("0.0200")] * 3
SUCCESSES = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1]


def test_bootstrap_is_deterministic():
    a = bootstrap_cpo(COSTS, SUCCESSES, "edition-seed/triage")
    b = bootstrap_cpo(list(COSTS), list(SUCCESSES), "edition-seed/triage")
    assert a == b
    assert repr(a) == repr(b)
    assert a["replicates"] == 2000
    point = cpo(sum(COSTS, Decimal(0)), sum(SUCCESSES))
    assert a["low"] < point < a["high"]
    assert isinstance(a["low"], Decimal)
    c = bootstrap_cpo(COSTS, SUCCESSES, "another-seed")
    assert c != a  # the seed matters


def test_bootstrap_golden():
    # Frozen output: a change here means published intervals would move (and lrc.analysis needs
    # a bump). lrc.analysis v5 draws from a SHAKE-256 stream (was 0.3465 with per-draw SHA-256);
    # the exact value is (14/15)**15 = 0.355, ~1.2 standard errors of 2,000 replicates away.
    got = bootstrap_cpo([Decimal("0.1")] * 15, [1] + [0] * 14, "s")
    assert got == {"low": Decimal("0.375"), "high": Decimal("1.5"),
                   "p_no_success": 0.3685, "replicates": 2000}


def test_bootstrap_p_no_success():
    all_fail = bootstrap_cpo([Decimal("0.01")] * 15, [0] * 15, "s")
    assert all_fail == {"low": None, "high": None, "p_no_success": 1.0, "replicates": 2000}
    all_pass = bootstrap_cpo([Decimal("0.01")] * 15, [1] * 15, "s", replicates=200)
    assert all_pass["p_no_success"] == 0.0
    assert all_pass["low"] == all_pass["high"] == Decimal("0.01")
    # One success in 15 items: P(no success in a resample) = (14/15)^15 ~ 0.355.
    rare = bootstrap_cpo([Decimal("0.01")] * 15, [1] + [0] * 14, "s")
    assert 0.30 < rare["p_no_success"] < 0.41
    assert bootstrap_cpo([], [], "s")["p_no_success"] == 1.0


def test_bootstrap_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        bootstrap_cpo([Decimal(1)], [1, 0], "s")


# ---------------------------------------------------------------- repetitions (issue 14)

from fractions import Fraction  # noqa: E402
import math  # noqa: E402

from lrc.runtime.report.stats import (  # noqa: E402
    _Q_HIGH, _Q_LOW, _percentile, clustered_pass_rate, consistency, jeffreys_p_at_least_real, paired_bootstrap,
    pass_k_curves, sign_test, uniform_indices,
)


def _wilson_by_hand(p: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval written out independently of the module (real n allowed)."""
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_clustered_interval_known_values():
    # Five items, three repetitions each: 3/3, 2/3, 0/3, 3/3, 1/3 pass.
    got = clustered_pass_rate([3, 2, 0, 3, 1], [3] * 5)
    fractions = [1, 2 / 3, 0, 1, 1 / 3]
    p = sum(fractions) / 5
    var = sum((f - p) ** 2 for f in fractions) / 25  # between-item variance of the mean (CR0)
    n_eff = p * (1 - p) / var
    assert got["estimate"] == Fraction(3, 5)
    assert got["n_eff"] == Fraction(135, 17) and float(got["n_eff"]) == pytest.approx(n_eff)
    assert got["design_effect"] == Fraction(15) / Fraction(135, 17)  # 1.89: fewer than 15 runs' worth
    low, high = _wilson_by_hand(p, n_eff)
    assert (got["low"], got["high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert (got["low"], got["high"]) == (pytest.approx(0.2858, abs=5e-5), pytest.approx(0.8490, abs=5e-5))
    # Pooling the 15 runs as independent would claim a narrower interval: that is what it fixes.
    pooled = wilson(9, 15)
    assert pooled[1] - pooled[0] < got["high"] - got["low"]


def test_clustered_interval_is_wilson_at_one_repetition():
    for s in range(16):
        got = clustered_pass_rate([1] * s + [0] * (15 - s), [1] * 15)
        assert (got["low"], got["high"]) == wilson(s, 15)  # bit for bit: single-repetition figures do not move
        assert got["n_eff"] == 15 and got["design_effect"] == 1
    # The general formula agrees too (not only the single-repetition shortcut).
    p, n_eff = Fraction(12, 15), Fraction(15)
    assert _wilson_by_hand(float(p), float(n_eff)) == pytest.approx(wilson(12, 15), abs=1e-15)
    assert jeffreys_p_at_least_real(Fraction(12, 15), Fraction(15), 0.80) == jeffreys_p_at_least(12, 15, 0.80)


def test_clustered_interval_agreeing_repetitions_add_no_items():
    # 15 items, every repetition of an item agreeing: the interval is that of 15 items, never of 45 runs.
    all_pass = clustered_pass_rate([3] * 15, [3] * 15)
    assert all_pass["estimate"] == 1 and all_pass["n_eff"] == 15
    assert (all_pass["low"], all_pass["high"]) == wilson(15, 15)  # 0.796: no made-up certainty
    assert all_pass["low"] < 0.80 and all_pass["high"] == 1.0
    all_fail = clustered_pass_rate([0] * 15, [3] * 15)
    assert (all_fail["low"], all_fail["high"]) == wilson(0, 15) and all_fail["estimate"] == 0
    consistent = clustered_pass_rate([3] * 12 + [0] * 3, [3] * 15)
    assert consistent["n_eff"] == 15 and (consistent["low"], consistent["high"]) == pytest.approx(wilson(12, 15))
    # Every item at the same fraction: no between-item spread, capped at the runs (never more).
    same = clustered_pass_rate([2] * 5, [3] * 5)
    assert same["n_eff"] == 15 and (same["low"], same["high"]) == pytest.approx(wilson(10, 15))


def test_clustered_interval_unequal_repetitions_and_empty():
    # An item with one repetition left (two excluded) weighs as much as the others.
    got = clustered_pass_rate([3, 0, 1], [3, 3, 1])
    assert got["estimate"] == Fraction(2, 3) and got["runs"] == 7 and got["items"] == 3
    assert clustered_pass_rate([], []) is None
    assert clustered_pass_rate([0], [0]) is None  # an item with no graded run is not an item of the rate
    with pytest.raises(ValueError):
        clustered_pass_rate([4], [3])


def test_pass_k_curves_known_values():
    got = pass_k_curves([3, 2, 0], [3, 3, 3], 3)
    assert [c["items"] for c in got] == [3, 3, 3]
    # pass^k = mean C(c, k) / C(3, k); pass@k = mean 1 - C(3 - c, k) / C(3, k).
    assert [c["pass_hat"] for c in got] == pytest.approx([5 / 9, (1 + 1 / 3 + 0) / 3, 1 / 3])
    assert [c["pass_at"] for c in got] == pytest.approx([5 / 9, (1 + 1 + 0) / 3, (1 + 1 + 0) / 3])
    assert [c["pass_hat"] for c in got] == pytest.approx(pass_hat_k([3, 2, 0], 3))
    # 5 repetitions, 2 passes: pass^2 = C(2,2)/C(5,2) = 0.1, pass@2 = 1 - C(3,2)/C(5,2) = 0.7.
    five = pass_k_curves([2], [5], 2)
    assert (five[1]["pass_hat"], five[1]["pass_at"]) == (pytest.approx(0.1), pytest.approx(0.7))


def test_pass_k_never_invented_beyond_the_repetitions_made():
    one_rep = pass_k_curves([1, 0, 1], [1, 1, 1], 3)
    assert one_rep[0]["pass_hat"] == pytest.approx(2 / 3) and one_rep[0]["pass_at"] == pytest.approx(2 / 3)
    assert [(c["items"], c["pass_hat"], c["pass_at"]) for c in one_rep[1:]] == [(0, None, None), (0, None, None)]
    # Some items short of k repetitions: pass^k is over the items that have k.
    mixed = pass_k_curves([3, 1], [3, 1], 3)
    assert [c["items"] for c in mixed] == [2, 1, 1] and mixed[2]["pass_hat"] == 1.0
    assert pass_k_curves([], [], 2) == [{"k": 1, "items": 0, "pass_hat": None, "pass_at": None},
                                        {"k": 2, "items": 0, "pass_hat": None, "pass_at": None}]
    all_pass = pass_k_curves([3] * 4, [3] * 4, 3)
    assert all(c["pass_hat"] == 1.0 and c["pass_at"] == 1.0 for c in all_pass)


def test_consistency():
    assert consistency([3, 2, 0, 3], [3, 3, 3, 3]) == {"items": 4, "consistent": 3, "share": 0.75}
    assert consistency([1, 0], [1, 1]) == {"items": 0, "consistent": 0, "share": None}  # nothing repeated: n/a
    assert consistency([], []) == {"items": 0, "consistent": 0, "share": None}


def test_sign_test_exact_values():
    assert sign_test(0, 0) == 1.0  # no discordant item: no evidence either way
    assert sign_test(5, 0) == 0.0625  # 2 x (1/2)^5
    assert sign_test(0, 5) == 0.0625
    assert sign_test(3, 1) == 0.625  # 2 x (1 + 4) / 16
    assert sign_test(2, 2) == 1.0
    assert sign_test(15, 0) == pytest.approx(2 / 2 ** 15)


def test_paired_bootstrap_matches_an_independent_computation():
    diffs = [Fraction(1), Fraction(0), Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 3), Fraction(0)]
    got = paired_bootstrap("seed/wl", diffs, replicates=500)
    assert got["estimate"] == Fraction(4, 21)  # (1 + 0 + 0 + 1 - 1 + 1/3 + 0) / 7
    # The same draws the CPO bootstrap uses for a cell of 7 items, replicate by replicate.
    draws = uniform_indices("seed/wl", 7, 7 * 500)
    sums = sorted(Decimal(sum(int(diffs[i] * 3) for i in draws[r * 7:(r + 1) * 7])) for r in range(500))
    assert got["low"] == float(_percentile(sums, _Q_LOW) / Decimal(21))
    assert got["high"] == float(_percentile(sums, _Q_HIGH) / Decimal(21))
    assert got["low"] < float(got["estimate"]) < got["high"]
    assert paired_bootstrap("seed/wl", diffs, replicates=500) == got  # deterministic


def test_paired_bootstrap_degenerate_cases():
    assert paired_bootstrap("s", [])["estimate"] is None  # no shared item: n/a
    # Every item the same difference: no spread to resample, so no interval (never [1, 1]).
    assert paired_bootstrap("s", [Fraction(1)] * 15) == {"estimate": 1, "low": None, "high": None, "replicates": 2000}
    assert paired_bootstrap("s", [Fraction(0)] * 15)["low"] is None

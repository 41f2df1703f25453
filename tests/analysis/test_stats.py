"""core/analysis/stats.py against definitions: exact small-sample p values, bounded intervals, Wilson, Holm."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as S

from core.analysis import resampling, stats


def test_two_always_right_vs_always_wrong_pairs_are_too_few_to_test():
    res = stats.paired_contrast([100.0, 100.0])
    assert res["estimate"] == 100.0 and res["testable"] is False
    assert math.isnan(res["p"]) and math.isnan(res["ci_low"]) and math.isnan(res["ci_high"])
    assert res["caveat"].startswith(stats.TOO_FEW) and "0.5" in res["caveat"]    # the best p 2 draws can give
    between = stats.stratified_contrast([100.0, 100.0, 0.0, 0.0], [True, True, False, False], [0, 0, 0, 0])
    assert between["estimate"] == 100.0 and between["testable"] is False and math.isnan(between["p"])
    assert between["caveat"].startswith(stats.TOO_FEW)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
def test_fewer_than_min_units_give_an_estimate_but_no_interval_and_no_p(n):
    d = [100.0] * n                                   # as one-sided as n draws can be
    res = stats.paired_contrast(d)
    assert res["testable"] is False and math.isnan(res["p"]) and math.isnan(res["ci_low"])
    assert res["caveat"].startswith(stats.TOO_FEW)
    assert (math.isnan(res["estimate"]) if n == 0 else res["estimate"] == 100.0)
    if n:   # the reason: the exact sign-flip test on n draws can never reach 0.05
        assert res["p_min"] == pytest.approx(2 / 2 ** n) and res["p_min"] > stats.REACHABLE


def test_min_units_is_where_the_exact_test_first_reaches_significance():
    at = stats.paired_contrast([100.0] * stats.MIN_UNITS)
    assert at["testable"] and at["exact"] and at["p"] == pytest.approx(2 / 2 ** stats.MIN_UNITS)
    assert at["p"] < stats.REACHABLE
    assert 2 / 2 ** (stats.MIN_UNITS - 1) > stats.REACHABLE
    assert at["ci_low"] == at["ci_high"] == 100.0


def test_between_draws_needs_enough_arrangements_and_two_draws_a_side():
    three = stats.stratified_contrast([100.0] * 3 + [0.0] * 3, [True] * 3 + [False] * 3, [0] * 6)
    assert not three["testable"] and three["p_min"] == pytest.approx(2 / 20)    # C(6, 3) = 20 arrangements
    one_side = stats.stratified_contrast([100.0] + [0.0] * 30, [True] + [False] * 30, [0] * 31)
    assert not one_side["testable"] and math.isnan(one_side["ci_low"]) and one_side["caveat"].startswith(stats.TOO_FEW)
    four = stats.stratified_contrast([100.0] * 4 + [0.0] * 4, [True] * 4 + [False] * 4, [0] * 8)
    assert four["testable"] and four["exact"] and four["p"] == pytest.approx(2 / 70)


def test_no_spread_test_from_fewer_than_three_configurations_a_side():
    two = stats.spread_test([10.0, 90.0], [50.0, 51.0])
    assert math.isnan(two["p"]) and "3 a side" in two["caveat"]
    three = stats.spread_test([10.0, 90.0, 50.0], [50.0, 51.0, 49.0])
    assert 0 <= three["p"] <= 1 and three["caveat"] is None


def _vectors():
    """Random difference vectors with ties (0/100 verdicts averaged over a few configurations), at every
    exact-enumeration size from MIN_UNITS and at Monte Carlo sizes."""
    rng = np.random.default_rng(11)
    exact_sizes = [n for n in range(stats.MIN_UNITS, 20) if 2 ** n <= stats.EXACT_MAX]
    for n in exact_sizes + [15, 16, 23, 64, 301]:
        for levels in ([-100.0, 0.0, 100.0], [-100.0, -50.0, 0.0, 50.0, 100.0, 100.0 / 3, -200.0 / 3]):
            yield n, rng.choice(levels, size=n, p=None)


@pytest.mark.parametrize("n,d", list(_vectors()))
def test_numpy_resampling_equals_scipys_on_the_same_seed(n, d):
    """paired_contrast's numpy sign-flip and bootstrap draw scipy's random numbers: the same p (exact or Monte
    Carlo) and the same interval, to the bit."""
    d = np.sort(d)
    res = stats.paired_contrast(d)
    if np.all(d == 0) or np.all(d == d[0]):
        return
    exact = 2 ** n <= stats.EXACT_MAX
    ref_p = S.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True,
                               n_resamples=stats.EXACT_MAX if exact else stats.RESAMPLES, alternative="two-sided",
                               random_state=np.random.default_rng(stats.SEED))
    ref_ci = S.bootstrap((d,), np.mean, confidence_level=0.95, n_resamples=stats.RESAMPLES, method="percentile",
                         vectorized=True, random_state=np.random.default_rng(stats.SEED))
    assert res["exact"] is exact
    assert res["p"] == min(1.0, float(ref_p.pvalue))
    assert (res["ci_low"], res["ci_high"]) == (float(ref_ci.confidence_interval.low),
                                               float(ref_ci.confidence_interval.high))
    assert np.array_equal(np.sort(resampling.sign_flip_null(d)[0]), np.sort(ref_p.null_distribution))
    assert np.array_equal(resampling.bootstrap_means(d), ref_ci.bootstrap_distribution)


def test_sign_flip_on_paired_0_1_outcomes_is_the_exact_mcnemar_test():
    # 9 pairs: 7 only-a right, 2 only-b right, 3 concordant (difference 0)
    d = [100.0] * 7 + [-100.0] * 2 + [0.0] * 3
    res = stats.paired_contrast(d)
    assert res["exact"] and res["p"] == pytest.approx(S.binomtest(7, 9, 0.5).pvalue, abs=1e-12)
    assert res["p"] == pytest.approx(stats.mcnemar_counts(2, 7, 2, 1)["p_value"], abs=1e-12)


def test_stratified_permutation_p_is_the_exact_enumeration():
    values = np.array([80.0, 60.0, 70.0, 20.0, 40.0, 90.0, 10.0, 30.0, 50.0])
    is_a = np.array([1, 1, 0, 0, 1, 0, 1, 0, 0], dtype=bool)
    strata = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    res = stats.stratified_contrast(values, is_a, strata)
    observed = stats.stratified_difference(values, is_a, strata)
    assert res["estimate"] == pytest.approx(observed)
    hits = total = 0
    g0, g1 = np.flatnonzero(strata == 0), np.flatnonzero(strata == 1)
    for c0 in itertools.combinations(g0, 2):
        for c1 in itertools.combinations(g1, 2):
            lab = np.zeros(9, dtype=bool)
            lab[list(c0) + list(c1)] = True
            total += 1
            hits += abs(stats.stratified_difference(values, lab, strata)) >= abs(observed) - 1e-9
    assert res["exact"] and res["p"] == pytest.approx(hits / total)


def test_intervals_never_leave_the_possible_range_and_the_monte_carlo_is_reproducible():
    rng = np.random.default_rng(5)
    for n in (6, 7, 9, 24, 200):
        d = rng.choice([-100.0, 0.0, 100.0], size=n, p=[0.1, 0.3, 0.6])
        res = stats.paired_contrast(d)
        assert -100 <= res["ci_low"] <= res["estimate"] <= res["ci_high"] <= 100, res
        assert 0 < res["p"] <= 1
        assert stats.paired_contrast(d[::-1]) == res                               # row order does not matter
        v = rng.choice([0.0, 100.0], size=2 * n)
        lab = np.arange(2 * n) < n
        out = stats.stratified_contrast(v, lab, np.arange(2 * n) % 2)
        assert -100 <= out["ci_low"] <= out["ci_high"] <= 100 and 0 < out["p"] <= 1, out
    big = stats.paired_contrast(np.r_[np.full(40, 50.0), np.full(10, -50.0)])
    assert not big["exact"] and big["p"] >= 1 / (stats.RESAMPLES + 1)                   # never 0


def test_wilson_interval_is_the_textbook_formula():
    for k, n in ((0, 10), (3, 10), (10, 10), (57, 80)):
        z = S.norm.ppf(0.975)
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        lo, hi = stats.wilson_interval(k, n)
        assert (lo, hi) == pytest.approx((100 * max(0, centre - half), 100 * min(1, centre + half)), abs=1e-9)
    assert all(math.isnan(v) for v in stats.wilson_interval(0, 0))


def test_holm_equals_statsmodels_on_random_families_with_ties_and_gaps(monkeypatch):
    """stats.holm is written out in numpy (statsmodels' version runs a full gc.collect() per call); on random
    families — ties, p-values near 1, NaN and None left out — it gives statsmodels' adjusted p-values. The
    reference's gc.collect() (memory hygiene only, ~0.7 s per call in a test worker's heap) is skipped here."""
    import gc

    import numpy as np
    from statsmodels.stats.multitest import multipletests

    from core.analysis.stats import holm

    monkeypatch.setattr(gc, "collect", lambda *a, **k: 0)
    rng = np.random.default_rng(7)
    for m in (1, 2, 3, 5, 12, 40):
        for _ in range(4):
            p = rng.choice(np.concatenate([rng.uniform(0, 1, size=3), [0.01, 0.5, 1.0, 1e-9]]), size=m).tolist()
            expected = multipletests(p, method="holm")[1]
            assert holm(p) == pytest.approx(expected.tolist(), rel=1e-12, abs=1e-15)
            with_gaps = p[:1] + [float("nan"), None] + p[1:]
            got = holm(with_gaps)
            assert math.isnan(got[1]) and math.isnan(got[2])
            assert got[:1] + got[3:] == pytest.approx(expected.tolist(), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("levels", [[0.0, 50.0, 100.0], None])
def test_monte_carlo_stratified_p_agrees_with_the_exact_enumeration(levels):
    """Above EXACT_MAX arrangements the labels are drawn at random (a uniform random subset of each stratum's
    units), with few distinct values or many: either way the p is the exact enumeration's within Monte Carlo error (C(10, 5)² = 63,504 arrangements, enumerated here)."""
    rng = np.random.default_rng(3)
    values = (rng.choice(levels, size=20) if levels else rng.uniform(0, 100, size=20)) + np.r_[np.full(5, 20.0),
                                                                                               np.zeros(15)]
    values = np.minimum(values, 100.0)
    is_a = np.tile(np.r_[np.ones(5, bool), np.zeros(5, bool)], 2)
    strata = np.repeat([0, 1], 10)
    res = stats.stratified_contrast(values, is_a, strata)
    assert not res["exact"] and res["testable"]
    observed = stats.stratified_difference(values, is_a, strata)
    combos = np.array(list(itertools.combinations(range(10), 5)))
    lab = np.zeros((len(combos), 10), dtype=bool)
    lab[np.arange(len(combos))[:, None], combos] = True

    def diffs(v):   # every arrangement of one stratum: mean of a − mean of b
        return (lab @ v) / 5 - ((~lab) @ v) / 5

    d0, d1 = diffs(values[:10]), diffs(values[10:])
    null = 0.5 * d0[:, None] + 0.5 * d1[None, :]
    exact = np.mean(np.abs(null) >= abs(observed) - 1e-9)
    assert res["p"] == pytest.approx(exact, abs=0.02)
    assert res["ci_low"] <= observed <= res["ci_high"]


def test_random_subsets_choose_every_k_subset_uniformly():
    # values 1, 2, 4, 8, 16: a subset's sum names the subset; every one of the C(5, 2) = 10 pairs is equally likely
    sums = resampling.random_subsets(np.random.default_rng(7), 5, 2) @ np.array([1.0, 2, 4, 8, 16])
    assert sums.size == stats.RESAMPLES
    expected = {a + b for a, b in itertools.combinations([1, 2, 4, 8, 16], 2)}
    values, counts = np.unique(sums, return_counts=True)
    assert set(values.tolist()) == expected
    # each pair ~ RESAMPLES / 10 = 1000 times, binomial sd 30: a band of 5 sd
    assert counts.min() > 850 and counts.max() < 1150


@pytest.mark.parametrize("n", [7, 40, 501, 2000])
def test_paired_contrast_equals_scipy_on_continuous_differences(n):
    """Differences without ties (means over many configurations): every unit is its own distinct value, so the
    bootstrap interval's counts path and its re-averaging of the close resamples are both exercised — scipy's p and
    interval, to the bit."""
    d = np.sort(np.random.default_rng(n).normal(3.0, 40.0, size=n))
    res = stats.paired_contrast(d)
    ref_ci = S.bootstrap((d,), np.mean, confidence_level=0.95, n_resamples=stats.RESAMPLES, method="percentile",
                         vectorized=True, random_state=np.random.default_rng(stats.SEED))
    assert (res["ci_low"], res["ci_high"]) == (float(ref_ci.confidence_interval.low),
                                               float(ref_ci.confidence_interval.high))
    if n <= 501:   # scipy's own permutation test is slow beyond
        ref_p = S.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True,
                                   n_resamples=stats.RESAMPLES, alternative="two-sided",
                                   random_state=np.random.default_rng(stats.SEED))
        assert res["p"] == min(1.0, float(ref_p.pvalue))


def test_a_drawing_kept_for_the_process_gives_what_a_fresh_one_gives():
    """Contrasts over the same number of units share one drawing of sign patterns, bootstrap indices and label
    arrangements (``resampling.PLANS``): a contrast computed with a fresh memo is the same as one computed after others
    filled it, whatever order they come in."""
    rng = np.random.default_rng(2)
    vectors = [np.sort(rng.choice([-100.0, -50.0, 0.0, 50.0, 100.0], size=300)) for _ in range(3)]
    values = rng.choice([0.0, 25.0, 50.0, 75.0, 100.0], size=400)
    labels, strata = np.arange(400) % 2 == 0, np.arange(400) // 100
    resampling.PLANS.entries.clear()
    first = [stats.paired_contrast(d) for d in vectors] + [stats.stratified_contrast(values, labels, strata)]
    again = [stats.stratified_contrast(values, labels, strata)] + [stats.paired_contrast(d) for d in vectors[::-1]]
    assert again == [first[-1], *first[:-1][::-1]]
    resampling.PLANS.entries.clear()
    assert stats.paired_contrast(vectors[2]) == first[2]


def test_brown_forsythe_is_scipys_levene_around_the_median():
    rng = np.random.default_rng(4)
    for _ in range(50):
        a = rng.choice(np.arange(0.0, 101.0, 10.0), size=int(rng.integers(3, 200)))
        b = rng.normal(50.0, rng.uniform(1.0, 30.0), size=int(rng.integers(3, 200)))
        assert stats.brown_forsythe_p(a, b) == pytest.approx(S.levene(a, b, center="median").pvalue, rel=1e-12)

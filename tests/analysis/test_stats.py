"""core/analysis/stats.py against definitions: exact small-sample p values, bounded intervals, Wilson, Holm."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as S

from core.analysis import stats


def test_two_always_right_vs_always_wrong_pairs_are_not_certainty():
    res = stats.paired_contrast([100.0, 100.0])
    assert res["estimate"] == 100.0 and res["p"] == 0.5 and res["exact"]      # the exact sign test on 2 pairs
    assert -100 <= res["ci_low"] <= res["ci_high"] <= 100
    between = stats.stratified_contrast([100.0, 100.0, 0.0, 0.0], [True, True, False, False], [0, 0, 0, 0])
    assert between["estimate"] == 100.0 and between["p"] == pytest.approx(2 / 6) and between["exact"]


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
    for n in (2, 3, 5, 24, 200):
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

"""The one home of the statistics the analysis reports: proportions, contrasts, corrections.

    wilson_interval(k, n, confidence)            Wilson score interval of a proportion, in percent (scipy)
    holm(pvalues)                                Holm's step-down adjustment (family-wise error), NaN kept
    paired_contrast(d, …)                        mean of per-unit differences: exact / Monte Carlo sign-flip
                                                 permutation p, percentile bootstrap interval over the units
    stratified_contrast(values, labels, strata)  difference of two groups of units, strata held fixed: label
                                                 permutation within strata, stratified percentile bootstrap
    spread_test(a, b)                            standard deviations and the Brown–Forsythe test of equal spread
    mcnemar_counts(…)                            exact McNemar test (binomial on the discordant pairs)
    paired_proportion_difference(…)              b − a on paired 0/1 verdicts: exact McNemar p, exact interval
    difference_of_means(a, b, …)                 two series of per-configuration accuracies (the Compare page)

Choices, for a reviewer (docs/FIDELITY.md, "How verdicts are computed", says the same at more length):

- **Tests are permutation tests.** They make no normality assumption, are exact when the units are few (every
  arrangement enumerated) and never give p = 0: the observed arrangement is one of the arrangements counted, so an
  always-right vs always-wrong model on 2 paired units gets p = 0.5. For 0/1 paired outcomes the sign-flip test is the
  exact McNemar / sign test. Above ``EXACT_MAX`` arrangements a Monte Carlo of ``RESAMPLES`` arrangements with a
  fixed seed is used (p = (hits + 1) / (resamples + 1), never 0), so a report is reproducible to the digit.
- **Intervals are percentile bootstraps over the units.** A percentile of resampled means of values that each lie
  in [−100, 100] lies in [−100, 100]: the interval can never leave the possible range (a t interval on 24 items
  gave [−104.6, 54.6]). The units are sorted before resampling so the interval does not depend on row order.
  Bootstrap intervals are too narrow when the units are few; the verdicts say so under ``FEW_UNITS`` units.
- **Holm** is the step-down adjustment written out in numpy (sort, scale by the family size left, running
  maximum, cap at 1); ``tests/analysis`` checks it equals statsmodels' ``multipletests(method="holm")``, which is
  not called here because it runs a full ``gc.collect()`` on every call (about 0.1-0.7 s in a process holding
  torch, pandas and Streamlit, once per finding and model).
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

RESAMPLES = 9999        # Monte Carlo permutations / bootstrap resamples
EXACT_MAX = 20000       # enumerate every arrangement up to this many
SEED = 20240531         # fixed: a report is the same on every run
FEW_UNITS = 10          # below this many units the bootstrap interval understates the uncertainty


# ------------------------------------------------------------------------------------------------- proportions

def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes out of ``n``, in percent; (nan, nan) when n == 0."""
    if n <= 0:
        return (math.nan, math.nan)
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (100 * max(0.0, float(ci.low)), 100 * min(1.0, float(ci.high)))


def mcnemar_counts(both_right: int, only_a: int, only_b: int, both_wrong: int) -> dict:
    """Exact McNemar test from the four counts of paired correctness (n, the counts, p_value, agreement): the
    two-sided binomial test of the discordant pairs, = the sign-flip permutation test of 0/1 paired outcomes."""
    from scipy.stats import binomtest

    n = both_right + only_a + only_b + both_wrong
    out = {"n": n, "both_right": both_right, "only_a": only_a, "only_b": only_b, "both_wrong": both_wrong}
    if not n:
        return {**out, "p_value": math.nan}
    d = only_a + only_b
    out["p_value"] = float(binomtest(only_a, d, 0.5).pvalue) if d else 1.0
    out["agreement"] = (both_right + both_wrong) / n
    return out



def paired_proportion_difference(both_right: int, only_a: int, only_b: int, both_wrong: int,
                                 confidence: float = 0.95) -> dict:
    """Accuracy of b − accuracy of a (points) on paired 0/1 verdicts, its exact conditional interval and the exact
    McNemar p. Only discordant pairs carry information on the difference: with d = only_a + only_b of n pairs the
    difference is (only_b − only_a) / n; given d, only_b is Binomial(d, π) and the difference is d/n · (2π − 1). The
    interval maps the Clopper–Pearson interval of π onto it (exact, inside [−100, 100]) and p is the two-sided binomial
    test of π = ½, so interval and test agree on whether 0 is excluded. No discordant pair: difference 0, p = 1, no
    interval."""
    from scipy.stats import binomtest

    n, d = both_right + only_a + only_b + both_wrong, only_a + only_b
    out = {"n": n, "a": math.nan, "b": math.nan, "difference": math.nan, "ci_low": math.nan, "ci_high": math.nan,
           "p": math.nan}
    if not n:
        return out
    out.update(a=100.0 * (both_right + only_a) / n, b=100.0 * (both_right + only_b) / n,
               difference=100.0 * (only_b - only_a) / n)
    if not d:
        out["p"] = 1.0
        return out
    test = binomtest(only_b, d, 0.5)
    ci = test.proportion_ci(confidence_level=confidence, method="exact")
    out.update(p=float(test.pvalue), ci_low=100.0 * d / n * (2 * float(ci.low) - 1),
               ci_high=100.0 * d / n * (2 * float(ci.high) - 1))
    return out

# ------------------------------------------------------------------------------------------------- families

def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error), NaN and None kept as NaN and left out of the family: the
    i-th smallest of m p-values becomes the running maximum of (m - j) · p_(j) over j ≤ i, capped at 1."""
    idx = [i for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    out = [float("nan")] * len(pvalues)
    if idx:
        p = np.array([float(pvalues[i]) for i in idx])
        order = np.argsort(p, kind="stable")
        scaled = (len(p) - np.arange(len(p))) * p[order]
        adjusted = np.empty_like(p)
        adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
        for i, a in zip(idx, adjusted):
            out[i] = float(a)
    return out


# ------------------------------------------------------------------------------------------------- contrasts

def _empty(n: int, test: str) -> dict:
    return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p": math.nan, "n": n, "test": test,
            "exact": False, "caveat": None}


def paired_contrast(d: Sequence[float], confidence: float = 0.95, seed: int = SEED) -> dict:
    """Mean of the per-unit differences ``d`` (points), with the two-sided sign-flip permutation p (under no effect
    each unit's difference is as likely to have either sign; exact enumeration of the 2^n sign patterns when
    2^n ≤ EXACT_MAX, else RESAMPLES random patterns) and the percentile bootstrap interval of the mean over the
    units (scipy.stats.permutation_test, scipy.stats.bootstrap)."""
    from scipy import stats

    d = np.sort(np.asarray(d, dtype=float))
    out = _empty(int(d.size), "sign-flip permutation")
    if d.size == 0:
        out["caveat"] = "no matched unit"
        return out
    out["estimate"] = float(d.mean())
    if np.all(d == 0):
        out.update(p=1.0, exact=True)
    else:
        exact = 2 ** d.size <= EXACT_MAX
        res = stats.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True,
                                     n_resamples=EXACT_MAX if exact else RESAMPLES, alternative="two-sided",
                                     random_state=np.random.default_rng(seed))
        out.update(p=min(1.0, float(res.pvalue)), exact=exact)
    if d.size < 2:
        out["caveat"] = "one unit: no interval"
        return out
    if np.all(d == d[0]):
        out["ci_low"] = out["ci_high"] = float(d[0])
    else:
        res = stats.bootstrap((d,), np.mean, confidence_level=confidence, n_resamples=RESAMPLES,
                              method="percentile", vectorized=True, random_state=np.random.default_rng(seed))
        out["ci_low"], out["ci_high"] = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return out


def _weights(labels: np.ndarray, strata: np.ndarray, keys) -> dict:
    """Each stratum's weight: its share of the units."""
    total = len(labels)
    return {s: float(np.sum(strata == s)) / total for s in keys}


def stratified_difference(values: np.ndarray, is_a: np.ndarray, strata: np.ndarray) -> float:
    """Σ_s w_s · (mean of a in s − mean of b in s), w_s = the stratum's share of the units (every stratum has both
    levels)."""
    keys = np.unique(strata)
    w = _weights(is_a, strata, keys)
    return float(sum(w[s] * (values[(strata == s) & is_a].mean() - values[(strata == s) & ~is_a].mean())
                     for s in keys))


def _arrangements(is_a: np.ndarray, strata: np.ndarray) -> int:
    n = 1
    for s in np.unique(strata):
        inside = strata == s
        n *= math.comb(int(inside.sum()), int((is_a & inside).sum()))
    return n


def stratified_contrast(values: Sequence[float], is_a: Sequence[bool], strata: Sequence,
                        confidence: float = 0.95, seed: int = SEED) -> dict:
    """Difference of level a's units and level b's units (points), strata held fixed: the estimate is
    ``stratified_difference``; p is the two-sided permutation p of that statistic with the labels permuted within
    each stratum (every arrangement when there are at most EXACT_MAX, else RESAMPLES random ones; scipy has no
    stratified permutation test); the interval is the percentile bootstrap with units resampled within each
    (stratum, level) group. ``strata`` must give both levels in every stratum (the caller matches)."""
    values = np.asarray(values, dtype=float)
    is_a = np.asarray(is_a, dtype=bool)
    strata = np.asarray(pd_codes(strata))
    out = _empty(int(values.size), "label permutation within strata")
    out["n_a"], out["n_b"] = int(is_a.sum()), int((~is_a).sum())
    if out["n_a"] == 0 or out["n_b"] == 0:
        out["caveat"] = "a level has no unit"
        return out
    order = np.lexsort((values, is_a, strata))   # a fixed order: the result does not depend on row order
    values, is_a, strata = values[order], is_a[order], strata[order]
    keys = np.unique(strata)
    groups = [np.flatnonzero(strata == s) for s in keys]
    w = np.array([len(g) for g in groups], dtype=float) / len(values)
    n_a = np.array([is_a[g].sum() for g in groups])

    def stat(perm_a: np.ndarray) -> np.ndarray:
        """The statistic for a batch of label arrangements (rows of booleans)."""
        total = np.zeros(perm_a.shape[0])
        for wi, g, na in zip(w, groups, n_a):
            v, lab = values[g], perm_a[:, g]
            total += wi * ((lab * v).sum(1) / na - ((~lab) * v).sum(1) / (len(g) - na))
        return total

    observed = float(stat(is_a[None, :])[0])
    out["estimate"] = observed
    if np.all(values == values[0]):
        out.update(p=1.0, exact=True)
    else:
        count = _arrangements(is_a, strata)
        if count <= EXACT_MAX:
            per_group = []
            for g, na in zip(groups, n_a):
                rows = []
                for chosen in itertools.combinations(range(len(g)), int(na)):
                    row = np.zeros(len(g), dtype=bool)
                    row[list(chosen)] = True
                    rows.append(row)
                per_group.append(rows)
            perms = np.zeros((count, len(values)), dtype=bool)
            for r, combo in enumerate(itertools.product(*per_group)):
                for g, row in zip(groups, combo):
                    perms[r, g] = row
            null = stat(perms)
            adjust, out["exact"] = 0, True
        else:
            rng = np.random.default_rng(seed)
            perms = np.zeros((RESAMPLES, len(values)), dtype=bool)
            for g, na in zip(groups, n_a):
                base = np.zeros(len(g), dtype=bool)
                base[:na] = True
                perms[:, g] = rng.permuted(np.broadcast_to(base, (RESAMPLES, len(g))), axis=1)
            null = stat(perms)
            adjust = 1
        tol = 1e-9 * max(1.0, abs(observed))
        hits = int(np.sum(np.abs(null) >= abs(observed) - tol))
        out["p"] = min(1.0, (hits + adjust) / (len(null) + adjust))
    # interval: resample units within each (stratum, level) group
    rng = np.random.default_rng(seed)
    boot = np.zeros(RESAMPLES)
    for wi, g in zip(w, groups):
        for side in (True, False):
            v = values[g][is_a[g] == side]
            means = v[rng.integers(0, len(v), size=(RESAMPLES, len(v)))].mean(1)
            boot += wi * means if side else -wi * means
    alpha = (1 - confidence) / 2
    out["ci_low"], out["ci_high"] = (float(np.quantile(boot, alpha)), float(np.quantile(boot, 1 - alpha)))
    if out["n_a"] < 2 or out["n_b"] < 2:
        out["caveat"] = "one unit on a side: the interval shows only the other side's variation"
    return out


def pd_codes(keys: Sequence) -> np.ndarray:
    """Integer codes of arbitrary (hashable) stratum keys, numbered in sorted order of their text."""
    texts = [repr(k) for k in keys]
    index = {t: i for i, t in enumerate(sorted(set(texts)))}
    return np.array([index[t] for t in texts], dtype=np.int64)


# Above this many configurations in a series the interval is Welch's t interval, not a bootstrap: scipy's BCa
# bootstrap takes 0.4 s at 2,000 configurations a side, 2.3 s at 5,000 and 6 s at 10,000 (its jackknife grows with
# the square), and at such sizes the bootstrap distribution of a difference of means is normal to within its own
# Monte Carlo noise — measured at 5,000 a side: BCa [-1.21, +1.03], Welch [-1.31, +1.00] points.
BOOTSTRAP_MAX = 2000

def difference_of_means(a: Sequence[float], b: Sequence[float], confidence: float = 0.95,
                        n_resamples: int = 2000, seed: int = 0, bootstrap_max: int = BOOTSTRAP_MAX) -> dict:
    """Mean(b) − mean(a) of per-config accuracies with a confidence interval, Welch's t-test and the Mann–Whitney
    U test. The interval is a bootstrap (scipy.stats.bootstrap, BCa when possible, else percentile) while neither
    series has more than ``bootstrap_max`` configurations, else Welch's t interval (``ci_method`` says which, and a
    note says why). Where a statistic says nothing (fewer than two configurations, no spread at all), it is NaN and
    ``notes`` says why, in words a page or report shows instead of a number."""
    from scipy import stats

    a, b = (np.asarray(v, dtype=float).ravel() for v in (a, b))   # None → NaN, dropped with ±inf
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    out = {"n_a": int(a.size), "n_b": int(b.size), "mean_a": float(a.mean()) if a.size else math.nan,
           "mean_b": float(b.mean()) if b.size else math.nan, "difference": math.nan, "ci_low": math.nan,
           "ci_high": math.nan, "confidence": confidence, "welch_t": math.nan, "welch_p": math.nan,
           "mannwhitney_u": math.nan, "mannwhitney_p": math.nan, "notes": []}
    if a.size == 0 or b.size == 0:
        out["notes"].append("one of the series has no configuration in this selection")
        return out
    out["difference"] = float(b.mean() - a.mean())
    if a.size < 2 or b.size < 2:
        out["notes"].append(f"an interval and the tests need two or more configurations per series (A has "
                            f"{a.size}, B has {b.size})")
    if a.size >= 2 and b.size >= 2:
        def stat(x, y, axis=-1):
            return np.mean(y, axis=axis) - np.mean(x, axis=axis)

        import warnings

        rng = np.random.default_rng(seed)
        large = max(a.size, b.size) > bootstrap_max
        for method in () if large else ("BCa", "percentile"):
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = stats.bootstrap((a, b), stat, confidence_level=confidence, n_resamples=n_resamples,
                                          method=method, random_state=rng, vectorized=True)
                lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
                if np.isfinite(lo) and np.isfinite(hi):
                    out["ci_low"], out["ci_high"] = lo, hi
                    out["ci_method"] = method
                    break
            except (ValueError, FloatingPointError, ZeroDivisionError):  # degenerate samples: BCa fails, percentile next
                continue
        flat_a, flat_b = bool(np.all(a == a[0])), bool(np.all(b == b[0]))
        if flat_a and flat_b:
            # every configuration has the same accuracy on each side: the difference is exact, an interval or a
            # t-test adds nothing (and Welch's t would report p = 0 or be undefined)
            out["ci_low"] = out["ci_high"] = math.nan
            out["ci_method"] = "degenerate"
            out["notes"].append("every configuration has the same accuracy within each series, so there is no "
                                "spread to build an interval or a t-test on: the difference is exact for these "
                                "configurations")
        else:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = stats.ttest_ind(b, a, equal_var=False)
                welch_ci = t.confidence_interval(confidence_level=confidence) if large else None
            out["welch_t"], out["welch_p"] = float(t.statistic), float(t.pvalue)
            if welch_ci is not None and np.isfinite(welch_ci.low) and np.isfinite(welch_ci.high):
                # accuracies are percentages: no difference leaves [−100, 100], nor may its interval
                out["ci_low"], out["ci_high"] = max(-100.0, float(welch_ci.low)), min(100.0, float(welch_ci.high))
                out["ci_method"] = "Welch t"
            if flat_a or flat_b:
                out["notes"].append(f"all configurations of {'A' if flat_a else 'B'} have the same accuracy: "
                                    "Welch's test leans on the other series' spread alone")
        try:
            u = stats.mannwhitneyu(b, a, alternative="two-sided")
            out["mannwhitney_u"], out["mannwhitney_p"] = float(u.statistic), float(u.pvalue)
        except ValueError:
            pass
    return out


def spread_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Standard deviations and the Brown–Forsythe test of equal spread (Levene's test around the median)."""
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    out = {"std_a": float(a.std(ddof=1)) if len(a) > 1 else math.nan,
           "std_b": float(b.std(ddof=1)) if len(b) > 1 else math.nan, "p": math.nan, "test": "Brown–Forsythe",
           "n_a": int(len(a)), "n_b": int(len(b))}
    if len(a) > 1 and len(b) > 1 and (np.ptp(a) > 0 or np.ptp(b) > 0):
        with np.errstate(all="ignore"):   # one side without spread: scipy divides by zero on the way
            p = float(stats.levene(a, b, center="median").pvalue)
        out["p"] = p if math.isfinite(p) else math.nan
    return out

"""The one home of the statistics the analysis reports: proportions, contrasts, corrections.

    wilson_interval(k, n, confidence)            Wilson score interval of a proportion, in percent (scipy)
    holm(pvalues)                                Holm's step-down adjustment (family-wise error), NaN kept
    too_few(n, arrangements) / smallest_p(…)     the one rule for "too few draws to test" (MIN_UNITS, REACHABLE)
    paired_contrast(d, …)                        mean of per-unit differences: exact / Monte Carlo sign-flip
                                                 permutation p, percentile bootstrap interval over the units
    stratified_contrast(values, labels, strata)  difference of two groups of units, strata held fixed: label
                                                 permutation within strata, stratified percentile bootstrap
    spread_test(a, b)                            standard deviations and the Brown–Forsythe test of equal spread
    brown_forsythe_p(a, b)                       its p (scipy.stats.levene around the median, without loading scipy.stats)
    mcnemar_counts(…)                            exact McNemar test (binomial on the discordant pairs)
    paired_proportion_difference(…)              b − a on paired 0/1 verdicts: exact McNemar p, exact interval
    difference_of_means(a, b, …)                 two series of per-configuration accuracies (description)

Choices, for a reviewer (docs/FIDELITY.md, "How verdicts are computed", says the same at more length):

- **Tests are permutation tests.** They make no normality assumption, are exact when the units are few (every
  arrangement enumerated) and never give p = 0: the observed arrangement is one of the arrangements counted. For 0/1
  paired outcomes the sign-flip test is the exact McNemar / sign test. Above ``EXACT_MAX`` arrangements a Monte Carlo
  of ``RESAMPLES`` arrangements with a fixed seed is used (p = (hits + 1) / (resamples + 1), never 0), so a report is
  reproducible to the digit.
- **Resampling is numpy, equal to scipy's** (core/analysis/resampling.py, whose docstring says how): the sign
  flips and the bootstrap give scipy's p and interval to the bit, drawn once per number of units.
- **Too few to test** (``too_few``): the smallest two-sided p an exact permutation test can give is 2 / (number of
  arrangements) — 2 / 2^n for n paired units, 0.0625 at n = 5. Below ``MIN_UNITS`` units, or when that smallest p is
  above ``REACHABLE``, or with one unit on a side of a between-draw contrast, a contrast has its estimate only:
  ``testable`` False, p and interval NaN, the caveat "too few draws to test: …" with the reason. No spread test from
  fewer than ``MIN_SPREAD`` configurations on a side.
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
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import numpy as np

from core.analysis.resampling import (  # noqa: F401  (RESAMPLES, EXACT_MAX, SEED: the statistics' constants)
    EXACT_MAX,
    RESAMPLES,
    SEED,
    bootstrap_interval,
    group_bootstrap_plan,
    label_plan,
    pattern_sums,
    sign_flip_p,
)

FEW_UNITS = 10          # below this many units the bootstrap interval understates the uncertainty
MIN_UNITS = 6           # fewest units a test or an interval is computed from (2 / 2^6 = 0.031 ≤ REACHABLE)
REACHABLE = 0.05        # a test whose smallest attainable p exceeds this cannot give evidence: not run
MIN_SPREAD = 3          # fewest configurations per side for the Brown–Forsythe test of equal spread
TOO_FEW = "too few draws to test"


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
    interval. The pairs are the units of ``too_few``: under ``MIN_UNITS`` pairs the difference only (``testable``
    False, the caveat says why), as for every other contrast of this module."""
    from scipy.stats import binomtest

    n, d = both_right + only_a + only_b + both_wrong, only_a + only_b
    out = {"n": n, "a": math.nan, "b": math.nan, "difference": math.nan, "ci_low": math.nan, "ci_high": math.nan,
           "p": math.nan, "testable": False, "caveat": too_few(n)}
    if not n:
        return out
    out.update(a=100.0 * (both_right + only_a) / n, b=100.0 * (both_right + only_b) / n,
               difference=100.0 * (only_b - only_a) / n)
    if out["caveat"]:
        return out
    out["testable"] = True
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


# ------------------------------------------------------------------------------------------------- too few

def smallest_p(arrangements: int) -> float:
    """The smallest two-sided p an exact permutation test over ``arrangements`` equally likely arrangements can give:
    the observed arrangement and its mirror image are always as extreme as itself, so 2 / arrangements."""
    if arrangements <= 0:
        return 1.0
    return min(1.0, 2.0 / arrangements) if arrangements < 10 ** 300 else 0.0


def too_few(n: int, arrangements: int | None = None) -> str | None:
    """Why ``n`` units (with ``arrangements`` label arrangements for a between-draw test; 2^n sign patterns for a
    paired one) are too few to test, or None when they are enough. The rule (``MIN_UNITS``, ``REACHABLE``): a test
    is run, and an interval drawn, only when its smallest attainable p is at most ``REACHABLE`` — fewer units cannot
    give evidence, and a bootstrap over them is a handful of distinct means."""
    if n <= 0:
        return f"{TOO_FEW}: no matched draw"
    arrangements = 2 ** n if arrangements is None else arrangements
    if n < MIN_UNITS or smallest_p(arrangements) > REACHABLE:
        return (f"{TOO_FEW}: {n} draw{'s' if n != 1 else ''}, the smallest p a two-sided test on them can give is "
                f"{smallest_p(arrangements):.3g} (at least {MIN_UNITS} draws are needed to reach {REACHABLE:g})")
    return None


# ------------------------------------------------------------------------------------------------- contrasts

def _empty(n: int, test: str) -> dict:
    return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p": math.nan, "n": n, "test": test,
            "exact": False, "caveat": None, "testable": False}


def paired_contrast(d: Sequence[float], confidence: float = 0.95, seed: int = SEED) -> dict:
    """Mean of the per-unit differences ``d`` (points), with the two-sided sign-flip permutation p (under no effect
    each unit's difference is as likely to have either sign; exact enumeration of the 2^n sign patterns when
    2^n ≤ EXACT_MAX, else RESAMPLES random patterns) and the percentile bootstrap interval of the mean over the
    units — numpy, equal to scipy.stats.permutation_test / scipy.stats.bootstrap on the same seed. Fewer than
    ``MIN_UNITS`` units: the estimate only (``testable`` False, the caveat says why)."""
    d = np.sort(np.asarray(d, dtype=float))
    out = _empty(int(d.size), "sign-flip permutation")
    if d.size == 0:
        out["caveat"] = too_few(0)
        return out
    out["estimate"] = float(d.mean())
    out["p_min"] = smallest_p(2 ** d.size)
    why = too_few(int(d.size))
    if why:
        out["caveat"] = why
        return out
    out["testable"] = True
    if np.all(d == 0):
        out.update(p=1.0, exact=True)
    else:
        p, exact = sign_flip_p(d, out["estimate"], seed)
        out.update(p=p, exact=exact)
    if np.all(d == d[0]):
        out["ci_low"] = out["ci_high"] = float(d[0])
    else:
        out["ci_low"], out["ci_high"] = bootstrap_interval(d, confidence, seed)
    return out


def stratified_difference(values: np.ndarray, is_a: np.ndarray, strata: np.ndarray) -> float:
    """Σ_s w_s · (mean of a in s − mean of b in s), w_s = the stratum's share of the units (every stratum has both
    levels)."""
    values, is_a, strata = np.asarray(values, float), np.asarray(is_a, bool), np.asarray(strata)
    keys = np.unique(strata)
    return float(sum(np.mean(strata == s) * (values[(strata == s) & is_a].mean() - values[(strata == s) & ~is_a].mean())
                     for s in keys))


def _arrangements(is_a: np.ndarray, strata: np.ndarray) -> int:
    n = 1
    for s in np.unique(strata):
        inside = strata == s
        n *= math.comb(int(inside.sum()), int((is_a & inside).sum()))
    return n


def _exact_labels(sizes: np.ndarray, n_a: np.ndarray, count: int) -> np.ndarray:
    """Every arrangement of the labels within the groups (contiguous blocks of ``sizes`` units, ``n_a`` of them
    labelled a): a (count × units) boolean matrix."""
    blocks = []
    for size, na in zip(sizes, n_a):
        rows = np.zeros((math.comb(int(size), int(na)), int(size)), dtype=bool)
        for r, chosen in enumerate(itertools.combinations(range(int(size)), int(na))):
            rows[r, list(chosen)] = True
        blocks.append(rows)
    # the Cartesian product of the groups' arrangements, each group's index cycling under the ones before it
    out = np.zeros((count, int(sizes.sum())), dtype=bool)
    repeat, start = count, 0
    for rows in blocks:
        repeat //= len(rows)
        idx = np.tile(np.repeat(np.arange(len(rows)), repeat), count // (len(rows) * repeat))
        out[:, start:start + rows.shape[1]] = rows[idx]
        start += rows.shape[1]
    return out


def stratified_contrast(values: Sequence[float], is_a: Sequence[bool], strata: Sequence,
                        confidence: float = 0.95, seed: int = SEED) -> dict:
    """Difference of level a's units and level b's units (points), strata held fixed: the estimate is
    ``stratified_difference``; p is the two-sided permutation p of that statistic with the labels permuted within
    each stratum (every arrangement when there are at most EXACT_MAX, else RESAMPLES random ones; scipy has no
    stratified permutation test); the interval is the percentile bootstrap with units resampled within each
    (stratum, level) group. ``strata`` must give both levels in every stratum (the caller matches). Too few units or
    arrangements for a test (``too_few``): the estimate only, ``testable`` False."""
    values = np.asarray(values, dtype=float)
    is_a = np.asarray(is_a, dtype=bool)
    strata = np.asarray(pd_codes(strata))
    out = _empty(int(values.size), "label permutation within strata")
    out["n_a"], out["n_b"] = int(is_a.sum()), int((~is_a).sum())
    if out["n_a"] == 0 or out["n_b"] == 0:
        out["caveat"] = f"{TOO_FEW}: a level has no draw"
        return out
    order = np.lexsort((values, is_a, strata))   # a fixed order: the result does not depend on row order
    values, is_a, strata = values[order], is_a[order], strata[order]
    keys, starts, sizes = np.unique(strata, return_index=True, return_counts=True)
    w = sizes / len(values)
    n_a = np.add.reduceat(is_a.astype(np.int64), starts)
    n_b = sizes - n_a
    # the statistic is linear in the labels: Σ_i lab_i · c_i − K, with c_i = v_i · w_s (1/n_a,s + 1/n_b,s) and
    # K = Σ_s w_s / n_b,s · Σ_{i in s} v_i — one matrix-vector product per batch of arrangements
    group = np.repeat(np.arange(len(keys)), sizes)
    coef = values * (w / n_a + w / n_b)[group]
    const = float(np.sum((w / n_b) * np.add.reduceat(values, starts)))
    observed = stratified_difference(values, is_a, strata)
    out["estimate"] = observed
    count = _arrangements(is_a, strata)
    out["p_min"] = smallest_p(count)
    why = too_few(int(values.size), count)
    if not why and (out["n_a"] < 2 or out["n_b"] < 2):
        why = f"{TOO_FEW}: one draw on a side"
    if why:
        out["caveat"] = why
        return out
    out["testable"] = True
    if np.all(values == values[0]):
        out.update(p=1.0, exact=True)
    else:
        if count <= EXACT_MAX:
            perms = _exact_labels(sizes, n_a, count)
            adjust, out["exact"] = 0, True
            step = max(1, 2_000_000 // len(values))
            null = np.concatenate([perms[k:k + step].astype(np.float64) @ coef - const
                                   for k in range(0, len(perms), step)])
        else:
            # random arrangements: each stratum labels a uniformly random n_a of its units a (``resampling.label_plan``, drawn
            # once per layout of strata); the statistic of each is a sum of the labelled units' coefficients
            null = pattern_sums(label_plan(tuple(sizes.tolist()), tuple(n_a.tolist()), seed), coef) - const
            adjust = 1
        tol = 1e-9 * max(1.0, abs(observed))
        hits = int(np.sum(np.abs(null) >= abs(observed) - tol))
        out["p"] = min(1.0, (hits + adjust) / (len(null) + adjust))
    # interval: resample units within each (stratum, level) group (``resampling.group_bootstrap_plan``: every resample's count
    # of each position in each group, drawn once per layout); a group's values are sorted, so a resample's mean is
    # its counts of the group's distinct values times those values
    groups = [(wi, start + (0 if side else int(na)), int(na) if side else int(size - na), side)
              for wi, start, size, na in zip(w, starts, sizes, n_a) for side in (True, False)]
    order2 = np.lexsort((values, ~is_a, strata))   # within a stratum: a's units first, then b's, each sorted
    v_all = values[order2]
    cums = group_bootstrap_plan(tuple(g[2] for g in groups), seed)
    boot = np.zeros(RESAMPLES)
    for (wi, start, m, side), cum in zip(groups, cums):
        v = v_all[start:start + m]
        bounds = np.flatnonzero(np.r_[True, v[1:] != v[:-1], True])
        # counts per distinct value, differenced in the plan's small integers (exact) and multiplied in float64
        means = np.diff(cum[:, bounds], axis=1).astype(np.float64) @ v[bounds[:-1]] / m
        boot += wi * means if side else -wi * means
    alpha = (1 - confidence) / 2
    out["ci_low"], out["ci_high"] = (float(np.quantile(boot, alpha)), float(np.quantile(boot, 1 - alpha)))
    return out


def pool() -> ThreadPoolExecutor:
    """A pool of the machine's cores for a report's resampling (numpy releases the GIL): its contrasts are
    resampled there while the report's next queries run in DuckDB (a context manager: shut down on the way out)."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1)


def in_parallel(fn, jobs: Sequence) -> list:
    """``[fn(j) for j in jobs]`` on the machine's cores, in the order of ``jobs``: the contrasts of one report are
    independent, and their resampling is numpy, which releases the GIL (each contrast seeds its own generator, so
    the results are those of the serial loop)."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        return [fn(j) for j in jobs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, jobs))


def pd_codes(keys: Sequence) -> np.ndarray:
    """Integer codes of arbitrary (hashable) stratum keys, numbered in sorted order of their text."""
    keys = np.asarray(keys)
    if keys.dtype.kind in "iub":
        return np.unique(keys, return_inverse=True)[1].astype(np.int64).ravel()
    texts = [repr(k) for k in keys.tolist()]
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


def brown_forsythe_p(a: np.ndarray, b: np.ndarray) -> float:
    """The Brown–Forsythe p of equal spread of two samples — scipy.stats.levene(a, b, center="median"): the one-way
    ANOVA F of the absolute deviations from each sample's median, its upper tail from scipy.special (which loads
    in a fraction of scipy.stats' time: the first findings report of a process paid a second for it)."""
    from scipy.special import fdtrc

    z = [np.abs(x - np.median(x)) for x in (a, b)]
    n = np.array([x.size for x in z], dtype=float)
    means = np.array([x.mean() for x in z])
    grand = float(np.sum(means * n) / n.sum())
    between = float(np.sum(n * (means - grand) ** 2))
    within = float(sum(np.sum((x - m) ** 2) for x, m in zip(z, means)))
    dfd = n.sum() - 2
    with np.errstate(all="ignore"):
        return float(fdtrc(1, dfd, dfd * between / within))


def spread_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Standard deviations and the Brown–Forsythe test of equal spread (``brown_forsythe_p``); no test (p NaN, a
    caveat) from fewer than ``MIN_SPREAD`` configurations on a side."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    out = {"std_a": float(a.std(ddof=1)) if len(a) > 1 else math.nan,
           "std_b": float(b.std(ddof=1)) if len(b) > 1 else math.nan, "p": math.nan, "test": "Brown–Forsythe",
           "n_a": int(len(a)), "n_b": int(len(b)), "caveat": None}
    if len(a) < MIN_SPREAD or len(b) < MIN_SPREAD:
        out["caveat"] = (f"no test of spread from {len(a)} vs {len(b)} configurations (it needs {MIN_SPREAD} a side)")
    elif np.ptp(a) > 0 or np.ptp(b) > 0:
        p = brown_forsythe_p(a, b)
        out["p"] = p if math.isfinite(p) else math.nan
    return out

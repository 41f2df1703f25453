"""Comparing runs and uploads: aligned per-config accuracies, difference of means with a bootstrap interval
and tests, item-by-item pairing, McNemar's test and the agreement map."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis.queries import RUN_FACTORS, VIEW, _isnan, _norm, _quote, _src, _where, factor_columns
from core.analysis.summaries import config_accuracy

# --------------------------------------------------------------------------------------------------------------------
# comparisons (A6)

@dataclass
class Series:
    """A named group of runs compared as one (e.g. one stored run, or one uploaded file imported as a run)."""

    name: str
    run_ids: tuple[str, ...]


def compare_runs(con, series: Sequence[Series], x: str = "operation", align: bool = True,
                 filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient"
                 ) -> tuple[pd.DataFrame, list[str]]:
    """Per-config accuracies of each series (column ``series``), restricted to the combinations of shared factor
    values that every series has (``align``). Returns (points, aligned_on factors)."""
    all_ids = [r for s in series for r in s.run_ids]
    if not series or not all_ids:
        return pd.DataFrame(columns=["series", "run_id", "config_id", "n", "n_correct", "accuracy"]), []
    # factors present (non-null) in every series
    shared: list[str] | None = None
    for s in series:
        cols = [c for c in factor_columns(con, s.run_ids, view) if c not in RUN_FACTORS]
        shared = cols if shared is None else [c for c in shared if c in cols]
    shared = shared or []
    by = list(dict.fromkeys([x, *shared])) if x else shared
    frames = []
    for s in series:
        pts = config_accuracy(con, s.run_ids, by, filters, view, scoring)
        pts.insert(0, "series", s.name)
        frames.append(pts)
    points = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if align and shared and len(series) > 1 and not points.empty:
        key = points[shared].apply(lambda col: col.map(lambda v: "\x00" if _isnan(v) else str(_norm(v)))) \
            .agg("|".join, axis=1)
        per_series = points.assign(_k=key).groupby("series")["_k"].agg(set)
        common = set.intersection(*per_series.tolist())
        points = points[key.isin(common)].reset_index(drop=True)
    return points, shared


def series_without_points(points: pd.DataFrame, series: Sequence[Series]) -> list[str]:
    """Names of the series that have no per-config accuracy in ``points`` (no answered item in the selection, or
    none left after alignment) — a comparison must say so rather than show 'nan'."""
    have = set(points["series"]) if "series" in points.columns else set()
    return [s.name for s in series if s.name not in have]


def difference_of_means(a: Sequence[float], b: Sequence[float], confidence: float = 0.95,
                        n_resamples: int = 2000, seed: int = 0) -> dict:
    """Mean(b) − mean(a) of per-config accuracies with a bootstrap CI (scipy.stats.bootstrap, BCa when possible),
    Welch's t-test and the Mann–Whitney U test. Where a statistic says nothing (fewer than two configurations, no
    spread at all), it is NaN and ``notes`` says why, in words a page or report shows instead of a number."""
    from scipy import stats

    a = np.asarray([v for v in a if v is not None and np.isfinite(v)], dtype=float)
    b = np.asarray([v for v in b if v is not None and np.isfinite(v)], dtype=float)
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
        for method in ("BCa", "percentile"):
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
            except Exception:  # degenerate samples (all equal) make BCa fail; fall back to percentile
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
            out["welch_t"], out["welch_p"] = float(t.statistic), float(t.pvalue)
            if flat_a or flat_b:
                out["notes"].append(f"all configurations of {'A' if flat_a else 'B'} have the same accuracy: "
                                    "Welch's test leans on the other series' spread alone")
        try:
            u = stats.mannwhitneyu(b, a, alternative="two-sided")
            out["mannwhitney_u"], out["mannwhitney_p"] = float(u.statistic), float(u.pvalue)
        except ValueError:
            pass
    return out


def paired_items(con, run_a: str, run_b: str, filters: Mapping[str, Sequence] | None = None,
                 view: str = VIEW, scoring: str = "lenient") -> pd.DataFrame:
    """Items answered in both runs, matched on (config_id, sample, prompt): correct_a, correct_b and factors."""
    where_a, pa = _where(con, [run_a], filters, view=view)
    where_b, pb = _where(con, [run_b], filters, view=view)
    facs = [c for c in factor_columns(con, [run_a, run_b], view) if c not in RUN_FACTORS]
    fsel = "".join(f", a.{_quote(c)}" for c in facs)
    sql = f"""
        WITH a AS (SELECT * FROM {_src(con, view, scoring)} {where_a}),
             b AS (SELECT * FROM {_src(con, view, scoring)} {where_b})
        SELECT a.config_id, a.sample, a.idx AS idx_a, b.idx AS idx_b{fsel},
               a.correct AS correct_a, b.correct AS correct_b
        FROM a JOIN b ON a.config_id = b.config_id AND a.sample = b.sample AND a.prompt = b.prompt
        ORDER BY a.config_id, a.sample"""
    return con.execute(sql, pa + pb).df()


def mcnemar(paired: pd.DataFrame) -> dict:
    """Exact McNemar test (binomial on the discordant pairs) of paired correctness."""
    from scipy.stats import binomtest

    if paired.empty:
        return {"n": 0, "both_right": 0, "only_a": 0, "only_b": 0, "both_wrong": 0, "p_value": math.nan}
    a = paired["correct_a"].astype(bool).to_numpy()
    b = paired["correct_b"].astype(bool).to_numpy()
    only_a = int(np.sum(a & ~b))
    only_b = int(np.sum(~a & b))
    out = {"n": int(a.size), "both_right": int(np.sum(a & b)), "only_a": only_a, "only_b": only_b,
           "both_wrong": int(np.sum(~a & ~b))}
    d = only_a + only_b
    out["p_value"] = float(binomtest(only_a, d, 0.5).pvalue) if d else 1.0
    out["agreement"] = (out["both_right"] + out["both_wrong"]) / out["n"]
    return out


AGREEMENT_LEVELS = ("both right", "only A right", "only B right", "both wrong")


def agreement_map(paired: pd.DataFrame, max_configs: int = 60) -> pd.DataFrame:
    """Long table (config_id, sample, category code 0–3, category) of the first ``max_configs`` shared configs."""
    if paired.empty:
        return pd.DataFrame(columns=["config_id", "sample", "code", "category"])
    a = paired["correct_a"].astype(bool)
    b = paired["correct_b"].astype(bool)
    code = np.select([a & b, a & ~b, ~a & b], [0, 1, 2], default=3)
    out = paired.assign(code=code, category=[AGREEMENT_LEVELS[c] for c in code])
    keep = list(dict.fromkeys(out["config_id"]))[:max_configs]
    return out[out["config_id"].isin(keep)].reset_index(drop=True)

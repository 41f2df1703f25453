"""Comparing runs and uploads: aligned per-config accuracies (what Compare draws: description), item-by-item
pairing, its counts and the agreement map. The test of one run against another is core/analysis/comparison.py."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis.queries import RUN_FACTORS, factor_columns
from core.analysis.sql import VIEW, quote, relation, where_clause
from core.analysis.stats import mcnemar_counts
from core.analysis.summaries import config_accuracy_sql, frame_from_json

# --------------------------------------------------------------------------------------------------------------------
# comparisons (A6)

@dataclass
class Series:
    """A named group of runs compared as one (e.g. one stored run, or one uploaded file imported as a run)."""

    name: str
    run_ids: tuple[str, ...]


def compare_runs(con, series: Sequence[Series], x: str = "operation", align: bool = True,
                 filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient",
                 factors: bool = True) -> tuple[pd.DataFrame, list[str]]:
    """Per-config accuracies of each series (column ``series``), restricted to the combinations of shared factor
    values that every series has (``align``; a level written 4 or 4.0, NULL or NaN is one level). Returns (points,
    aligned_on factors). ``factors=False`` leaves the shared factor columns other than ``x`` out of the points (what
    a figure and the tests need: half the data to hand over at paper scale).

    One DuckDB statement: each series' per-configuration accuracies (summaries.config_accuracy's query), the
    combinations of shared levels every series has, and the points in those (17 s in pandas, row by row, for two
    runs of 100,000 configurations before)."""
    all_ids = [r for s in series for r in s.run_ids]
    if not series or not all_ids:
        return pd.DataFrame(columns=["series", "run_id", "config_id", "n", "n_correct", "accuracy"]), []
    # factors present (non-null) in every series
    shared: list[str] | None = None
    for s in series:
        cols = [c for c in factor_columns(con, s.run_ids, view) if c not in RUN_FACTORS]
        shared = cols if shared is None else [c for c in shared if c in cols]
    shared = shared or []
    if "reasoning" in shared and not all(
            "reasoning" in factor_columns(con, s.run_ids, view, varying=True) for s in series):
        # a run asked at one effort (--reasoning-effort) is compared with a run at another, not aligned away
        shared = [c for c in shared if c != "reasoning"]
    by = list(dict.fromkeys([x, *shared])) if x else shared
    parts, params = [], []
    key_cols = "run_id, config_id"
    for i, s in enumerate(series):
        sql, p, key_cols = config_accuracy_sql(con, s.run_ids, by, filters, view, scoring)
        parts.append(f"SELECT {i} AS _s, ? AS series, * FROM ({sql})")
        params += [s.name, *p]
    kept = by if factors else [x] if x else []
    out_cols = ", ".join(["series", "run_id", "config_id", *(quote(c) for c in kept), "n", "n_correct", "accuracy"])
    order = f"_s, {key_cols}"
    pts = " UNION ALL ".join(f"({q})" for q in parts)
    if align and shared and len(series) > 1:
        norm = [f"CASE WHEN typeof({k}) IN ('DOUBLE', 'FLOAT') AND isnan(TRY_CAST({k} AS DOUBLE)) THEN NULL "
                f"ELSE {k} END" for k in (quote(c) for c in shared)]
        sql = (f"WITH pts AS ({pts}), "
               f"common AS (SELECT {', '.join(f'{e} AS _k{i}' for i, e in enumerate(norm))} FROM pts "
               "GROUP BY ALL HAVING count(DISTINCT series) = (SELECT count(DISTINCT series) FROM pts)) "
               f"SELECT {out_cols} FROM pts SEMI JOIN common ON "
               + " AND ".join(f"common._k{i} IS NOT DISTINCT FROM ({e})" for i, e in enumerate(norm))
               + f" ORDER BY {order}")
    else:
        sql = f"SELECT {out_cols} FROM ({pts}) ORDER BY {order}"
    return con.execute(sql, params).df(), shared


def series_without_points(points: pd.DataFrame, series: Sequence[Series]) -> list[str]:
    """Names of the series that have no per-config accuracy in ``points`` (no answered item in the selection, or
    none left after alignment) — a comparison must say so rather than show 'nan'."""
    have = set(points["series"].unique()) if "series" in points.columns else set()
    return [s.name for s in series if s.name not in have]


def _series_json(series: Sequence[Series]) -> list:
    return [[s.name, list(s.run_ids)] for s in series]


_ALIGNED: dict = {}                 # the last two alignments of this process (compare_view starts from one, aligned
_ALIGNED_LOCK = threading.Lock()    # or not), by memo key: 200,000 rows each at paper scale, so not in memo's 64
_ALIGNED_KEEP = 2                   # deep-copied entries


def _aligned(con, series: list, x: str, align: bool, filters: dict, scoring: str):
    """compare_runs with ``factors=False``, kept for the next caller in this process while the runs do not change.
    Callers only read the points."""
    from core.analysis import memo

    def compute():
        return compare_runs(con, [Series(n, tuple(ids)) for n, ids in series], x=x, align=align, filters=filters,
                            scoring=scoring, factors=False)

    k = memo.key(con, "compare_runs", (series, x, align, filters, scoring), {}, reads=[r for _, ids in series for r in ids])
    if k is None:
        return compute()
    with _ALIGNED_LOCK:
        if k in _ALIGNED:
            return _ALIGNED[k]
    out = compute()
    with _ALIGNED_LOCK:
        _ALIGNED[k] = out
        while len(_ALIGNED) > _ALIGNED_KEEP:
            _ALIGNED.pop(next(iter(_ALIGNED)))
    return out


def compare_view(con, series: Sequence[Series], x: str = "operation", align: bool = True,
                 filters: Mapping[str, Sequence] | None = None, scoring: str = "lenient",
                 max_points: int | None = None) -> dict:
    """What the Compare page draws of aligned series, computed once per state of their runs whichever process asks
    and kept in the store (core/analysis/memo.py, like the findings): at paper scale aligning two runs of 100,000
    configurations is ~0.6 s, and a page opened after a restart reads this instead.

    Returns ``shared`` (the factors aligned on), ``empty``, ``aligned_away`` (alignment left nothing though the
    series have points), ``missing`` (series without points), ``shapes`` (summaries.violin_summary by x and, with
    two or more series, ``series``: the violins), ``by_series`` and ``summary`` (group_summary by series, and by
    series and x), ``n_points`` and ``points`` — the per-configuration points only when there are at most
    ``max_points`` (summaries.MAX_DRAWN_POINTS) of them, else None."""
    from core.analysis import memo, summaries

    limit = summaries.MAX_DRAWN_POINTS if max_points is None else int(max_points)
    got = memo.call(con, "compare_view", _compare_view, _series_json(series), x, bool(align), dict(filters or {}),
                    scoring, limit, persist=True, reads=[r for s in series for r in s.run_ids])
    out = dict(got)
    for k in ("shapes", "by_series", "summary", "points"):
        out[k] = frame_from_json(got[k]) if got[k] is not None else None
    return out


def _compare_view(con, series: list, x: str, align: bool, filters: dict, scoring: str, limit: int) -> dict:
    from core.analysis.memo import frame_json
    from core.analysis.summaries import group_summary, violin_summary

    points, shared = _aligned(con, series, x, align, filters, scoring)
    colour = ["series"] if len(series) > 1 else []
    aligned_away = bool(points.empty and align and len(series) > 1
                        and not _aligned(con, series, x, False, filters, scoring)[0].empty)
    return {"shared": list(shared), "empty": bool(points.empty), "aligned_away": aligned_away,
            "missing": series_without_points(points, [Series(n, ()) for n, _ in series]),
            "n_points": int(len(points)),
            "shapes": frame_json(violin_summary(points, [x, *colour])),
            "by_series": frame_json(group_summary(points, ["series"])),
            "summary": frame_json(group_summary(points, ["series", x])),
            "points": frame_json(points) if len(points) <= limit else None}


def paired_items(con, run_a: str, run_b: str, filters: Mapping[str, Sequence] | None = None,
                 view: str = VIEW, scoring: str = "lenient") -> pd.DataFrame:
    """Items answered in both runs, matched on (config_id, sample, prompt): correct_a, correct_b and factors."""
    sql, params, _ = _pairing_sql(con, run_a, run_b, filters, view, scoring)
    return con.execute(f"{sql} ORDER BY a.config_id, a.sample", params).df()


def _pairing_sql(con, run_a, run_b, filters, view, scoring, factors: bool = True) -> tuple[str, list, list[str]]:
    """The pairing of two runs' answered items (unordered), its parameters and its columns (``factors``: with the
    factor columns)."""
    where_a, pa = where_clause(con, [run_a], filters, view=view)
    where_b, pb = where_clause(con, [run_b], filters, view=view)
    facs = [c for c in factor_columns(con, [run_a, run_b], view) if c not in RUN_FACTORS] if factors else []
    fsel = "".join(f", a.{quote(c)}" for c in facs)
    sql = f"""
        WITH a AS (SELECT * FROM {relation(con, view, scoring)} {where_a}),
             b AS (SELECT * FROM {relation(con, view, scoring)} {where_b})
        SELECT a.config_id, a.sample, a.idx AS idx_a, b.idx AS idx_b{fsel},
               a.correct AS correct_a, b.correct AS correct_b
        FROM a JOIN b ON a.config_id = b.config_id AND a.sample = b.sample AND a.prompt = b.prompt"""
    return sql, pa + pb, ["config_id", "sample", "idx_a", "idx_b", *facs, "correct_a", "correct_b"]


def mcnemar(paired: pd.DataFrame) -> dict:
    """Exact McNemar test (binomial on the discordant pairs) of paired correctness."""
    if paired.empty:
        return mcnemar_counts(0, 0, 0, 0)
    a = paired["correct_a"].astype(bool).to_numpy()
    b = paired["correct_b"].astype(bool).to_numpy()
    return mcnemar_counts(int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)), int(np.sum(~a & ~b)))


def paired_summary(con, run_a: str, run_b: str, filters: Mapping[str, Sequence] | None = None,
                   view: str = VIEW, scoring: str = "lenient", max_configs: int = 60) -> dict:
    """What the paired comparison of two runs shows, without handing their shared items to Python (DuckDB
    counts the pairs): ``mcnemar`` — mcnemar(paired_items(...)) from counts made by DuckDB — and
    ``map`` — agreement_map(paired_items(...), max_configs): the pairs of the first ``max_configs`` shared
    configurations only. Both equal what the full pairing gives."""
    sql, params, cols = _pairing_sql(con, run_a, run_b, filters, view, scoring, factors=False)
    per_config = con.execute(   # the four counts per shared configuration: a few numbers, not millions of pairs
        "SELECT config_id, count(*) FILTER (WHERE correct_a AND correct_b), "
        "count(*) FILTER (WHERE correct_a AND NOT correct_b), count(*) FILTER (WHERE NOT correct_a AND correct_b), "
        f"count(*) FILTER (WHERE NOT correct_a AND NOT correct_b) FROM ({sql}) GROUP BY config_id",
        params).fetchnumpy()
    found = [int(np.sum(per_config[k])) for k in list(per_config)[1:]]
    firsts = sorted(per_config["config_id"].tolist())[:max_configs]
    if firsts:
        sql, params, cols = _pairing_sql(con, run_a, run_b, {**(filters or {}), "config_id": firsts}, view, scoring)
        paired = con.execute(f"{sql} ORDER BY a.config_id, a.sample", params).df()
    else:
        paired = pd.DataFrame(columns=cols)
    return {"mcnemar": mcnemar_counts(*found), "map": agreement_map(paired, max_configs)}


def paired_comparison(con, run_ids: Sequence[str], filters: Mapping[str, Sequence] | None = None,
                      scoring: str = "lenient", max_configs: int = 60) -> dict:
    """paired_summary of ``run_ids`` = [A, B], computed once per state of the two runs whichever process asks, and
    kept in the store (core/analysis/memo.py, like the findings): the pairing of two paper-scale runs is seconds
    of DuckDB, so a page opened after a restart reads it instead."""
    from core.analysis import memo

    run_a, run_b = run_ids

    def as_json(con, run_a, run_b, filters, scoring, max_configs):
        out = paired_summary(con, run_a, run_b, filters, scoring=scoring, max_configs=max_configs)
        frame = out["map"].astype(object).where(out["map"].notna(), None)
        return {"mcnemar": out["mcnemar"], "columns": list(frame.columns), "rows": frame.to_numpy().tolist()}

    got = memo.call(con, "paired_summary", as_json, run_a, run_b, dict(filters or {}), scoring, int(max_configs),
                    persist=True, reads=[run_a, run_b])
    return {"mcnemar": got["mcnemar"], "map": pd.DataFrame(got["rows"], columns=got["columns"])}


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

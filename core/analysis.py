"""Analysis of stored results: every aggregation is DuckDB SQL over the store's ``v_results`` view.

One row of ``v_results`` = one item of one run (``run_id``, ``idx``) with its factors, the model's response and its
score; ``correct`` is NULL while an item has not been answered (or its call failed), so every metric below counts
answered items only.

A *configuration* (``config_id``) is one cell of a run's grid — every factor fixed, only the sample index varying —
exactly the paper's "prompt configuration". The distribution plotted in a violin is the distribution of per-config
accuracy (0–100, over that config's N samples), one point per (run, config).

Public API (all take an open DuckDB connection ``con`` whose catalogue has ``v_results``; ``run_ids`` selects runs;
``filters`` is ``{column: [values…]}`` on any factor column):

    factor_columns(con, run_ids)                   factors that take ≥ 1 non-null value in these runs
    factor_levels(con, run_ids, column)            distinct values of a column
    config_accuracy(con, run_ids, by, filters)     one row per (run, config): by-columns, n, n_correct, accuracy
    violin_data(con, run_ids, x, color, filters)   -> (points, summary) for the violin figure
    group_summary(points, by)                      mean / std / min / max / N of per-config accuracy per group
    wilson_interval(k, n, confidence)              Wilson score interval for a proportion, in percent
    config_interval(con, run_id, config_id)        accuracy + Wilson interval of one configuration
    error_table(con, run_ids, by, filters)         SPEC A4 / paper Tables 15–18 per group
    robustness(con, run_ids, factors, filters)     -> (per-factor spread + eta², per-model score)
    compare_runs(con, series, x, filters)          aligned per-config accuracies of several series
    series_without_points(points, series)          series a comparison has nothing for
    difference_of_means(a, b, …)                   bootstrap CI + Welch t + Mann–Whitney U
    paired_items(con, run_a, run_b, filters)       items both runs answered, aligned by (config_id, sample, prompt)
    mcnemar(paired)                                exact McNemar test on paired correctness
    agreement_map(paired, max_configs)             per-config × sample agreement categories
    drilldown(con, run_ids, filters, …)            the individual prompts, raw responses and parsed answers
    item_detail(row)                               one drill-down row as display text (no "nan" for NULLs)
    reference_tables() / reference_table(id)       the papers' published aggregates (data/reference_figures.json)
    reference_for(factor, tasks) / reference_task(id)   the published tables for a factor and task
    change_token(con)                              cheap fingerprint of the results, for cache keys
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from core.errors import UserError

VIEW = "v_results"

# Factor columns we know how to group by, in display order. Only those present in the view are used.
SETOPS_FACTORS = (
    "operation", "size_a", "size_b", "members", "length", "decile", "decile_mode", "condition",
    "hypernym_a", "hypernym_b", "swap_count", "overlap", "phrasing", "approach", "shots",
)
QUANTIFIER_FACTORS = (
    "quantifier", "object", "noun_group", "total", "count_large", "count_small", "predicate", "template", "label",
)
RUN_FACTORS = ("model", "task", "name", "run_id")
ALL_FACTORS = RUN_FACTORS + SETOPS_FACTORS + QUANTIFIER_FACTORS

# Columns a drill-down may show (beyond factors).
DETAIL_COLUMNS = (
    "run_id", "idx", "config_id", "sample", "prompt", "truth", "response", "parsed", "followed", "correct",
    "jaccard", "precision", "recall", "truth_len", "answer_len", "made_up", "empty_truth", "pred", "error",
    "latency_ms", "tokens_in", "tokens_out", "cost_usd", "set_a", "set_b",
)

LABELS = {
    "operation": "Operation", "size_a": "|A|", "size_b": "|B|", "members": "Token type", "length": "Token length",
    "decile": "Frequency decile", "decile_mode": "Decile mode", "condition": "Deceptive condition",
    "hypernym_a": "Hypernym A", "hypernym_b": "Hypernym B", "swap_count": "Swapped members", "overlap": "Overlap",
    "phrasing": "Phrasing", "approach": "Prompting approach", "shots": "k (shots)", "model": "Model", "task": "Task",
    "name": "Run name", "run_id": "Run", "quantifier": "Quantifier", "object": "Object", "noun_group": "Noun group",
    "total": "Total", "count_large": "# large", "count_small": "# small", "predicate": "Predicate",
    "template": "Template", "label": "Gold label", "series": "Series",
}


def label(column: str) -> str:
    """Readable axis / legend label of a column."""
    return LABELS.get(column, column.replace("_", " ").capitalize())


# --------------------------------------------------------------------------------------------------------------------
# SQL helpers: identifiers only from the view's own column list; values always as parameters.

def _quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


_COLUMN_CACHE: "OrderedDict[tuple[int, str], tuple[Any, tuple[str, ...]]]" = OrderedDict()


def _columns_of(con, table: str) -> tuple[str, ...]:
    """Column names of a table / view (cached per open connection: the catalogue query costs ~50 ms)."""
    key = (id(con), table)
    hit = _COLUMN_CACHE.get(key)
    if hit is not None and hit[0] is con:
        return hit[1]
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main' "
        "ORDER BY ordinal_position", [table]).fetchall()
    cols = tuple(r[0] for r in rows)
    _COLUMN_CACHE[key] = (con, cols)  # holding `con` keeps id(con) from being reused while cached
    while len(_COLUMN_CACHE) > 64:
        _COLUMN_CACHE.popitem(last=False)
    return cols


def view_columns(con, view: str = VIEW) -> tuple[str, ...]:
    return _columns_of(con, view)


_CALL_ONLY = {"response", "latency_ms", "tokens_in", "tokens_out", "cost_usd", "finish_reason"}


def _src(con, view: str = VIEW) -> str:
    """FROM-clause relation for aggregations. Over the store, the same rows as ``v_results`` minus the call columns
    (response, latency, tokens, cost): skipping the LEFT JOIN on the call cache halves the time of a violin or
    error table on a million rows. Falls back to the view itself for anything that is not the store's schema."""
    if view != VIEW:
        return view
    items, results, runs = (_columns_of(con, t) for t in ("items", "results", "runs"))
    if not items or not results or not runs:
        return view
    sel = []
    for c in view_columns(con, view):
        q = _quote(c)
        if c in items:
            sel.append(f"i.{q}")
        elif c in _CALL_ONLY:
            continue
        elif c in results:
            sel.append(f"r.{q}")
        elif c in ("model", "task", "name", "base_url", "source"):
            sel.append(f"ru.{q}")
        elif c == "run_status":
            sel.append("ru.status AS run_status")
        else:
            return view  # a column we cannot place: use the view as it is
    return (f"(SELECT {', '.join(sel)} FROM items i JOIN runs ru ON ru.run_id = i.run_id "
            "LEFT JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx) AS v")


def _check_column(con, column: str, view: str = VIEW) -> str:
    if column not in view_columns(con, view):
        raise UserError(f"unknown column {column!r}")
    return _quote(column)


def _where(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence[Any]] | None,
           answered: bool = True, view: str = VIEW) -> tuple[str, list]:
    """WHERE clause selecting runs, filters (column IN values; None matches NULL) and answered rows."""
    parts: list[str] = []
    params: list = []
    if run_ids is not None:
        run_ids = list(run_ids)
        if not run_ids:
            return "WHERE FALSE", []
        parts.append(f"run_id IN ({', '.join('?' * len(run_ids))})")
        params.extend(run_ids)
    cols = set(view_columns(con, view))
    for col, values in (filters or {}).items():
        if col not in cols:
            raise UserError(f"unknown filter column {col!r}")
        values = list(values) if isinstance(values, (list, tuple, set)) else [values]
        if not values:
            continue
        non_null = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        sub = []
        if non_null:
            # compare as text so "4" from a URL matches the integer 4
            sub.append(f"CAST({_quote(col)} AS VARCHAR) IN ({', '.join('?' * len(non_null))})")
            params.extend(str(v) for v in non_null)
        if len(non_null) < len(values):
            sub.append(f"{_quote(col)} IS NULL")
        parts.append("(" + " OR ".join(sub) + ")")
    if answered:
        parts.append("correct IS NOT NULL")
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def change_token(con, view: str = VIEW) -> str:
    """Fingerprint of the stored results (row counts); changes when rows are added, answered or deleted."""
    row = con.execute(f"SELECT count(*), count(correct), count(DISTINCT run_id) FROM {view}").fetchone()
    return "-".join(str(x) for x in row)


# --------------------------------------------------------------------------------------------------------------------
# factors

def factor_columns(con, run_ids: Sequence[str] | None = None, view: str = VIEW, varying: bool = False) -> list[str]:
    """Known factor columns with at least one non-null value (``varying``: at least two distinct values)."""
    present = [c for c in ALL_FACTORS if c in view_columns(con, view)]
    if not present:
        return []
    where, params = _where(con, run_ids, None, answered=False, view=view)
    # min/max/count are much cheaper than count(DISTINCT …) on a million rows
    exprs = ", ".join(f"count({_quote(c)}), min({_quote(c)}) IS DISTINCT FROM "
                      f"max({_quote(c)})" for c in present)
    row = con.execute(f"SELECT count(*), {exprs} FROM {_src(con, view)} {where}", params).fetchone()
    total, out = row[0], []
    for i, c in enumerate(present):
        n_non_null, differs = row[1 + 2 * i], row[2 + 2 * i]
        if not n_non_null:
            continue
        if varying and not (differs or n_non_null < total):
            continue
        out.append(c)
    return out


def factor_levels(con, run_ids: Sequence[str] | None, column: str, view: str = VIEW) -> list:
    col = _check_column(con, column, view)
    where, params = _where(con, run_ids, None, answered=False, view=view)
    rows = con.execute(f"SELECT DISTINCT {col} AS lv FROM {_src(con, view)} {where} ORDER BY lv NULLS LAST",
                       params).fetchall()
    return [r[0] for r in rows]


# --------------------------------------------------------------------------------------------------------------------
# per-config accuracy (violins)

def config_accuracy(con, run_ids: Sequence[str] | None, by: Sequence[str] = (),
                    filters: Mapping[str, Sequence] | None = None, view: str = VIEW) -> pd.DataFrame:
    """One row per (run_id, config_id, *by): n answered, n_correct, accuracy in percent (0–100)."""
    by = [c for c in dict.fromkeys(by) if c and c not in ("run_id", "config_id")]
    cols = [_check_column(con, c, view) for c in by]
    where, params = _where(con, run_ids, filters, view=view)
    sel = ", ".join(["run_id", "config_id", *cols])
    sql = (f"SELECT {sel}, count(*) AS n, sum(CAST(correct AS INTEGER)) AS n_correct, "
           f"100.0 * avg(CAST(correct AS INTEGER)) AS accuracy FROM {_src(con, view)} {where} GROUP BY {sel} "
           f"ORDER BY {sel}")
    return con.execute(sql, params).df()


def group_summary(points: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """mean / std / min / max of per-config accuracy and N configs per group, computed by DuckDB over ``points``."""
    import duckdb

    by = [c for c in dict.fromkeys(by) if c]
    if points.empty:
        return pd.DataFrame(columns=[*by, "mean", "std", "min", "max", "N", "items"])
    cols = ", ".join(_quote(c) for c in by)
    grp = f"GROUP BY {cols} ORDER BY {cols}" if by else ""
    sel = f"{cols}, " if by else ""
    sql = (f"SELECT {sel}avg(accuracy) AS mean, stddev_samp(accuracy) AS std, min(accuracy) AS min, "
           f"max(accuracy) AS max, count(*) AS N, sum(n) AS items FROM points {grp}")
    local = duckdb.connect()
    try:
        local.register("points", points)
        return local.execute(sql).df()
    finally:
        local.close()


def violin_data(con, run_ids: Sequence[str] | None, x: str = "operation", color: str | None = None,
                filters: Mapping[str, Sequence] | None = None, view: str = VIEW) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Points (one per run × config, with x and color columns) and the per-group summary (mean/std/min/max/N)."""
    by = [c for c in (x, color) if c]
    points = config_accuracy(con, run_ids, by, filters, view)
    return points, group_summary(points, by)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes out of n, in percent. (nan, nan) when n == 0."""
    from scipy.special import ndtri  # normal quantile; much lighter to import than scipy.stats

    if n <= 0:
        return (math.nan, math.nan)
    z = float(ndtri(0.5 + confidence / 2))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (100 * max(0.0, centre - half), 100 * min(1.0, centre + half))


def config_interval(con, run_id: str, config_id: str, confidence: float = 0.95, view: str = VIEW) -> dict:
    """Accuracy of one configuration with its Wilson interval (percent)."""
    n, k = con.execute(
        f"SELECT count(*), coalesce(sum(CAST(correct AS INTEGER)), 0) FROM {_src(con, view)} "
        "WHERE run_id = ? AND config_id = ? AND correct IS NOT NULL", [run_id, config_id]).fetchone()
    lo, hi = wilson_interval(int(k), int(n), confidence)
    return {"run_id": run_id, "config_id": config_id, "n": int(n), "n_correct": int(k),
            "accuracy": (100.0 * k / n) if n else math.nan, "low": lo, "high": hi, "confidence": confidence}


# --------------------------------------------------------------------------------------------------------------------
# error analysis (SPEC A4; the paper's Tables 15–18)

ERROR_ROWS = (
    ("accuracy", "Accuracy"),
    ("accuracy_non_empty", "Accuracy Non Empty"),
    ("accuracy_on_non_empty_truths", "Accuracy On Non-Empty Truths"),
    ("pct_nullset_correct", "Pct Nullset Correct"),
    ("pct_nullset_wrong", "Pct Nullset Wrong"),
    ("pct_made_up_vals", "Pct With Made Up Vals"),
    ("pct_answers_made_up", "Pct Answers With Made Up Members"),
    ("n", "N Comparisons"),
    ("n_correct", "N Correct"),
    ("n_wrong", "N Wrong"),
    ("empty_equal", "Empty Set Equal Count"),
    ("empty_mismatch", "Empty Set Mismatch Count"),
    ("made_up_sum", "Made Up Vals Sum"),
    ("did_not_follow", "Did Not Follow Instruction"),
    ("top1_mistake", "Top1 Mistake"), ("top2_mistake", "Top2 Mistake"), ("top3_mistake", "Top3 Mistake"),
    ("top1_correct", "Top1 Correct"), ("top2_correct", "Top2 Correct"), ("top3_correct", "Top3 Correct"),
)
ERROR_TABLE_HELP = """Row definitions (all percentages are of N Comparisons unless said otherwise), as in the paper:
Accuracy = N Correct / N; Accuracy Non Empty = correct answers whose truth is non-empty / N (so Accuracy =
Accuracy Non Empty + Pct Nullset Correct); Accuracy On Non-Empty Truths = correct / items with a non-empty truth;
Pct Nullset Correct / Wrong = items with an empty truth answered right / wrong, over N; Pct With Made Up Vals =
Made Up Vals Sum / N (the paper's definition: members, not answers); Pct Answers With Made Up Members = answers
containing at least one member outside A∪B / N; TopK Mistake / Correct = the K-th most frequent ("G<truth length>
vs. L<answer length>") pair among wrong / correct answers, with its share of the wrong / correct answers in percent
(L? = no set found in the answer)."""


ERROR_TABLE_TASK = "setops"


def error_table(con, run_ids: Sequence[str] | None, by: Sequence[str] = ("members", "operation"),
                filters: Mapping[str, Sequence] | None = None, view: str = VIEW) -> pd.DataFrame:
    """One row per group of ``by`` with the columns of ERROR_ROWS (keys), ordered by the group columns.

    Set-operation items only: its rows (empty-set answers, made-up members, "G vs L" set lengths) mean nothing for
    a quantifier's true/false answer, so items of other tasks are left out (see quantifier_metrics for those)."""
    by = [c for c in dict.fromkeys(by) if c]
    cols = [_check_column(con, c, view) for c in by]
    if "task" in view_columns(con, view):
        filters = {**(filters or {}), "task": [ERROR_TABLE_TASK]}
    where, params = _where(con, run_ids, filters, view=view)
    sel = ", ".join(cols)
    grp = f"GROUP BY {sel} ORDER BY {sel}" if by else ""
    head = f"{sel}, " if by else ""
    c = "CAST(correct AS INTEGER)"
    e = "CAST(coalesce(empty_truth, FALSE) AS INTEGER)"
    base_sql = f"""
        SELECT {head}
            count(*) AS n,
            sum({c}) AS n_correct,
            count(*) - sum({c}) AS n_wrong,
            sum({c} * {e}) AS empty_equal,
            sum((1 - {c}) * {e}) AS empty_mismatch,
            sum({c} * (1 - {e})) AS correct_non_empty,
            count(*) - sum({e}) AS n_non_empty,
            coalesce(sum(made_up), 0) AS made_up_sum,
            count(*) FILTER (WHERE coalesce(made_up, 0) > 0) AS answers_made_up,
            count(*) FILTER (WHERE NOT coalesce(followed, FALSE)) AS did_not_follow
        FROM {_src(con, view)} {where} {grp}"""
    base = con.execute(base_sql, params).df()
    if base.empty:
        return pd.DataFrame(columns=[*by, *(k for k, _ in ERROR_ROWS)])
    n = base["n"].astype(float)
    base["accuracy"] = 100 * base["n_correct"] / n
    base["accuracy_non_empty"] = 100 * base["correct_non_empty"] / n
    base["accuracy_on_non_empty_truths"] = np.where(
        base["n_non_empty"] > 0, 100 * base["correct_non_empty"] / base["n_non_empty"].clip(lower=1), np.nan)
    base["pct_nullset_correct"] = 100 * base["empty_equal"] / n
    base["pct_nullset_wrong"] = 100 * base["empty_mismatch"] / n
    base["pct_made_up_vals"] = 100 * base["made_up_sum"] / n
    base["pct_answers_made_up"] = 100 * base["answers_made_up"] / n

    # top-3 (G vs L) pairs among wrong and among correct answers, per group — ranked in SQL
    part = f"PARTITION BY {sel}, correct" if by else "PARTITION BY correct"
    pairs_sql = f"""
        WITH p AS (
            SELECT {head} correct, truth_len, answer_len, count(*) AS k
            FROM {_src(con, view)} {where} GROUP BY ALL),
        r AS (
            SELECT *, 100.0 * k / sum(k) OVER ({part}) AS share,
                   row_number() OVER ({part} ORDER BY k DESC, truth_len, answer_len NULLS LAST) AS rk
            FROM p)
        SELECT * FROM r WHERE rk <= 3"""
    pairs = con.execute(pairs_sql, params).df()
    for kind, flag in (("mistake", False), ("correct", True)):
        for rank in (1, 2, 3):
            base[f"top{rank}_{kind}"] = None
    key_cols = by
    index = {tuple(_norm(v) for v in row): i for i, row in enumerate(base[key_cols].itertuples(index=False))} \
        if by else {(): 0}
    for row in pairs.itertuples(index=False):
        d = row._asdict()
        key = tuple(_norm(d[k]) for k in key_cols) if by else ()
        i = index.get(key)
        if i is None:
            continue
        g = "?" if d["truth_len"] is None or _isnan(d["truth_len"]) else int(d["truth_len"])
        l_ = "?" if d["answer_len"] is None or _isnan(d["answer_len"]) else int(d["answer_len"])
        kind = "correct" if bool(d["correct"]) else "mistake"
        base.at[i, f"top{int(d['rk'])}_{kind}"] = f"G{g} vs. L{l_} ({d['share']:.2f}%)"
    keep = [*by, *(k for k, _ in ERROR_ROWS)]
    return base[keep]


def error_table_paper_layout(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The paper's orientation: one column per group, one row per metric (readable row names)."""
    by = [c for c in dict.fromkeys(by) if c]
    if table.empty:
        return pd.DataFrame()
    names = [" · ".join(str(v) for v in row) if by else "all" for row in table[by].itertuples(index=False)] \
        if by else ["all"] * len(table)
    out = {}
    for name, (_, row) in zip(names, table.iterrows()):
        col = []
        for key, _title in ERROR_ROWS:
            v = row[key]
            if isinstance(v, (float, np.floating)):
                v = "" if _isnan(v) else (f"{v:.2f}" if not float(v).is_integer() or key.startswith(("pct", "acc"))
                                          else f"{int(v)}")
            elif v is None:
                v = ""
            col.append(str(v))
        out[name] = col
    return pd.DataFrame(out, index=[t for _, t in ERROR_ROWS])


def _isnan(v) -> bool:
    try:
        return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)) or v is pd.NA
    except TypeError:
        return False


def _norm(v):
    if _isnan(v):
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)) and float(v).is_integer():
        return int(v)
    return v


# --------------------------------------------------------------------------------------------------------------------
# robustness (A7)

def robustness(con, run_ids: Sequence[str] | None, factors: Sequence[str] | None = None,
               filters: Mapping[str, Sequence] | None = None, view: str = VIEW
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per model and factor: levels, spread of level means (max − min, accuracy points), eta² (share of the variance
    of per-config accuracy explained by the factor, one-way ANOVA) and its F-test p-value; plus a per-model table:
    configs, mean, robustness score = std of per-config accuracy (lower = more robust), min, max."""
    from scipy.special import fdtrc  # survival function of the F distribution

    if factors is None:
        factors = [c for c in factor_columns(con, run_ids, view, varying=True) if c not in RUN_FACTORS]
    factors = [c for c in factors if c not in ("model", "run_id", "config_id")]
    qf = [_check_column(con, c, view) for c in factors]
    where, params = _where(con, run_ids, filters, view=view)
    import duckdb

    any_cols = "".join(f", any_value({q}) AS {q}" for q in qf)
    cfg_df = con.execute(
        f"SELECT model, run_id, config_id{any_cols}, 100.0 * avg(CAST(correct AS INTEGER)) AS acc "
        f"FROM {_src(con, view)} {where} GROUP BY model, run_id, config_id", params).df()
    empty = pd.DataFrame(columns=["model", "factor", "levels", "spread", "eta_squared", "p_value",
                                  "best_level", "worst_level"])
    local = duckdb.connect()
    try:
        local.register("cfg", cfg_df)
        per_model = local.execute(
            "SELECT model, count(*) AS configs, avg(acc) AS mean, stddev_samp(acc) AS score, "
            "min(acc) AS min, max(acc) AS max FROM cfg GROUP BY model ORDER BY score NULLS LAST, model").df()
        if not factors or cfg_df.empty:
            return empty, per_model
        unions = [f"SELECT model, '{f}' AS factor, coalesce(CAST({q} AS VARCHAR), '(none)') AS level, acc FROM cfg"
                  for f, q in zip(factors, qf)]
        sql = f"""
            WITH long AS ({' UNION ALL '.join(unions)}),
            g AS (SELECT model, factor, avg(acc) AS gm, sum(acc * acc) - count(*) * avg(acc) * avg(acc) AS sst,
                         count(*) AS n FROM long GROUP BY model, factor),
            lv AS (SELECT model, factor, level, avg(acc) AS m, count(*) AS k FROM long GROUP BY model, factor, level)
            SELECT lv.model, lv.factor, count(*) AS levels, max(m) - min(m) AS spread,
                   sum(k * (m - gm) * (m - gm)) AS ssb, any_value(sst) AS sst, any_value(g.n) AS n,
                   arg_max(level, m) AS best_level, arg_min(level, m) AS worst_level
            FROM lv JOIN g ON lv.model = g.model AND lv.factor = g.factor
            GROUP BY lv.model, lv.factor HAVING count(*) > 1
            ORDER BY lv.model, spread DESC"""
        res = local.execute(sql).df()
    finally:
        local.close()
    if res.empty:
        return empty, per_model
    sst = res["sst"].clip(lower=0)
    res["eta_squared"] = np.where(sst > 1e-9, res["ssb"] / sst.where(sst > 1e-9, 1), np.nan)
    dfb = res["levels"] - 1
    dfw = res["n"] - res["levels"]
    ssw = (sst - res["ssb"]).clip(lower=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        fstat = (res["ssb"] / dfb) / (ssw / dfw)
    p = []
    for fv, a, b, w in zip(fstat, dfb, dfw, ssw):
        if b <= 0 or not np.isfinite(fv):
            p.append(0.0 if (b > 0 and w <= 1e-12 and np.isinf(fv)) else np.nan)
        else:
            p.append(float(fdtrc(a, b, fv)))
    res["p_value"] = p
    # every level has the same mean: no best or worst level (arg_max / arg_min would name an arbitrary one for both)
    tie = res["spread"].abs() <= 1e-9
    res["best_level"] = res["best_level"].astype(object).where(~tie, "(all equal)")
    res["worst_level"] = res["worst_level"].astype(object).where(~tie, "(all equal)")
    return res[["model", "factor", "levels", "spread", "eta_squared", "p_value", "best_level", "worst_level"]], \
        per_model


# --------------------------------------------------------------------------------------------------------------------
# comparisons (A6)

@dataclass
class Series:
    """A named group of runs compared as one (e.g. one stored run, or one uploaded file imported as a run)."""

    name: str
    run_ids: tuple[str, ...]


def compare_runs(con, series: Sequence[Series], x: str = "operation", align: bool = True,
                 filters: Mapping[str, Sequence] | None = None, view: str = VIEW
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
        pts = config_accuracy(con, s.run_ids, by, filters, view)
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
    Welch's t-test and the Mann–Whitney U test."""
    from scipy import stats

    a = np.asarray([v for v in a if v is not None and np.isfinite(v)], dtype=float)
    b = np.asarray([v for v in b if v is not None and np.isfinite(v)], dtype=float)
    out = {"n_a": int(a.size), "n_b": int(b.size), "mean_a": float(a.mean()) if a.size else math.nan,
           "mean_b": float(b.mean()) if b.size else math.nan, "difference": math.nan, "ci_low": math.nan,
           "ci_high": math.nan, "confidence": confidence, "welch_t": math.nan, "welch_p": math.nan,
           "mannwhitney_u": math.nan, "mannwhitney_p": math.nan}
    if a.size == 0 or b.size == 0:
        return out
    out["difference"] = float(b.mean() - a.mean())
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
        if not np.isfinite(out["ci_low"]) and np.all(a == a[0]) and np.all(b == b[0]):
            out["ci_low"] = out["ci_high"] = out["difference"]
            out["ci_method"] = "degenerate"
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = stats.ttest_ind(b, a, equal_var=False)
        out["welch_t"], out["welch_p"] = float(t.statistic), float(t.pvalue)
        if np.all(a == a[0]) and np.all(b == b[0]) and a[0] == b[0]:
            out["welch_p"] = 1.0
        try:
            u = stats.mannwhitneyu(b, a, alternative="two-sided")
            out["mannwhitney_u"], out["mannwhitney_p"] = float(u.statistic), float(u.pvalue)
        except ValueError:
            pass
    return out


def paired_items(con, run_a: str, run_b: str, filters: Mapping[str, Sequence] | None = None,
                 view: str = VIEW) -> pd.DataFrame:
    """Items answered in both runs, matched on (config_id, sample, prompt): correct_a, correct_b and factors."""
    where_a, pa = _where(con, [run_a], filters, view=view)
    where_b, pb = _where(con, [run_b], filters, view=view)
    facs = [c for c in factor_columns(con, [run_a, run_b], view) if c not in RUN_FACTORS]
    fsel = "".join(f", a.{_quote(c)}" for c in facs)
    sql = f"""
        WITH a AS (SELECT * FROM {_src(con, view)} {where_a}), b AS (SELECT * FROM {_src(con, view)} {where_b})
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


# --------------------------------------------------------------------------------------------------------------------
# drill-down (A5)

def drilldown(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence] | None = None,
              correct: bool | None = None, config_id: str | None = None, limit: int = 200, offset: int = 0,
              view: str = VIEW) -> pd.DataFrame:
    """Individual items of a slice with prompt, raw response, parsed answer and score."""
    f = dict(filters or {})
    if config_id:
        f["config_id"] = [config_id]
    where, params = _where(con, run_ids, f, answered=False, view=view)
    extra = []
    if correct is not None:
        extra.append("correct = ?")
        params.append(bool(correct))
    if extra:
        where = (where + " AND " if where else "WHERE ") + " AND ".join(extra)
    have = view_columns(con, view)
    facs = [c for c in ALL_FACTORS if c in have and c not in ("run_id", "task", "name")]
    cols = list(dict.fromkeys([*(c for c in DETAIL_COLUMNS if c in have),
                               *facs]))
    src = _src(con, view)
    calls = _columns_of(con, "calls")
    if src != view and "cache_key" in have and calls:
        # pick the page of items first, then fetch only their calls (not a join over every call)
        call_cols = [c for c in cols if c in _CALL_ONLY and c in calls]
        item_cols = [c for c in cols if c not in _CALL_ONLY]
        sel_p = ", ".join(f"p.{_quote(c)}" for c in item_cols)
        sel_c = "".join(f", c.{_quote(c)}" for c in call_cols)
        sql = (f"WITH p AS (SELECT {', '.join(_quote(c) for c in dict.fromkeys([*item_cols, 'cache_key']))} "
               f"FROM {src} {where} ORDER BY run_id, idx LIMIT ? OFFSET ?) "
               f"SELECT {sel_p}{sel_c} FROM p LEFT JOIN calls c ON c.cache_key = p.cache_key ORDER BY p.run_id, p.idx")
        out = con.execute(sql, params + [int(limit), int(offset)]).df()
        return out[[c for c in cols if c in out.columns]]
    sel = ", ".join(_quote(c) for c in cols)
    sql = f"SELECT {sel} FROM {view} {where} ORDER BY run_id, idx LIMIT ? OFFSET ?"
    return con.execute(sql, params + [int(limit), int(offset)]).df()


def item_detail(row: Mapping[str, Any]) -> dict[str, Any]:
    """One drill-down row (a dict or a DataFrame row) as display text for the prompt / response / answer panel.

    Missing values (None, NaN, pd.NA — what a DataFrame row holds for NULL columns, and NaN is truthy) are never
    shown as "nan": a failed call says so with its error, an answer with no set says the instruction was not
    followed, and an unanswered item is "not scored"."""
    def get(key):
        v = row.get(key) if hasattr(row, "get") else None
        return None if _isnan(v) else v

    error, response, parsed, correct = get("error"), get("response"), get("parsed"), get("correct")
    followed = get("followed")
    if response is not None:
        response_text = str(response)
    elif error is not None:
        response_text = f"(no response: the call failed — {error})"
    else:
        response_text = "(no response yet)"
    if parsed is not None:
        parsed_text = str(parsed)
    elif response is not None and followed is not None and not bool(followed):
        parsed_text = "(no answer found: did not follow the instruction)"
    else:
        parsed_text = "(none)"
    if correct is None:
        correct_text = "not scored (the call failed)" if error is not None else "not scored (not answered yet)"
    else:
        correct_text = "yes" if bool(correct) else "no"
    idx = get("idx")
    return {"run_id": get("run_id"), "idx": None if idx is None else int(idx), "prompt": str(get("prompt") or ""),
            "response": response_text, "parsed": parsed_text, "truth": "(none)" if get("truth") is None
            else str(get("truth")), "correct": correct_text, "error": None if error is None else str(error)}


def run_overview(con, run_ids: Sequence[str] | None = None, view: str = VIEW) -> pd.DataFrame:
    """Per run: model, items, answered, failed (calls that ended in an error: not in the accuracy), correct,
    accuracy (over the answered items), cost — the headline numbers."""
    where, params = _where(con, run_ids, None, answered=False, view=view)
    failed = "count(*) FILTER (WHERE correct IS NULL AND error IS NOT NULL)" if "error" in view_columns(con, view) \
        else "0"
    sql = (f"SELECT run_id, any_value(model) AS model, any_value(task) AS task, count(*) AS items, "
           f"count(correct) AS answered, {failed} AS failed, sum(CAST(correct AS INTEGER)) AS n_correct, "
           f"100.0 * avg(CAST(correct AS INTEGER)) AS accuracy, count(DISTINCT config_id) AS configs, "
           f"sum(cost_usd) AS cost_usd FROM {view} {where} GROUP BY run_id ORDER BY run_id")
    return con.execute(sql, params).df()


# --------------------------------------------------------------------------------------------------------------------
# the papers' published aggregates

REFERENCE_PATH = Path(__file__).resolve().parent.parent / "data" / "reference_figures.json"


@lru_cache(maxsize=1)
def _reference() -> dict:
    with open(REFERENCE_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def reference_tables() -> list[dict]:
    """[{id, title, source, factors, rows}] — see data/reference_figures.json."""
    return [dict(t) for t in _reference()["tables"]]


def reference_table(table_id: str) -> pd.DataFrame:
    """One published table as a DataFrame (factor columns + mean, std, n), with ``source`` and ``title`` columns."""
    for t in _reference()["tables"]:
        if t["id"] == table_id:
            df = pd.DataFrame(t["rows"])
            df["source"] = t["source"]
            df["title"] = t["title"]
            return df
    raise UserError(f"no reference table {table_id!r}")


def reference_task(table_id: str) -> str:
    """The task a published table belongs to: GQG tables are quantifier results, the others set operations."""
    return "quantifiers" if table_id.startswith("gqg") else "setops"


def reference_for(factor: str, tasks: Iterable[str] | None = None) -> list[dict]:
    """Reference tables grouped by exactly this one factor (to overlay on a violin split by it); with ``tasks``,
    only the tables of those tasks (a set-operation paper's figures never beside quantifier runs, and back)."""
    keep = None if tasks is None else set(tasks)
    return [t for t in reference_tables() if t["factors"] == [factor]
            and (keep is None or reference_task(t["id"]) in keep)]


def filters_from_pairs(pairs: Iterable[str]) -> dict[str, list[str]]:
    """Parse ["col=v1,v2", …] (URL / CLI form) into a filters dict; ignores malformed entries."""
    out: dict[str, list[str]] = {}
    for p in pairs:
        if "=" not in p:
            continue
        k, v = p.split("=", 1)
        k = k.strip()
        if k and v:
            out.setdefault(k, []).extend(x for x in v.split(",") if x != "")
    return out

"""Per-configuration accuracy and its summaries: violin data, group statistics, Wilson intervals and the
robustness profile (spread and eta-squared per factor, a robustness score per model)."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis import aggregated
from core.analysis.queries import RUN_FACTORS, factor_columns
from core.analysis.sql import VIEW, check_column, quote, relation
from core.analysis.stats import wilson_interval

# --------------------------------------------------------------------------------------------------------------------
# per-config accuracy (violins)

# Above a few thousand configurations each violin is drawn from this many evenly spaced quantiles of its
# configurations' accuracies: shape, quartiles and mean within 1 / SKETCH of the range, for a fraction of the data.
SKETCH = 1001
# Above this many configurations no marker per configuration is drawn (the shapes, boxes and means still use every
# point; 200,000 markers would take the browser seconds to draw and say nothing more): violin_view returns no points
# and the pages draw the violins from the shapes. The one place this number lives (read at call time).
MAX_DRAWN_POINTS = 5000

def config_accuracy(con, run_ids: Sequence[str] | None, by: Sequence[str] = (),
                    filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient",
                    lowest: int | None = None) -> pd.DataFrame:
    """One row per (run_id, config_id, *by): n answered, n_correct, accuracy in percent (0–100), verdicts of
    ``scoring`` ("strict" | "lenient"), ordered by (run_id, config_id, *by). ``lowest``: only the ``lowest``
    configurations of lowest accuracy (ties in that order) — what a list of the worst shows — with the number of all
    of them in a column ``of`` (DuckDB ranks them; only those rows reach Python)."""
    sql, params, sel = config_accuracy_sql(con, run_ids, by, filters, view, scoring)
    if lowest is None:
        return con.execute(f"{sql} ORDER BY {sel}", params).df()
    return con.execute(f"SELECT *, count(*) OVER () AS \"of\" FROM ({sql}) ORDER BY accuracy, {sel} LIMIT ?",
                       [*params, int(lowest)]).df()


def config_accuracy_sql(con, run_ids, by, filters, view, scoring) -> tuple[str, list, str]:
    """The per-configuration accuracy query (unordered), its parameters and its key columns (see config_accuracy):
    over the store's aggregates when they answer the question, else grouped from the rows."""
    by = [c for c in dict.fromkeys(by) if c and c not in ("run_id", "config_id")]
    cols = [check_column(con, c, view) for c in by]
    sel = ", ".join(["run_id", "config_id", *cols])
    src = aggregated.source(con, run_ids, ["run_id", "config_id", *by], filters, counts=("n", "n_correct"),
                            scoring=scoring, view=view)
    return (f"SELECT {sel}, n, CAST(n_correct AS HUGEINT) AS n_correct, 100.0 * (n_correct / n) AS accuracy "
            f"FROM {src.sql} WHERE n > 0", src.params, sel)


def group_summary(points: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """mean / std / min / max of per-config accuracy and N configs per group, computed by DuckDB over ``points``."""
    by = [c for c in dict.fromkeys(by) if c]
    if points.empty:
        return pd.DataFrame(columns=[*by, "mean", "std", "min", "max", "N", "items"])
    cols = ", ".join(quote(c) for c in by)
    grp = f"GROUP BY {cols} ORDER BY {cols}" if by else ""
    sel = f"{cols}, " if by else ""
    sql = (f"SELECT {sel}avg(accuracy) AS mean, stddev_samp(accuracy) AS std, min(accuracy) AS min, "
           f"max(accuracy) AS max, count(*) AS N, sum(n) AS items FROM points {grp}")
    return _over_points(points, lambda local: local.execute(sql).df())


def accuracy_table(con, run_ids: Sequence[str] | None, by: Sequence[str],
                   filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient"
                   ) -> tuple[pd.DataFrame, str | None]:
    """The reference's get_stats table of a selection: group_summary of per-configuration accuracy by ``by``, and
    the run-level column added to keep several runs apart (views.run_split: model, or run_id when two runs share a
    model; None when ``by`` keeps them apart or groups them as the user chose) — ``(table, split)``.

    A configuration is never split: a column of ``by`` whose value changes inside a configuration of this slice
    (a deceptive item's parts of speech) is refused with a UserError naming it, since its groups would be pieces of
    configurations, not configurations. Memoised in-process on the runs' versions (core/analysis/memo.py): a repeated
    ``report table`` or page view asks no SQL."""
    from core.analysis import memo

    by = [c for c in dict.fromkeys(by) if c]
    table, split = memo.call(con, "accuracy_table", _accuracy_table,
                             list(run_ids) if run_ids is not None else None, by,
                             {k: list(v) if isinstance(v, (list, tuple, set)) else v
                              for k, v in (filters or {}).items()} or None, view, scoring)
    return table, split


def _accuracy_table(con, run_ids, by, filters, view, scoring) -> tuple[pd.DataFrame, str | None]:
    from core.analysis.queries import varies_inside
    from core.analysis.views import run_rows, run_split
    from core.errors import UserError

    inside = varies_inside(con, run_ids, by, filters, view)
    if inside:
        from core.analysis.queries import label

        raise UserError(f"cannot group configurations by {inside[0]} ({label(inside[0]).lower()}): it changes inside "
                        "a configuration of this selection (drawn per sample, e.g. a deceptive item's parts of "
                        "speech), so its groups would be pieces of configurations; group by a design factor, or "
                        "narrow the selection to runs where it is one (e.g. members=words)")
    split = None if run_ids is not None and len(set(run_ids)) < 2 else run_split(run_rows(con, run_ids), by)
    keys = [split, *by] if split else by
    points = config_accuracy(con, run_ids, keys, filters, view, scoring)
    return group_summary(points, keys), split


def _over_points(points: pd.DataFrame, query):
    """``query(con)`` on an in-memory DuckDB connection where ``points`` is the table ``points``."""
    import duckdb

    local = duckdb.connect()
    try:
        local.register("points", points)
        return query(local)
    finally:
        local.close()


def violin_data(con, run_ids: Sequence[str] | None, x: str = "operation", color: str | None = None,
                filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient"
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Points (one per run × config, with x and color columns) and the per-group summary (mean/std/min/max/N)."""
    by = [c for c in (x, color) if c]
    points = config_accuracy(con, run_ids, by, filters, view, scoring)
    return points, group_summary(points, by)


def violin_view(con, run_ids: Sequence[str] | None, x: str = "operation", color: str | None = None,
                filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient",
                max_points: int | None = None, sketch: int = SKETCH, panel: str | None = None
                ) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """What the violins of a selection need, at any number of configurations: ``(points, summary)``.

    ``panel``: a run-level column (model, or run_id — views.run_split) the groups are split by as well, so that
    several models' or runs' configurations never share a violin; the frames then hold it as a column.
    ``summary`` has one row per (panel, x, color) group: mean / std / min / max of per-configuration accuracy, N
    configurations, items, the fewest items of a configuration (``min_items``) and ``shape``: the group's
    accuracies sorted — all of them, or ``sketch`` evenly spaced quantiles of them (linear interpolation, as
    numpy's default) when the group has more. ``points`` (as from violin_data, for markers, hover and selection) only
    when the selection has at most ``max_points`` (MAX_DRAWN_POINTS) configurations, else None: the shapes,
    quartiles and means drawn from the sketch are those of every configuration to within 1 / ``sketch`` of the range, and DuckDB hands over
    a few thousand numbers instead of 200,000 rows (the Results page's first violin at 10 million results). Kept
    in the store like the findings."""
    from core.analysis import memo

    limit = MAX_DRAWN_POINTS if max_points is None else int(max_points)
    # kept in the store once per state of the runs (core/analysis/memo.py): a cold server reads the first violins
    got = memo.call(con, "violin_view", _violin_view_json, list(run_ids) if run_ids is not None else None, x, color,
                    dict(filters or {}), view, scoring, limit, int(sketch), panel, persist=True)
    return (memo.json_frame(got["points"]) if got["points"] is not None else None), frame_from_json(got["summary"])


def frame_from_json(got: dict) -> pd.DataFrame:
    """memo.json_frame, with a violin ``shape`` column (lists in JSON) back as numpy arrays."""
    from core.analysis import memo

    frame = memo.json_frame(got)
    if "shape" in frame.columns:
        frame["shape"] = [np.asarray(v, dtype=float) for v in frame["shape"]]
    return frame


def _violin_view_json(con, run_ids, x, color, filters, view, scoring, limit, sketch, panel=None) -> dict:
    from core.analysis.memo import frame_json

    by = [c for c in dict.fromkeys((panel, x, color)) if c]
    sql, params, _ = config_accuracy_sql(con, run_ids, by, filters, view, scoring)
    summary = _shapes(con, sql, params, by, sketch)
    many = summary.empty or int(summary["N"].sum()) > limit
    return {"summary": frame_json(summary),
            "points": None if many else frame_json(config_accuracy(con, run_ids, by, filters, view, scoring))}


def violin_summary(points: pd.DataFrame, by: Sequence[str], sketch: int = SKETCH) -> pd.DataFrame:
    """violin_view's summary (statistics and each violin's shape per ``by`` group) of per-configuration points
    already in hand (columns accuracy, n and ``by``; e.g. compare_runs'), computed by DuckDB over them."""
    by = [c for c in dict.fromkeys(by) if c]
    if points is None or points.empty or not {*by, "accuracy", "n"} <= set(points.columns):
        return pd.DataFrame(columns=[*by, "mean", "std", "min", "max", "N", "items", "min_items", "shape"])
    return _over_points(points, lambda local: _shapes(local, "SELECT * FROM points", [], by, sketch))


def _shapes(con, sql: str, params: list, by: Sequence[str], sketch: int) -> pd.DataFrame:
    """Per ``by`` group of the per-configuration rows of ``sql``: mean / std / min / max / N / items / min_items and
    ``shape``, its accuracies sorted or ``sketch`` quantiles of them (see violin_view)."""
    keys = ", ".join(quote(c) for c in by)
    group = f"GROUP BY {keys} ORDER BY {keys}" if by else ""
    summary = con.execute(   # sorted values per group: DuckDB's quantile_cont at 1,001 fractions is 10× slower
        f"SELECT {keys + ', ' if by else ''}avg(accuracy) AS mean, stddev_samp(accuracy) AS std, "
        "min(accuracy) AS min, max(accuracy) AS max, count(*) AS N, sum(n) AS items, min(n) AS min_items, "
        f"list(accuracy ORDER BY accuracy) AS shape FROM ({sql}) AS pts {group}", params).df()
    fractions = np.linspace(0.0, 1.0, sketch)
    summary["shape"] = [np.quantile(v, fractions) if len(v) > sketch else np.asarray(v, dtype=float)
                        for v in summary["shape"]]
    return summary


def config_interval(con, run_id: str, config_id: str, confidence: float = 0.95, view: str = VIEW,
                    scoring: str = "lenient") -> dict:
    """Accuracy of one configuration with its Wilson interval (percent)."""
    n, k = con.execute(
        f"SELECT count(*), coalesce(sum(CAST(correct AS INTEGER)), 0) FROM {relation(con, view, scoring)} "
        "WHERE run_id = ? AND config_id = ? AND correct IS NOT NULL", [run_id, config_id]).fetchone()
    lo, hi = wilson_interval(int(k), int(n), confidence)
    return {"run_id": run_id, "config_id": config_id, "n": int(n), "n_correct": int(k),
            "accuracy": (100.0 * k / n) if n else math.nan, "low": lo, "high": hi, "confidence": confidence}


# --------------------------------------------------------------------------------------------------------------------
# robustness (A7)

def robustness_caveat(rob: pd.DataFrame) -> str | None:
    """Why a robustness profile has nothing to show (then a page or report says this instead of an empty chart),
    or None when it has."""
    if rob is None or rob.empty:
        return ("No robustness profile: no factor takes two or more values with answered configurations in this "
                "selection.")
    spreads = pd.to_numeric(rob["spread"], errors="coerce").fillna(0)
    if float(spreads.abs().max()) == 0.0:
        return ("Every level of every factor has the same mean accuracy within each model (spread 0): nothing in "
                "this selection moves accuracy, so there is no profile to draw.")
    return None


def robustness(con, run_ids: Sequence[str] | None, factors: Sequence[str] | None = None,
               filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient"
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per model and factor: levels, spread of level means (max − min, accuracy points), eta² (share of the variance
    of per-config accuracy explained by the factor, one-way ANOVA) and its F-test p-value; plus a per-model table:
    configs, mean, robustness score = std of per-config accuracy (lower = more robust), min, max."""
    from scipy.special import fdtrc  # survival function of the F distribution

    if factors is None:
        # surface features only: the reasoning effort is a setting of the model (compared in its own views)
        factors = [c for c in factor_columns(con, run_ids, view, varying=True)
                   if c not in RUN_FACTORS and c != "reasoning"]
    factors = [c for c in factors if c not in ("model", "run_id", "config_id")]
    qf = [check_column(con, c, view) for c in factors]
    import duckdb

    src = aggregated.source(con, run_ids, ["model", "run_id", "config_id"], filters, counts=("n", "n_correct"),
                            scoring=scoring, carry=factors, view=view)
    cols = "".join(f", {q}" for q in qf)
    cfg_df = con.execute(f"SELECT model, run_id, config_id{cols}, 100.0 * (n_correct / n) AS acc "
                         f"FROM {src.sql} WHERE n > 0 ORDER BY run_id, config_id", src.params).df()
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
                   first(level ORDER BY round(m, 9) DESC, level) AS best_level,
                   first(level ORDER BY round(m, 9), level) AS worst_level
            FROM lv JOIN g ON lv.model = g.model AND lv.factor = g.factor
            GROUP BY lv.model, lv.factor HAVING count(*) > 1
            ORDER BY lv.model, round(spread, 9) DESC, lv.factor"""
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

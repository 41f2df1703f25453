"""Cost versus accuracy per reasoning effort: what each level of thinking buys, in tokens and dollars per correct
answer, series by series.

A *series* is what may be pooled: one model and one provenance (core/store/provenance.py). Runs made here of one
model pool (their replies come from one call cache: the same prompt and parameters give the same reply) and the
rows name them (``runs``); an uploaded run is a file's claims and a series of its own, never pooled with the tool's
own answers nor with another file. Every row carries ``model``, ``provenance``, ``series`` (its label:
core/analysis/reasoning.py ``series_label``) and ``runs``.

``effort_costs(con, run_ids, filters, scoring)`` gives one row per (series, reasoning effort):

* ``answered``, ``correct``, ``accuracy`` (%) — every answered item of the slice under ``scoring``;
* ``calls`` — the distinct calls behind the answers this tool made (an answer served from the cache was paid
  once, by the call that made it: each call counts once, whichever run it answered);
* ``tokens_in``, ``tokens_out`` (reasoning included, as billed), ``tokens_reasoning``, ``tokens_answer`` and
  ``cost_usd``, ``cost_reasoning_usd`` summed over those calls;
* ``tokens_per_correct``, ``reasoning_tokens_per_correct``, ``usd_per_correct`` — the sums over the correct answers
  among the tool's own answers (None when no answer is correct, or when a count or price is unknown for some call:
  a self-hosted endpoint has no price, a reply that does not count its reasoning tokens leaves them unknown);
* ``imported`` — answered items whose answers came from an imported file: what a file claims about its tokens and
  cost is not what this tool measured, so they count in the accuracy but not in the tokens or dollars.

``thinking_buys(con, run_ids, filters, scoring)`` answers "what does thinking buy?" per series and effort level:
``levels`` — accuracy, the paper's spread (std of per-configuration accuracy across the configurations asked at that
level, the robustness score), reasoning tokens and cost per item (per call this tool made) and per correct answer;
``contrasts`` — each level against the next one asked, paired on the same draws, and the deceptive swap effect at
each level with its change between levels (the interaction), all through the statistics engine
(core/analysis/reasoning.py: ``level_contrasts``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from core.analysis.queries import VIEW, scored_expr, view_columns, where_clause
from core.tasks import REASONING_EFFORTS

COLUMNS = ["model", "provenance", "series", "runs", "reasoning", "answered", "correct", "accuracy", "imported", "calls",
           "tokens_in", "tokens_out",
           "tokens_reasoning", "tokens_answer", "cost_usd", "cost_reasoning_usd", "tokens_per_correct",
           "reasoning_tokens_per_correct", "usd_per_correct"]
EFFORT_ORDER = {e: i for i, e in enumerate(REASONING_EFFORTS)}   # none, off, minimal … max
KEY = ["model", "provenance", "upload"]   # a series: one model, one provenance; each upload apart


def _series_sql(have: set) -> str:
    """The columns naming an item's series (``KEY``) in the view: runs made here of one model pool, an upload is
    a series of its own (its run id in ``upload``)."""
    from core.store.provenance import MADE_HERE, UPLOADED

    if "provenance" not in have:
        return f"model, '{MADE_HERE}' AS provenance, NULL AS upload"
    return f"model, provenance, CASE WHEN provenance = '{UPLOADED}' THEN run_id END AS upload"


def _named(df: pd.DataFrame) -> pd.DataFrame:
    """``series`` (its label: core/analysis/reasoning.py ``series_label``) in place of the ``upload`` key."""
    from core.analysis.reasoning import series_label

    df["series"] = [series_label(m, k, None if u is None or pd.isna(u) else u)
                    for m, k, u in zip(df["model"], df["provenance"], df["upload"])]
    return df
LEVEL_COLUMNS = ["model", "provenance", "series", "runs", "reasoning", "configs", "answered", "correct", "accuracy",
                 "spread", "calls",
                 "reasoning_tokens_per_item", "cost_per_item", "reasoning_tokens_per_correct", "usd_per_correct"]


def effort_costs(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence] | None = None,
                 scoring: str = "lenient", view: str = VIEW) -> pd.DataFrame:
    """One row per (series, reasoning effort) of the slice (see the module docstring)."""
    have = set(view_columns(con, view))
    if not {"reasoning", "tokens_reasoning", "cache_key"} <= have:
        return pd.DataFrame(columns=COLUMNS)
    where, params = where_clause(con, run_ids, filters, answered=True, view=view)
    correct = scored_expr(con, "correct", scoring, view)
    sql = f"""
        WITH v AS (
            SELECT {_series_sql(have)}, run_id, reasoning, coalesce({correct}, FALSE) AS ok,
                   cache_key IS NULL OR cache_key LIKE 'import:%' AS imported, cache_key, tokens_in, tokens_out,
                   tokens_reasoning, tokens_answer, cost_usd, cost_reasoning_usd
            FROM {view} {where}),
        answers AS (
            SELECT model, provenance, upload, reasoning, string_agg(DISTINCT run_id, ', ' ORDER BY run_id) AS runs,
                   count(*) AS answered, count(*) FILTER (WHERE ok) AS correct,
                   count(*) FILTER (WHERE imported) AS imported,
                   count(*) FILTER (WHERE ok AND NOT imported) AS correct_own
            FROM v GROUP BY model, provenance, upload, reasoning),
        calls AS (
            SELECT model, provenance, upload, reasoning, cache_key, any_value(tokens_in) AS tokens_in, any_value(tokens_out) AS tokens_out,
                   any_value(tokens_reasoning) AS tokens_reasoning, any_value(tokens_answer) AS tokens_answer,
                   any_value(cost_usd) AS cost_usd, any_value(cost_reasoning_usd) AS cost_reasoning_usd
            FROM v WHERE NOT imported GROUP BY model, provenance, upload, reasoning, cache_key),
        sums AS (
            SELECT model, provenance, upload, reasoning, count(*) AS calls,
                   sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out,
                   sum(tokens_reasoning) AS tokens_reasoning, sum(tokens_answer) AS tokens_answer,
                   sum(cost_usd) AS cost_usd, sum(cost_reasoning_usd) AS cost_reasoning_usd,
                   count(tokens_out) AS n_out, count(tokens_reasoning) AS n_reasoning, count(tokens_answer) AS n_answer,
                   count(cost_usd) AS n_cost
            FROM calls GROUP BY model, provenance, upload, reasoning)
        SELECT a.*, coalesce(s.calls, 0) AS calls, s.tokens_in, s.tokens_out, s.tokens_reasoning, s.tokens_answer,
               s.cost_usd, s.cost_reasoning_usd, s.n_out, s.n_reasoning, s.n_answer, s.n_cost
        FROM answers a LEFT JOIN sums s ON s.model = a.model AND s.provenance = a.provenance
            AND s.upload IS NOT DISTINCT FROM a.upload AND s.reasoning IS NOT DISTINCT FROM a.reasoning"""
    df = con.execute(sql, params).df()
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    df = _named(df)
    rows = []
    for r in df.to_dict("records"):
        calls, own = int(r["calls"]), int(r["correct_own"])

        def per_correct(total, counted):
            if not own or not calls or counted is None or int(counted) < calls or pd.isna(total):
                return None
            return float(total) / own

        def known(total, counted):   # a sum is only shown when every call had the number
            return None if not calls or counted is None or int(counted) < calls or pd.isna(total) else total

        rows.append({
            "model": r["model"], "provenance": r["provenance"], "series": r["series"], "runs": r["runs"],
            "reasoning": r["reasoning"], "answered": int(r["answered"]),
            "correct": int(r["correct"]), "accuracy": 100.0 * int(r["correct"]) / int(r["answered"]),
            "imported": int(r["imported"]), "calls": calls,
            "tokens_in": known(r["tokens_in"], r["n_out"]), "tokens_out": known(r["tokens_out"], r["n_out"]),
            "tokens_reasoning": known(r["tokens_reasoning"], r["n_reasoning"]),
            "tokens_answer": known(r["tokens_answer"], r["n_answer"]),
            "cost_usd": known(r["cost_usd"], r["n_cost"]),
            "cost_reasoning_usd": known(r["cost_reasoning_usd"], r["n_reasoning"]),
            "tokens_per_correct": per_correct(r["tokens_out"], r["n_out"]),
            "reasoning_tokens_per_correct": per_correct(r["tokens_reasoning"], r["n_reasoning"]),
            "usd_per_correct": per_correct(r["cost_usd"], r["n_cost"]),
        })
    out = pd.DataFrame(rows, columns=COLUMNS)
    order = out["reasoning"].map(lambda e: EFFORT_ORDER.get(e, 99))
    return out.assign(_o=order).sort_values(["series", "_o"]).drop(columns="_o").reset_index(drop=True)


def cost_accuracy_figure(costs: pd.DataFrame, per: str = "tokens"):
    """Accuracy (y) against what one correct answer cost (x: ``tokens`` out per correct answer, or ``usd``), one
    point per (series, effort), the efforts of a series joined in their order. Rows without the cost are left out."""
    import plotly.graph_objects as go

    from core.analysis.figures import PALETTE

    col, title = ("usd_per_correct", "US$ per correct answer") if per == "usd" else \
        ("tokens_per_correct", "output tokens (reasoning included) per correct answer")
    fig = go.Figure()
    shown = costs.dropna(subset=[col]) if not costs.empty else costs
    by = "series" if "series" in shown else "model"
    for i, (model, rows) in enumerate(shown.groupby(by, sort=True) if not shown.empty else []):
        fig.add_trace(go.Scatter(
            x=rows[col], y=rows["accuracy"], mode="lines+markers+text", name=str(model),
            text=rows["reasoning"], textposition="top center", line={"color": PALETTE[i % len(PALETTE)]},
            customdata=rows[["answered", "correct", "calls"]].to_numpy(),
            hovertemplate=("effort %{text}<br>accuracy %{y:.1f} %<br>" + title + " %{x:,.4g}<br>"
                           "%{customdata[1]} of %{customdata[0]} correct, %{customdata[2]} calls<extra>%{fullData.name}"
                           "</extra>")))
    fig.update_layout(xaxis_title=title, yaxis_title="accuracy %", yaxis_range=[0, 105], height=420,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text="series")
    if shown.empty:
        fig.add_annotation(text="no call of this selection has a known " + ("price" if per == "usd" else
                                                                            "token count"),
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return fig


def level_table(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence] | None = None,
                scoring: str = "lenient", view: str = VIEW) -> pd.DataFrame:
    """One row per (series, reasoning effort): ``configs`` asked, ``answered``, ``correct``, ``accuracy`` (%),
    ``spread`` (standard deviation of per-configuration accuracy in points, the paper's robustness score; None with
    fewer than two configurations), and from ``effort_costs`` the calls, reasoning tokens and dollars per item (per
    call this tool made: the sums over calls divided by their number) and per correct answer."""
    have = set(view_columns(con, view))
    if "reasoning" not in have:
        return pd.DataFrame(columns=LEVEL_COLUMNS)
    where, params = where_clause(con, run_ids, filters, answered=True, view=view)
    correct = scored_expr(con, "correct", scoring, view)
    acc = con.execute(f"""
        WITH v AS (SELECT {_series_sql(have)}, run_id, config_id, reasoning, {correct} AS ok FROM {view} {where}),
        cfg AS (
            SELECT model, provenance, upload, reasoning, run_id, config_id, count(*) AS n,
                   count(*) FILTER (WHERE coalesce(ok, FALSE)) AS k
            FROM v GROUP BY model, provenance, upload, reasoning, run_id, config_id)
        SELECT model, provenance, upload, reasoning, count(*) AS configs, sum(n) AS answered, sum(k) AS correct,
               100.0 * sum(k) / sum(n) AS accuracy, stddev_samp(100.0 * k / n) AS spread
        FROM cfg GROUP BY model, provenance, upload, reasoning""", params).df()
    if acc.empty:
        return pd.DataFrame(columns=LEVEL_COLUMNS)
    acc = _named(acc)
    costs = effort_costs(con, run_ids, filters, scoring, view)
    out = acc.merge(costs[["series", "runs", "reasoning", "calls", "tokens_reasoning", "cost_usd",
                           "reasoning_tokens_per_correct", "usd_per_correct"]], on=["series", "reasoning"],
                    how="left")

    def per_call(total, calls):
        return None if total is None or pd.isna(total) or not calls or pd.isna(calls) else float(total) / calls

    out["reasoning_tokens_per_item"] = [per_call(t, c) for t, c in zip(out["tokens_reasoning"], out["calls"])]
    out["cost_per_item"] = [per_call(t, c) for t, c in zip(out["cost_usd"], out["calls"])]
    out["spread"] = [None if pd.isna(v) else float(v) for v in out["spread"]]
    out["calls"] = out["calls"].fillna(0).astype(int)
    out = out.astype({"configs": int, "answered": int, "correct": int})
    order = out["reasoning"].map(lambda e: EFFORT_ORDER.get(e, 99))
    return out.assign(_o=order).sort_values(["series", "_o"]).drop(columns="_o")[LEVEL_COLUMNS] \
        .reset_index(drop=True)


def thinking_buys(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence] | None = None,
                  scoring: str = "lenient", view: str = VIEW) -> dict[str, pd.DataFrame]:
    """``{"levels": level_table(…), "contrasts": reasoning.level_contrasts(…)}`` for the slice (see the module
    docstring); the contrasts read set-operation items only (the draws are theirs)."""
    from core.analysis import findings, reasoning

    rows = findings.rows(con, run_ids, scoring, view)
    if len(rows) and "provenance" not in rows and "provenance" in set(view_columns(con, view)):
        kinds = dict(con.execute(f"SELECT DISTINCT run_id, provenance FROM {view} WHERE run_id IN "
                                 "(SELECT unnest(?))", [sorted(rows["run_id"].astype(str).unique())]).fetchall())
        rows["provenance"] = rows["run_id"].astype(str).map(kinds)
    for col, values in (filters or {}).items():
        if col in rows.columns:
            rows = rows[_matches(rows[col], list(values))]
    return {"levels": level_table(con, run_ids, filters, scoring, view),
            "contrasts": reasoning.level_contrasts(rows)}


def _matches(series: pd.Series, values: list) -> pd.Series:
    """Which entries of ``series`` are one of ``values`` as the SQL filter reads them: by their text (filters come
    as text from the CLI and the URL), and a number by its value (2 and "2" and 2.0 are one level)."""
    hit = series.astype(str).isin({str(v) for v in values})
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").dropna()
    if len(numbers):
        hit |= pd.to_numeric(series, errors="coerce").isin(numbers.tolist())
    return hit & series.notna()


def thinking_figure(levels: pd.DataFrame):
    """Accuracy (y) per effort level (x, in the scale's order), one line per series, the spread across
    configurations as error bars; hover: reasoning tokens and dollars per item."""
    import plotly.graph_objects as go

    from core.analysis.figures import PALETTE

    fig = go.Figure()
    by = "series" if "series" in levels else "model"
    for i, (model, rows) in enumerate(levels.groupby(by, sort=True) if not levels.empty else []):
        fig.add_trace(go.Scatter(
            x=rows["reasoning"], y=rows["accuracy"], mode="lines+markers", name=str(model),
            error_y={"type": "data", "array": rows["spread"].fillna(0).tolist(), "visible": True},
            line={"color": PALETTE[i % len(PALETTE)]},
            customdata=rows[["reasoning_tokens_per_item", "cost_per_item", "configs"]].to_numpy(dtype=object),
            hovertemplate=("effort %{x}<br>accuracy %{y:.1f} %<br>spread ± %{error_y.array:.1f} points across "
                           "%{customdata[2]} configurations<br>reasoning tokens per item %{customdata[0]:,.0f}<br>"
                           "US$ per item %{customdata[1]:.5f}<extra>%{fullData.name}</extra>")))
    order = [e for e in EFFORT_ORDER if not levels.empty and e in set(levels["reasoning"])]
    fig.update_layout(xaxis={"title": "reasoning effort", "categoryorder": "array", "categoryarray": order},
                      yaxis_title="accuracy % (bars: spread across configurations, std)", yaxis_range=[0, 105],
                      height=420, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text="series")
    return fig

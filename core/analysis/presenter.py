"""What a presenter shows on the Deceptive sets page (issue 19): accuracy per condition with N and a 95 % Wilson
interval, the paper's Claude Haiku figures beside it, and the replay of a stored run item by item.

    condition_stats(con, run_id, scoring, upto=None) -> DataFrame   condition, n, correct, followed, accuracy, lo, hi
    replay_order(con, run_id) -> list[int]      the run's answered items in the order they were stored
    paper_conditions() -> DataFrame             the paper's per-condition means (Claude Haiku, Table 8)
    bars(stats, paper, title) -> plotly Figure  big bars with error bars, N on each, the paper's bars beside
    replay_position(started_at, now, pace, n) -> int   how many items a replay shows at ``now``

A replay only re-reads stored answers — it never calls a model — and is always labelled as a replay (the page says
whose run it is, when it was made and by which model).
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from core.analysis.queries import VIEW, _src, check_scoring
from core.analysis.stats import wilson_interval

CONDITIONS = ("not_swapped", "swapped", "random")
LABELS = {"not_swapped": "Not swapped", "swapped": "Swapped", "random": "Random baseline"}


def replay_order(con, run_id: str) -> list[int]:
    """Answered items of ``run_id`` in the order they were stored (ties by index): the order a replay shows."""
    rows = con.execute('SELECT idx FROM results WHERE run_id = ? AND error IS NULL ORDER BY "at" NULLS LAST, idx',
                       [run_id]).fetchall()
    return [int(r[0]) for r in rows]


def condition_stats(con, run_id: str, scoring: str = "strict", upto: Sequence[int] | None = None,
                    view: str = VIEW) -> pd.DataFrame:
    """Per deceptive condition: items answered, correct, followed the answer format, accuracy % and its 95 % Wilson
    interval. ``upto``: only these items (a replay's first k)."""
    scoring = check_scoring(scoring)
    params: list = [run_id]
    only = ""
    if upto is not None:
        only = " AND idx IN (SELECT unnest(?::BIGINT[]))"
        params.append([int(i) for i in upto])
    df = con.execute(
        f"SELECT condition, count(*) AS n, sum(CAST(correct AS INTEGER)) AS correct, "
        f"sum(CAST(coalesce(followed, false) AS INTEGER)) AS followed FROM {_src(con, view, scoring)} "
        f"WHERE run_id = ? AND correct IS NOT NULL AND condition IS NOT NULL{only} GROUP BY condition",
        params).df()
    rows = []
    for cond in CONDITIONS:
        r = df[df["condition"] == cond]
        n = int(r["n"].iloc[0]) if len(r) else 0
        k = int(r["correct"].iloc[0] or 0) if len(r) else 0
        lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
        rows.append({"condition": cond, "label": LABELS[cond], "n": n, "correct": k,
                     "followed": int(r["followed"].iloc[0] or 0) if len(r) else 0,
                     "accuracy": 100.0 * k / n if n else float("nan"), "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def replayable_runs(con) -> pd.DataFrame:
    """Stored runs with deceptive items (any source: live, provider batch, imported file, another machine's)."""
    import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising

    if aggregates.present(con):   # from the per-configuration counts, not a join over every result
        return con.execute(
            "SELECT r.run_id, r.name, r.model, r.created_at, r.source, "
            "CAST(sum(k.n_rows - k.n_failed) AS BIGINT) AS answered FROM runs r "
            "JOIN agg_configs a USING (run_id) JOIN agg_counts k ON k.run_id = a.run_id AND k.config_id = a.config_id "
            "AND k.scoring = 'lenient' WHERE a.condition IS NOT NULL GROUP BY ALL HAVING sum(k.n_rows - k.n_failed) > 0 "
            "ORDER BY r.created_at DESC NULLS LAST").df()
    return con.execute(
        "SELECT r.run_id, r.name, r.model, r.created_at, r.source, count(*) AS answered FROM runs r "
        "JOIN results x USING (run_id) JOIN items i ON i.run_id = x.run_id AND i.idx = x.idx "
        "WHERE i.condition IS NOT NULL AND x.error IS NULL GROUP BY ALL ORDER BY r.created_at DESC").df()


def paper_conditions() -> pd.DataFrame:
    from core.analysis.reference import reference_table

    return reference_table("setlexsem_deceptive")


def bars(stats: pd.DataFrame, paper: pd.DataFrame | None = None, title: str | None = None,
         height: int = 460) -> go.Figure:
    """Accuracy per condition as big bars with their 95 % interval drawn and N written on each; the paper's Claude
    Haiku means (± std over its configurations) as a second bar beside each."""
    fig = go.Figure()
    have = stats[stats["n"] > 0]
    text = [f"{a:.0f} %<br>N = {n}" if n else "no answers yet" for a, n in zip(stats["accuracy"], stats["n"])]
    fig.add_trace(go.Bar(
        x=stats["label"], y=stats["accuracy"].fillna(0), name="this run (95 % Wilson interval)",
        marker_color=["#2e86de", "#e74c3c", "#7f8c8d"], text=text, textposition="inside",
        insidetextanchor="start", textfont={"size": 20, "color": "white"},
        error_y={"type": "data", "symmetric": False, "array": (stats["hi"] - stats["accuracy"]).fillna(0),
                 "arrayminus": (stats["accuracy"] - stats["lo"]).fillna(0), "thickness": 3, "width": 14,
                 "color": "#222", "visible": bool(len(have))}))
    if paper is not None and not paper.empty:
        p = paper.set_index("condition").reindex(list(CONDITIONS))
        fig.add_trace(go.Bar(x=[LABELS[c] for c in CONDITIONS], y=p["mean"], name="paper: Claude Haiku (± std)",
                             marker_color="rgba(0,0,0,0.18)", marker_line_color="#555", marker_line_width=1.5,
                             text=[f"{m:.0f} %" if m == m else "" for m in p["mean"]], textposition="inside",
                             textfont={"size": 16},
                             error_y={"type": "data", "array": p["std"].fillna(0), "color": "#999"}))
    fig.update_layout(barmode="group", height=height, template="plotly_white", title=title,
                      font={"size": 18}, legend={"orientation": "h", "y": 1.12, "x": 0},
                      margin={"l": 60, "r": 20, "t": 90 if title else 60, "b": 40})
    fig.update_yaxes(range=[0, 118], title_text="accuracy (%)", tickvals=[0, 25, 50, 75, 100])
    return fig


def replay_position(started_at: float, now: float, pace: float, n: int) -> int:
    """Items shown ``now`` by a replay started at ``started_at`` showing ``pace`` items per second (0 … n)."""
    if n <= 0 or pace <= 0:
        return 0
    return max(0, min(n, int(math.floor((now - started_at) * pace)) + 1))

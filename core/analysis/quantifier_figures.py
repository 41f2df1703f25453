"""Plotly figures for quantifier results. Inputs are the DataFrames of ``core.tasks.quantifiers.metrics``; nothing is
computed here beyond layout.

    fig_metrics_by(metrics, x, color)      accuracy (with its 95 % Wilson interval) and F1 per group (e.g. per
                                           quantifier), grouped bars, N answered written on each bar
    fig_frequency(metrics, color)          accuracy per noun frequency group, common → rarest (+ made up): the shape
                                           of the GQG paper's Figure 1
    fig_by_count(by_count, facet)          share answered "true" along 0…n against the gold step, per quantifier:
                                           where along the count the model flips
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.analysis.stats import wilson_interval
from core.tasks.quantifiers.metrics import NOUN_GROUP_ORDER

GROUP_LABELS = {
    "common": "common", "less_common": "less common", "rare": "rare", "rarer": "rarer", "rarest": "rarest",
    "made_up": "made up", "gqg": "GQG objects", "custom": "custom",
    **{f"pilot_{g}": f"{g.replace('_', ' ')} (GQG pilot)" for g in
       ("common", "less_common", "rare", "rarer", "rarest", "made_up")},
}


def _empty(title: str, message: str = "no answered items yet") -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, xaxis={"visible": False}, yaxis={"visible": False}, height=320,
                      annotations=[{"text": message, "showarrow": False, "font": {"size": 14}}])
    return fig


def fig_metrics_by(metrics: pd.DataFrame, x: str = "quantifier", color: str | None = None,
                   metrics_shown: tuple[str, ...] = ("accuracy", "f1"), title: str | None = None) -> go.Figure:
    """Grouped bars of the chosen metrics per value of ``x`` (one bar group per metric × color)."""
    title = title or f"{' / '.join(m.upper() if m == 'f1' else m.capitalize() for m in metrics_shown)} by {x}"
    if metrics is None or metrics.empty or metrics["answered"].fillna(0).sum() == 0:
        return _empty(title)
    df = metrics[metrics["answered"] > 0]
    fig = go.Figure()
    series = [(None, df)] if not color else [(k, g) for k, g in df.groupby(color, sort=False)]
    for key, g in series:
        for m in metrics_shown:
            name = (m.upper() if m == "f1" else m) + ("" if key is None else f" · {key}")
            bar = {}
            if m in ("accuracy", "accuracy_gqg"):   # a share of answered items: its 95 % Wilson interval
                low, high = accuracy_intervals(g, m)
                bar["error_y"] = {"type": "data", "symmetric": False, "array": (high - g[m]).clip(lower=0).tolist(),
                                  "arrayminus": (g[m] - low).clip(lower=0).tolist(), "color": "#333",
                                  "thickness": 1.2, "width": 4}
            fig.add_bar(x=g[x].astype(str), y=g[m], name=name, text=[f"N={int(a)}" for a in g["answered"]],
                        textposition="inside", insidetextanchor="start", textfont={"size": 11},
                        customdata=g[["answered", "unparsed"]].to_numpy(),
                        hovertemplate=f"{x}=%{{x}}<br>{m}=%{{y:.3f}}<br>answered=%{{customdata[0]}}"
                                      "<br>unparsed=%{customdata[1]}<extra></extra>", **bar)
    # long quantifier names ("between 2 and 10") slanted with room below them; the legend above the bars, where it
    # cannot cover the labels
    fig.update_layout(title=title, barmode="group", yaxis={"range": [0, 1.02], "title": "score"},
                      xaxis={"title": x, "type": "category", "tickangle": -35, "automargin": True},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
                      margin={"t": 90, "b": 40}, height=460)
    return fig


def accuracy_intervals(metrics: pd.DataFrame, column: str = "accuracy", confidence: float = 0.95
                       ) -> tuple[pd.Series, pd.Series]:
    """The Wilson interval (as shares 0–1) of each row's ``column`` over its answered items — one item right is
    accuracy 1.0 with an interval reaching down to about 0.21, not a bar as sure as a thousand."""
    lows, highs = [], []
    for acc, n in zip(metrics[column], metrics["answered"]):
        n = int(n or 0)
        if n <= 0 or pd.isna(acc):
            lows.append(float("nan"))
            highs.append(float("nan"))
            continue
        low, high = wilson_interval(round(float(acc) * n), n, confidence)
        lows.append(low / 100)
        highs.append(high / 100)
    return pd.Series(lows, index=metrics.index), pd.Series(highs, index=metrics.index)


def count_ticks(low: float, high: float, target: int = 10) -> dict:
    """Whole-number ticks for a count axis (never 41.5): a step of 1, 2, 5, 10, 20, 25, 50 … giving about ``target``
    ticks."""
    span = max(float(high) - float(low), 1.0)
    step = 1
    for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        step = s
        if span / s <= target:
            break
    return {"tick0": 0, "dtick": step, "tickformat": "d"}


def fig_frequency(metrics: pd.DataFrame, color: str | None = None, metrics_shown: tuple[str, ...] = ("accuracy", "f1"),
                  title: str = "Accuracy (solid) and F1 (dotted) by noun frequency group") -> go.Figure:
    """Lines + markers per noun group, ordered common → rarest → made up (the shape of GQG's Figure 1)."""
    if metrics is None or metrics.empty or metrics["answered"].fillna(0).sum() == 0:
        return _empty(title)
    rank = {g: i for i, g in enumerate(NOUN_GROUP_ORDER)}
    df = metrics[metrics["answered"] > 0].copy()
    df["_r"] = df["noun_group"].map(lambda g: rank.get(g, len(rank)))
    df = df.sort_values("_r", kind="stable")
    order = [GROUP_LABELS.get(g, g) for g in dict.fromkeys(df["noun_group"])]
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    fig = go.Figure()
    series = [(None, df)] if not color else [(k, g) for k, g in df.groupby(color, sort=False)]
    for si, (key, g) in enumerate(series):
        for metric in metrics_shown:
            label = "F1" if metric == "f1" else metric
            name = label if key is None else f"{label} · {key}"
            fig.add_scatter(x=[GROUP_LABELS.get(v, v) for v in g["noun_group"]], y=g[metric], mode="lines+markers",
                            name=name, marker={"size": 9 if metric == "accuracy" else 6},
                            line={"color": palette[si % len(palette)], "dash": "solid" if metric == "accuracy"
                                  else "dot"},
                            customdata=g[["answered", "unparsed"]].to_numpy(),
                            hovertemplate="%{x}<br>" + label + "=%{y:.3f}<br>answered=%{customdata[0]}"
                                          "<br>unparsed=%{customdata[1]}<extra></extra>")
    fig.update_layout(title=title, height=420, yaxis={"title": "score", "range": [0, 1.02]},
                      xaxis={"title": "word frequency", "type": "category", "categoryorder": "array",
                             "categoryarray": order, "automargin": True},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
                      margin={"t": 90})
    return fig


def fig_by_count(by_count: pd.DataFrame, facet: str = "quantifier", color: str | None = None,
                 max_facets: int = 15,
                 title: str = 'Share answered "true" (solid) along the count, against the truth (dashed)'
                 ) -> go.Figure:
    """Per facet value (default: quantifier) the share of "true" answers at each count of the asked predicate
    (solid, one line per ``color`` value, e.g. model) and the gold share (dashed step): where the two part is where
    the model's notion of the quantifier flips at the wrong place."""
    if by_count is None or by_count.empty or by_count["answered"].fillna(0).sum() == 0:
        return _empty(title)
    df = by_count[by_count["answered"] > 0]
    keys = list(dict.fromkeys(df[facet]))[:max_facets]
    cols = min(3, len(keys))
    rows = (len(keys) + cols - 1) // cols
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[str(k) for k in keys], shared_yaxes=True,
                        vertical_spacing=min(0.2, 0.6 / max(rows, 1)), horizontal_spacing=0.05)
    series = [None] if not color else list(dict.fromkeys(df[color]))
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    for n, key in enumerate(keys):
        g = df[df[facet] == key]
        r, c = n // cols + 1, n % cols + 1
        gold = g.groupby("count_asked", as_index=False)["label_true"].mean().sort_values("count_asked")
        fig.add_scatter(x=gold["count_asked"], y=gold["label_true"], mode="lines",
                        line={"shape": "hvh", "dash": "dash", "color": "#888"}, name="truth", legendgroup="truth",
                        showlegend=n == 0, row=r, col=c,
                        hovertemplate="count=%{x}<br>true share (gold)=%{y:.2f}<extra></extra>")
        for si, s in enumerate(series):
            gs = (g if s is None else g[g[color] == s]).sort_values("count_asked")
            name = 'answered "true"' if s is None else str(s)
            fig.add_scatter(x=gs["count_asked"], y=gs["pred_true"], mode="lines+markers", marker={"size": 4},
                            line={"color": palette[si % len(palette)]}, name=name, legendgroup=name,
                            showlegend=n == 0, row=r, col=c, customdata=gs[["accuracy", "answered"]].to_numpy(),
                            hovertemplate=name + "<br>count=%{x}<br>answered true=%{y:.2f}"
                                                 "<br>accuracy=%{customdata[0]:.2f}<br>n=%{customdata[1]}"
                                                 "<extra></extra>")
    fig.update_yaxes(range=[-0.05, 1.05])
    fig.update_layout(title=title, height=max(340, 250 * rows), margin={"t": 90})
    fig.update_xaxes(**count_ticks(df["count_asked"].min(), df["count_asked"].max()))
    fig.update_xaxes(title_text="count with the asked predicate", row=rows)
    fig.update_xaxes(tickformat="d")   # counts are whole numbers (pooled bins were labelled 41.5)
    return fig


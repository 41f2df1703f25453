"""Plotly figure builders for the dashboard (no Streamlit here; pages pass the frames from core.analysis).

The paper's violin style: the split factor (operation by default) on x, per-configuration accuracy 0–100 on y, one
point per configuration, a box inside each violin and the mean/std/N written above it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.analysis import summaries
from core.analysis.compare import AGREEMENT_LEVELS
from core.analysis.labels import label
from core.analysis.sql import is_missing
from core.tasks.setops import OPERATIONS

PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974",
           "#64B5CD")
OPERATION_LABELS = {"union": "Union", "intersection": "Intersection", "difference": "Difference",
                    "symmetric_difference": "Symmetric difference"}
CONDITION_LABELS = {"not_swapped": "Not swapped", "swapped": "Swapped", "random": "Random baseline"}
BOX_COLOR = "#1a1a1a"       # quartile box outline and mean line: dark on every palette colour
MIN_ITEMS = 10              # fewer items per configuration: a warning (accuracy takes only a few values)
MIN_CONFIGS = 5             # fewer configurations in a violin: a warning (its shape is a smoothing)


def level_text(column: str, value) -> str:
    """Readable tick text of a factor level."""
    if value is None or (isinstance(value, float) and value != value):
        return "none"
    if column == "operation":
        return OPERATION_LABELS.get(str(value), str(value))
    if column == "condition":
        return CONDITION_LABELS.get(str(value), str(value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def level_texts(values: pd.Series, column: str) -> pd.Series:
    """``values.map(lambda v: level_text(column, v))``, computed once per distinct value (a violin's points are
    hundreds of thousands of configurations, with a handful of levels)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    texts = np.array([level_text(column, v) for v in uniques], dtype=object)
    return pd.Series(texts[codes], index=values.index, dtype=object)


def level_order(column: str, values: Sequence) -> list:
    vals = list(dict.fromkeys(values))
    if column == "operation":
        known = [v for v in OPERATIONS if v in vals]
        return known + sorted((v for v in vals if v not in OPERATIONS), key=str)
    if column == "condition":
        known = [v for v in CONDITION_LABELS if v in vals]
        return known + sorted((v for v in vals if v not in CONDITION_LABELS), key=str)
    try:
        return sorted(vals, key=lambda v: (v is None, float(v) if v is not None else 0))
    except (TypeError, ValueError):
        return sorted(vals, key=lambda v: (v is None, str(v)))


def empty_figure(message: str, height: int = 320) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font={"size": 16})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=height, margin={"l": 20, "r": 20, "t": 30, "b": 20})
    return fig


# Above summaries.MAX_DRAWN_POINTS configurations the violins are drawn without one marker per configuration, and each violin is drawn from SKETCH evenly spaced quantiles of its configurations' accuracies (summaries.py):
# shape, quartiles and mean within 1 / SKETCH of the range, for a hundredth of the data to send and draw (200,000
# configurations took the browser seconds).
SKETCH = summaries.SKETCH


def _sketched(points: pd.DataFrame | None, summary: pd.DataFrame | None) -> bool:
    """Whether the violins are drawn from the summary's per-group shapes (analysis.violin_view without points)."""
    return points is None and summary is not None and "shape" in summary.columns


def panel_text(panel: str, value, names: Mapping | None = None) -> str:
    """A panel's title: the run's or model's name from ``names`` (a run's label, never its hash), else its level."""
    if names and value in names:
        return str(names[value])
    return f"{label(panel)}: {level_text(panel, value)}"


def violin(points: pd.DataFrame | None, x: str = "operation", color: str | None = None,
           summary: pd.DataFrame | None = None, title: str | None = None, height: int = 520,
           reference: pd.DataFrame | None = None, reference_name: str | None = None,
           empty_message: str = "No answered items for this selection yet", x_title: str | None = None,
           panel: str | None = None, panel_names: Mapping | None = None) -> go.Figure:
    """Violins of per-config accuracy (column ``accuracy``) by ``x``, one violin per ``color`` level side by side.
    ``summary`` (from analysis.group_summary) adds mean/std/N above the violins; ``reference`` (columns x, mean,
    std) overlays published means ± std as black diamonds. ``empty_message`` is shown when there are no points.
    With ``points`` None and a ``summary`` from analysis.violin_view (its ``shape`` column), each violin is drawn
    from its group's shape — the way a selection of more than summaries.MAX_DRAWN_POINTS configurations is drawn anyway.
    ``panel`` (a column of the frames: model or run_id, views.run_split): one panel per level, stacked, titled by
    ``panel_names`` — several models' or runs' configurations are never pooled into one violin."""
    sketched = _sketched(points, summary)
    frame = summary if sketched else points    # the rows whose x / colour levels are drawn
    if frame is None or frame.empty:
        return empty_figure(empty_message)
    if panel and panel in frame.columns:
        return _panels(points, x, color, summary, frame, panel, panel_names, title=title, height=height,
                       reference=reference, reference_name=reference_name, x_title=x_title)
    return _violin_one(points, x, color, summary, title=title, height=height, reference=reference,
                       reference_name=reference_name, x_title=x_title)


def _panels(points, x, color, summary, frame, panel, panel_names, *, title, height, reference, reference_name,
            x_title) -> go.Figure:
    """``violin`` of each ``panel`` level, stacked as subplots sharing the colours and the legend."""
    from plotly.subplots import make_subplots

    levels = level_order(panel, frame[panel].tolist())
    colors = level_order(color, frame[color].tolist()) if color else None
    n = len(levels)
    fig = make_subplots(rows=n, cols=1, subplot_titles=[panel_text(panel, v, panel_names) for v in levels],
                        vertical_spacing=min(0.16, 0.6 / n))
    for i, level in enumerate(levels):
        sub_points = points[level_mask(points[panel], level)] if points is not None else None
        sub_summary = summary[level_mask(summary[panel], level)] if summary is not None else None
        one = _violin_one(sub_points, x, color, sub_summary, reference=reference, reference_name=reference_name,
                          x_title=x_title, color_levels=colors)
        suffix = "" if i == 0 else str(i + 1)
        for trace in one.data:
            if i:
                trace.showlegend = False      # one legend: the colours are the same in every panel
            if color and isinstance(trace, go.Violin):
                trace.offsetgroup = trace.name    # a colour's slot is the same in every panel (not counted across)
            fig.add_trace(trace, row=i + 1, col=1)
        for ann in one.layout.annotations:
            fig.add_annotation(ann.update(xref=f"x{suffix}", yref=f"y{suffix}"))
        for shape in one.layout.shapes:
            fig.add_shape(shape.update(xref=f"x{suffix}", yref=f"y{suffix}"))
        fig.update_xaxes(one.layout.xaxis.to_plotly_json(), row=i + 1, col=1)
        if i < n - 1:    # the axis title once, under the last panel (it ran into the next panel's title)
            fig.update_xaxes(title_text=None, row=i + 1, col=1)
        fig.update_yaxes(one.layout.yaxis.to_plotly_json(), row=i + 1, col=1)
    fig.update_layout(title=title, height=max(height, int(0.8 * height * n)),
                      violinmode="group" if color else "overlay", template="plotly_white",
                      legend_title_text=label(color) if color else None,
                      margin={"l": 70, "r": 20, "t": 60 if title else 40, "b": 70}, font={"size": 14})
    return fig


def _violin_one(points, x, color, summary, *, title=None, height=520, reference=None, reference_name=None,
                x_title=None, color_levels: Sequence | None = None) -> go.Figure:
    """One panel of ``violin``; ``color_levels``: the colour levels in palette order (the same in every panel)."""
    sketched = _sketched(points, summary)
    frame = summary if sketched else points
    if frame is None or frame.empty:
        return empty_figure("nothing here")
    many = sketched or len(points) > summaries.MAX_DRAWN_POINTS    # no marker per configuration
    # too many to draw one by one: each violin from its shape (summaries.violin_summary, as violin_view gives)
    shapes = summary if sketched else summaries.violin_summary(points, [k for k in (x, color) if k]) if many else None
    fig = go.Figure()
    xs = level_order(x, frame[x].tolist()) if x else [None]
    tick = {level_text(x, v): v for v in xs} if x else {}
    cats = [level_text(x, v) for v in xs] if x else ["all"]
    colors = (list(color_levels) if color_levels is not None else level_order(color, frame[color].tolist())) \
        if color else [None]
    for i, c in enumerate(colors):
        drawn = shapes if many else points
        sub = drawn if color is None else drawn[level_mask(drawn[color], c)]
        if sub.empty:
            continue
        levels = level_texts(sub[x], x).tolist() if x else ["all"] * len(sub)   # each level's text once
        if many:   # numpy arrays: plotly checks a list value by value (0.1 s for two violins)
            arrays = [np.asarray(v, dtype=float) for v in sub["shape"]]
            xv = np.repeat(np.array(levels, dtype=object), [len(v) for v in arrays])
            yv = np.concatenate(arrays) if arrays else np.array([], dtype=float)
        else:
            xv, yv = levels, sub["accuracy"]
        name = level_text(color, c) if color else "accuracy"
        hover = "config %{customdata[0]}<br>accuracy %{y:.1f}% (n=%{customdata[1]})<extra>" + \
                (name if color else "") + "</extra>"
        fig.add_trace(go.Violin(
            x=xv, y=yv, name=name, legendgroup=name, scalegroup=name, showlegend=color is not None,
            line_color=PALETTE[i % len(PALETTE)], fillcolor=PALETTE[i % len(PALETTE)], opacity=0.6,
            # the quartile box and the mean line in a colour of their own (in the fill colour they were invisible)
            box={"visible": True, "fillcolor": "rgba(255,255,255,0.75)", "line": {"color": BOX_COLOR, "width": 1.5},
                 "width": 0.25},
            meanline={"visible": True, "color": BOX_COLOR, "width": 2},
            points=False if many else "all", pointpos=0, jitter=0.35,
            marker={"size": 5, "opacity": 0.75}, spanmode="hard", width=0.9 if color is None else None,
            customdata=sub[["config_id", "n"]].to_numpy() if {"config_id", "n"} <= set(sub.columns) and
            not many else None,
            hovertemplate=None if many else hover))
    if reference is not None and not reference.empty and x in reference.columns:
        ref = reference[reference[x].isin(list(tick.values()))] if tick else reference
        if not ref.empty:
            fig.add_trace(go.Scatter(
                x=[level_text(x, v) for v in ref[x]], y=ref["mean"],
                error_y={"type": "data", "array": ref["std"].fillna(0).tolist(), "visible": True, "color": "#222"},
                mode="markers", marker={"symbol": "diamond", "size": 11, "color": "#222"},
                name=reference_name or "published (mean ± std)", showlegend=True,
                hovertemplate="published mean %{y:.1f}<extra></extra>"))
    if summary is not None and not summary.empty and color is None and x:
        for _, row in summary.iterrows():
            std = row["std"]
            std_text = "–" if std is None or std != std else f"{std:.1f}"
            fig.add_annotation(x=level_text(x, row[x]), y=107, showarrow=False, yref="y",
                               text=f"μ {row['mean']:.1f} · σ {std_text} · N {int(row['N'])}",
                               font={"size": 12})
    fig.update_layout(
        title=title, height=height, violinmode="group" if color else "overlay", template="plotly_white",
        legend_title_text=label(color) if color else None, margin={"l": 70, "r": 20, "t": 60 if title else 30,
                                                                   "b": 70},
        font={"size": 14})
    if color is None and x:   # the mean, dashed across each violin (its categories sit at 0, 1, 2 …)
        means = (summary.set_index(level_texts(summary[x], x))["mean"] if sketched
                 else points.groupby(level_texts(points[x], x))["accuracy"].mean())
        for pos, cat in enumerate(cats):
            if cat in means.index:
                fig.add_shape(type="line", xref="x", yref="y", x0=pos - 0.42, x1=pos + 0.42, y0=means[cat],
                              y1=means[cat], line={"color": BOX_COLOR, "width": 1.5, "dash": "dash"})
    fig.update_yaxes(title_text="Accuracy per configuration (%)", range=[-5, 112], tickvals=[0, 20, 40, 60, 80, 100])
    fig.update_xaxes(title_text=x_title or (label(x) if x else ""), categoryorder="array", categoryarray=cats,
                     type="category", tickvals=cats,
                     ticktext=_n_ticks(_group_sizes(frame, x, color, sketched), cats, color, colors))
    return fig


def _group_sizes(frame: pd.DataFrame, x: str | None, color: str | None, sketched: bool = False) -> pd.Series:
    """Configurations per (x text, colour level) — counted from the points, or the summary's N when sketched —
    indexed by (x text, colour level); colour level None without a colour."""
    xs = level_texts(frame[x], x) if x else pd.Series(["all"] * len(frame), index=frame.index)
    cs = frame[color].astype(object) if color else pd.Series([None] * len(frame), index=frame.index, dtype=object)
    weights = frame["N"].astype(int) if sketched else pd.Series(1, index=frame.index)
    return pd.DataFrame({"x": xs, "c": cs, "w": weights}).groupby(["x", "c"], dropna=False, sort=False)["w"].sum()


def _n_ticks(sizes: pd.Series, cats: list[str], color: str | None, colors: list) -> list[str]:
    """Each x category's tick with the number of configurations of every violin above it: "Union<br>N=8", or
    "Union<br>N=8 · 4" for two colours side by side."""
    counts = {(xc, None if is_missing(cc) else cc): n for (xc, cc), n in sizes.items()}
    out = []
    for cat in cats:
        if color is None:
            ns = [counts.get((cat, None), 0)]
        else:
            ns = [sum(n for (xc, cc), n in counts.items() if xc == cat and (cc == c or cc is None and is_missing(c)))
                  for c in colors]
            ns = [n for n in ns if n] or [0]
        out.append(f"{cat}<br>N={' · '.join(str(n) for n in ns)}")
    return out


def violin_warnings(points: pd.DataFrame | None, x: str | None, color: str | None = None, min_items: int = MIN_ITEMS,
                    min_configs: int = MIN_CONFIGS, summary: pd.DataFrame | None = None, panel: str | None = None,
                    panel_names: Mapping | None = None) -> list[str]:
    """What a reader must know before trusting the violins: configurations of fewer than ``min_items`` items (their
    accuracy can take only a few values), violins of fewer than ``min_configs`` configurations (the smooth shape
    between a handful of points is drawn, not measured). Without ``points``, from a ``summary`` of
    analysis.violin_view (its N and min_items per violin). ``panel``: the violins are per panel level too (violin's
    ``panel``), named by ``panel_names``."""
    sketched = _sketched(points, summary)
    frame = summary if sketched else points
    if frame is None or frame.empty:
        return []
    out = []
    fewest = frame["min_items"] if sketched else frame["n"] if "n" in frame.columns else pd.Series(dtype=float)
    if len(fewest.dropna()):
        n_min = int(fewest.min())
        if n_min < min_items:
            steps = ", ".join(f"{100 * k / n_min:.0f}" for k in range(min(n_min, 4) + 1))
            out.append(f"Some configurations have only {n_min} item(s) (fewer than {min_items}): their accuracy can "
                       f"only be {steps}{' …' if n_min > 4 else ''} %, so the violins show coarse steps, not a "
                       "distribution. Draw more samples per configuration for a smooth picture.")
    panel = panel if panel and panel in frame.columns else None
    keys = [k for k in (panel, x, color) if k]
    if keys:
        texts = [frame[k].map(lambda v, k=k: panel_text(k, v, panel_names)) if k == panel else level_texts(frame[k], k)
                 for k in keys]
        sizes = frame["N"].groupby(texts).sum() if sketched else frame.groupby(texts).size()
        small = sizes[sizes < min_configs]
        if len(small):
            names = [" · ".join(i) if isinstance(i, tuple) else str(i) for i in small.index[:6]]
            out.append(f"{len(small)} violin(s) rest on fewer than {min_configs} configurations ("
                       + ", ".join(f"{n}: N={int(c)}" for n, c in zip(names, small.values[:6]))
                       + (" …" if len(small) > 6 else "") + "): their outline is a smoothing of a few points — "
                       "look at the points themselves.")
    return out


def level_mask(series: pd.Series, value):
    if value is None or (isinstance(value, float) and value != value):
        return series.isna()
    return series == value


def robustness_bars(rob: pd.DataFrame, height: int = 420) -> go.Figure:
    """Spread of per-config accuracy (max − min of the level means) each factor causes, per model."""
    if rob is None or rob.empty:
        return empty_figure("Need at least one factor with two or more levels")
    fig = go.Figure()
    for i, (model, sub) in enumerate(rob.groupby("model", sort=True)):
        fig.add_trace(go.Bar(
            y=[label(f) for f in sub["factor"]], x=sub["spread"], orientation="h", name=str(model),
            marker_color=PALETTE[i % len(PALETTE)],
            customdata=sub[["eta_squared", "best_level", "worst_level"]].to_numpy(),
            hovertemplate="%{y}: spread %{x:.1f} points<br>η² %{customdata[0]:.3f}<br>best %{customdata[1]}, "
                          "worst %{customdata[2]}<extra>" + str(model) + "</extra>"))
    fig.update_layout(barmode="group", height=height, template="plotly_white", font={"size": 14},
                      margin={"l": 160, "r": 20, "t": 30, "b": 60}, legend_title_text="Model")
    fig.update_xaxes(title_text="Spread of mean accuracy across the factor's levels (points)")
    fig.update_yaxes(autorange="reversed")
    return fig


def reference_bars(ref: pd.DataFrame, x: str, title: str | None = None, height: int = 380,
                   highlight: Sequence = ()) -> go.Figure:
    """A published table (one factor) as bars of mean ± std; levels in ``highlight`` (e.g. the user's own series)
    are coloured, the published ones grey."""
    if ref is None or ref.empty:
        return empty_figure("No published figures for this factor")
    colors = [PALETTE[0] if v in set(highlight) else "#8C8C8C" for v in ref[x]]
    fig = go.Figure(go.Bar(x=[level_text(x, v) for v in ref[x]], y=ref["mean"],
                           error_y={"type": "data", "array": ref["std"].fillna(0).tolist()},
                           marker_color=colors, hovertemplate="%{x}: %{y:.1f}<extra></extra>"))
    fig.update_layout(title=title, height=height, template="plotly_white", font={"size": 14},
                      margin={"l": 70, "r": 20, "t": 50 if title else 20, "b": 70})
    fig.update_yaxes(title_text="Mean accuracy (%)", range=[0, 105])
    fig.update_xaxes(title_text=label(x), type="category")
    return fig


_NOT_FACTORS = ("config_id", "sample", "idx", "idx_a", "idx_b", "correct", "correct_a", "correct_b", "code",
                "category", "n", "n_correct", "accuracy", "run_id", "series", "prompt", "task", "name")


def configuration_names(frame: pd.DataFrame) -> dict:
    """config_id -> a readable, unique name from the factor columns of ``frame`` ("intersection · |A|=4"), for axes
    that would otherwise show hashes; a name shared by two configurations gets " (2)", " (3)" …"""
    from core.analysis.views import config_labels

    per = frame.drop_duplicates("config_id").reset_index(drop=True)
    facs = [c for c in per.columns if c not in _NOT_FACTORS]
    names = config_labels(per, facs) if facs else pd.Series(["configuration"] * len(per))
    out, seen = {}, {}
    for cid, name in zip(per["config_id"], names):
        seen[name] = seen.get(name, 0) + 1
        out[cid] = name if seen[name] == 1 else f"{name} ({seen[name]})"
    return out


def agreement_heatmap(agree: pd.DataFrame, name_a: str = "A", name_b: str = "B", height: int | None = None
                      ) -> go.Figure:
    """Configs (rows) × samples (columns), coloured by which run got the item right."""
    if agree is None or agree.empty:
        return empty_figure("The two selections share no answered items")
    agree = agree.assign(config_id=agree["config_id"].map(configuration_names(agree)))
    piv = agree.pivot_table(index="config_id", columns="sample", values="code", aggfunc="first", sort=False)
    colors = ["#55A868", "#4C72B0", "#DD8452", "#C44E52"]
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / 4, c], [(i + 1) / 4, c]]
    names = [AGREEMENT_LEVELS[0], f"only {name_a} right", f"only {name_b} right", AGREEMENT_LEVELS[3]]
    text = piv.map(lambda v: "" if v != v else names[int(v)])
    fig = go.Figure(go.Heatmap(
        z=piv.to_numpy(), x=[str(c) for c in piv.columns], y=[str(r) for r in piv.index], zmin=-0.5, zmax=3.5,
        colorscale=scale, text=text.to_numpy(), hovertemplate="config %{y}, sample %{x}: %{text}<extra></extra>",
        colorbar={"tickvals": [0, 1, 2, 3], "ticktext": names, "title": ""}, xgap=1, ygap=1))
    fig.update_layout(height=height or max(260, 18 * len(piv) + 120), template="plotly_white", font={"size": 13},
                      margin={"l": 120, "r": 20, "t": 20, "b": 60})
    fig.update_xaxes(title_text="Sample", type="category")
    fig.update_yaxes(title_text="Configuration", type="category", autorange="reversed", automargin=True)
    return fig


def progress_accuracy(done: int, correct: int) -> str:
    """'12 / 20 correct (60.0 %)' — text for live widgets."""
    if not done:
        return "no answers yet"
    return f"{correct} / {done} correct ({100 * correct / done:.1f} %)"

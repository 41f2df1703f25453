"""Plotly figures for the Embeddings page: histograms per operator (rows) and encoder (columns), and the projection
plane of one sample. No Streamlit here."""

from __future__ import annotations

import math

OPERATOR_ORDER = ("overlap", "difference", "union")
VALUE_LABELS = {
    "angle_b": "∠(B, proj T) / ∠(A, B)   (0 = at B, 1 = at A)",
    "angle_a": "∠(A, proj T) / ∠(A, B)   (0 = at A, 1 = at B)",
    "norm_ratio": "‖A‖ / ‖B‖",
}
RANGES = {"angle_b": (0.0, 2.5), "angle_a": (0.0, 2.5), "norm_ratio": (0.5, 1.5)}  # outliers go to the end bins


def histogram_grid(rows_by_encoder: dict[str, list[dict]], value: str = "angle_b", bins: int = 40):
    """Subplots: one row per operator, one column per encoder; each a histogram of ``value`` over that slice."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    encoders = list(rows_by_encoder)
    ops = [op for op in OPERATOR_ORDER if any(r["operator"] == op for rows in rows_by_encoder.values() for r in rows)]
    fig = make_subplots(rows=max(1, len(ops)), cols=max(1, len(encoders)), shared_xaxes=True,
                        column_titles=encoders, row_titles=[o.capitalize() for o in ops],
                        horizontal_spacing=0.04, vertical_spacing=0.06)
    lo, hi = RANGES.get(value, (None, None))
    size = (hi - lo) / bins if lo is not None else None
    for c, enc in enumerate(encoders, start=1):
        for r, op in enumerate(ops, start=1):
            vals = [row[value] for row in rows_by_encoder[enc] if row["operator"] == op and _finite(row.get(value))]
            if lo is not None:
                vals = [min(max(v, lo), hi - 1e-9) for v in vals]
            fig.add_trace(go.Histogram(x=vals, xbins=dict(start=lo, end=hi, size=size) if size else None,
                                       marker_color="#4c78a8", showlegend=False,
                                       hovertemplate="%{x}: %{y} samples<extra>" + f"{enc} · {op}</extra>"),
                          row=r, col=c)
            if value in ("angle_a", "angle_b"):
                fig.add_vline(x=1.0, line_dash="dot", line_color="#e45756", row=r, col=c)
    fig.update_layout(height=230 * max(1, len(ops)) + 60, bargap=0.05, margin=dict(l=50, r=30, t=40, b=50))
    fig.update_xaxes(title_text=VALUE_LABELS.get(value, value), row=len(ops), range=[lo, hi] if lo is not None
                     else None)
    return fig


def projection_plane(row: dict, title: str = ""):
    """A, B and the projection of the target drawn in the plane of A and B (A along the x axis)."""
    import plotly.graph_objects as go

    ang = math.radians(row["angle_ab_deg"]) if _finite(row.get("angle_ab_deg")) else 0.0
    ratio = row["norm_ratio"] if _finite(row.get("norm_ratio")) and row["norm_ratio"] > 0 else 1.0
    a = (ratio, 0.0)                                   # ‖A‖ relative to ‖B‖ = 1
    b = (math.cos(ang), math.sin(ang))
    pos = row.get("position")
    fig = go.Figure()
    for (x, y), name, color in ((a, "A", "#4c78a8"), (b, "B", "#f58518")):
        fig.add_trace(go.Scatter(x=[0, x], y=[0, y], mode="lines+markers+text", text=["", name],
                                 textposition="top center", line=dict(color=color, width=3), name=name))
    if _finite(pos) and ang > 0:
        phi = pos * ang
        r = 0.8 * max(1.0, ratio)
        fig.add_trace(go.Scatter(x=[0, r * math.cos(phi)], y=[0, r * math.sin(phi)], mode="lines+markers+text",
                                 text=["", "proj T"], textposition="bottom center",
                                 line=dict(color="#54a24b", width=3, dash="dash"), name="target (direction)"))
    lim = 1.2 * max(1.0, ratio)
    fig.update_layout(title=title, height=360, xaxis=dict(range=[-lim, lim], zeroline=True),
                      yaxis=dict(range=[-lim, lim], scaleanchor="x"), margin=dict(l=30, r=30, t=40, b=30))
    return fig


def margin_verdict(margin) -> tuple[bool | None, str]:
    """(met?, text) for one criterion's margin at ε = 0: met when ≥ 0; None when it could not be computed."""
    if not _finite(margin):
        return None, "margin n/a"
    return margin >= 0, f"margin {margin:+.4f}"


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)

"""How findings are shown: their figures (violins of per-configuration accuracy by the contrasted factor, and a
forest plot of the contrasts — estimate, interval, the paper's estimate beside), and the report as Markdown or a
self-contained HTML file. The numbers come from core/analysis/findings.py; nothing is computed here."""

from __future__ import annotations

import html
import json
import math
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from core.analysis import findings as F, svg
from core.analysis.figures import empty_figure, level_text, violin
from core.analysis.findings_text import level_text as finding_level
from core.analysis.summaries import group_summary


def points(con, run_ids, finding_id: str, scoring: str = "strict") -> pd.DataFrame:
    """Per-configuration accuracy of a finding's slice, with its derived column (for the violins)."""
    f = F.BY_ID[finding_id]
    return F.points(con, run_ids, f, F.check_scoring(scoring), F.VIEW)


def violin_figure(con, run_ids, finding_id: str, scoring: str = "strict", height: int = 440) -> go.Figure:
    if F.BY_ID[finding_id].kind == "metrics":
        return empty_figure("Precision, recall and Jaccard: see the table", height=200)
    return violin_of(points(con, run_ids, finding_id, scoring), finding_id, scoring, height)


def violin_of(pts: pd.DataFrame, finding_id: str, scoring: str = "strict", height: int = 440) -> go.Figure:
    """Violins of a finding's per-configuration accuracy by the contrasted factor (split by its ``within``
    column, or by model when several are selected)."""
    f = F.BY_ID[finding_id]
    if f.kind == "metrics":
        return empty_figure("Precision, recall and Jaccard: see the table", height=200)
    if pts.empty or f.factor not in pts:
        return empty_figure("These runs do not answer this finding", height=200)
    color = f.within[0] if f.within and f.within[0] in pts else ("model" if pts["model"].nunique() > 1 else None)
    summary = group_summary(pts, [f.factor]) if color is None else None
    return violin(pts, x=f.factor, color=color, summary=summary, height=height,
                  title=f"{f.title}: accuracy per configuration ({scoring} scoring)")


def _label(finding: dict, c: dict) -> str:
    a, b = finding_level(finding["factor"], c["a"]), finding_level(finding["factor"], c["b"])
    within = c.get("within") or {}
    suffix = "".join(f" · {k} {v}" if k in ("decile", "shots") else f" · {level_text(k, v)}"
                     for k, v in within.items())
    who = f"{c['model']} · " if c.get("model") and finding.get("factor") != "model" else ""
    return f"{who}{a} − {b}{suffix}"


def forest_figure(finding: dict, height: int | None = None) -> go.Figure:
    """Each contrast's estimate (points, mean(a) − mean(b)) with its interval; the paper's estimate as a diamond.
    Fig 6a / Table 7 is this figure for length 5 − 3 per decile: a difference, never drawn as an accuracy."""
    cs = [c for c in finding.get("contrasts", []) if c.get("estimate") is not None]
    if not cs:
        return empty_figure("No contrast to draw", height=200)
    labels = [_label(finding, c) for c in cs]
    est = [c["estimate"] for c in cs]
    lo = [c["estimate"] - c["ci_low"] if c.get("ci_low") is not None else 0 for c in cs]
    hi = [c["ci_high"] - c["estimate"] if c.get("ci_high") is not None else 0 for c in cs]
    colors = ["#c0392b" if c.get("significant") else "#7f8c8d" for c in cs]
    fig = go.Figure(go.Scatter(
        x=est, y=labels, mode="markers", marker={"size": 11, "color": colors},
        error_x={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "color": "#555"},
        name="these runs (95 % interval over draws; red = significant after Holm)",
        customdata=[[c.get("p_adjusted"), c.get("n_a"), c.get("n_b")] for c in cs],
        hovertemplate="%{y}: %{x:.1f} points<br>adjusted p %{customdata[0]:.3g}<extra></extra>"))
    paper = [(lab, c["paper_estimate"]) for lab, c in zip(labels, cs) if c.get("paper_estimate") is not None]
    if paper:
        fig.add_trace(go.Scatter(x=[p for _, p in paper], y=[lab for lab, _ in paper], mode="markers",
                                 marker={"symbol": "diamond", "size": 12, "color": "#222"},
                                 name="paper (Claude Haiku or seven LLMs pooled)"))
    fig.add_vline(x=0, line_dash="dot", line_color="#999")
    fig.update_layout(height=height or max(240, 90 + 34 * len(cs)), template="plotly_white",
                      margin={"l": 10, "r": 20, "t": 50, "b": 50},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                      font={"size": 13})
    fig.update_xaxes(title_text="difference in accuracy (points)")
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


UNIT_NOTE = ("One verdict per model. Unit: the independent draw of (A, B) — configurations that reuse a draw are "
             "averaged into it; levels compared only where every other factor is equal (matched strata); "
             "permutation p, bootstrap interval over draws.")

SIGNIFICANT, NOT_SIGNIFICANT, INTERVAL, PAPER = "#c0392b", "#7f8c8d", "#555", "#222"


def _nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """Round tick values covering [lo, hi] (a step of 1, 2 or 5 × 10^k, about ``n`` ticks)."""
    span = hi - lo if hi > lo else 1.0
    raw = span / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def forest_svg(finding: dict, width: int = 1000) -> str:
    """The forest plot of ``forest_figure`` as one static SVG (no JavaScript: a page of fifteen findings drew
    fifteen Plotly charts, a second of the browser's time): each contrast's estimate with its 95 % interval (red =
    significant after Holm, grey = not), the paper's estimate as a black diamond, a dotted line at 0. Hovering a
    row shows its numbers (estimate, interval, adjusted p, n). Every text is escaped (``svg.escape``); one line, so
    Markdown passes it through as a raw HTML block."""
    cs = [c for c in finding.get("contrasts", []) if c.get("estimate") is not None]
    esc = svg.escape
    if not cs:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 60" width="100%" role="img">'
                '<text x="10" y="35" font-size="14" fill="#555">No contrast to draw</text></svg>')
    labels = [_label(finding, c) for c in cs]
    values = [0.0] + [float(v) for c in cs for v in (c["estimate"], c.get("ci_low"), c.get("ci_high"),
                                                       c.get("paper_estimate")) if v is not None]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.06 or 1.0
    ticks = _nice_ticks(lo - pad, hi + pad)
    lo, hi = min(lo - pad, ticks[0]), max(hi + pad, ticks[-1])
    font = 13
    label_w = min(int(width * 0.45), max(60, int(max(len(t) for t in labels) * font * 0.58) + 16))
    left, right, top, row_h = label_w, width - 24, 44, 34
    height = top + row_h * len(cs) + 56

    def x_of(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (right - left)

    paper_any = any(c.get("paper_estimate") is not None for c in cs)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
           f'font-family="sans-serif" font-size="{font}" aria-label="{esc(finding.get("title", ""))}: forest plot">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>']
    # legend
    out.append(f'<circle cx="{left + 6}" cy="16" r="5" fill="{SIGNIFICANT}"/>'
               f'<text x="{left + 16}" y="20" fill="#333">these runs (95 % interval; red = significant after Holm)'
               '</text>')
    if paper_any:
        lx = left + 380
        out.append(f'<path d="M{lx} 10 L{lx + 6} 16 L{lx} 22 L{lx - 6} 16 Z" fill="{PAPER}"/>'
                   f'<text x="{lx + 12}" y="20" fill="#333">paper (Claude Haiku or seven LLMs pooled)</text>')
    bottom = top + row_h * len(cs)
    for t in ticks:   # grid and tick labels
        x = x_of(t)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#eee"/>'
                   f'<text x="{x:.1f}" y="{bottom + 18}" text-anchor="middle" fill="#444">{t:g}</text>')
    out.append(f'<line x1="{x_of(0):.1f}" y1="{top - 4}" x2="{x_of(0):.1f}" y2="{bottom}" stroke="#999" '
               'stroke-dasharray="2,3"/>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#bbb"/>')
    out.append(f'<text x="{(left + right) / 2:.1f}" y="{bottom + 42}" text-anchor="middle" fill="#333">'
               'difference in accuracy (points)</text>')
    for i, (lab, c) in enumerate(zip(labels, cs)):
        y = top + row_h * i + row_h / 2
        est, p = float(c["estimate"]), c.get("p_adjusted")
        ci = (c.get("ci_low"), c.get("ci_high"))
        tip = f"{lab}: {est:.1f} points"
        if None not in ci:
            tip += f", 95 % interval [{float(ci[0]):.1f}, {float(ci[1]):.1f}]"
        if p is not None:
            tip += f", adjusted p {float(p):.3g}"
        if c.get("n") is not None and str(c.get("design", "")).startswith("paired"):
            tip += f", {c['n']} draws"
        elif c.get("n_a") is not None:
            tip += f", n {c.get('n_a')} / {c.get('n_b')}" + (" draws" if c.get("unit") == "draws" else "")
        if c.get("paper_estimate") is not None:
            tip += f"; paper {float(c['paper_estimate']):.1f}"
        out.append(f"<g><title>{esc(tip)}</title>"
                   f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="#fff" '
                   'fill-opacity="0"/>'
                   f'<text x="{left - 10}" y="{y + 4.5:.1f}" text-anchor="end" fill="#222">{esc(lab)}</text>')
        if None not in ci:
            x0, x1 = x_of(float(ci[0])), x_of(float(ci[1]))
            out.append(f'<line x1="{x0:.1f}" y1="{y:.1f}" x2="{x1:.1f}" y2="{y:.1f}" stroke="{INTERVAL}" '
                       'stroke-width="1.5"/>'
                       + "".join(f'<line x1="{x:.1f}" y1="{y - 5:.1f}" x2="{x:.1f}" y2="{y + 5:.1f}" '
                                 f'stroke="{INTERVAL}" stroke-width="1.5"/>' for x in (x0, x1)))
        colour = SIGNIFICANT if c.get("significant") else NOT_SIGNIFICANT
        out.append(f'<circle cx="{x_of(est):.1f}" cy="{y:.1f}" r="5.5" fill="{colour}"/>')
        if c.get("paper_estimate") is not None:
            px = x_of(float(c["paper_estimate"]))
            out.append(f'<path d="M{px:.1f} {y - 6:.1f} L{px + 6:.1f} {y:.1f} L{px:.1f} {y + 6:.1f} '
                       f'L{px - 6:.1f} {y:.1f} Z" fill="{PAPER}"/>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


# ------------------------------------------------------------------------------------------------------- text

def _cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _md_text(text) -> str:
    """Text in the Markdown file with <, > and & as character references: a run or model name such as
    ``<script>…</script>`` that came with an imported file stays text in any Markdown renderer."""
    return html.escape(str(text), quote=False)


def _md_table(rows: Sequence[dict]) -> list[str]:
    if not rows:
        return ["(no rows)"]
    cols = list(rows[0].keys())
    out = ["| " + " | ".join(_md_text(c).replace("|", "\\|") for c in cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(_md_text(_cell(r.get(c))).replace("|", "\\|") for c in cols) + " |" for r in rows]
    return out


def provenance_line(rep: dict, escape) -> str:
    """The runs read and where their answers came from (calls made here, or an upload's claims), and the series the
    verdicts are given for: a model's runs made here, each upload alone, labelled as a file's claims."""
    runs = rep.get("provenance") or []
    shown = "; ".join(f"{escape(r['run_id'])} ({escape(str(r['model']))}, {escape(r['provenance'])})" for r in runs)
    line = f"Runs: {shown}." if runs else "Runs: none."
    claims = [s for s in rep.get("series") or [] if s.get("claim")]
    if claims:
        line += (" Verdicts per series: " + "; ".join(escape(s["series"]) for s in rep["series"]) +
                 " — an upload is a file's claims, never pooled with another series.")
    return line


def to_markdown(rep: dict) -> str:
    lines = ["# Findings of the SetLexSem paper on these runs", "",
             f"Scoring: **{rep['scoring']}** · α = {rep['alpha']:g} · p values adjusted by {rep['correction']}. "
             f"{UNIT_NOTE}", "", provenance_line(rep, _md_text), ""]
    for fd in rep["findings"]:
        lines += [f"## {_md_text(fd['title'])} (`{fd['id']}`)", "",
                  f"*Paper:* {_md_text(fd['source'])} — {_md_text(fd['claim'])}", ""]
        lines += [f"- {_md_text(v)}" for v in fd["verdicts"]] + [""]
        if fd.get("table"):
            lines += ["Per-configuration accuracy (the reference's get_stats):", ""] + _md_table(fd["table"]) + [""]
        if fd.get("paper"):
            lines += ["The paper's numbers:", ""] + _md_table(fd["paper"]) + [""]
    return "\n".join(lines) + "\n"


def to_html(con, rep: dict, run_ids) -> str:
    first = [True]

    def fig_html(fig) -> str:
        out = fig.to_html(full_html=False, include_plotlyjs=first[0], config={"displaylogo": False})
        first[0] = False
        return out

    def table(rows) -> str:
        if not rows:
            return ""
        return pd.DataFrame(rows).to_html(index=False, escape=True, border=0, na_rep="–", float_format="%.2f")

    parts = [f"<h1>Findings of the SetLexSem paper on these runs</h1><p class='meta'>Scoring: "
             f"<b>{html.escape(rep['scoring'])}</b> · α = {rep['alpha']:g} · {html.escape(rep['correction'])}. "
             f"{html.escape(UNIT_NOTE)}</p>", f"<p class='meta'>{provenance_line(rep, html.escape)}</p>"]
    for fd in rep["findings"]:
        parts.append(f"<h2>{html.escape(fd['title'])} <code>{html.escape(fd['id'])}</code></h2>")
        parts.append(f"<p class='note'>Paper: {html.escape(fd['source'])} — {html.escape(fd['claim'])}</p>")
        parts.append("<ul>" + "".join(f"<li>{html.escape(v)}</li>" for v in fd["verdicts"]) + "</ul>")
        if fd["applicable"] and fd.get("contrasts"):
            parts.append(fig_html(forest_figure(fd)))
            parts.append(fig_html(violin_figure(con, run_ids, fd["id"], rep["scoring"])))
        parts.append(table(fd.get("table")))
        if fd.get("paper"):
            parts.append("<p class='note'>The paper's numbers:</p>" + table(fd["paper"]))
    style = ("body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}"
             "table{border-collapse:collapse;font-size:.85rem}th,td{border:1px solid #ddd;padding:.2rem .5rem}"
             ".note,.meta{color:#555}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Findings</title><style>{style}</style>"
            f"</head><body>{''.join(parts)}<script type='application/json' id='findings'>"
            f"{html.escape(json.dumps(rep, default=str))}</script></body></html>")

"""The violins of a big selection as one static SVG (no JavaScript), drawn from analysis.violin_view's summary.

Above figures.MAX_DRAWN_POINTS configurations no marker is drawn, so Plotly's chart offers nothing to click; what it
costs is its script: a new browser context compiles 4.6 MB of JavaScript (~0.9 s on this machine's cores) before the
first chart shows, the largest part of the Results page's first load at 10 million results. This drawing has what the
Plotly figure shows for such a selection, in the same style (figures.violin): per violin the outline from a Gaussian
kernel density over its shape (Silverman's bandwidth, cut at the smallest and largest accuracy, as Plotly's
``spanmode="hard"``), a white quartile box with the median (thin) and the mean (thick) across it, the mean dashed
across the violin and "μ · σ · N" above it without a colour, N under each label, the published mean ± std as black
diamonds, and a legend. Hovering a violin shows its numbers. Every text is escaped (core.analysis.svg)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.analysis import svg
from core.analysis.figures import BOX_COLOR, PALETTE, level_mask, level_order, level_text
from core.analysis.labels import label
from core.analysis.sql import is_missing

Y_LOW, Y_HIGH = -5.0, 112.0          # the Plotly figure's y range: room below 0 and for the μ · σ · N line
Y_TICKS = (0, 20, 40, 60, 80, 100)
GRID = 96                            # density evaluations per violin


def density(shape, grid: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """``(ys, d)``: a Gaussian kernel density of the values in ``shape`` at ``grid`` points from their smallest to
    their largest, scaled so its peak is 1. Silverman's rule of thumb for the bandwidth (1.059 · min(σ, IQR / 1.349)
    · n^(−1/5), Plotly's default), or σ's when the quartiles coincide; one value, or all equal: a single level of
    density 1."""
    v = np.asarray(shape, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return np.array([]), np.array([])
    lo, hi = float(v.min()), float(v.max())
    if hi - lo <= 0:
        return np.array([lo]), np.array([1.0])
    q1, q3 = np.quantile(v, [0.25, 0.75])
    sd = float(v.std(ddof=1)) if v.size > 1 else 0.0
    spread = min(sd, (q3 - q1) / 1.349) if q3 > q1 else sd
    bw = 1.059 * spread * v.size ** -0.2 if spread > 0 else (hi - lo) / 10
    ys = np.linspace(lo, hi, grid)
    # the sum over values in blocks: 96 × 200,000 floats at once would be 150 MB
    d = np.zeros(grid)
    for start in range(0, v.size, 4096):
        z = (ys[:, None] - v[None, start:start + 4096]) / bw
        d += np.exp(-0.5 * z * z).sum(axis=1)
    peak = d.max()
    return ys, d / peak if peak > 0 else d


def _fmt(v, digits: int = 1) -> str:
    return "–" if v is None or is_missing(v) else f"{float(v):.{digits}f}"


def violin_svg(summary: pd.DataFrame, x: str | None = "operation", color: str | None = None,
               reference: pd.DataFrame | None = None, reference_name: str | None = None, x_title: str | None = None,
               empty_message: str = "No answered items for this selection yet", width: int = 1000,
               height: int = 520, panel: str | None = None, panel_names=None) -> str:
    """One SVG element (a single line, so Markdown passes it as a raw HTML block) of the violins of ``summary``
    (analysis.violin_view / violin_summary: one row per (x, color) group with mean, std, N and ``shape``).

    ``panel`` (a column of ``summary``: model or run_id, views.run_split): one SVG per level, titled by
    ``panel_names`` (figures.panel_text) and with the same colours, in one ``<div>`` on one line — several models'
    or runs' configurations never share a violin."""
    esc = svg.escape
    if summary is None or summary.empty or "shape" not in summary.columns:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 80" width="100%" role="img">'
                f'<text x="{width / 2}" y="45" text-anchor="middle" font-size="16" fill="#555">'
                f"{esc(empty_message)}</text></svg>")
    if panel and panel in summary.columns:
        from core.analysis.figures import panel_text

        colour_levels = level_order(color, summary[color].tolist()) if color else None
        return "<div>" + "".join(
            _one_svg(summary[level_mask(summary[panel], v)], x, color, reference, reference_name, x_title, width, height,
                     title=panel_text(panel, v, panel_names), colour_levels=colour_levels)
            for v in level_order(panel, summary[panel].tolist())) + "</div>"
    return _one_svg(summary, x, color, reference, reference_name, x_title, width, height)


def _one_svg(summary: pd.DataFrame, x, color, reference, reference_name, x_title, width: int, height: int,
             title: str | None = None, colour_levels: list | None = None) -> str:
    """violin_svg of one panel; ``title`` above it, ``colour_levels`` in palette order (the same in every panel)."""
    esc = svg.escape
    xs = level_order(x, summary[x].tolist()) if x else [None]
    cats = [level_text(x, v) for v in xs] if x else ["all"]
    colours = (list(colour_levels) if colour_levels is not None else level_order(color, summary[color].tolist())) \
        if color else [None]
    refs = None
    if reference is not None and not reference.empty and x and x in reference.columns:
        refs = reference[reference[x].isin(xs)]
        refs = refs if not refs.empty else None
    left, right = 78, width - 20
    band = (right - left) / len(cats)
    tick_font = 14 if band > 140 else 12
    # a label wider than its category is wrapped onto two lines (at a space or "_" near its middle)
    ticks = [_wrap(c, band - 8, tick_font) for c in cats]
    two_lines = any(len(t) > 1 for t in ticks)
    above = 28 if title else 0        # a panel's title over its legend
    height += above
    legend_items, legend_rows = _legend(color, colours, refs is not None and (reference_name or
                                                                          "published (mean ± std)"), left, right,
                                        y0=above)
    top = 16 + 24 * legend_rows + above
    bottom = height - 78 - (16 if two_lines else 0)

    def y_of(v: float) -> float:
        return bottom - (v - Y_LOW) / (Y_HIGH - Y_LOW) * (bottom - top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
           f'font-family="sans-serif" font-size="14" aria-label="Violins of per-configuration accuracy by '
           f'{esc(label(x) if x else "all")}">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>']
    if title:
        out.append(f'<text x="{left}" y="22" fill="#222" font-size="16" font-weight="bold">{esc(title)}</text>')
    for t in Y_TICKS:   # grid, y tick labels, y title
        y = y_of(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#ebebeb"/>'
                   f'<text x="{left - 8}" y="{y + 5:.1f}" text-anchor="end" fill="#444">{t}</text>')
    mid = (top + bottom) / 2
    out.append(f'<text x="18" y="{mid:.1f}" text-anchor="middle" fill="#333" transform="rotate(-90 18 {mid:.1f})">'
               "Accuracy per configuration (%)</text>")
    # the violins, side by side within a category when coloured (Plotly's group mode: gaps of 0.3 band)
    n_c = len(colours)
    slot = band * (0.7 / n_c if color else 0.9)
    half = min(slot / 2, 150.0)
    counts: dict = {}
    for ci, c in enumerate(colours):
        fill = PALETTE[ci % len(PALETTE)]
        for xi, (xv, cat) in enumerate(zip(xs, cats)):
            # by value, not by its text: a level written "none" and a missing one are two violins
            mask = pd.Series(True, index=summary.index)
            if x:
                mask &= level_mask(summary[x], xv)
            if color:
                mask &= level_mask(summary[color], c)
            rows = summary[mask]
            if rows.empty:
                continue
            row = rows.iloc[0]
            n = int(row["N"])
            counts.setdefault(xi, []).append(n)
            cx = left + band * (xi + 0.5) + ((ci - (n_c - 1) / 2) * band * 0.7 / n_c if color else 0.0)
            shape = np.asarray(row["shape"], dtype=float)
            ys, d = density(shape)
            if not len(ys):
                continue
            tip_head = f"{cat}{' · ' + level_text(color, c) if color else ''}: {n:,} configurations"
            out += _one_violin(row, shape, ys, d, cx, half, band, fill, y_of, tip_head, coloured=color is not None)
    if refs is not None:   # the published mean ± std
        out += _reference_marks(refs, x, xs, cats, left, band, y_of, reference_name)
    out += _x_axis(cats, ticks, counts, left, right, band, bottom, tick_font, two_lines,
                   x_title or (label(x) if x else ""))
    out.extend(legend_items)
    out.append("</svg>")
    return "".join(out)


def _one_violin(row, shape: np.ndarray, ys, d, cx: float, half: float, band: float, fill: str, y_of, tip_head: str,
                coloured: bool) -> list[str]:
    """One violin (its density outline ``ys``/``d``), its box, mean line and tooltip; uncoloured, the numbers above."""
    esc = svg.escape
    n = int(row["N"])
    out: list[str] = []
    q1, med, q3 = (float(v) for v in np.quantile(shape, [0.25, 0.5, 0.75]))
    tip = (tip_head
           + (f", {int(row['items']):,} items" if "items" in row and not is_missing(row["items"]) else "")
           + f"; mean {_fmt(row['mean'])} %, std {_fmt(row['std'])}, median {med:.1f}, quartiles "
           f"{q1:.1f}–{q3:.1f}, min {_fmt(row['min'])}, max {_fmt(row['max'])}")
    out.append(f"<g><title>{esc(tip)}</title>")
    if len(ys) == 1:   # every configuration at one accuracy: a flat violin
        out.append(f'<rect x="{cx - half:.1f}" y="{y_of(ys[0]) - 1.5:.1f}" width="{2 * half:.1f}" '
                   f'height="3" fill="{fill}" fill-opacity="0.6" stroke="{fill}"/>')
    else:
        right_side = " ".join(f"{cx + half * w:.1f},{y_of(v):.1f}" for v, w in zip(ys, d))
        left_side = " ".join(f"{cx - half * w:.1f},{y_of(v):.1f}" for v, w in zip(ys[::-1], d[::-1]))
        out.append(f'<polygon points="{right_side} {left_side}" fill="{fill}" fill-opacity="0.6" '
                   f'stroke="{fill}" stroke-width="1.5"/>')
    bx = max(half * 0.25, 4.0)
    out.append(f'<rect x="{cx - bx:.1f}" y="{y_of(q3):.1f}" width="{2 * bx:.1f}" '
               f'height="{max(y_of(q1) - y_of(q3), 0.5):.1f}" fill="#fff" fill-opacity="0.75" '
               f'stroke="{BOX_COLOR}" stroke-width="1.5"/>'
               f'<line x1="{cx - bx:.1f}" y1="{y_of(med):.1f}" x2="{cx + bx:.1f}" y2="{y_of(med):.1f}" '
               f'stroke="{BOX_COLOR}" stroke-width="1"/>')
    if not is_missing(row["mean"]):
        ym = y_of(float(row["mean"]))
        out.append(f'<line x1="{cx - bx:.1f}" y1="{ym:.1f}" x2="{cx + bx:.1f}" y2="{ym:.1f}" '
                   f'stroke="{BOX_COLOR}" stroke-width="2.5"/>')
        if not coloured:   # dashed across the violin, and the numbers above it
            out.append(f'<line x1="{cx - band * 0.42:.1f}" y1="{ym:.1f}" x2="{cx + band * 0.42:.1f}" '
                       f'y2="{ym:.1f}" stroke="{BOX_COLOR}" stroke-width="1.5" stroke-dasharray="6,4"/>')
    out.append("</g>")
    if not coloured:   # on one line where the category is wide enough, else on two
        stats = f"μ {_fmt(row['mean'])} · σ {_fmt(row['std'])}"
        if band > 200:
            out.append(f'<text x="{cx:.1f}" y="{y_of(107) + 5:.1f}" text-anchor="middle" fill="#222" '
                       f'font-size="13">{stats} · N {n:,}</text>')
        else:
            size = 12 if band > 120 else 10
            out.append(f'<text x="{cx:.1f}" y="{y_of(109):.1f}" text-anchor="middle" fill="#222" '
                       f'font-size="{size}">{stats}<tspan x="{cx:.1f}" dy="{size + 2}">N {n:,}</tspan>'
                       "</text>")
    return out


def _reference_marks(refs: pd.DataFrame, x: str, xs: list, cats: list, left: float, band: float, y_of,
                     reference_name: str | None) -> list[str]:
    """The published mean ± std of each category, a bar with a diamond."""
    esc = svg.escape
    out: list[str] = []
    for _, r in refs.iterrows():
        xi = xs.index(r[x])
        cx = left + band * (xi + 0.5)
        m = float(r["mean"])
        sd = 0.0 if is_missing(r.get("std")) else float(r["std"])
        lo_y, hi_y = y_of(max(m - sd, Y_LOW)), y_of(min(m + sd, Y_HIGH))
        tip = f"{reference_name or 'published'}: {cats[xi]} mean {m:.1f} ± {sd:.1f}"
        out.append(f"<g><title>{esc(tip)}</title>"
                   f'<line x1="{cx:.1f}" y1="{lo_y:.1f}" x2="{cx:.1f}" y2="{hi_y:.1f}" stroke="#222" '
                   'stroke-width="1.5"/>'
                   + "".join(f'<line x1="{cx - 6:.1f}" y1="{yy:.1f}" x2="{cx + 6:.1f}" y2="{yy:.1f}" '
                             'stroke="#222" stroke-width="1.5"/>' for yy in (lo_y, hi_y))
                   + f'<path d="{_diamond(cx, y_of(m), 7)}" fill="#222"/></g>')
    return out


def _x_axis(cats: list, ticks: list, counts: dict, left: float, right: float, band: float, bottom: float,
            tick_font: int, two_lines: bool, title: str) -> list[str]:
    """The x tick labels with N of each violin, the axis line and its title."""
    esc = svg.escape
    out: list[str] = []
    below = 16 if two_lines else 0
    for xi, (cat, lines) in enumerate(zip(cats, ticks)):   # x tick labels with N of each violin
        cx = left + band * (xi + 0.5)
        ns = counts.get(xi) or [0]
        text = "".join(f'<tspan x="{cx:.1f}" dy="{0 if i == 0 else tick_font + 2}">{esc(t)}</tspan>'
                       for i, t in enumerate(lines))
        out.append(f'<text y="{bottom + 22}" text-anchor="middle" fill="#333" font-size="{tick_font}">{text}</text>'
                   f'<text x="{cx:.1f}" y="{bottom + 40 + below}" text-anchor="middle" fill="#555" font-size="12">'
                   f"N={esc(' · '.join(f'{k:,}' for k in ns))}</text>")
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#bbb"/>'
               f'<text x="{(left + right) / 2:.1f}" y="{bottom + 66 + below}" text-anchor="middle" fill="#333">'
               f"{esc(title)}</text>")
    return out


def _legend(color: str | None, colours: list, reference: str | None, left: float, right: float, y0: float = 0
            ) -> tuple[list[str], int]:
    """The legend's SVG elements and its number of rows: the colour factor's name, a swatch and name per colour,
    the published reference's diamond; an entry that would pass the right edge starts a new row (about 0.55 em a
    character at 14 px)."""
    esc = svg.escape
    out, row, lx = [], 0, left
    entries = ([("title", label(color) + ":", None)] if color else []) + \
        [("colour", level_text(color, c), PALETTE[ci % len(PALETTE)]) for ci, c in enumerate(colours) if color] + \
        ([("reference", reference, None)] if reference else [])
    for kind, name, fill in entries:
        width = (0 if kind == "title" else 20) + 7.7 * len(name) + 18
        if lx + width > right and lx > left:
            row, lx = row + 1, left
        y = 22 + y0 + 24 * row
        if kind == "title":
            out.append(f'<text x="{lx:.1f}" y="{y}" fill="#333" font-weight="bold">{esc(name)}</text>')
        elif kind == "colour":
            out.append(f'<rect x="{lx:.1f}" y="{y - 11}" width="14" height="14" fill="{fill}" fill-opacity="0.6" '
                       f'stroke="{fill}"/><text x="{lx + 20:.1f}" y="{y}" fill="#333">{esc(name)}</text>')
        else:
            out.append(f'<path d="{_diamond(lx + 7, y - 4, 7)}" fill="#222"/>'
                       f'<text x="{lx + 20:.1f}" y="{y}" fill="#333">{esc(name)}</text>')
        lx += width
    return out, (row + 1 if entries else 0)


def _wrap(text: str, room: float, font: int) -> list[str]:
    """``text`` as one line, or two split at the space or "_" nearest its middle when it is wider than ``room``
    pixels (about 0.55 em a character)."""
    if len(text) * font * 0.55 <= room:
        return [text]
    cuts = [i for i, ch in enumerate(text) if ch in " _"]
    if not cuts:
        return [text]
    cut = min(cuts, key=lambda i: abs(i - len(text) / 2))
    return [text[:cut + 1].rstrip(), text[cut + 1:]]


def _diamond(cx: float, cy: float, r: float) -> str:
    return f"M{cx:.1f} {cy - r:.1f} L{cx + r:.1f} {cy:.1f} L{cx:.1f} {cy + r:.1f} L{cx - r:.1f} {cy:.1f} Z"

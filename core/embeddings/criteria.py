"""Criteria C1–C6 of the SetLike paper on embeddings, for every measure and margin.

Margins are computed with ``Measure.oriented`` (distances negated), so each condition reads "margin ≥ ε" for every
measure; for a distance this is the paper's flipped inequality, e.g. CO1: Dist(A,B) − Dist(A,O) ≥ ε.

* C1 (overlap ({A,B}, O)):  CO1: S(A,O) − S(A,B) ≥ ε;  CO2: S(B,O) − S(A,B) ≥ ε  → four-way TT/TF/FT/FF shares.
* C3 (difference ((A,B), D)): CD1: S(A,D) − S(B,D) ≥ ε;  CD2: S(A,B) − S(B,D) ≥ ε → four-way shares.
* C4 (difference): S(A−B, D) − S(A−B, B) ≥ ε.
* C2 (overlap): proj O lies between A and B: |∠(A,P) + ∠(B,P) − 1| ≤ tol (angles normalised so ∠(A,B) = 1).
* C5 (difference): proj D near A: ∠(A,P) < θ.
* C6 (union): by the norm ratio r = ‖A‖/‖B‖: r > 1+τ → ∠(A,P) < θ; r < 1/(1+τ) → ∠(B,P) < θ; else between A and B.

Shares are percentages of the samples of that operator. ``*_grid`` figures average the share over a uniform grid of
margins spanning [min, max] of the observed margins (the paper's appendix A.5 averages over 132 × 132 values); a
grid average reduces to a per-sample product of "fraction of grid values below the margin", computed exactly.
A margin that is undefined (nan, e.g. a zero vector) counts as not meeting the condition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.embeddings.measures import MEASURES, Measure
from core.embeddings.projection import Projection, project

DEFAULT_EPS = (0.0, 0.01, 0.02, 0.05, 0.1)
DEFAULT_GRID = 132
DEFAULT_TOL = (0.01, 0.05, 0.1)      # C2 / C6 "between" tolerance on angle_a + angle_b − 1
DEFAULT_THETA = (0.1, 0.25, 0.5)     # C5 / C6 normalised angle bound
DEFAULT_TAU = 0.1                    # C6 norm-ratio tolerance for "comparable" norms
FOUR = ("TT", "TF", "FT", "FF")


def fmt(x: float) -> str:
    """Key suffix of a margin: 0 → '0', 0.05 → '0.05'."""
    return f"{float(x):g}"


# ---------------------------------------------------------------- margins
def c1_margins(ea, eb, eo, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    s_ab = measure.oriented(ea, eb)
    return measure.oriented(ea, eo) - s_ab, measure.oriented(eb, eo) - s_ab


def c3_margins(ea, eb, ed, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    s_bd = measure.oriented(eb, ed)
    return measure.oriented(ea, ed) - s_bd, measure.oriented(ea, eb) - s_bd


def c4_margin(ea, eb, ed, measure: Measure) -> np.ndarray:
    delta = np.asarray(ea, dtype=np.float64) - np.asarray(eb, dtype=np.float64)
    return measure.oriented(delta, ed) - measure.oriented(delta, eb)


# ---------------------------------------------------------------- shares
def _met(d, eps: float) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    return np.where(np.isnan(d), False, d >= eps)


def share(d, eps: float = 0.0) -> float:
    d = np.asarray(d, dtype=np.float64)
    return float(100.0 * _met(d, eps).mean()) if d.size else float("nan")


def four_way(d1, d2, eps1: float = 0.0, eps2: float | None = None) -> dict[str, float]:
    """Percentages of samples with (cond1, cond2) = TT, TF, FT, FF at the given margins."""
    c1, c2 = _met(d1, eps1), _met(d2, eps1 if eps2 is None else eps2)
    n = c1.size
    if not n:
        return {k: float("nan") for k in FOUR}
    return {"TT": 100.0 * float((c1 & c2).mean()), "TF": 100.0 * float((c1 & ~c2).mean()),
            "FT": 100.0 * float((~c1 & c2).mean()), "FF": 100.0 * float((~c1 & ~c2).mean())}


def grid(d, n: int = DEFAULT_GRID, value_range: tuple[float, float] | None = None) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    d = d[np.isfinite(d)]
    if value_range is None:
        if not d.size:
            return np.zeros(1)
        value_range = (float(d.min()), float(d.max()))
    return np.linspace(value_range[0], value_range[1], n)


def _frac_met(d, g: np.ndarray) -> np.ndarray:
    """For each sample, the fraction of grid margins it meets (d ≥ g_k); 0 for nan."""
    d = np.asarray(d, dtype=np.float64)
    g = np.sort(np.asarray(g, dtype=np.float64))
    out = np.searchsorted(g, np.nan_to_num(d, nan=-np.inf), side="right") / g.size
    return np.where(np.isnan(d), 0.0, out)


def share_grid(d, g) -> float:
    f = _frac_met(d, g)
    return float(100.0 * f.mean()) if f.size else float("nan")


def four_way_grid(d1, d2, g1, g2) -> dict[str, float]:
    """Four-way shares averaged over every (ε1, ε2) of the grid g1 × g2."""
    f1, f2 = _frac_met(d1, g1), _frac_met(d2, g2)
    if not f1.size:
        return {k: float("nan") for k in FOUR}
    return {"TT": 100.0 * float((f1 * f2).mean()), "TF": 100.0 * float((f1 * (1 - f2)).mean()),
            "FT": 100.0 * float(((1 - f1) * f2).mean()), "FF": 100.0 * float(((1 - f1) * (1 - f2)).mean())}


# ---------------------------------------------------------------- geometry criteria
def between(p: Projection, tol: float) -> np.ndarray:
    s = p.angle_a + p.angle_b - 1.0
    return np.where(np.isnan(s), False, np.abs(s) <= tol)


def near(angle, theta: float) -> np.ndarray:
    angle = np.asarray(angle, dtype=np.float64)
    return np.where(np.isnan(angle), False, angle < theta)


def norm_case(p: Projection, tau: float = DEFAULT_TAU) -> np.ndarray:
    """'a_larger' | 'b_larger' | 'comparable' per sample, from ‖A‖/‖B‖."""
    r = p.norm_ratio
    return np.where(r > 1 + tau, "a_larger", np.where(r < 1 / (1 + tau), "b_larger", "comparable"))


def c6_met(p: Projection, theta: float, tol: float, tau: float = DEFAULT_TAU) -> np.ndarray:
    case = norm_case(p, tau)
    return np.where(case == "a_larger", near(p.angle_a, theta),
                    np.where(case == "b_larger", near(p.angle_b, theta), between(p, tol)))


# ---------------------------------------------------------------- everything at once
@dataclass
class Evaluation:
    metrics: dict[str, float]                  # flat: "C1_both_cosine_eps0" → 28.9 …
    per_sample: dict[str, np.ndarray]          # columns aligned with the samples
    projection: Projection
    counts: dict[str, int]
    settings: dict = field(default_factory=dict)


def evaluate(operators, ea, eb, et, *, measures=tuple(MEASURES), eps=DEFAULT_EPS, grid_size: int = DEFAULT_GRID,
             tol=DEFAULT_TOL, theta=DEFAULT_THETA, tau: float = DEFAULT_TAU,
             c6_tol: float = 0.05, grid_ranges: dict[str, tuple[float, float]] | None = None) -> Evaluation:
    """Evaluate C1–C6 on aligned arrays: operators (n,), embeddings of A, B and the target (n, d).

    ``grid_ranges`` may fix the ε range per key ("C1_1_cosine", "C1_2_cosine", "C3_1_…", "C3_2_…", "C4_…") — e.g.
    one range shared by several encoders, as the paper did; by default each range is [min, max] of the data.
    """
    ops = np.asarray(operators)
    ea, eb, et = (np.asarray(x, dtype=np.float64) for x in (ea, eb, et))
    if not (ea.shape == eb.shape == et.shape and ea.ndim == 2 and ea.shape[0] == ops.shape[0]):
        raise ValueError("operators and the three embedding arrays must be aligned (n,) and (n, d)")
    grid_ranges = grid_ranges or {}
    n = ops.shape[0]
    masks = {op: ops == op for op in ("overlap", "difference", "union")}
    counts = {op: int(m.sum()) for op, m in masks.items()}
    metrics: dict[str, float] = {}
    cols: dict[str, np.ndarray] = {}
    for name in measures:
        m = MEASURES[name]
        cols[f"{name}_ab"] = m(ea, eb)
        cols[f"{name}_at"] = m(ea, et)
        cols[f"{name}_bt"] = m(eb, et)

    ov, df = masks["overlap"], masks["difference"]
    for name in measures:
        m = MEASURES[name]
        d1, d2 = c1_margins(ea[ov], eb[ov], et[ov], m)
        e1, e2 = c3_margins(ea[df], eb[df], et[df], m)
        c4 = c4_margin(ea[df], eb[df], et[df], m)
        for e in eps:
            k = fmt(e)
            fw = four_way(d1, d2, e)
            for q in FOUR:
                metrics[f"C1_{q}_{name}_eps{k}"] = fw[q]
            metrics[f"C1_both_{name}_eps{k}"] = fw["TT"]
            fw = four_way(e1, e2, e)
            for q in FOUR:
                metrics[f"C3_{q}_{name}_eps{k}"] = fw[q]
            metrics[f"C3_both_{name}_eps{k}"] = fw["TT"]
            metrics[f"C4_{name}_eps{k}"] = share(c4, e)
        g = {key: grid(vals, grid_size, grid_ranges.get(f"{key}_{name}"))
             for key, vals in (("C1_1", d1), ("C1_2", d2), ("C3_1", e1), ("C3_2", e2), ("C4", c4))}
        fw = four_way_grid(d1, d2, g["C1_1"], g["C1_2"])
        for q in FOUR:
            metrics[f"C1_{q}_{name}_grid"] = fw[q]
        metrics[f"C1_both_{name}_grid"] = fw["TT"]
        fw = four_way_grid(e1, e2, g["C3_1"], g["C3_2"])
        for q in FOUR:
            metrics[f"C3_{q}_{name}_grid"] = fw[q]
        metrics[f"C3_both_{name}_grid"] = fw["TT"]
        metrics[f"C4_{name}_grid"] = share_grid(c4, g["C4"])
        for key, vals in (("C1_1", d1), ("C1_2", d2), ("C3_1", e1), ("C3_2", e2), ("C4", c4)):
            finite = vals[np.isfinite(vals)]
            metrics[f"{key}_{name}_margin_mean"] = float(finite.mean()) if finite.size else float("nan")
            metrics[f"{key}_{name}_margin_std"] = float(finite.std()) if finite.size else float("nan")
        for col, part, vals in ((f"c1_co1_{name}", ov, d1), (f"c1_co2_{name}", ov, d2), (f"c3_cd1_{name}", df, e1),
                                (f"c3_cd2_{name}", df, e2), (f"c4_{name}", df, c4)):
            full = np.full(n, np.nan)
            full[part] = vals
            cols[col] = full

    p = project(ea, eb, et)
    cols.update(angle_a=p.angle_a, angle_b=p.angle_b, position=p.position, angle_ab_deg=np.degrees(p.angle_ab),
                in_plane=p.in_plane_share, norm_ratio=p.norm_ratio, norm_case=norm_case(p, tau))
    un = masks["union"]
    for t in tol:
        metrics[f"C2_between_tol{fmt(t)}"] = _pct(between(p, t)[ov])
        metrics[f"C6_between_tol{fmt(t)}"] = _pct(between(p, t)[un])
    for th in theta:
        metrics[f"C5_near_a_theta{fmt(th)}"] = _pct(near(p.angle_a, th)[df])
        metrics[f"C6_met_theta{fmt(th)}"] = _pct(c6_met(p, th, c6_tol, tau)[un])
    case = norm_case(p, tau)[un]
    for c in ("a_larger", "b_larger", "comparable"):
        metrics[f"C6_case_{c}"] = _pct(case == c)
    for op, mask in masks.items():
        if mask.any():
            metrics[f"angle_b_mean_{op}"] = _mean(p.angle_b[mask])
            metrics[f"angle_a_mean_{op}"] = _mean(p.angle_a[mask])
            metrics[f"norm_ratio_mean_{op}"] = _mean(p.norm_ratio[mask])
            metrics[f"in_plane_mean_{op}"] = _mean(p.in_plane_share[mask])
    settings = {"measures": list(measures), "eps": [float(e) for e in eps], "grid_size": grid_size,
                "tol": [float(t) for t in tol], "theta": [float(t) for t in theta], "tau": tau,
                "c6_tol": c6_tol}
    return Evaluation(metrics, cols, p, counts, settings)


def _pct(mask: np.ndarray) -> float:
    return float(100.0 * mask.mean()) if mask.size else float("nan")


def _mean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")

"""Projection of a target embedding onto the plane spanned by the input embeddings A and B (criteria C2, C5, C6).

Orthonormal basis of the plane (Gram–Schmidt, the paper's appendix A.2):
    b1 = A / ‖A‖,   b2 = (B − (B·b1) b1) / ‖B − (B·b1) b1‖,   proj(V) = (V·b1) b1 + (V·b2) b2.
In these coordinates A = (‖A‖, 0) and B lies in the upper half plane. Angles are measured inside the plane and
normalised by the angle between A and B, so that angle(A, B) = 1: ``angle_a`` = ∠(A, proj)/∠(A, B) and ``angle_b`` =
∠(B, proj)/∠(A, B). The projection lies "between" A and B exactly when angle_a + angle_b = 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _rows(x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return a[None, :] if a.ndim == 1 else a


def plane_basis(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise orthonormal basis (b1, b2) of span{A, B}; rows are nan where A = 0 or B ∥ A."""
    a, b = _rows(a), _rows(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        b1 = a / np.linalg.norm(a, axis=1, keepdims=True)
        r = b - np.einsum("ij,ij->i", b, b1)[:, None] * b1
        rn = np.linalg.norm(r, axis=1, keepdims=True)
        scale = np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
        rn = np.where(rn <= 1e-9 * scale, np.nan, rn)  # B parallel to A: no plane
        b2 = r / rn
    return b1, b2


@dataclass(frozen=True)
class Projection:
    """Per-sample projection figures (arrays of length n)."""
    comp1: np.ndarray        # V·b1
    comp2: np.ndarray        # V·b2
    angle_ab: np.ndarray     # ∠(A, B) in radians
    angle_a: np.ndarray      # ∠(A, proj V) / ∠(A, B)
    angle_b: np.ndarray      # ∠(B, proj V) / ∠(A, B)
    position: np.ndarray     # signed polar angle of proj V from A towards B, / ∠(A, B): 0 at A, 1 at B
    in_plane_share: np.ndarray  # ‖proj V‖ / ‖V‖
    norm_ratio: np.ndarray   # ‖A‖ / ‖B‖

    def vectors(self, a, b) -> np.ndarray:
        b1, b2 = plane_basis(a, b)
        return self.comp1[:, None] * b1 + self.comp2[:, None] * b2


def project(a, b, v) -> Projection:
    a, b, v = _rows(a), _rows(b), _rows(v)
    b1, b2 = plane_basis(a, b)
    c1 = np.einsum("ij,ij->i", v, b1)
    c2 = np.einsum("ij,ij->i", v, b2)
    bx = np.einsum("ij,ij->i", b, b1)
    by = np.einsum("ij,ij->i", b, b2)            # > 0 by construction
    phi_b = np.arctan2(by, bx)                   # ∠(A, B) ∈ (0, π)
    phi_v = np.arctan2(c2, c1)                   # signed angle of proj V from A, (−π, π]
    ang_a = np.abs(phi_v)
    diff = np.abs(phi_v - phi_b)
    ang_b = np.minimum(diff, 2 * np.pi - diff)
    with np.errstate(invalid="ignore", divide="ignore"):
        in_plane = np.hypot(c1, c2) / np.linalg.norm(v, axis=1)
        ratio = np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        return Projection(c1, c2, phi_b, ang_a / phi_b, ang_b / phi_b, phi_v / phi_b, in_plane, ratio)


def histogram(values, bins: int = 30, value_range: tuple[float, float] | None = None) -> dict:
    """Counts of the finite values; ``edges`` has bins + 1 entries. JSON-friendly."""
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if value_range is None:
        value_range = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
        if value_range[0] == value_range[1]:
            value_range = (value_range[0] - 0.5, value_range[1] + 0.5)
    counts, edges = np.histogram(np.clip(x, *value_range), bins=bins, range=value_range)
    return {"counts": counts.tolist(), "edges": [float(e) for e in edges], "n": int(x.size),
            "clipped": int(((x < value_range[0]) | (x > value_range[1])).sum())}

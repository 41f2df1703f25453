"""Similarity and distance measures between embeddings, row-wise on (n, d) arrays.

Five measures as in the SetLike paper: cosine and dot product (similarities: larger = closer) and L1, L2 and the
normalised Euclidean distance NED (distances: smaller = closer). Criteria never compare raw values of the two kinds
directly; they use ``oriented`` values (distances negated) so that "larger = closer" holds for every measure, which is
exactly how the inequalities of the criteria flip for distances.

NED(u, v) = ½·Var(u − v) / (Var(u) + Var(v))   (population variance over the coordinates; 0 ≤ NED ≤ 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


def _rows(x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return a[None, :] if a.ndim == 1 else a


def cosine(u, v) -> np.ndarray:
    u, v = _rows(u), _rows(v)
    nu = np.linalg.norm(u, axis=1)
    nv = np.linalg.norm(v, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.einsum("ij,ij->i", u, v) / (nu * nv)
    return np.clip(out, -1.0, 1.0)  # nan (a zero vector) stays nan


def dot(u, v) -> np.ndarray:
    u, v = _rows(u), _rows(v)
    return np.einsum("ij,ij->i", u, v)


def l1(u, v) -> np.ndarray:
    u, v = _rows(u), _rows(v)
    return np.abs(u - v).sum(axis=1)


def l2(u, v) -> np.ndarray:
    u, v = _rows(u), _rows(v)
    return np.linalg.norm(u - v, axis=1)


def ned(u, v) -> np.ndarray:
    u, v = _rows(u), _rows(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 0.5 * np.var(u - v, axis=1) / (np.var(u, axis=1) + np.var(v, axis=1))


@dataclass(frozen=True)
class Measure:
    name: str
    kind: str            # "similarity" | "distance"
    fn: Callable
    label: str

    @property
    def is_distance(self) -> bool:
        return self.kind == "distance"

    def __call__(self, u, v) -> np.ndarray:
        return self.fn(u, v)

    def oriented(self, u, v) -> np.ndarray:
        """The measure with distances negated: larger always means 'closer'."""
        value = self.fn(u, v)
        return -value if self.is_distance else value


MEASURES: dict[str, Measure] = {
    "cosine": Measure("cosine", "similarity", cosine, "Cosine similarity"),
    "dot": Measure("dot", "similarity", dot, "Dot product"),
    "l1": Measure("l1", "distance", l1, "L1 distance"),
    "l2": Measure("l2", "distance", l2, "L2 distance"),
    "ned": Measure("ned", "distance", ned, "Normalised Euclidean distance"),
}


def get_measure(name: str) -> Measure:
    from core.errors import UserError

    try:
        return MEASURES[name]
    except KeyError:
        raise UserError(f"unknown measure {name!r}; expected one of: {', '.join(MEASURES)}") from None

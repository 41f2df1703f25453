"""Shared pieces of the task contract."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Mapping, Sequence, TypedDict

# Reasoning efforts a model may be asked for (``SamplingParams.reasoning_effort``; the ``reasoning`` grid factor):
# ``none`` sends nothing (the provider's default behaviour); the rest is the scale from least to most thinking, with
# ``off`` asking for no reasoning where a provider can say so (data/reasoning/efforts.yaml maps each level)
REASONING_EFFORTS = ("none", "off", "minimal", "low", "medium", "high", "xhigh", "max")


class Score(TypedDict, total=False):
    """What ``task.score(item, response)`` returns. Common keys first, task-specific after.

    parsed     JSON text of the parsed answer (a sorted list for sets, "true"/"false" for quantifiers),
               None when the response did not follow the instructions
    followed   bool: an answer could be parsed
    correct    bool: exact match with the truth (did-not-follow counts as wrong)
    """

    parsed: str | None
    followed: bool
    correct: bool


def stable_id(obj: Any, n: int = 12) -> str:
    """Short stable hash of a JSON-able object (sorted keys) — identical on every machine and run."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


GREEDY_PICKS = 512   # cells chosen one by one for balance; any further ones follow the seeded order


def spread_indices(cells: Sequence[Mapping[str, Any]], samples: int, n: int, seed: Any,
                   index_of: Callable[[int, int], int]) -> list[int]:
    """``n`` item indices spread over a grid of ``cells`` (each a mapping factor → level) with ``samples`` items
    each (``index_of(cell, sample)`` → item index). Deterministic: a function of the grid, ``seed`` and ``n``.

    Cells are picked one at a time, each time the cell whose levels have been picked least so far (summed over the
    factors that vary; ties broken by a seeded order) — so the first picks cover every level of every factor as
    soon as ``n`` allows (on a full grid within as many picks as the largest factor has levels) and later picks
    keep the levels balanced. With more picks than cells, every cell is taken once before any is taken twice.
    The samples a round takes are spread over each cell's samples rather than always its first.
    """
    import numpy as np

    n_cells = len(cells)
    total = n_cells * samples
    if n >= total:
        return [index_of(c, s) for c in range(n_cells) for s in range(samples)]
    if n <= 0:
        return []
    names = sorted({k for cell in cells for k in cell}, key=str)
    columns = []
    for name in names:
        levels: dict = {}
        codes = [levels.setdefault(json.dumps(cell.get(name), sort_keys=True, default=str), len(levels))
                 for cell in cells]
        if len(levels) > 1:
            columns.append((np.asarray(codes, dtype=np.int64), np.zeros(len(levels), dtype=np.int64)))
    rank = np.asarray([int(hashlib.sha256(f"{seed}|{c}".encode()).hexdigest()[:12], 16) for c in range(n_cells)])
    rank = np.argsort(np.argsort(rank, kind="stable"), kind="stable")   # a seeded permutation 0 … n_cells-1
    order: list[int] = []
    taken = np.zeros(n_cells, dtype=bool)
    for _ in range(min(n, n_cells, GREEDY_PICKS) if columns else 0):
        score = np.zeros(n_cells, dtype=np.int64)
        for codes, counts in columns:
            score += counts[codes]
        key = np.where(taken, np.iinfo(np.int64).max, score * n_cells + rank)
        c = int(np.argmin(key))
        taken[c] = True
        order.append(c)
        for codes, counts in columns:
            counts[codes[c]] += 1
    order += [int(c) for c in np.argsort(rank, kind="stable") if not taken[c]]
    width = min(n, n_cells)
    out: list[int] = []
    for r in range(samples):
        for pos, c in enumerate(order[:width]):
            if len(out) >= n:
                return sorted(out)
            out.append(index_of(c, (r + (pos * samples) // width) % samples))
    return sorted(out)


# The store's view of results, one row per item of a run with its factors and verdicts: the relation the SQL of the
# tasks (metrics, scoring definitions), the store and the analysis read.
RESULTS_VIEW = "v_results"

# The range of a 64-bit signed whole number (DuckDB's BIGINT): seeds and stored integers stay inside it.
INT64 = (-(2 ** 63), 2 ** 63 - 1)


def is_int(v) -> bool:
    """A whole number, and not a bool (``True`` is an ``int`` to Python, never to a config)."""
    return isinstance(v, int) and not isinstance(v, bool)


def cached_on(obj, name: str, make):
    """``make()`` computed once per (frozen) object and kept in its ``__dict__`` under ``name`` — what a plan or an
    engine of one config is; it lives and dies with the config."""
    value = obj.__dict__.get(name)
    if value is None:
        value = make()
        object.__setattr__(obj, name, value)
    return value

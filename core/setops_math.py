"""Ground truth of the four set operations and the project's canonical member order.

Members are ints (number items) or lower-case strings (word items). The canonical order — used for every
truth, parsed answer and stored list — is: ints ascending first, then strings lexicographically (by code point).
It never depends on Python's ``hash()`` and so is identical across processes and ``PYTHONHASHSEED`` values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Union

Member = Union[int, str]

OPERATIONS = ("union", "intersection", "difference", "symmetric_difference")

# Mathematical symbol of each operation (for prompts, labels and tables).
SYMBOLS = {"union": "∪", "intersection": "∩", "difference": "−", "symmetric_difference": "△"}


def member_key(m: Member) -> tuple:
    """Sort key of one member: ints before strings; ints numerically, strings by code point."""
    if isinstance(m, bool) or not isinstance(m, (int, str)):
        raise TypeError(f"set members must be int or str, got {type(m).__name__}: {m!r}")
    if isinstance(m, int):
        return (0, m, "")
    return (1, 0, m)


def canonical(members: Iterable[Member]) -> tuple:
    """De-duplicated members in canonical order (ints ascending, then strings lexicographic)."""
    distinct = set(members)
    if all(type(m) is int for m in distinct) or all(type(m) is str for m in distinct):
        return tuple(sorted(distinct))
    return tuple(sorted(distinct, key=member_key))


def apply_operation(op: str, a: Iterable[Member], b: Iterable[Member]) -> tuple:
    """The truth of ``A op B`` as a canonical tuple. ``op`` is one of :data:`OPERATIONS`.

    difference is A − B (members of A not in B); symmetric_difference is (A − B) ∪ (B − A).
    """
    sa, sb = set(a), set(b)
    if op == "union":
        out = sa | sb
    elif op == "intersection":
        out = sa & sb
    elif op == "difference":
        out = sa - sb
    elif op == "symmetric_difference":
        out = sa ^ sb
    else:
        raise ValueError(f"unknown set operation {op!r}; expected one of: {', '.join(OPERATIONS)}")
    return canonical(out)

"""The four set operations, computed exactly.

``apply(op, a, b)`` keeps the order in which members appear in A and then in B (that is how demonstrations list a
result); ``truth(op, a, b)`` is the canonical answer: a sorted list (ints ascending, words lexicographic).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Union

Member = Union[int, str]

OPERATIONS = ("union", "intersection", "difference", "symmetric_difference")

SYMBOLS = {"union": "∪", "intersection": "∩", "difference": "∖", "symmetric_difference": "△"}


def keeps(op: str, in_a: bool, in_b: bool) -> bool:
    """Whether a member found in A (``in_a``) and/or B (``in_b``) belongs to the result of ``op``."""
    if op == "union":
        return in_a or in_b
    if op == "intersection":
        return in_a and in_b
    if op == "difference":
        return in_a and not in_b
    if op == "symmetric_difference":
        return in_a != in_b
    raise ValueError(f"unknown operation {op!r}")


def apply(op: str, a: Sequence, b: Sequence) -> list:
    """Result of ``op`` on A and B, members in order of first appearance (A first, then B)."""
    sa, sb = set(a), set(b)
    if op == "union":
        return list(a) + [x for x in b if x not in sa]
    if op == "intersection":
        return [x for x in a if x in sb]
    if op == "difference":
        return [x for x in a if x not in sb]
    if op == "symmetric_difference":
        return [x for x in a if x not in sb] + [x for x in b if x not in sa]
    raise ValueError(f"unknown operation {op!r}")


def truth(op: str, a: Sequence, b: Sequence) -> list:
    """The canonical answer: the result of ``op`` as a sorted list."""
    return sorted(apply(op, a, b))


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

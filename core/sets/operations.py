"""The four set operations (SPEC S1), computed exactly.

``apply(op, a, b)`` keeps the order in which members appear in A and then in B (that is how demonstrations list a
result); ``truth(op, a, b)`` is the canonical answer: a sorted list (ints ascending, words lexicographic).
"""

from __future__ import annotations

from collections.abc import Sequence

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

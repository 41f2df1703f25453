"""Drawing a pair of sets (A, B) from one population, with optional overlap control.

Every set has distinct members and exactly the requested size. By default A and B are independent draws, so they may
share members by chance (as in the paper). With overlap control, exactly ``c`` members of the smaller set are also in
the larger one: ``overlap`` is a count (int) or a fraction f (float in [0, 1]) of the smaller set's size m, giving
⌊m·f⌋ members — the reference's ``int(m * f)``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence


def overlap_count(overlap: int | float | None, size_a: int, size_b: int) -> int | None:
    """Resolve an overlap setting to a member count (None = independent draws)."""
    if overlap is None:
        return None
    small = min(size_a, size_b)
    if isinstance(overlap, float):
        return int(math.floor(overlap * small))
    return int(overlap)


def distinct_pairs(n: int, size_a: int, size_b: int, common: int | None) -> int:
    """How many different (A, B) pairs the draw can produce from a population of ``n``."""
    if common is None:
        return math.comb(n, size_a) * math.comb(n, size_b)
    big, small = max(size_a, size_b), min(size_a, size_b)
    return math.comb(n, big) * math.comb(big, common) * math.comb(n - big, small - common)


def infeasible_reason(n: int, size_a: int, size_b: int, common: int | None) -> str | None:
    """Why no pair can be drawn from a population of ``n`` (None if one can)."""
    big, small = max(size_a, size_b), min(size_a, size_b)
    if n < big:
        return f"only {n} distinct members exist, fewer than a set of {big}"
    if common is not None:
        if common > small:
            return f"an overlap of {common} members exceeds the smaller set's size {small} (sizes {size_a}, {size_b})"
        if big + small - common > n:
            return (f"only {n} distinct members exist, fewer than the {big + small - common} that sets of sizes "
                    f"{size_a} and {size_b} sharing {common} need")
    return None


def draw_pair(rng: random.Random, pop: Sequence, size_a: int, size_b: int, common: int | None) -> tuple[list, list]:
    """One (A, B) draw; members in drawn order (the order shown in the prompt)."""
    if common is None:
        return rng.sample(pop, size_a), rng.sample(pop, size_b)
    big_size, small_size = max(size_a, size_b), min(size_a, size_b)
    big = rng.sample(pop, big_size)
    shared = rng.sample(big, common)
    taken = set(big)
    rest: list = []
    # draw the non-shared members of the smaller set from outside the larger set (rejection: populations are large
    # compared to the sets; infeasible_reason has already ruled out the impossible cases)
    need = small_size - common
    if need:
        if len(pop) - big_size < 4 * need:
            outside = [x for x in pop if x not in taken]
            rest = rng.sample(outside, need)
        else:
            while len(rest) < need:
                x = pop[rng.randrange(len(pop))]
                if x not in taken:
                    taken.add(x)
                    rest.append(x)
    small = shared + rest
    rng.shuffle(small)
    return (big, small) if size_a >= size_b else (small, big)

""""Deceptive" sets from WordNet hyponym groups.

One draw picks two different hypernyms and samples A from the hyponyms of the first and B from the hyponyms of the
second (members shared by both groups are excluded, so every member has exactly one source hypernym and A, B are
disjoint). The same draw serves all three conditions, so items that differ only in condition are paired:

``not_swapped``  A all from hypernym_a, B all from hypernym_b.
``swapped``      ``s`` members exchanged between A and B (positions chosen at random, in place), default s = ⌊m/2⌋
                 with m = min(|A|, |B|).
``random``       A and B drawn (disjoint) from the pooled vocabulary of all hyponym groups — the random baseline.

The groups cover every part of speech that has hyponyms (nouns and verbs in WordNet 3.0), as the reference walks every
synset; a vocabulary can be restricted to one part of speech (``vocabulary(pos="noun")``), the random baseline's pool
included. ``pos_of(hyp)`` names the parts of speech of the groups an item's members come from.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

CONDITIONS = ("not_swapped", "swapped", "random")
_PAIR_ATTEMPTS = 200


@dataclass(frozen=True)
class DeceptiveDraw:
    hypernym_a: str
    hypernym_b: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    perm_a: tuple[int, ...]  # swap order of A's positions
    perm_b: tuple[int, ...]
    random_a: tuple[str, ...]
    random_b: tuple[str, ...]

    def key(self) -> tuple:
        """Identity of the draw for de-duplication across samples."""
        return (frozenset(self.a), frozenset(self.b), frozenset(self.random_a), frozenset(self.random_b))


class Vocabulary:
    """The hyponym groups, indexed for sampling."""

    def __init__(self, groups, pos: str | None = None):
        self.pos = pos
        if pos is not None:
            groups = [g for g in groups if g.pos == pos]
        self.groups = tuple(sorted(groups, key=lambda g: g.synset))
        self.by_synset = {g.synset: g for g in self.groups}
        first: dict[str, str] = {}
        for g in self.groups:
            for w in g.members:
                first.setdefault(w, g.synset)
        self.pooled = tuple(sorted(first))
        self.home = first  # word -> first synset (sorted) holding it, for the random baseline
        self._eligible: dict[int, tuple] = {}
        self._feasible: dict[tuple[int, int], bool] = {}

    def pos_of(self, hyp: dict) -> str | None:
        """The parts of speech of the groups the members of an item come from ({member: hypernym}): "noun",
        "verb", or "noun+verb" for a pair of groups of different parts of speech."""
        found = sorted({str(self.by_synset[h].pos) for h in set(hyp.values()) if h in self.by_synset})
        return "+".join(found) or None

    def eligible(self, size: int) -> tuple:
        if size not in self._eligible:
            self._eligible[size] = tuple(g for g in self.groups if len(g.members) >= size)
        return self._eligible[size]

    @staticmethod
    def exclusive_pools(ga, gb) -> tuple[list[str], list[str]]:
        sa, sb = set(ga.members), set(gb.members)
        return [w for w in ga.members if w not in sb], [w for w in gb.members if w not in sa]

    def feasible(self, size_a: int, size_b: int) -> str | None:
        """None if items of these sizes can be drawn, else the reason why not."""
        if size_a + size_b > len(self.pooled):
            return f"the pooled hyponym vocabulary has only {len(self.pooled)} words"
        key = (size_a, size_b)
        if key not in self._feasible:
            self._feasible[key] = self._find_pair(size_a, size_b, 0) is not None
        if not self._feasible[key]:
            return f"no two hyponym groups have {size_a} and {size_b} members of their own"
        return None

    def _find_pair(self, size_a: int, size_b: int, start: int):
        ca, cb = self.eligible(size_a), self.eligible(size_b)
        if not ca or not cb:
            return None
        for i in range(len(ca)):
            ga = ca[(start + i) % len(ca)]
            for gb in cb:
                if gb is ga:
                    continue
                pa, pb = self.exclusive_pools(ga, gb)
                if len(pa) >= size_a and len(pb) >= size_b:
                    return ga, gb, pa, pb
        return None

    def pair_reason(self, hypernym_a: str, hypernym_b: str, size_a: int, size_b: int) -> str | None:
        """None if sets of these sizes can be drawn from this given hypernym pair, else why not."""
        ga, gb = self.by_synset[hypernym_a], self.by_synset[hypernym_b]
        pa, pb = self.exclusive_pools(ga, gb)
        if len(pa) < size_a or len(pb) < size_b:
            return (f"{hypernym_a} and {hypernym_b} have {len(pa)} and {len(pb)} hyponyms of their own, "
                    f"fewer than sets of {size_a} and {size_b} need")
        if size_a + size_b > len(self.pooled):
            return f"the pooled hyponym vocabulary has only {len(self.pooled)} words"
        return None

    def draw(self, rng: random.Random, size_a: int, size_b: int, pair: tuple[str, str] | None = None) -> DeceptiveDraw:
        """One draw; ``pair`` = (hypernym_a, hypernym_b) fixes the hypernyms instead of drawing them."""
        ca, cb = self.eligible(size_a), self.eligible(size_b)
        found = None
        if pair is not None:
            ga, gb = self.by_synset[pair[0]], self.by_synset[pair[1]]
            found = (ga, gb, *self.exclusive_pools(ga, gb))
        for _ in range(0 if found else _PAIR_ATTEMPTS):
            ga, gb = rng.choice(ca), rng.choice(cb)
            if ga is gb:
                continue
            pa, pb = self.exclusive_pools(ga, gb)
            if len(pa) >= size_a and len(pb) >= size_b:
                found = ga, gb, pa, pb
                break
        if found is None:  # rare: scan from a random start (feasible() has been checked by the grid expander)
            found = self._find_pair(size_a, size_b, rng.randrange(len(ca)))
            if found is None:
                raise ValueError(f"no hyponym groups with {size_a} and {size_b} members of their own")
        ga, gb, pa, pb = found
        a = tuple(rng.sample(pa, size_a))
        b = tuple(rng.sample(pb, size_b))
        perm_a = tuple(rng.sample(range(size_a), size_a))
        perm_b = tuple(rng.sample(range(size_b), size_b))
        ra = rng.sample(self.pooled, size_a)
        taken = set(ra)
        rb: list[str] = []
        while len(rb) < size_b:
            w = self.pooled[rng.randrange(len(self.pooled))]
            if w not in taken:
                taken.add(w)
                rb.append(w)
        return DeceptiveDraw(ga.synset, gb.synset, a, b, perm_a, perm_b, tuple(ra), tuple(rb))


def default_swap_count(size_a: int, size_b: int) -> int:
    return min(size_a, size_b) // 2


def apply_condition(d: DeceptiveDraw, condition: str, swap_count: int | None, home: dict[str, str]):
    """(A, B, member_hypernyms) for one condition of a draw."""
    if condition == "not_swapped":
        a, b = list(d.a), list(d.b)
        hyp = {w: d.hypernym_a for w in a}
        hyp.update({w: d.hypernym_b for w in b})
        return a, b, hyp
    if condition == "swapped":
        s = default_swap_count(len(d.a), len(d.b)) if swap_count is None else swap_count
        a, b = list(d.a), list(d.b)
        for j in range(s):
            i, k = d.perm_a[j], d.perm_b[j]
            a[i], b[k] = d.b[k], d.a[i]
        from_a = set(d.a)
        hyp = {w: (d.hypernym_a if w in from_a else d.hypernym_b) for w in a + b}
        return a, b, hyp
    if condition == "random":
        a, b = list(d.random_a), list(d.random_b)
        return a, b, {w: home[w] for w in a + b}
    raise ValueError(f"unknown condition {condition!r}")


WORD_POOLS = ("reference", "curated")


@lru_cache(maxsize=8)
def vocabulary(path: str | None = None, pos: str | None = None, pool: str = "reference") -> Vocabulary:
    """The shipped hyponym groups (or those of ``path``), optionally only those of one part of speech. ``pool``:
    ``reference`` — every group, as the reference draws them; ``curated`` — without the groups and members the
    project's blocklist names (``core.lexicon.blocklist``; words safe to project, what the live demo draws)."""
    from core.lexicon.hyponyms import load_groups

    if pool not in WORD_POOLS:
        raise ValueError(f"unknown word pool {pool!r} (expected one of: {', '.join(WORD_POOLS)})")
    groups = load_groups(path) if path else load_groups()
    if pool == "curated":
        from core.lexicon.blocklist import curate_groups

        groups = curate_groups(groups)
    return Vocabulary(groups, pos)

"""Quantifiers defined by their set-theoretic meaning — a closed catalogue, never user code.

A generalized quantifier Q relates a domain M, a restrictor A (the objects, |A| = n) and a scope B (the objects having
the asked predicate). In the prompts of this task every object has exactly one of two predicates, so a situation is
fully described by three numbers:

    n      total number of objects               = |A|
    a      objects having the asked predicate    = |A ∩ B|
    b      objects having the other predicate    = |A ∖ B|   (= n − a here)

Each quantifier is a truth function over (n, a, b) computed with integer arithmetic only (no floats, so "half of 51"
and "40 % of 7" are exact). The 15 quantifiers of the GQG dataset (Wang & Steinert-Threlkeld, GenBench 2023,
"GQG: Generalized Quantifier Generalization") are members of the catalogue; their labels agree with the published
lambda functions (e.g. "at most half" ⇔ a ≤ n/2, "between 4 and 6" inclusive, "all" ⇔ a = n).

Names are parsed with a strict grammar (lower-case after normalising whitespace; numbers are plain decimal digits):

    all | none | some
    at least N | at most N | more than N | fewer than N | less than N | exactly N
    between N and M                       (inclusive, N ≤ M)
    at least half | at most half | more than half | less than half | fewer than half | exactly half
    at least P% | at most P% | more than P% | fewer than P% | less than P% | exactly P%   (0 ≤ P ≤ 100)

Anything else raises ConfigError naming the grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from core.errors import ConfigError

# The 15 quantifiers of the vanilla GQG dataset, in the order of the paper's Table 2 and of the published data file.
GQG_QUANTIFIERS: tuple[str, ...] = (
    "at least 3",
    "at least 4",
    "at most 5",
    "at most 6",
    "more than 1",
    "more than 5",
    "more than 10",
    "all",
    "none",
    "between 4 and 6",
    "between 2 and 10",
    "at most half",
    "more than half",
    "less than half",
    "at least half",
)

MAX_NUMBER = 1_000_000  # parameters above this are certainly a typo

# comparative phrase -> (symbol, integer comparison of lhs with rhs)
_COMPARATIVES: dict[str, tuple[str, Callable[[int, int], bool]]] = {
    "at least": ("≥", lambda x, y: x >= y),
    "at most": ("≤", lambda x, y: x <= y),
    "more than": (">", lambda x, y: x > y),
    "fewer than": ("<", lambda x, y: x < y),
    "less than": ("<", lambda x, y: x < y),
    "exactly": ("=", lambda x, y: x == y),
}
_CMP = "|".join(re.escape(k) for k in _COMPARATIVES)
_NUM = r"(0|[1-9][0-9]*)"

_RE_COUNT = re.compile(rf"^({_CMP}) {_NUM}$")
_RE_HALF = re.compile(rf"^({_CMP}) half$")
_RE_PERCENT = re.compile(rf"^({_CMP}) {_NUM} ?%$")
_RE_BETWEEN = re.compile(rf"^between {_NUM} and {_NUM}$")

GRAMMAR = (
    "all | none | some | <cmp> N | <cmp> half | <cmp> P% | between N and M, "
    "where <cmp> is one of: " + ", ".join(_COMPARATIVES)
)

# Examples shown in the UI / docs, one per kind.
EXAMPLES: tuple[str, ...] = (
    "all", "none", "some", "at least 3", "at most 5", "more than 10", "fewer than 4", "exactly 7",
    "between 2 and 10", "at least half", "at most half", "more than half", "less than half", "at least 40%",
)


@dataclass(frozen=True)
class Quantifier:
    """One catalogue quantifier. ``holds(n, a, b)`` gives its truth value; ``meaning`` its set-theoretic definition."""

    name: str                      # canonical name, as it appears in prompts
    kind: str                      # all | none | some | count | between | half | percent
    comparative: str | None = None  # for count / half / percent kinds
    params: tuple[int, ...] = ()

    def holds(self, n: int, a: int, b: int | None = None) -> bool:
        """Truth of "Q of the n objects are P" when a of them are P (and b = n − a are not)."""
        if not (isinstance(n, int) and isinstance(a, int)) or n < 0 or a < 0 or a > n:
            raise ValueError(f"impossible situation n={n!r}, a={a!r}")
        if b is None:
            b = n - a
        if b != n - a:
            raise ValueError(f"counts do not add up: a={a} + b={b} != n={n}")
        if self.kind == "all":
            return a == n
        if self.kind == "none":
            return a == 0
        if self.kind == "some":
            return a >= 1
        if self.kind == "between":
            lo, hi = self.params
            return lo <= a <= hi
        compare = _COMPARATIVES[self.comparative][1]  # type: ignore[index]
        if self.kind == "count":
            return compare(a, self.params[0])
        if self.kind == "half":
            return compare(2 * a, n)           # a ⋈ n/2, exactly
        if self.kind == "percent":
            return compare(100 * a, self.params[0] * n)  # a ⋈ P/100 · n, exactly
        raise AssertionError(self.kind)

    @property
    def meaning(self) -> str:
        """Set-theoretic definition, with A the objects and B those having the asked predicate."""
        ab = "|A∩B|"
        if self.kind == "all":
            return f"{ab} = |A|"
        if self.kind == "none":
            return f"{ab} = 0"
        if self.kind == "some":
            return f"{ab} ≥ 1"
        if self.kind == "between":
            lo, hi = self.params
            return f"{lo} ≤ {ab} ≤ {hi}"
        sym = _COMPARATIVES[self.comparative][0]  # type: ignore[index]
        if self.kind == "count":
            return f"{ab} {sym} {self.params[0]}"
        if self.kind == "half":
            return f"2·{ab} {sym} |A|"
        return f"100·{ab} {sym} {self.params[0]}·|A|"

    def true_counts(self, n: int) -> tuple[int, ...]:
        """All a in 0…n for which the quantifier holds."""
        return tuple(a for a in range(n + 1) if self.holds(n, a))


def normalise_name(name: object) -> str:
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise ConfigError(f"quantifier must be a text like 'at least 3', got {name!r}")
    return " ".join(str(name).strip().lower().split())


def _number(text: str, what: str, original: str) -> int:
    value = int(text)
    if value > MAX_NUMBER:
        raise ConfigError(f"quantifier {original!r}: {what} {value} is too large (max {MAX_NUMBER})")
    return value


def parse_quantifier(name: object) -> Quantifier:
    """Parse a quantifier name with the strict grammar above; raise ConfigError with the grammar otherwise."""
    text = normalise_name(name)
    if text in ("all", "none", "some"):
        return Quantifier(text, text)
    if m := _RE_COUNT.match(text):
        cmp_, num = m.group(1), _number(m.group(2), "number", text)
        return Quantifier(f"{cmp_} {num}", "count", cmp_, (num,))
    if m := _RE_HALF.match(text):
        return Quantifier(f"{m.group(1)} half", "half", m.group(1))
    if m := _RE_PERCENT.match(text):
        cmp_, pct = m.group(1), _number(m.group(2), "percentage", text)
        if pct > 100:
            raise ConfigError(f"quantifier {text!r}: a percentage must be between 0 and 100")
        return Quantifier(f"{cmp_} {pct}%", "percent", cmp_, (pct,))
    if m := _RE_BETWEEN.match(text):
        lo, hi = _number(m.group(1), "number", text), _number(m.group(2), "number", text)
        if lo > hi:
            raise ConfigError(f"quantifier {text!r}: the first number must not exceed the second")
        return Quantifier(f"between {lo} and {hi}", "between", None, (lo, hi))
    raise ConfigError(f"unknown quantifier {str(name)!r}; expected {GRAMMAR}")


def catalogue_table(names: tuple[str, ...] | list[str] = GQG_QUANTIFIERS, n: int = 50) -> list[dict]:
    """Rows (name, meaning, number of true counts among 0…n) — for docs and the UI."""
    rows = []
    for name in names:
        q = parse_quantifier(name)
        rows.append({"quantifier": q.name, "meaning": q.meaning, "true_counts": len(q.true_counts(n)), "of": n + 1})
    return rows

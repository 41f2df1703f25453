"""Quantifier catalogue: strict grammar, and truth values at every boundary of every quantifier."""

import pytest

from core.errors import ConfigError
from core.tasks.quantifiers.catalogue import GQG_QUANTIFIERS, catalogue_table, parse_quantifier

N = 50


def truth(name, a, n=N):
    return parse_quantifier(name).holds(n, a, n - a)


# (quantifier, [(count, expected), …]) at and around every boundary, n = 50
BOUNDARIES = [
    ("at least 3", [(0, False), (2, False), (3, True), (4, True), (50, True)]),
    ("at least 4", [(3, False), (4, True), (5, True)]),
    ("at most 5", [(0, True), (4, True), (5, True), (6, False), (50, False)]),
    ("at most 6", [(5, True), (6, True), (7, False)]),
    ("more than 1", [(0, False), (1, False), (2, True)]),
    ("more than 5", [(5, False), (6, True)]),
    ("more than 10", [(9, False), (10, False), (11, True), (50, True)]),
    ("all", [(0, False), (49, False), (50, True)]),
    ("none", [(0, True), (1, False), (50, False)]),
    ("between 4 and 6", [(3, False), (4, True), (5, True), (6, True), (7, False)]),
    ("between 2 and 10", [(1, False), (2, True), (10, True), (11, False)]),
    ("at most half", [(0, True), (24, True), (25, True), (26, False), (50, False)]),
    ("more than half", [(24, False), (25, False), (26, True)]),
    ("less than half", [(0, True), (24, True), (25, False), (26, False)]),
    ("at least half", [(24, False), (25, True), (26, True)]),
    # parameterised catalogue
    ("some", [(0, False), (1, True), (50, True)]),
    ("fewer than 4", [(3, True), (4, False), (5, False)]),
    ("less than 4", [(3, True), (4, False)]),
    ("exactly 7", [(6, False), (7, True), (8, False)]),
    ("exactly half", [(24, False), (25, True), (26, False)]),
    ("fewer than half", [(24, True), (25, False)]),
    ("at least 40%", [(19, False), (20, True), (21, True)]),
    ("at most 40%", [(20, True), (21, False)]),
    ("more than 40%", [(20, False), (21, True)]),
    ("less than 40%", [(19, True), (20, False)]),
    ("exactly 40%", [(19, False), (20, True), (21, False)]),
    ("at least 0%", [(0, True)]),
    ("at least 100%", [(49, False), (50, True)]),
    ("between 0 and 0", [(0, True), (1, False)]),
]


@pytest.mark.parametrize("name,cases", BOUNDARIES, ids=[b[0] for b in BOUNDARIES])
def test_boundaries(name, cases):
    for a, expected in cases:
        assert truth(name, a) is expected, (name, a)


def test_every_gqg_quantifier_has_boundary_cases():
    assert {b[0] for b in BOUNDARIES} >= set(GQG_QUANTIFIERS)


@pytest.mark.parametrize("n", [1, 2, 7, 51])
def test_half_and_percent_exact_for_odd_totals(n):
    # "half of n" compared exactly: for odd n, a ≤ n/2 ⇔ a ≤ (n-1)/2
    for a in range(n + 1):
        assert truth("at most half", a, n) is (2 * a <= n)
        assert truth("more than half", a, n) is (2 * a > n)
        assert truth("less than half", a, n) is (2 * a < n)
        assert truth("at least half", a, n) is (2 * a >= n)
        assert truth("at least 40%", a, n) is (a * 100 >= 40 * n)


def test_gqg_true_counts_match_published_label_balance():
    # per (object, predicate) the 15 quantifiers are true for 358 of 15×51 counts → 358 × 12 × 2 = 8,592
    rows = catalogue_table(GQG_QUANTIFIERS, 50)
    assert sum(r["true_counts"] for r in rows) == 358
    assert {r["quantifier"]: r["true_counts"] for r in rows}["between 4 and 6"] == 3


def test_meaning_strings():
    assert parse_quantifier("at least 3").meaning == "|A∩B| ≥ 3"
    assert parse_quantifier("all").meaning == "|A∩B| = |A|"
    assert parse_quantifier("more than half").meaning == "2·|A∩B| > |A|"
    assert parse_quantifier("between 4 and 6").meaning == "4 ≤ |A∩B| ≤ 6"


def test_names_are_normalised():
    assert parse_quantifier("  At   Least  3 ").name == "at least 3"
    assert parse_quantifier("at least 40 %").name == "at least 40%"
    assert parse_quantifier("Between 2 and 10").params == (2, 10)


@pytest.mark.parametrize("bad", [
    "most", "at least", "at least three", "at least -1", "at least 03", "between 6 and 4", "at least 101%",
    "more than 1.5", "at least 3; import os", "__import__('os')", "lambda n, a, b: True", "", "all of them",
    "at least 10000000", None, 3, True,
])
def test_strict_grammar_rejects(bad):
    with pytest.raises(ConfigError) as exc:
        parse_quantifier(bad)
    assert "\n" not in str(exc.value)


def test_impossible_situation_rejected():
    q = parse_quantifier("all")
    with pytest.raises(ValueError):
        q.holds(5, 6, -1)
    with pytest.raises(ValueError):
        q.holds(5, 2, 2)

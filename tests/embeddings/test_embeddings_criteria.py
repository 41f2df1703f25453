"""Criteria C1–C6 on hand-made vectors whose answer is known, for every measure; NED and grid averaging checked
against direct formulas."""

import itertools

import numpy as np
import pytest

from core.embeddings import criteria as C
from core.embeddings.measures import MEASURES, get_measure, ned
from core.errors import UserError

ALL = sorted(MEASURES)
E = np.eye(4)
A, B = E[0], E[1]            # unit, orthogonal inputs
MID = (A + B) / 2            # exactly between A and B


def row(*vs):
    return [np.asarray(v, dtype=float)[None, :] for v in vs]


# ---------------------------------------------------------------- measures
def test_ned_matches_direct_formula():
    rng = np.random.default_rng(1)
    for _ in range(20):
        u, v = rng.normal(size=7) * 3 + 1, rng.normal(size=7)
        uc, vc = u - u.mean(), v - v.mean()
        direct = 0.5 * np.sum((uc - vc) ** 2) / (np.sum(uc ** 2) + np.sum(vc ** 2))
        assert ned(u, v)[0] == pytest.approx(direct, rel=1e-12)
        assert ned(u, v)[0] == pytest.approx(0.5 * np.var(u - v) / (np.var(u) + np.var(v)), rel=1e-12)
    assert ned(A, A)[0] == 0.0
    assert ned(A, -A)[0] == pytest.approx(1.0)


def test_measure_values_against_numpy():
    rng = np.random.default_rng(2)
    u, v = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    np.testing.assert_allclose(MEASURES["dot"](u, v), (u * v).sum(1))
    np.testing.assert_allclose(MEASURES["cosine"](u, v),
                               (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1))
    np.testing.assert_allclose(MEASURES["l1"](u, v), np.abs(u - v).sum(1))
    np.testing.assert_allclose(MEASURES["l2"](u, v), np.sqrt(((u - v) ** 2).sum(1)))


@pytest.mark.parametrize("name", ALL)
def test_oriented_flips_distances(name):
    m = get_measure(name)
    near, far = m.oriented(A, 0.9 * A + 0.1 * B)[0], m.oriented(A, B)[0]
    assert near > far  # larger oriented value = closer, for similarities and distances alike
    assert (m.kind == "distance") == (m(A, B)[0] > m(A, 0.9 * A + 0.1 * B)[0])


def test_unknown_measure_is_a_user_error():
    with pytest.raises(UserError, match="unknown measure"):
        get_measure("manhattan")


# ---------------------------------------------------------------- C1
@pytest.mark.parametrize("name", ALL)
def test_c1_target_between_inputs_meets_both(name):
    d1, d2 = C.c1_margins(*row(A, B, MID), MEASURES[name])
    assert d1[0] > 0 and d2[0] > 0
    assert C.four_way(d1, d2, 0.0)["TT"] == 100.0


@pytest.mark.parametrize("name", ALL)
def test_c1_target_equal_to_a(name):
    d1, d2 = C.c1_margins(*row(A, B, A), MEASURES[name])
    assert d1[0] > 0 and d2[0] == 0.0          # O = A: closer to A than B is; exactly as close to B as A is
    assert C.four_way(d1, d2, 0.0)["TT"] == 100.0
    assert C.four_way(d1, d2, 0.01)["TF"] == 100.0


@pytest.mark.parametrize("name", ALL)
def test_c1_target_orthogonal_to_close_inputs_fails_both(name):
    a, b = np.array([1.0, 1, 0, 0]) / np.sqrt(2), np.array([1.0, 0, 1, 0]) / np.sqrt(2)
    d1, d2 = C.c1_margins(*row(a, b, E[3]), MEASURES[name])
    assert C.four_way(d1, d2, 0.0)["FF"] == 100.0


# ---------------------------------------------------------------- C3
@pytest.mark.parametrize("name", ALL)
def test_c3_difference_equal_to_a(name):
    e1, e2 = C.c3_margins(*row(A, B, A), MEASURES[name])
    assert e1[0] > 0 and e2[0] == 0.0
    assert C.four_way(e1, e2, 0.0) == {"TT": 100.0, "TF": 0.0, "FT": 0.0, "FF": 0.0}
    assert C.four_way(e1, e2, 0.01)["TF"] == 100.0


@pytest.mark.parametrize("name", ALL)
def test_c3_difference_equal_to_b_fails_both(name):
    e1, e2 = C.c3_margins(*row(A, B, B), MEASURES[name])
    assert C.four_way(e1, e2, 0.0)["FF"] == 100.0


# ---------------------------------------------------------------- C4
@pytest.mark.parametrize("name", ALL)
def test_c4_target_along_a_minus_b(name):
    assert C.c4_margin(*row(A, B, A - B), MEASURES[name])[0] > 0
    assert C.c4_margin(*row(A, B, B - A), MEASURES[name])[0] < 0


@pytest.mark.parametrize("name", ALL)
def test_c4_nan_counts_as_not_met(name):
    d = C.c4_margin(*row(A, A, A), MEASURES[name])      # A − B = 0
    if name == "cosine":
        assert np.isnan(d[0])
    assert C.share(np.array([np.nan, 1.0]), 0.0) == 50.0


# ---------------------------------------------------------------- grid averaging
def test_four_way_grid_equals_brute_force_average():
    rng = np.random.default_rng(3)
    d1, d2 = rng.normal(size=40), rng.normal(size=40)
    d1[3] = np.nan
    g1, g2 = C.grid(d1, 9), C.grid(d2, 11)
    brute = {k: 0.0 for k in C.FOUR}
    for e1, e2 in itertools.product(g1, g2):
        fw = C.four_way(d1, d2, e1, e2)
        for k in C.FOUR:
            brute[k] += fw[k] / (len(g1) * len(g2))
    fast = C.four_way_grid(d1, d2, g1, g2)
    for k in C.FOUR:
        assert fast[k] == pytest.approx(brute[k], abs=1e-9)
    assert sum(fast.values()) == pytest.approx(100.0)
    assert C.share_grid(d1, g1) == pytest.approx(np.mean([C.share(d1, e) for e in g1]))


# ---------------------------------------------------------------- evaluate: C2, C5, C6 and the keys
def _evaluate(rows, **kw):
    ops = [r[0] for r in rows]
    ea, eb, et = (np.array([r[i] for r in rows], dtype=float) for i in (1, 2, 3))
    return C.evaluate(ops, ea, eb, et, **kw)


def test_evaluate_known_answers_every_measure():
    rows = [("overlap", A, B, MID), ("overlap", A, B, A),
            ("difference", A, B, A), ("difference", A, B, B),
            ("union", A, B, MID), ("union", 2 * A, B, 2 * A + 0.2 * B), ("union", A, 2 * B, B)]
    ev = _evaluate(rows, eps=(0.0, 0.05))
    m = ev.metrics
    assert ev.counts == {"overlap": 2, "difference": 2, "union": 3}
    for name in ALL:
        assert m[f"C1_both_{name}_eps0"] == 100.0
        assert m[f"C1_TT_{name}_eps0.05"] == 50.0 and m[f"C1_TF_{name}_eps0.05"] == 50.0
        assert m[f"C3_both_{name}_eps0"] == 50.0 and m[f"C3_FF_{name}_eps0"] == 50.0
    for name in ALL:   # D = A meets C4 with room to spare; D = B is a tie (margin exactly 0): met at ε=0 only
        assert m[f"C4_{name}_eps0"] == 100.0 and m[f"C4_{name}_eps0.05"] == 50.0
    assert m["C2_between_tol0.01"] == 100.0   # midpoint and A itself lie on the arc from A to B
    assert m["C5_near_a_theta0.1"] == 50.0    # D = A has angle 0 to A; D = B has angle 1
    assert m["C6_case_comparable"] == pytest.approx(100 / 3)
    assert m["C6_case_a_larger"] == pytest.approx(100 / 3) and m["C6_case_b_larger"] == pytest.approx(100 / 3)
    assert m["C6_met_theta0.25"] == 100.0     # middle / near the longer A / exactly on the longer B
    assert "C1_both_cosine_grid" in m and "C4_ned_grid" in m


def test_evaluate_rejects_misaligned_arrays():
    with pytest.raises(ValueError):
        C.evaluate(["overlap"], np.zeros((1, 3)), np.zeros((2, 3)), np.zeros((1, 3)))

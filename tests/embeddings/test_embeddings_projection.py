"""Projection onto the plane of A and B against direct numpy formulas; angle normalisation; histograms."""

import numpy as np
import pytest

from core.embeddings.projection import histogram, plane_basis, project


def _angle(u, v):
    return np.arccos(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v), -1, 1))


def test_projection_matches_least_squares_and_direct_angles():
    rng = np.random.default_rng(7)
    a, b, v = rng.normal(size=(3, 12, 9))
    p = project(a, b, v)
    proj = p.vectors(a, b)
    for i in range(12):
        M = np.stack([a[i], b[i]], axis=1)
        coef, *_ = np.linalg.lstsq(M, v[i], rcond=None)
        direct = M @ coef
        np.testing.assert_allclose(proj[i], direct, atol=1e-10)
        ab = _angle(a[i], b[i])
        assert p.angle_ab[i] == pytest.approx(ab)
        assert p.angle_a[i] == pytest.approx(_angle(a[i], direct) / ab)
        assert p.angle_b[i] == pytest.approx(_angle(b[i], direct) / ab)
        assert p.norm_ratio[i] == pytest.approx(np.linalg.norm(a[i]) / np.linalg.norm(b[i]))
        assert p.in_plane_share[i] == pytest.approx(np.linalg.norm(direct) / np.linalg.norm(v[i]))


def test_basis_is_the_papers_gram_schmidt():
    a, b = np.array([3.0, 0, 4, 0]), np.array([1.0, 2, 0, 1])
    b1, b2 = plane_basis(a, b)
    np.testing.assert_allclose(b1[0], a / 5)
    r = b - (b @ (a / 5)) * (a / 5)
    np.testing.assert_allclose(b2[0], r / np.linalg.norm(r))
    assert abs(b1[0] @ b2[0]) < 1e-12


def test_normalised_angles_of_special_targets():
    a, b = np.array([1.0, 0, 0]), np.array([0.6, 0.8, 0])      # ∠(A, B) = 53.13°
    off_plane = np.array([0.0, 0, 5])
    targets = {"A": a, "B": b, "A+B": a + b, "A lifted": a + off_plane, "-A": -a}
    p = project(np.tile(a, (5, 1)), np.tile(b, (5, 1)), np.array(list(targets.values())))
    assert p.angle_a[0] == pytest.approx(0) and p.angle_b[0] == pytest.approx(1)
    assert p.angle_a[1] == pytest.approx(1) and p.angle_b[1] == pytest.approx(0)
    assert p.angle_a[2] == pytest.approx(0.5) and p.angle_b[2] == pytest.approx(0.5)   # bisector of unit vectors
    assert p.angle_a[3] == pytest.approx(0) and p.in_plane_share[3] == pytest.approx(1 / np.sqrt(26))
    assert p.angle_a[4] == pytest.approx(np.pi / np.arccos(0.6))
    assert p.position[2] == pytest.approx(0.5) and p.position[4] == pytest.approx(np.pi / np.arccos(0.6))


def test_parallel_inputs_give_nan_not_an_error():
    p = project(np.array([[1.0, 0]]), np.array([[2.0, 0]]), np.array([[1.0, 1]]))
    assert np.isnan(p.angle_a[0])


def test_histogram_counts_and_clipping():
    h = histogram([0.1, 0.2, 0.9, 1.5, np.nan], bins=2, value_range=(0, 1))
    assert h["counts"] == [2, 2] and h["n"] == 4 and h["clipped"] == 1 and len(h["edges"]) == 3

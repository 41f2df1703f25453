"""analysis.violin_view (the violins' data at any size: per-group statistics and shapes from DuckDB, points only
for a selection small enough to draw) agrees with the per-configuration points it replaces, on both paths (the
store's aggregates and the rows), on a random store; the figure and the warnings drawn from it are those drawn
from the points; config_accuracy(lowest=k) lists the k configurations a sort of all of them would."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from core import analysis as A, runner, store
from core.analysis import aggregated, figures, summaries
from tests.analysis.test_aggregates_equal_rows import DECEPTIVE, SETOPS, _perturb

STATS = ["mean", "std", "min", "max", "N", "items"]


@pytest.fixture(scope="module")
def random_store(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("violin") / "s.duckdb")
    ids = [runner.run(g, "reference/solver", db_path=db).run_id for g in (SETOPS, DECEPTIVE)]
    _perturb(db, ids, random.Random(7))
    return db, ids


def _paths():
    yield "aggregates"
    with aggregated.rows_only():
        yield "rows"


SELECTIONS = [("operation", None), ("operation", "model"), ("members", "phrasing"), ("size_a", None),
              (None, None)]


@pytest.mark.parametrize("x,color", SELECTIONS)
def test_view_equals_the_points_it_summarises(random_store, x, color):
    db, ids = random_store
    by = [c for c in (x, color) if c]
    with store.connect(db) as con:
        for path in _paths():
            points, summary = A.violin_data(con, ids, x, color)
            small_pts, view = A.violin_view(con, ids, x, color, max_points=10 ** 6, sketch=7)
            pd.testing.assert_frame_equal(small_pts, points)     # small enough: the very points violin_data gives
            none_pts, view_big = A.violin_view(con, ids, x, color, max_points=0, sketch=7)
            assert none_pts is None, path                         # above max_points: no points, the same summary
            pd.testing.assert_frame_equal(view_big.drop(columns="shape"), view.drop(columns="shape"))
            # the statistics are group_summary's (the same numbers summed in another order: rtol)
            expect = A.group_summary(points, by)
            got = view[[*by, *STATS]]
            pd.testing.assert_frame_equal(got.reset_index(drop=True), expect[[*by, *STATS]].reset_index(drop=True),
                                          check_dtype=False, rtol=1e-9)
            groups = points.groupby(by, dropna=False, sort=True) if by else [((), points)]
            shapes = {}
            for key, g in groups:
                key = key if isinstance(key, tuple) else (key,)
                vals = np.sort(g["accuracy"].to_numpy(dtype=float))
                want = np.quantile(vals, np.linspace(0, 1, 7)) if len(vals) > 7 else vals
                shapes[tuple("none" if k is None or k != k else k for k in key)] = (want, int(g["n"].min()))
            assert len(shapes) == len(view) > 0
            for _, row in view.iterrows():
                key = tuple("none" if row[c] is None or row[c] != row[c] else row[c] for c in by)
                want, fewest = shapes[key]
                np.testing.assert_allclose(row["shape"], want, rtol=1e-12, atol=1e-9)
                assert int(row["min_items"]) == fewest


def test_both_paths_give_the_same_view(random_store):
    db, ids = random_store
    with store.connect(db) as con:
        for x, color in SELECTIONS:
            for scoring in A.SCORINGS:
                _, a = A.violin_view(con, ids, x, color, scoring=scoring, max_points=0, sketch=11)
                with aggregated.rows_only():
                    _, b = A.violin_view(con, ids, x, color, scoring=scoring, max_points=0, sketch=11)
                pd.testing.assert_frame_equal(a.drop(columns="shape"), b.drop(columns="shape"), rtol=1e-9)
                for sa, sb in zip(a["shape"], b["shape"]):
                    np.testing.assert_allclose(sa, sb, rtol=1e-12)


@pytest.mark.parametrize("x,color", [("operation", None), ("operation", "model"), ("members", "phrasing")])
def test_the_figure_from_the_view_is_the_figure_from_the_points(random_store, monkeypatch, x, color):
    db, ids = random_store
    with store.connect(db) as con:
        points, summary = A.violin_data(con, ids, x, color)
        _, view = A.violin_view(con, ids, x, color, max_points=0, sketch=figures.SKETCH)
    monkeypatch.setattr(summaries, "MAX_DRAWN_POINTS", 0)          # the points path sketches too
    from_points = figures.violin(points, x, color, summary)
    from_view = figures.violin(None, x, color, view)
    assert from_view.layout.xaxis.ticktext == from_points.layout.xaxis.ticktext
    assert "N=" in from_view.layout.xaxis.ticktext[0]
    assert [a.text for a in from_view.layout.annotations] == [a.text for a in from_points.layout.annotations]
    lines = [[float(v) for s in fig.layout.shapes for v in (s.x0, s.x1, s.y0)] for fig in (from_view, from_points)]
    assert lines[0] == pytest.approx(lines[1], rel=1e-12)          # the dashed means
    assert len(lines[0]) == (3 * len(set(points[x])) if color is None else 0)
    assert [t.name for t in from_view.data] == [t.name for t in from_points.data]
    for tv, tp in zip(from_view.data, from_points.data):
        assert tv.points is False and tp.points is False
        for level in set(tp.x):
            yv = np.sort([y for xx, y in zip(tv.x, tv.y) if xx == level])
            yp = np.sort([y for xx, y in zip(tp.x, tp.y) if xx == level])
            np.testing.assert_allclose(yv, yp, rtol=1e-12, atol=1e-9)
    # and the warnings a reader gets are the same
    assert figures.violin_warnings(None, x, color, summary=view) == figures.violin_warnings(points, x, color)


def test_warnings_from_the_view_name_the_small_violins(random_store):
    db, ids = random_store
    with store.connect(db) as con:
        points, _ = A.violin_data(con, ids, "operation", "members")
        _, view = A.violin_view(con, ids, "operation", "members", max_points=0)
    got = figures.violin_warnings(None, "operation", "members", min_items=10 ** 6, min_configs=10 ** 6,
                                  summary=view)
    assert got == figures.violin_warnings(points, "operation", "members", min_items=10 ** 6, min_configs=10 ** 6)
    assert len(got) == 2 and f"only {int(points['n'].min())} item(s)" in got[0]


def test_an_empty_selection_draws_the_empty_message(random_store):
    db, ids = random_store
    with store.connect(db) as con:
        pts, view = A.violin_view(con, ids, "operation", None, filters={"operation": ["no such operation"]})
    assert pts is None and view.empty
    fig = figures.violin(None, "operation", None, view, empty_message="nothing here")
    assert fig.layout.annotations[0].text == "nothing here"
    assert figures.violin_warnings(None, "operation", None, summary=view) == []


@pytest.mark.parametrize("k", [1, 5, 17, 10 ** 6])
def test_lowest_lists_what_sorting_all_of_them_would(random_store, k):
    db, ids = random_store
    by = ["operation", "members", "size_a"]
    with store.connect(db) as con:
        for path in _paths():
            every = A.config_accuracy(con, ids, by)
            lowest = A.config_accuracy(con, ids, by, lowest=k)
            want = every.nsmallest(k, "accuracy", keep="first")
            assert (lowest["of"] == len(every)).all(), path
            got = lowest.drop(columns="of")
            # the same configurations, in accuracy order (ties in the listing's order)
            pd.testing.assert_frame_equal(got.reset_index(drop=True),
                                          want.sort_values("accuracy", kind="stable").reset_index(drop=True))
            assert len(got) == min(k, len(every))


@pytest.mark.parametrize("x,color", SELECTIONS[:4])
def test_violin_summary_of_points_in_hand_is_the_view(random_store, x, color):
    db, ids = random_store
    by = [c for c in (x, color) if c]
    with store.connect(db) as con:
        points, _ = A.violin_data(con, ids, x, color)
        _, view = A.violin_view(con, ids, x, color, max_points=0, sketch=9)
    got = A.violin_summary(points, by, sketch=9)
    pd.testing.assert_frame_equal(got.drop(columns="shape"), view.drop(columns="shape"), check_dtype=False,
                                  rtol=1e-9)
    for a, b in zip(got["shape"], view["shape"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    empty = A.violin_summary(points.iloc[:0], by)
    assert empty.empty and "shape" in empty.columns

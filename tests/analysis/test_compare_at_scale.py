"""The comparison's paper-scale paths give what the simple ones give: the alignment of series in one DuckDB statement
(the pandas row-by-row keys it replaced, on runs that share some combinations and not others), the paired summary
from DuckDB's counts (McNemar and the agreement map of the full pairing), kept in the store for the next process;
and above BOOTSTRAP_MAX configurations the interval is Welch's."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import analysis as A, runner, store
from core.analysis import aggregated, memo
from core.analysis.sql import is_missing, plain_value
from tests.analysis.test_aggregates_equal_rows import SETOPS, _perturb


def _reference(con, series, x, align, filters=None, scoring="lenient"):
    """compare_runs as it was written before (pandas, row by row): each series' config_accuracy, then the rows whose
    joined normalised shared levels every series has."""
    shared = None
    for s in series:
        cols = [c for c in A.factor_columns(con, s.run_ids) if c not in A.RUN_FACTORS]
        shared = cols if shared is None else [c for c in shared if c in cols]
    shared = shared or []
    if "reasoning" in shared and not all("reasoning" in A.factor_columns(con, s.run_ids, varying=True) for s in series):
        shared = [c for c in shared if c != "reasoning"]   # one effort per run: compared across efforts, not aligned
    by = list(dict.fromkeys([x, *shared]))
    frames = []
    for s in series:
        pts = A.config_accuracy(con, s.run_ids, by, filters, scoring=scoring)
        pts.insert(0, "series", s.name)
        frames.append(pts)
    points = pd.concat(frames, ignore_index=True)
    if align and shared and len(series) > 1 and not points.empty:
        key = points[shared].apply(lambda col: col.map(lambda v: "\x00" if is_missing(v) else str(plain_value(v)))) \
            .agg("|".join, axis=1)
        common = set.intersection(*points.assign(_k=key).groupby("series")["_k"].agg(set).tolist())
        points = points[key.isin(common)].reset_index(drop=True)
    return points, shared


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Runs that share some combinations and not others: all sizes and members, one size, one member."""
    db = str(tmp_path_factory.mktemp("align") / "s.duckdb")
    ids = [runner.run(SETOPS, "reference/solver", db_path=db).run_id,
           runner.run({**SETOPS, "sizes": [4], "seed": 2}, "reference/solver", db_path=db, name="b").run_id,
           runner.run({**SETOPS, "members": ["words"], "phrasings": ["plain"], "seed": 3}, "reference/solver",
                      db_path=db, name="c").run_id]
    _perturb(db, ids[:2], random.Random(5))
    return db, ids


@pytest.mark.parametrize("pick", [(0, 1), (0, 2), (1, 2), (0, 1, 2), (0,)])
@pytest.mark.parametrize("x", ["operation", "size_a", "members"])
@pytest.mark.parametrize("align", [True, False])
def test_compare_runs_is_the_row_by_row_alignment(three_runs, pick, x, align):
    db, ids = three_runs
    series = [A.Series(f"s{i}", (ids[i],)) for i in pick]
    with store.connect(db) as con:
        for filters in (None, {"operation": ["union", "difference"]}):
            with aggregated.rows_only():    # the rows' path gives the same points
                pd.testing.assert_frame_equal(A.compare_runs(con, series, x=x, align=align, filters=filters)[0],
                                              _reference(con, series, x, align, filters)[0], check_dtype=False)
            got, shared = A.compare_runs(con, series, x=x, align=align, filters=filters)
            want, want_shared = _reference(con, series, x, align, filters)
            assert shared == want_shared
            pd.testing.assert_frame_equal(got, want, check_dtype=False)
            slim, _ = A.compare_runs(con, series, x=x, align=align, filters=filters, factors=False)
            pd.testing.assert_frame_equal(slim, want[["series", "run_id", "config_id", x, "n", "n_correct",
                                                      "accuracy"]], check_dtype=False)
            if len(pick) > 1 and align:       # the runs differ in sizes or members: alignment drops some
                assert 0 < len(got) < len(A.compare_runs(con, series, x=x, align=False, filters=filters)[0])


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("pair") / "s.duckdb")
    a = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    b = runner.run({**SETOPS, "phrasings": ["formal"]}, "reference/solver", db_path=db, name="b").run_id
    _perturb(db, [a], random.Random(11))
    return db, a, b


@pytest.mark.parametrize("filters", [None, {"operation": ["union", "difference"]}, {"size_a": [4]},
                                     {"operation": ["no such"]}])
@pytest.mark.parametrize("max_configs", [1, 3, 60])
def test_paired_summary_is_what_the_full_pairing_gives(two_runs, filters, max_configs):
    db, a, b = two_runs
    with store.connect(db) as con:
        full = A.paired_items(con, a, b, filters)
        got = A.paired_summary(con, a, b, filters, max_configs=max_configs)
    want_mc = A.mcnemar(full)
    assert got["mcnemar"].keys() == want_mc.keys()
    for k, v in want_mc.items():
        assert (math.isnan(v) and math.isnan(got["mcnemar"][k])) if isinstance(v, float) and math.isnan(v) \
            else got["mcnemar"][k] == v, k
    pd.testing.assert_frame_equal(got["map"], A.agreement_map(full, max_configs))
    if filters != {"operation": ["no such"]}:
        assert want_mc["n"] > 0 and want_mc["only_a"] + want_mc["only_b"] > 0   # the perturbed run disagrees
        assert got["map"]["config_id"].nunique() == min(max_configs, full["config_id"].nunique())


def test_paired_comparison_is_kept_in_the_store_for_the_next_process(two_runs):
    db, a, b = two_runs
    memo.clear()
    with store.connect(db) as con:
        first = A.paired_comparison(con, [a, b], {"size_a": [2]})
        assert con.execute("SELECT count(*) FROM analysis_cache").fetchone()[0] >= 1
    memo.clear()    # another process: nothing in memory, the stored answer is read
    with store.connect(db) as con:
        again = A.paired_comparison(con, [a, b], {"size_a": [2]})
        direct = A.paired_summary(con, a, b, {"size_a": [2]})
    assert again["mcnemar"] == first["mcnemar"] == direct["mcnemar"]
    for got in (first, again):
        assert got["map"][["config_id", "sample", "code", "category"]].equals(
            direct["map"][["config_id", "sample", "code", "category"]].reset_index(drop=True))


def test_large_series_get_welch_s_interval_small_ones_the_bootstrap():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 11, 300) * 10.0, rng.integers(2, 11, 300) * 10.0
    small = A.difference_of_means(a, b, bootstrap_max=300)
    assert small["ci_method"] == "BCa"
    large = A.difference_of_means(a, b, bootstrap_max=299)
    want = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert large["ci_method"] == "Welch t"
    assert (large["ci_low"], large["ci_high"]) == pytest.approx((want.low, want.high), rel=1e-12)
    assert large["difference"] == small["difference"] and large["welch_p"] == small["welch_p"]
    assert large["ci_low"] < large["difference"] < large["ci_high"]
    # no spread at all: no interval whichever the size
    flat = A.difference_of_means([50.0] * 10, [60.0] * 10, bootstrap_max=2)
    assert flat["ci_method"] == "degenerate" and math.isnan(flat["ci_low"])


def test_p_values_read_as_shown():
    assert A.p_text(0.0123456) == "0.0123" and A.p_text(1.0) == "1"
    assert A.p_text(float("nan")) == "–" and A.p_text(None) == "–"
    # 5 million paired items: an exact test underflows to 0, which is not certainty
    assert A.p_text(0.0) == "< 1e-300" and A.p_text(3e-301) == "3e-301"


@pytest.mark.parametrize("pick,x", [((0, 1), "operation"), ((0, 2), "size_a"), ((0,), "members"),
                                    ((0, 1, 2), "members")])
def test_compare_view_is_what_the_points_give_and_is_kept(three_runs, pick, x, monkeypatch):
    """compare_view (what the Compare page draws) equals the summaries of compare_runs' points, has the points only
    up to the limit, and the next process reads it from the store."""
    db, ids = three_runs
    series = [A.Series(f"s{i}", (ids[i],)) for i in pick]
    memo.clear()
    with store.connect(db) as con:
        points, shared = A.compare_runs(con, series, x=x, factors=False)
        view = A.compare_view(con, series, x=x)
        small = A.compare_view(con, series, x=x, max_points=0)
    colour = ["series"] if len(series) > 1 else []
    assert view["shared"] == shared and view["empty"] is False and view["missing"] == []
    assert view["n_points"] == len(points)
    pd.testing.assert_frame_equal(view["points"], points, check_dtype=False)
    assert small["points"] is None and small["n_points"] == len(points)
    expect = A.violin_summary(points, [x, *colour])
    got = view["shapes"]
    pd.testing.assert_frame_equal(got.drop(columns="shape"), expect.drop(columns="shape"), check_dtype=False)
    for a, b in zip(got["shape"], expect["shape"]):
        np.testing.assert_array_equal(a, b)
    pd.testing.assert_frame_equal(view["summary"], A.group_summary(points, ["series", x]), check_dtype=False)
    pd.testing.assert_frame_equal(view["by_series"], A.group_summary(points, ["series"]), check_dtype=False)

    # another process: nothing in memory, and no alignment possible — both come from the store
    memo.clear()

    def boom(*a, **k):
        raise AssertionError("recomputed instead of read from the store")

    monkeypatch.setattr(A.compare, "compare_runs", boom)
    with store.connect(db) as con:
        again = A.compare_view(con, series, x=x)
    pd.testing.assert_frame_equal(again["shapes"].drop(columns="shape"), got.drop(columns="shape"))
    pd.testing.assert_frame_equal(again["points"], view["points"])


def test_compare_view_says_when_alignment_leaves_nothing(tmp_path):
    db = str(tmp_path / "s.duckdb")
    a = runner.run({**SETOPS, "sizes": [4]}, "reference/solver", db_path=db).run_id
    b = runner.run({**SETOPS, "sizes": [6], "seed": 2}, "reference/solver", db_path=db, name="b").run_id
    series = [A.Series("a", (a,)), A.Series("b", (b,))]
    with store.connect(db) as con:
        view = A.compare_view(con, series, x="operation")
        loose = A.compare_view(con, series, x="operation", align=False)
    assert view["empty"] and view["aligned_away"] and view["missing"] == ["a", "b"]
    assert not loose["empty"] and not loose["aligned_away"] and loose["missing"] == []

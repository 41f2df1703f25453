"""The comparison's paper-scale paths give what the simple ones give: the alignment of series by vectorised codes
(the row-by-row keys it replaced), the paired summary from DuckDB's counts (McNemar and the agreement map of the full
pairing), kept in the store for the next process; and above BOOTSTRAP_MAX configurations the interval is Welch's."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import analysis as A, runner, store
from core.analysis import compare as C, memo
from core.analysis.queries import _isnan, _norm
from tests.analysis.test_aggregates_equal_rows import SETOPS, _perturb


def _row_keys(points: pd.DataFrame, shared: list[str]) -> pd.Series:
    """The alignment key as it was built before: each row's normalised values joined."""
    return points[shared].apply(lambda col: col.map(lambda v: "\x00" if _isnan(v) else str(_norm(v)))) \
        .agg("|".join, axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_combination_codes_group_rows_as_the_joined_keys_did(seed):
    rng = random.Random(seed)
    levels = [1, 1.0, 2, 2.0, None, float("nan"), "a", "b", np.int64(2), np.float64(4.0), 4]
    n = rng.randint(1, 300)
    frame = pd.DataFrame({c: pd.Series([rng.choice(levels) for _ in range(n)], dtype=object)
                          for c in ("f1", "f2", "f3")})
    codes = C._combination_codes(frame, ["f1", "f2", "f3"])
    keys = _row_keys(frame, ["f1", "f2", "f3"]).to_numpy()
    # the same partition of the rows: equal codes exactly where the keys are equal
    assert (codes[:, None] == codes[None, :]).tolist() == (keys[:, None] == keys[None, :]).tolist()


def test_aligned_points_keep_the_combinations_every_series_has():
    points = pd.DataFrame({"series": ["a", "a", "a", "b", "b", "c"],
                           "operation": ["union", "union", "difference", "union", "difference", "union"],
                           "size_a": [2, 4, 2, 2.0, 2, 2], "run_id": list("aaabbc"), "config_id": list("123456"),
                           "n": 1, "n_correct": 1, "accuracy": 100.0})
    codes = C._combination_codes(points, ["operation", "size_a"])
    assert codes[0] == codes[3] == codes[5] and codes[2] == codes[4] and len(set(codes)) == 3


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

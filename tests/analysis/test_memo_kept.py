"""What the store keeps for the analysis (core/analysis/memo.py, analysis_cache) is never served for another state
of the runs or another version of the code: a run deleted and run again under the same id gets new versions (one
counter for the store, core/store/aggregates.py), the key holds a fingerprint of core's sources, nothing is kept
while a run is live, and each function keeps its own newest entries."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from core import analysis as A, runner, store
from core.analysis import aggregated, memo
from core.store import aggregates
from tests.analysis.test_aggregates_equal_rows import SETOPS, _perturb


@pytest.fixture()
def db(tmp_path):
    memo.clear()
    yield str(tmp_path / "s.duckdb")
    memo.clear()


def _fresh(db, run_ids):
    memo.clear()
    with store.connect(db) as con, aggregated.rows_only():
        return A.selection_facts(con, run_ids)["overview"]["lenient"]


def test_a_run_deleted_and_run_again_is_never_read_from_what_its_namesake_left(db):
    rid = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    _perturb(db, [rid], random.Random(1))
    with store.connect(db) as con:
        before = A.selection_facts(con, [rid])["overview"]["lenient"]      # kept in the store
        old_version = dict(aggregates.versions(con))[rid]
    store.delete_run(db, rid)
    again = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    assert again == rid                                                 # run ids are deterministic
    _perturb(db, [rid], random.Random(2))                               # other answers this time
    memo.clear()                                                        # another process
    with store.connect(db) as con:
        assert dict(aggregates.versions(con))[rid] > old_version
        got = A.selection_facts(con, [rid])["overview"]["lenient"]
        assert aggregates.check(con) == []
    want = _fresh(db, [rid])
    pd.testing.assert_frame_equal(got, want)
    assert not got["n_correct"].equals(before["n_correct"])            # the old figures would have been wrong


def test_versions_go_on_after_a_rebuild(db):
    rid = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    with store.connect(db) as con:
        high = dict(aggregates.versions(con))[rid]
        aggregates.rebuild(con)
        assert dict(aggregates.versions(con))[rid] > high
        assert [r for r, _ in aggregates.versions(con)] == [rid]        # the counter's row is no run


def _kept(db) -> list[str]:
    with store.connect(db) as con:
        return [r[0] for r in con.execute("SELECT key FROM analysis_cache ORDER BY key").fetchall()]


def test_another_version_of_the_code_does_not_read_what_this_one_kept(db, monkeypatch):
    rid = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    calls = []

    def compute(con, x):
        calls.append(x)
        return {"x": x}

    with store.connect(db) as con:
        assert memo.call(con, "probe", compute, 1, persist=True) == {"x": 1}
    memo.clear()
    with store.connect(db) as con:
        memo.call(con, "probe", compute, 1, persist=True)
    assert calls == [1] and rid                                         # read from the store
    memo.clear()
    monkeypatch.setattr(memo, "_FINGERPRINT", ["other source"])
    with store.connect(db) as con:
        memo.call(con, "probe", compute, 1, persist=True)
    assert calls == [1, 1]                                              # computed again


def test_nothing_is_kept_while_a_run_is_live(db):
    rid = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    with store.connect(db) as con:
        con.execute("UPDATE runs SET status = 'running' WHERE run_id = ?", [rid])
        A.selection_facts(con, [rid])
    assert not [k for k in _kept(db) if k.startswith("selection_facts:")]
    with store.connect(db) as con:
        con.execute("UPDATE runs SET status = 'done' WHERE run_id = ?", [rid])
    memo.clear()
    with store.connect(db) as con:
        A.selection_facts(con, [rid])
    assert [k for k in _kept(db) if k.startswith("selection_facts:")]


def test_each_function_keeps_its_own_newest(db, monkeypatch):
    runner.run(SETOPS, "reference/solver", db_path=db)
    monkeypatch.setattr(memo, "KEEP_STORED", 2)
    with store.connect(db) as con:
        memo.call(con, "findings", lambda con, i: i, 0, persist=True)
        for i in range(5):
            memo.call(con, "browsing", lambda con, i: i, i, persist=True)
    kept = _kept(db)
    assert sum(k.startswith("findings:") for k in kept) == 1           # not evicted by the browsing
    assert sum(k.startswith("browsing:") for k in kept) == 2

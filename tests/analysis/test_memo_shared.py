"""Analysis results are keyed on the runs they read, computed once however many callers ask at the same time, and
handed out so that no caller can change another's (core/analysis/memo.py): a write to one run keeps every view of
the others — in the process (``call``, and ``view``, the pages' door) and in the store —, a finished run's kept
results are read while another run is live, and a view of a run is computed again after any change of that run
(results written, re-scored, its record changed, deleted)."""

from __future__ import annotations

import random
import shutil
import threading

import numpy as np
import pandas as pd
import pytest

from core import runner, store
from core.analysis import memo
from core.store import aggregates
from tests.analysis.test_aggregates_equal_rows import SETOPS, _perturb


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A store with two finished solver runs (x, y), written once for the module."""
    db = str(tmp_path_factory.mktemp("two") / "s.duckdb")
    x = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    y = runner.run({**SETOPS, "seed": 6}, "reference/solver", db_path=db).run_id
    assert x != y
    return db, x, y


@pytest.fixture()
def two(two_runs, tmp_path):
    """A copy of the module's store of two finished solver runs (x, y) for each test (what one test writes is never
    what the next one reads), and an empty memo."""
    template, x, y = two_runs
    memo.clear()
    db = str(tmp_path / "s.duckdb")
    shutil.copyfile(template, db)
    yield db, x, y
    memo.clear()


def _counting():
    """A view of some runs (right answers and result rows per run, their statuses) and the run ids of each time it
    was computed."""
    calls: list = []

    def view(con, run_ids, **kwargs):
        calls.append(None if run_ids is None else sorted(run_ids))
        where, params = ("WHERE ru.run_id IN (SELECT unnest(?))", [list(run_ids)]) if run_ids is not None else ("", [])
        rows = con.execute("SELECT ru.run_id, ru.status, count(r.idx), count(*) FILTER (WHERE r.correct) "
                           f"FROM runs ru LEFT JOIN results r ON r.run_id = ru.run_id {where} "
                           "GROUP BY ALL ORDER BY ru.run_id", params).fetchall()
        return {"runs": [list(r) for r in rows]}

    return view, calls


def _fresh(db, run_ids):
    view, _ = _counting()
    with store.connect(db) as con:
        return view(con, run_ids)


def _page(db, view, run_ids):
    return memo.view(db, "probe", view, run_ids)


def _cli(db, view, run_ids, persist=False):
    with store.connect(db) as con:
        return memo.call(con, "kept" if persist else "probe", view, run_ids, persist=persist)


def test_a_write_to_one_run_keeps_every_view_of_another(two):
    db, x, y = two
    page, page_calls = _counting()
    cli, cli_calls = _counting()
    kept, kept_calls = _counting()
    assert _page(db, page, [y]) == _cli(db, cli, [y]) == _cli(db, kept, [y], persist=True) == _fresh(db, [y])
    everything = _page(db, page, None)
    assert len(page_calls) == 2 and len(cli_calls) == len(kept_calls) == 1

    _perturb(db, [x], random.Random(3))                           # x's results rewritten (a merge)
    store.set_run_status(db, x, "running")                        # x's record changed, x live
    runner.run({**SETOPS, "seed": 7}, "reference/solver", db_path=db)   # another run stored
    for _ in range(2):
        assert _page(db, page, [y]) == _cli(db, cli, [y]) == _fresh(db, [y])
    assert page_calls[2:] == [] and len(cli_calls) == 1

    memo.clear()                                                  # another process: what the store kept is read
    assert _cli(db, kept, [y], persist=True) == _fresh(db, [y])
    assert len(kept_calls) == 1

    assert _page(db, page, None) != everything                    # a view of every run reads x and the new run
    assert page_calls[-1] is None and len(page_calls) == 3

    store.delete_run(db, x)                                       # x gone: y's views stay
    assert _page(db, page, [y]) == _fresh(db, [y]) and len(page_calls) == 4   # (cleared above: once more)
    assert _page(db, page, [y]) == _fresh(db, [y]) and len(page_calls) == 4


def test_a_finished_runs_kept_results_are_read_while_another_run_is_live(two):
    db, x, y = two
    store.set_run_status(db, x, "running")
    view, calls = _counting()
    assert _cli(db, view, [y], persist=True) == _fresh(db, [y])
    memo.clear()                                                  # another process
    assert _cli(db, view, [y], persist=True) == _fresh(db, [y])
    assert calls == [[y]]                                         # read from the store
    _cli(db, view, [x], persist=True)
    memo.clear()
    _cli(db, view, [x], persist=True)
    assert calls == [[y], [x], [x]]                               # x is live: nothing of it kept
    _cli(db, view, [x, y], persist=True)
    memo.clear()
    _cli(db, view, [x, y], persist=True)
    assert calls[-2:] == [sorted([x, y])] * 2                      # nor of a view that reads it among others


@pytest.mark.parametrize("change", ["results", "rescored", "recounted", "status", "deleted"])
def test_a_view_of_a_run_is_computed_again_after_the_run_changes(two, change):
    db, x, y = two
    page, page_calls = _counting()
    cli, cli_calls = _counting()
    before = _page(db, page, [x])
    assert _cli(db, cli, [x], persist=True) == before
    if change == "results":
        _perturb(db, [x], random.Random(4))
    elif change in ("rescored", "recounted"):   # verdicts changed in place, then re-counted as a migration /
        with store.connect(db) as con, store.transaction(con):   # an import does
            con.execute("UPDATE results SET correct = NOT coalesce(correct, FALSE) WHERE run_id = ?", [x])
            if change == "rescored":
                aggregates.rebuild(con)
            else:
                aggregates.refresh_runs(con, [x])
    elif change == "status":
        store.set_run_status(db, x, "interrupted")
    else:
        store.delete_run(db, x)
    after = _fresh(db, [x])
    assert after != before
    assert _page(db, page, [x]) == after and len(page_calls) == 2
    assert _cli(db, cli, [x], persist=True) == after and len(cli_calls) == 2   # neither the memo's nor the store's


def _wait_for(what, timeout=30.0):
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if what():
            return
        done.wait(0.01)
    raise AssertionError("never happened")


def test_callers_asking_for_one_key_at_once_share_one_computation():
    memo.clear()
    go, calls, got = threading.Event(), [], []

    def compute():
        calls.append(1)
        go.wait(30)
        return {"value": [1, 2, 3]}

    waited = memo.stats()["waited"]
    threads = [threading.Thread(target=lambda: got.append(memo.shared("slot", "state", compute))) for _ in range(3)]
    threads[0].start()
    _wait_for(lambda: calls)                                      # the first is computing
    for t in threads[1:]:
        t.start()
    _wait_for(lambda: memo.stats()["waited"] == waited + 2)       # the others wait for it
    go.set()
    for t in threads:
        t.join(30)
    assert calls == [1] and got == [{"value": [1, 2, 3]}] * 3
    assert memo.shared("slot", "state", compute) == {"value": [1, 2, 3]} and calls == [1]
    assert memo.shared("slot", "other state", compute) == {"value": [1, 2, 3]} and calls == [1, 1]
    memo.clear()


def test_pages_asking_for_one_view_at_once_share_one_computation(two):
    db, x, y = two
    go, calls, got, errors = threading.Event(), [], [], []

    def view(con, run_ids):
        calls.append(run_ids)
        go.wait(30)
        return {"n": con.execute("SELECT count(*) FROM results WHERE run_id = ?", [run_ids[0]]).fetchone()[0]}

    def ask():
        try:
            got.append(memo.view(db, "slow", view, [y]))
        except Exception as exc:   # reported below
            errors.append(exc)

    waited = memo.stats()["waited"]
    threads = [threading.Thread(target=ask) for _ in range(3)]
    threads[0].start()
    _wait_for(lambda: calls)
    for t in threads[1:]:
        t.start()
    _wait_for(lambda: memo.stats()["waited"] == waited + 2)
    go.set()
    for t in threads:
        t.join(30)
    assert not errors and calls == [[y]] and len(got) == 3 and got[0] == got[1] == got[2] and got[0]["n"] > 0


def test_a_failed_computation_fails_its_waiters_and_is_not_kept():
    memo.clear()
    go, calls, errors = threading.Event(), [], []

    def compute():
        calls.append(1)
        go.wait(30)
        raise ValueError("no")

    def ask():
        try:
            memo.shared("bad", "state", compute)
        except ValueError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    threads[0].start()
    _wait_for(lambda: calls)
    waited = memo.stats()["waited"]
    threads[1].start()
    _wait_for(lambda: memo.stats()["waited"] == waited + 1)
    go.set()
    for t in threads:
        t.join(30)
    assert len(errors) == 2 and calls == [1]
    assert memo.shared("bad", "state", lambda: "fine") == "fine"    # asked again: computed again
    memo.clear()


def test_what_one_caller_changes_in_its_result_no_other_caller_sees():
    memo.clear()

    def compute():
        frame = pd.DataFrame({"a": [1.0, 2.0], "shape": [np.array([1.0, 2.0]), np.array([3.0])]})
        return {"frame": frame, "rows": [[1, "x"], [2, "y"]], "meta": {"n": 2}, "array": np.arange(3)}

    first = memo.shared("slot", "state", compute)
    second = memo.shared("slot", "state", compute)
    first["frame"].loc[0, "a"] = -1.0
    first["frame"]["b"] = 1
    first["rows"][0].append("z")
    first["rows"].append([3, "w"])
    first["meta"]["n"] = 99
    first["extra"] = True
    with pytest.raises(ValueError):
        first["array"][0] = 7                                     # shared arrays are read-only
    with pytest.raises(ValueError):
        first["frame"]["shape"].iloc[0][0] = 7.0                  # arrays inside a frame's cells too
    for other in (second, memo.shared("slot", "state", compute)):
        assert other["frame"]["a"].tolist() == [1.0, 2.0] and list(other["frame"].columns) == ["a", "shape"]
        assert other["rows"] == [[1, "x"], [2, "y"]] and other["meta"] == {"n": 2} and "extra" not in other
        assert other["array"].tolist() == [0, 1, 2] and other["frame"]["shape"].iloc[0].tolist() == [1.0, 2.0]
    memo.clear()

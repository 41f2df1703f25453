"""The first calls of a run fly while its items are being inserted (issue 20): answers are journalled meanwhile, none
is merged before the items are in the DB, and a run whose insert fails stops and leaves its answers to the cache."""

import asyncio
import time

import pytest

from core import runner, store
from core.runner import executor
from core.store.journal import Journal, recover
from tests.runner.test_runner_mechanics import CFG, FakeModel, db_rows

WAIT = 30.0   # a bound on waiting for something the code under test must do (never reached when it works)


async def _until(cond) -> bool:
    deadline = time.monotonic() + WAIT
    while not cond():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True


def test_answers_are_journalled_while_the_items_are_inserted_and_merged_only_after(tmp_path, monkeypatch):
    db = tmp_path / "r.duckdb"
    seen = {}
    real = executor._Executor._insert_items_during_first_wave

    async def insert_later(self, item):
        # before inserting, wait until answers are durable and reported: they must not wait for the items
        seen["reported_first"] = await _until(lambda: self.handle.progress().done >= 8)
        # every answer is durable and the merge loop has been woken by the drain: still nothing merged
        seen["drained"] = await _until(lambda: self.handle.progress().done == 80 and self._drained.is_set())
        await asyncio.sleep(0.05)   # (gives a merge that should not happen the chance to)
        seen["results_before"] = db_rows(db, "SELECT count(*) FROM results")[0][0]
        seen["journalled"] = sum(1 for p in store.journal_dir(db).glob("*.jsonl") for _ in p.open())
        await real(self, item)

    monkeypatch.setattr(executor._Executor, "_insert_items_during_first_wave", insert_later)
    model = FakeModel(latency=0.005, concurrency=8)
    p = runner.run(CFG, model, db_path=db)
    assert seen["reported_first"] and seen["drained"]
    assert seen["results_before"] == 0 and seen["journalled"] == 80
    assert (p.status, p.done, p.error) == ("done", 80, None) and model.calls == 80
    assert db_rows(db, "SELECT count(*), count(i.idx) FROM results r LEFT JOIN items i USING (run_id, idx) "
                       "WHERE r.error IS NULL") == [(80, 80)]
    assert not list(store.journal_dir(db).glob("*.jsonl"))


class _Boom(RuntimeError):
    pass


def test_a_failed_item_insert_stops_the_run_and_the_next_run_takes_its_answers_from_the_cache(tmp_path,
                                                                                                 monkeypatch):
    db = tmp_path / "r.duckdb"

    class FirstWaveOnly(FakeModel):
        """Answers the first four calls; the others hang until the run cancels them."""

        entered = 0

        async def complete(self, request):
            self.entered += 1
            if self.entered > 4:
                await asyncio.Event().wait()   # never set: only a cancellation ends it
            return await super().complete(request)

    async def insert_fails(self, item):
        await _until(lambda: self.handle.progress().done >= 4)
        await asyncio.to_thread(lambda: (_ for _ in ()).throw(_Boom("the disk is on fire")))

    monkeypatch.setattr(executor._Executor, "_insert_items_during_first_wave", insert_fails)
    model = FirstWaveOnly(latency=0.001, concurrency=4)
    p = runner.run(CFG, model, db_path=db)
    assert p.status == "error" and "the disk is on fire" in p.error and p.done == 4 and model.calls == 4
    assert db_rows(db, "SELECT count(*) FROM results") == [(0,)]
    assert db_rows(db, "SELECT count(*) FROM items") == [(0,)]
    assert len(list(store.journal_dir(db).glob("*.jsonl"))) == 1   # kept for the next command
    monkeypatch.undo()

    # the next run recovers the journal (its four answers go to the cache: their items were not stored), inserts
    # the items and pays for the other 76 calls only
    model2 = FakeModel(latency=0.001, concurrency=4)
    p2 = runner.run(CFG, model2, db_path=db)
    assert (p2.status, p2.done, p2.cached, p2.calls) == ("done", 80, 4, 76) and model2.calls == 76
    assert db_rows(db, "SELECT count(*), count(*) FILTER (WHERE cached) FROM results WHERE error IS NULL") == [
        (80, 4)]
    assert not list(store.journal_dir(db).glob("*.jsonl"))


@pytest.mark.parametrize("stored", [True, False])
def test_recovery_keeps_a_dead_runs_results_only_for_stored_items(tmp_path, stored):
    """A journal left by a process that died before its run's items were in the DB: its calls are merged into the
    cache, its results are not (they would be results of items the DB does not have)."""
    db = tmp_path / "r.duckdb"
    model = FakeModel(latency=0.001, concurrency=4)
    p = runner.run(CFG, model, db_path=db, limit=8)
    with store.connect(db) as con:
        calls, results = [[dict(zip([d[0] for d in cur.description], row)) for row in cur.fetchall()]
                          for cur in (con.execute(f"SELECT * FROM {table}") for table in ("calls", "results"))]
        con.execute("DELETE FROM results")
        con.execute("DELETE FROM calls")
        if not stored:
            con.execute("DELETE FROM items")
    records = [{"calls": [c for c in calls if c["cache_key"] == r["cache_key"]], "results": [r],
                "key": r["cache_key"]} for r in results]
    journal = Journal(store.journal_dir(db), p.run_id)
    journal.append(records)
    journal.close(delete=False)   # as a dead process leaves it
    recover(db)   # (or the first connection that looks for dead processes' journals)
    assert not list(store.journal_dir(db).glob("*.jsonl"))
    assert db_rows(db, "SELECT count(*) FROM calls") == [(8,)]
    assert db_rows(db, "SELECT count(*) FROM results") == [(8 if stored else 0,)]

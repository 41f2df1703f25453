"""The first calls of a run fly while its items are being inserted (issue 20): answers are journalled meanwhile, none
is merged before the items are in the DB, and a run whose insert fails stops and leaves its answers to the cache."""

import asyncio
import time

import pytest

from core import runner, store
from core.runner import executor, later_items
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
    real = executor.Executor._insert_items_during_first_wave

    async def insert_later(self, item):
        # before inserting, wait until answers are durable and reported: they must not wait for the items
        seen["reported_first"] = await _until(lambda: self.handle.progress().done >= 8)
        # every answer is durable and the merge loop has been woken by the drain: still nothing merged
        seen["drained"] = await _until(lambda: self.handle.progress().done == 80 and self._drained.is_set())
        await asyncio.sleep(0.05)   # (gives a merge that should not happen the chance to)
        seen["results_before"] = db_rows(db, "SELECT count(*) FROM results")[0][0]
        seen["journalled"] = sum(1 for p in store.journal_dir(db).glob("*.jsonl") for _ in p.open())
        await real(self, item)

    monkeypatch.setattr(executor.Executor, "_insert_items_during_first_wave", insert_later)
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

    monkeypatch.setattr(executor.Executor, "_insert_items_during_first_wave", insert_fails)
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


def _items_of(prompts: str) -> list[dict]:
    return [{"idx": i, "prompt": p} for i, p in enumerate(prompts)]


@pytest.mark.parametrize("prompts, n, head, rest", [
    ("abacbd", 2, [0, 1, 2, 4], [3, 5]),      # a prompt's later items stay with its first
    ("abacbd", 4, [0, 1, 2, 3, 4, 5], []),    # exactly n distinct prompts: no rest
    ("abc", 5, [0, 1, 2], []),                # fewer prompts than n
    ("aaab", 1, [0, 1, 2], [3]),
])
def test_split_head_never_splits_a_prompt(prompts, n, head, rest):
    h, r = later_items.split_head(_items_of(prompts), n)
    assert [it["idx"] for it in h] == head and [it["idx"] for it in r] == rest


def test_items_sharing_a_prompt_across_the_head_and_the_rest_share_one_call(tmp_path, monkeypatch):
    """40 prompts, each asked by two items (idx k and k + 40): at 2 in flight the head is 8 prompts, and their second
    items come after 32 others — one call per prompt all the same, both items scored from it."""
    db = tmp_path / "r.duckdb"
    real = executor.run_items

    def twice(plan):
        first = real(plan)[:40]
        return first + [{**it, "idx": it["idx"] + 40} for it in first]

    monkeypatch.setattr(executor, "run_items", twice)
    model = FakeModel(latency=0.001, concurrency=2)
    p = runner.run(CFG, model, db_path=db)
    assert (p.status, p.done, p.calls) == ("done", 80, 40) and model.calls == 40
    assert db_rows(db, "SELECT count(DISTINCT cache_key), count(*) FROM results WHERE error IS NULL") == [(40, 80)]
    assert db_rows(db, "SELECT count(*) FROM results a JOIN results b ON b.idx = a.idx + 40 "
                       "AND a.cache_key = b.cache_key") == [(40,)]


def test_a_run_half_in_the_cache_takes_the_later_half_from_it_too(tmp_path):
    """Cached prompts among the later items (looked up while the first calls fly) are scored from the cache."""
    db = tmp_path / "r.duckdb"
    model = FakeModel(latency=0.001, concurrency=2)
    half = runner.run(CFG, model, db_path=db, limit=40)          # spread over the grid: head and rest alike
    p = runner.run(CFG, model, db_path=db)
    assert (half.done, p.status, p.done, p.cached, p.calls) == (40, "done", 80, 40, 40) and model.calls == 80
    assert db_rows(db, "SELECT count(*) FILTER (WHERE cached), count(*) FROM results WHERE run_id = ? "
                       "AND error IS NULL", [p.run_id]) == [(40, 80)]
    again = runner.run(CFG, model, db_path=db, name="again", fresh=False)
    assert again.done == 80 and model.calls == 80


def test_a_failed_lookup_of_the_later_items_ends_the_run_with_an_error_and_a_resume_finishes_it(tmp_path,
                                                                                               monkeypatch):
    db = tmp_path / "r.duckdb"
    real = later_items.cached_and_waiting
    looked = []

    def second_fails(con, keys):
        looked.append(len(keys))
        if len(looked) == 2:   # the first is the head's, in the run's setup
            raise OSError(5, "Input/output error")
        return real(con, keys)

    monkeypatch.setattr(later_items, "cached_and_waiting", second_fails)
    model = FakeModel(latency=0.001, concurrency=2)     # the head: 8 prompts
    p = runner.run(CFG, model, db_path=db)
    assert looked == [8, 72] and (p.status, p.done, model.calls) == ("error", 8, 8)
    assert "cannot prepare the run's later items (input/output error)" in p.error
    assert store.get_run(db, p.run_id)["status"] == "error"
    assert db_rows(db, "SELECT count(*) FROM results WHERE error IS NULL") == [(8,)]
    monkeypatch.undo()
    again = runner.run(CFG, model, db_path=db)
    assert (again.status, again.done) == ("done", 80) and model.calls == 80

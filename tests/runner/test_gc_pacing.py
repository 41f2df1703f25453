"""The collector is paced while runs are live and handed back exactly as it was when the last one ends."""

from __future__ import annotations

import gc
import threading

import pytest

from core.runner import gc_pacing


@pytest.fixture(autouse=True)
def known_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_paced_while_inside_and_restored_after():
    with gc_pacing.paced():
        assert gc.get_threshold() == (gc_pacing.YOUNG_THRESHOLD, 10, 10)
        held = [object() for _ in range(3)]  # noqa: F841 — alive while frozen
        gc_pacing.freeze_plan()
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_nested_and_overlapping_runs_restore_only_when_the_last_ends():
    outer = gc_pacing.paced()
    outer.__enter__()
    inner_done = threading.Event()
    release = threading.Event()

    def other_run():
        with gc_pacing.paced():
            gc_pacing.freeze_plan()
            release.wait(10)
        inner_done.set()

    t = threading.Thread(target=other_run)
    t.start()
    release.set()
    t.join(10)
    assert inner_done.is_set()
    assert gc.get_threshold()[0] == gc_pacing.YOUNG_THRESHOLD   # the outer run is still live
    assert gc.get_freeze_count() > 0
    outer.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_a_higher_threshold_set_by_the_user_is_kept():
    gc.set_threshold(50_000, 5, 5)
    with gc_pacing.paced():
        assert gc.get_threshold() == (50_000, 5, 5)
    assert gc.get_threshold() == (50_000, 5, 5)


def test_an_error_inside_still_restores():
    with pytest.raises(RuntimeError):
        with gc_pacing.paced():
            raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_stats_count_collections():
    with gc_pacing.Stats() as s:
        gc.collect()
    assert s.collections >= 1 and s.seconds >= 0.0 and s.longest <= s.seconds
    assert s._callback not in gc.callbacks


def test_a_run_is_paced_and_the_collector_handed_back(tmp_path):
    from core import runner
    from tests.runner.test_runner_mechanics import CFG, FakeModel

    seen = []

    class Watching(FakeModel):
        async def complete(self, request):
            seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))
            return await super().complete(request)

    p = runner.run(CFG, Watching(), db_path=tmp_path / "r.duckdb", limit=12)
    assert p.status == "done" and len(seen) == 12
    assert all(t == gc_pacing.YOUNG_THRESHOLD and frozen for t, frozen in seen)
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0

"""The recorder an executor reports to: counts add up under its lock, readers get copies."""

from __future__ import annotations

import threading

from core.runner.progress import ProgressRecorder


def test_counts_from_many_threads_add_up_and_a_snapshot_is_a_copy():
    rec = ProgressRecorder("r1")
    rec.set(status="running", total=4000)

    def work():
        for _ in range(1000):
            rec.add(in_flight=1)
            rec.add(in_flight=-1, done=1, retries=1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    p = rec.snapshot()
    assert (p.run_id, p.status, p.done, p.retries, p.in_flight) == ("r1", "running", 4000, 4000, 0)
    p.done = -1
    assert rec.snapshot().done == 4000


def test_answered_rows_count_as_done_correct_cached_or_failed():
    rows = [{"error": None, "correct": True}, {"error": None, "correct": False}, {"error": "scoring failed"}]
    rec = ProgressRecorder("r2")
    rec.answered(rows, cached=True)
    p = rec.snapshot()
    assert (p.done, p.correct, p.cached, p.failed) == (2, 1, 2, 1)
    rec.answered(rows, cached=False, count_failed=False, calls=1, cost_usd=0.5)
    p = rec.snapshot()
    assert (p.done, p.correct, p.cached, p.failed, p.calls, p.cost_usd) == (4, 2, 2, 1, 1, 0.5)

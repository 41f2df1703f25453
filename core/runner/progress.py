"""A run's progress record and the recorder its executor reports to.

The executor (live, batch or Ray) owns no progress of its own: it reports every change to the run's
``ProgressRecorder`` — ``set`` for values it knows (status, totals from the store), ``add`` for counts that grow
as calls finish (done, failed, in flight, retries …). The page and the CLI read copies through ``snapshot`` (via
``RunHandle.progress``), so a reader never sees a record half-updated.
"""

from __future__ import annotations

import dataclasses
import threading
import time

from core.runner.plan import Progress

__all__ = ["Progress", "ProgressRecorder"]


class ProgressRecorder:
    """Thread-safe holder of one run's ``Progress``: the executor's thread writes, any thread reads a copy."""

    def __init__(self, run_id: str):
        self._progress = Progress(run_id=run_id)
        self._lock = threading.Lock()

    def snapshot(self) -> Progress:
        """A copy of the record, its ``elapsed`` brought up to now while the run is not finished."""
        with self._lock:
            p = dataclasses.replace(self._progress)
        if not p.finished:
            p.elapsed = time.time() - p.started_at
        return p

    def set(self, **values) -> Progress:
        """Set fields to ``values`` (status, totals, error …); returns a copy of the record after the change."""
        with self._lock:
            p = self._progress
            for k, v in values.items():
                setattr(p, k, v)
            p.elapsed = time.time() - p.started_at
            return dataclasses.replace(p)

    def add(self, **deltas) -> None:
        """Add ``deltas`` to counting fields (``done=3, correct=2``; ``in_flight=-1``), all under one lock."""
        with self._lock:
            p = self._progress
            for k, v in deltas.items():
                setattr(p, k, getattr(p, k) + v)

    def answered(self, rows: list[dict], *, cached: bool, count_failed: bool = True, **more) -> None:
        """Count result rows: those without an error as done (and as ``cached``), their correct ones as correct, the
        others as failed unless ``count_failed`` is off; ``more`` is added with them (``calls=1, cost_usd=…``)."""
        ok = [r for r in rows if r.get("error") is None]
        deltas = {"done": len(ok), "correct": sum(1 for r in ok if r.get("correct")), **more}
        if cached:
            deltas["cached"] = len(ok)
        if count_failed:
            deltas["failed"] = len(rows) - len(ok)
        self.add(**deltas)

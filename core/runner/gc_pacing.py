"""Python's cyclic garbage collector paced for a run: fewer, cheaper collections while runs are live.

A run allocates a few small objects per call (request, reply, scored rows, journal record) and holds its plan (every
item and cache key) for its whole length. With CPython's default thresholds (a young collection every 700
allocations, the whole heap now and then) a big run spends seconds in collections, some of them pauses of every
thread of a tenth of a second or more, while calls wait (figures: docs/RUNNER.md). While at least one run is live in the process
the young threshold is raised and the run's plan is frozen (``gc.freeze``: objects alive at its start are no longer
traversed; refcounting still frees them); when the last live run ends the previous thresholds come back and the
frozen objects are handed back to the collector. Measured by ``bench/runner_throughput.py`` (it prints the
collector's time per run).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

YOUNG_THRESHOLD = 20_000   # allocations between young collections while a run is live (CPython's default: 700)

_lock = threading.Lock()
_live = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def paced() -> Iterator[None]:
    """While inside: the collector paced for runs (see the module docstring). Nests and is shared by threads."""
    global _live, _saved
    with _lock:
        if _live == 0:
            _saved = gc.get_threshold()
            young, *older = _saved
            gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
        _live += 1
    try:
        yield
    finally:
        with _lock:
            _live -= 1
            if _live == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
                gc.unfreeze()


def freeze_plan() -> None:
    """The objects alive now (the run's plan) leave the collector's sight until the last live run ends."""
    gc.freeze()


class Stats:
    """Time spent collecting, summed over collections while registered (for the benchmark's report)."""

    def __init__(self):
        import time

        self._clock = time.perf_counter
        self.collections = 0
        self.seconds = 0.0
        self.longest = 0.0
        self._started: float | None = None

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = self._clock()
        elif self._started is not None:
            took = self._clock() - self._started
            self.collections += 1
            self.seconds += took
            self.longest = max(self.longest, took)
            self._started = None

    def __enter__(self) -> "Stats":
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)

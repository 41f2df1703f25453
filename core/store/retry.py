"""Doing a store transaction again after a write conflict.

DuckDB aborts one of two transactions of a process that touch the same rows (``duckdb.TransactionException``,
e.g. a run's items insert meeting a journal merge of the same run by another thread). Nothing of the aborted
transaction was committed, so the whole of it is done again: up to ``ATTEMPTS`` times, the n-th retry after
n × ``STEP`` seconds. The one policy for every such transaction, on ``tenacity``.
"""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

T = TypeVar("T")

ATTEMPTS = 5
STEP = 0.1      # seconds: the wait before the n-th retry is n × STEP

log = logging.getLogger(__name__)


def _policy(errors: tuple[type[BaseException], ...] | None, attempts: int, step: float) -> dict:
    import duckdb
    from tenacity import retry_if_exception_type, stop_after_attempt, wait_incrementing

    def note(state) -> None:
        exc = state.outcome.exception()
        log.info("write conflict (%s); transaction done again, attempt %d of %d",
                 type(exc).__name__, state.attempt_number + 1, attempts)

    return dict(retry=retry_if_exception_type(errors or (duckdb.TransactionException,)),
                stop=stop_after_attempt(attempts), wait=wait_incrementing(start=step, increment=step),
                before_sleep=note, reraise=True)


def retry_conflicts(fn: Callable[[], T], *, errors: tuple[type[BaseException], ...] | None = None,
                    attempts: int = ATTEMPTS, step: float = STEP) -> T:
    """``fn()`` — one whole transaction — done again while it fails with a write conflict (``errors``: the
    exception types that mean one; default ``duckdb.TransactionException``). The last failure is raised as it is."""
    from tenacity import Retrying

    for attempt in Retrying(**_policy(errors, attempts, step)):
        with attempt:
            return fn()
    raise AssertionError("unreachable")   # tenacity re-raises the last failure


async def aretry_conflicts(fn: Callable[[], T], *, errors: tuple[type[BaseException], ...] | None = None,
                           attempts: int = ATTEMPTS, step: float = STEP) -> T:
    """``retry_conflicts`` for an event loop: ``fn`` runs in a thread, the waits do not block the loop."""
    import asyncio

    from tenacity import AsyncRetrying

    async for attempt in AsyncRetrying(**_policy(errors, attempts, step)):
        with attempt:
            return await asyncio.to_thread(fn)
    raise AssertionError("unreachable")


__all__ = ["ATTEMPTS", "STEP", "aretry_conflicts", "retry_conflicts"]

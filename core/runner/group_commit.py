"""Group commit of a run's journal records: the records its workers queue are written and fsynced together, in a
thread, while the event loop goes on serving the calls in flight (core/store/journal.py holds the file format)."""

from __future__ import annotations

import asyncio
import logging

from core.store.journal import Journal

log = logging.getLogger(__name__)


class JournalWriter:
    """Group commit: records queued by workers are written and fsynced together; ``commit`` returns when durable.
    A record may be journalled before the run's items are in the DB (they are inserted while the first calls are
    at the model): the run merges none before they are, and a dead process's journal is recovered with only the
    results whose items are stored (``core.store.journal.recover_into``)."""

    def __init__(self, journal: Journal, on_failure=None):
        self.journal = journal
        self.on_failure = on_failure   # called once with the first write error (the run stops: nothing is durable)
        self.error: BaseException | None = None
        self.pending: list[tuple[dict, asyncio.Future]] = []
        self.committed: list[dict] = []   # durable, not yet merged into DuckDB
        self.event = asyncio.Event()
        self.closing = False
        self.task = asyncio.get_running_loop().create_task(self._loop())

    async def commit(self, record: dict) -> None:
        fut = asyncio.get_running_loop().create_future()
        self.pending.append((record, fut))
        self.event.set()
        await asyncio.shield(fut)

    async def _loop(self) -> None:
        while True:
            await self.event.wait()
            self.event.clear()
            batch, self.pending = self.pending, []
            if batch:
                try:
                    # in a thread: the loop keeps serving the calls in flight meanwhile (slots are pipelined, so
                    # the fsync latency is off the critical path)
                    await asyncio.to_thread(self.journal.append, [r for r, _ in batch])
                except Exception as exc:  # noqa: BLE001 — disk full etc.: the calls are not durable → not finished
                    log.info("journal append failed (%s): %d calls not durable", type(exc).__name__, len(batch))
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    if self.error is None and isinstance(exc, OSError):
                        self.error = exc
                        if self.on_failure is not None:
                            self.on_failure(exc)
                    continue
                self.committed.extend(r for r, _ in batch)
                for _, fut in batch:
                    if not fut.done():
                        fut.set_result(None)
            if self.closing and not self.pending:
                return

    async def close(self) -> None:
        self.closing = True
        self.event.set()
        await self.task

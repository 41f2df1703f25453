"""The calls a run still has to make, handed to its workers one at a time — and shared with identical runs.

Keys are claimed in blocks ahead of the workers (core/store/claims.py; four per concurrency slot, the next
block fetched while the current one is still being sent). A key another live run has claimed is put aside: that run
is paying for the call, so this one waits and, once the answer is merged into DuckDB, scores it from the cache like
any cached answer. A key whose claim lapses (its owner died or gave up) is claimed and sent here. So two identical
runs started together split the calls between them; what they can both send is bounded by what is in flight (the
claims of a run killed mid-call lapse with it).

Everything runs on the executor's event loop; DuckDB work goes to a thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from core import store
from core.store import claims
from core.store.journal import delete_journals, recover_into

log = logging.getLogger(__name__)

POLL = 0.5                # seconds between looks at keys another run is answering
MAX_POLL_FAILURES = 10    # failed looks (DB busy or failing) after which this run sends those calls itself


class SharedWork:
    def __init__(self, ex, groups: dict[str, list[dict]], first: claims.Claimed | None, first_keys: list[str],
                 block: int, ready_to_write: asyncio.Future | None, feeding: asyncio.Future | None = None):
        self.ex = ex                              # the run's core.runner.executor.Executor
        self.groups = groups                      # key -> its items (still to answer)
        self.block = block
        claimed = set(first_keys)
        self.todo = deque(k for k in groups if k not in claimed)   # not yet claimed
        self.ready: deque[str] = deque()          # claimed by this run: to send
        self.waiting: set[str] = set()            # claimed by another run: its answer will come from the cache
        self.ready_to_write = ready_to_write      # the run's items are in the DB (results may be written)
        self.shared = 0                           # items answered by another run's call
        self.poll_failures = 0
        self.feeding = feeding                    # adds the run's later keys (``add``); None: all are here
        self._more = asyncio.Event()              # keys were added, or the feeding ended
        if feeding is not None:
            feeding.add_done_callback(lambda _: self._more.set())
        self._claiming: asyncio.Task | None = None
        self._polling: asyncio.Task | None = None
        self.drained = asyncio.Event()            # nothing left to hand out (the last call is being sent)
        if first is not None:
            self._take_claimed(first, first_keys)
        if not groups and self._fed:
            self.drained.set()

    @property
    def _fed(self) -> bool:
        return self.feeding is None or self.feeding.done()

    def add(self, groups: dict[str, list[dict]]) -> None:
        """More keys to answer (none of them known yet): claimed in blocks like the others."""
        self.groups.update(groups)
        self.todo.extend(groups)
        self._more.set()

    # -- the workers' side
    async def take(self) -> tuple[str, list[dict]] | None:
        """The next (key, items) to send, or None when every key is answered or being answered elsewhere."""
        while True:
            if self.ready:
                key = self.ready.popleft()
                self._prefetch()
                if not (self.ready or self.todo or self.waiting) and self._fed:
                    self.drained.set()
                return key, self.groups[key]
            if self.todo or self._claiming is not None:   # (a block being claimed has left ``todo`` already)
                await self._claim_next()
                continue
            if not self._fed:   # (its error, if any, is the run's to report)
                self._more.clear()
                await self._more.wait()
                continue
            if self.waiting:
                await self._poll()
                continue
            self.drained.set()
            return None

    async def close(self) -> None:
        """Wait for a claim, poll or feeding still under way (the workers are gone: cancelled or done)."""
        pending = [t for t in (self._claiming, self._polling, self.feeding) if t is not None]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def _prefetch(self) -> None:
        if self.todo and len(self.ready) < self.ex.concurrency and self._claiming is None:
            self._claiming = asyncio.ensure_future(self._claim_block())

    async def _claim_next(self) -> None:
        if self._claiming is None:
            self._claiming = asyncio.ensure_future(self._claim_block())
        await asyncio.shield(self._claiming)

    async def _poll(self) -> None:
        if self._polling is None:
            self._polling = asyncio.ensure_future(self._poll_waiting())
        await asyncio.shield(self._polling)

    # -- claims
    async def _claim_block(self) -> None:
        keys = [self.todo.popleft() for _ in range(min(self.block, len(self.todo)))]
        try:
            got = await asyncio.to_thread(self._claim_in_db, keys)
        except store.STORE_ERRORS as exc:   # the DB is busy or failing: send these unclaimed (no sharing)
            log.info("run %s: claiming %d keys failed (%s); sent unclaimed", self.ex.run_id, len(keys),
                     type(exc).__name__)
            got = claims.Claimed(mine=set(keys))
        finally:
            self._claiming = None
        self._take_claimed(got, keys)
        await self._resolve_cached(got.cached)

    async def _poll_waiting(self) -> None:
        try:
            await asyncio.sleep(POLL)
            keys = sorted(self.waiting)
            try:
                got = await asyncio.to_thread(self._claim_in_db, keys)
                self.poll_failures = 0
            except store.STORE_ERRORS as exc:   # the DB is busy or failing: looked at again, then sent here
                log.info("run %s: looking at keys another run answers failed (%s)", self.ex.run_id,
                         type(exc).__name__)
                self.poll_failures += 1
                if self.poll_failures < MAX_POLL_FAILURES:
                    return                        # look again at the next poll
                got = claims.Claimed(mine=set(keys))   # the DB keeps failing: send them ourselves
            self.waiting -= got.mine | got.cached
            self.ready.extend(k for k in keys if k in got.mine)
        finally:
            self._polling = None
        await self._resolve_cached(got.cached)

    def _claim_in_db(self, keys: list[str]) -> claims.Claimed:
        ex = self.ex
        recovered = []
        with ex.db_lock, store.connect(ex.db_path) as con:
            with store.transaction(con):
                got = claims.claim(con, keys, ex.owner, ex.run_id, ex.lease_s)
                if got.orphaned:
                    # their owner died: answers it journalled but never merged are in its journal — merge them
                    # first, so they are taken from the cache instead of being paid for again
                    _, recovered = recover_into(con, ex.db_path)
                    if recovered:
                        claims.release(con, got.orphaned, ex.owner, ex.run_id)
                        got = claims.claim(con, keys, ex.owner, ex.run_id, ex.lease_s)
            delete_journals(recovered)   # only after the COMMIT
        return got

    def _take_claimed(self, got: claims.Claimed, keys: list[str]) -> None:
        self.ready.extend(k for k in keys if k in got.mine)
        self.waiting.update(k for k in keys if k in got.others)

    async def _resolve_cached(self, keys: set[str]) -> None:
        """Keys another run answered: score their cached answers and store the results (one transaction)."""
        if not keys:
            return
        if self.ready_to_write is not None:
            await asyncio.shield(self.ready_to_write)
        ex = self.ex

        def write() -> list[dict]:
            with ex.db_lock, store.connect(ex.db_path) as con, store.transaction(con):
                cached = store.lookup_calls(con, keys)
                rows = []
                for key in keys:
                    if key in cached:
                        rows += ex.result_rows(self.groups[key], key, cached[key]["response"], 0, True)
                store.write_calls_results(con, [], rows)
                store.refresh_run_counts(con, ex.run_id)
            return rows

        try:
            rows = await asyncio.to_thread(write)
        except store.STORE_ERRORS as exc:   # DB busy or failing: look at them again at the next poll
            log.info("run %s: storing answers another run made failed (%s); looked at again", ex.run_id,
                     type(exc).__name__)
            self.waiting.update(keys)
            return
        self.shared += sum(1 for r in rows if r.get("error") is None)
        ex.progress.answered(rows, cached=True)
        ex.emit()

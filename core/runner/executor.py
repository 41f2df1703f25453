"""Executing a run: bounded concurrency, rate limits, retries with back-off, per-call timeouts, the cache, and
durable results (fsynced journal, periodic merges into DuckDB). See core/runner/__init__.py for the design."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import duckdb

from core import store
from core.errors import UserError
from core.models.base import Completion, ModelError, Request, RetryableError, redact
from core.models.retry_policy import MAX_BACKOFF, Failed, Pause, Retry, RetryPolicy, call_with_retries
from core.runner import gc_pacing, later_items
from core.runner.breaker import GIVE_UP_AFTER, CircuitBreaker
from core.runner.group_commit import JournalWriter
from core.runner.later_items import FIRST_WAVE_HEAD_START
from core.runner.plan import (
    Plan,
    call_key,
    estimate_in_tokens,
    estimate_out_tokens,
    failure_rows,
    result_rows,
    run_items,
)
from core.runner.ratelimit import RateLimiter
from core.runner.sharing import SharedWork
from core.store import claims
from core.store.journal import Journal, delete_journals, merge_records, owner_tag, recover_into

PROGRESS_EVERY = 0.1           # seconds between progress callbacks (the final one always fires)

log = logging.getLogger(__name__)


CLAIMS_PER_SLOT = 4


def claim_block(concurrency: int) -> int:
    """Keys claimed per DB visit: four per concurrency slot (a visit costs ~40 ms of CPU, ~15 ms of it opening
    DuckDB; at 256 in flight and ~1,000 calls/s that is one visit a second rather than two)."""
    return max(8, CLAIMS_PER_SLOT * concurrency)


class Executor:
    """A live run: its calls made by ``concurrency`` workers on its own event loop (``thread_main``).

    ``handle`` is the run's core.runner.handle.RunHandle (not imported here: the handle module starts executors);
    progress goes to its ``recorder``. The run's helpers (``later_items``, ``sharing``) use the public methods
    ``to_answer``, ``cached_rows``, ``count_cached``, ``result_rows`` and ``emit``."""

    def __init__(self, plan: Plan, model, handle, *, run_id, draw, db_path, concurrency, rpm, tpm,
                 max_attempts, call_timeout, on_progress, fresh, api_key, preparing=None,
                 outage_limit: float = GIVE_UP_AFTER):
        self.plan, self.model, self.handle = plan, model, handle
        self.progress = handle.recorder
        self.preparing: threading.Thread | None = preparing
        self._items_missing: list[dict] | None = None   # the run's items, until their rows are in the DB
        self._drained: asyncio.Event | None = None       # set when the last call has been taken
        self.work: SharedWork | None = None              # the calls still to make (claimed in blocks)
        self.owner = owner_tag()                         # whose claims are ours (core/store/claims.py)
        # a claim outlives any call of this run: every attempt timing out and backing off, twice over, plus an
        # outage the breaker waits out
        self.lease_s = 2 * max_attempts * (call_timeout + MAX_BACKOFF) + outage_limit + 60
        self.claim_block = claim_block(concurrency)
        # this run's threads that write items, claims and results take turns (DuckDB would abort one of two
        # transactions touching the same rows: a merge releasing claims while a claim of the next block runs)
        self.db_lock = threading.Lock()
        self.run_id, self.draw, self.db_path = run_id, draw, db_path
        self.concurrency, self.max_attempts, self.call_timeout = concurrency, max_attempts, call_timeout
        self.limiter = RateLimiter(rpm, tpm)
        self.on_progress = on_progress
        self.fresh = fresh
        self._secret = api_key  # only to redact it from unexpected error messages; never stored
        # how a call is retried (core/models/retry_policy.py); an outage's retries are paced by the breaker
        self.retry_policy = RetryPolicy(max_attempts=max_attempts, outage_backoff=False)
        self.pause = Pause()   # a server's Retry-After pauses every call of the run
        self.breaker = CircuitBreaker(outage_limit)   # run-wide pause while the endpoint cannot be reached
        self._last_emit = 0.0
        self._tasks: list[asyncio.Task] = []
        self._commits: set[asyncio.Task] = set()
        self._cached_groups: dict[str, list[dict]] = {}   # key -> items answered from the cache (being scored)
        self._merge_error: BaseException | None = None
        self.items_ready: asyncio.Task | None = None      # inserts the run's items (if missing) during the first wave

    # -- thread / loop
    def thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        self.handle.set_loop(loop)
        try:
            with gc_pacing.paced():
                loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 — reported on the handle, never a silent death
            msg = redact(f"{type(exc).__name__}: {exc}" if not isinstance(exc, UserError) else str(exc), self._secret)
            log.info("run %s stopped: %s", self.run_id, msg)
            self.progress.set(status="error", error=msg)
            self._mark_failed()
            self._release_claims()   # an identical run elsewhere need not wait out their lease
            self.emit(force=True)
        finally:
            try:
                aclose = getattr(self.model, "aclose", None)
                if callable(aclose):
                    loop.run_until_complete(aclose())
            except Exception as exc:  # noqa: BLE001 — closing the client must not hide how the run ended
                log.info("run %s: closing the model's client failed: %s", self.run_id,
                         redact(f"{type(exc).__name__}: {exc}", self._secret))
            self.handle.set_loop(None)
            loop.close()
            self.handle.finish()

    def emit(self, force: bool = False) -> None:
        """Hand the run's progress to ``on_progress`` (at most every PROGRESS_EVERY seconds unless ``force``)."""
        if self.on_progress is None:
            return
        now = time.monotonic()
        if not force and now - self._last_emit < PROGRESS_EVERY:
            return
        self._last_emit = now
        try:
            self.on_progress(self.handle.progress())
        except Exception as exc:  # noqa: BLE001 — a broken UI callback must not kill the run
            log.info("run %s: the progress callback failed: %s: %s", self.run_id, type(exc).__name__, exc)

    async def _insert_items_during_first_wave(self, item: dict | None) -> None:
        """Insert the run's items if missing, and warm the scorer up (its lazy imports; scoring an empty reply is
        pure and cheap) — in a thread, once the workers have sent the first calls, so the event loop is idle
        waiting for the model meanwhile instead of running this before the first call."""
        if item is not None:   # calls to make: let the workers send them first
            await asyncio.sleep(FIRST_WAVE_HEAD_START)

        def insert():
            # in turn with the claim blocks (which may merge a dead twin's journal: this run's rows and counts)
            with self.db_lock, store.connect(self.db_path) as con, store.transaction(con):
                store.insert_items(con, self.run_id, self._items_missing)

        def do():
            try:
                if item is not None:
                    self.plan.task.score(item, "")
            except Exception as exc:  # noqa: BLE001 — a warm-up only; the real scoring records any real problem
                log.debug("run %s: scorer warm-up failed (%s)", self.run_id, type(exc).__name__)
            if self._items_missing is not None:
                # another run or a page of this process may merge journals of this run meanwhile (no lock of this
                # run keeps them out): a write conflict, the insert done again
                store.retry_conflicts(insert)
                self._items_missing = None

        await asyncio.to_thread(do)

    # -- scoring
    def result_rows(self, items: list[dict], key: str, text: str, attempts: int, cached: bool) -> list[dict]:
        return result_rows(self.plan.task, self.run_id, items, key, text, attempts, cached)

    def _failure_rows(self, items: list[dict], key: str, reason: str, attempts: int) -> list[dict]:
        return failure_rows(self.run_id, items, reason, attempts)

    def to_answer(self, items: list[dict], keys: dict[int, str], done: set[int], cached: dict[str, dict],
                  waiting_keys: set[str]) -> dict[str, list[dict]]:
        """key -> its items still to answer (``items`` not done, grouped by cache key); the items of cached keys are
        kept for ``cached_rows`` (scored from the cache), those of keys in a provider batch are counted as waiting."""
        groups: dict[str, list[dict]] = {}
        for it in items:
            if it["idx"] not in done:
                groups.setdefault(keys[it["idx"]], []).append(it)
        waiting = sum(len(groups.pop(k)) for k in [k for k in groups if k in waiting_keys])
        if waiting:
            self.progress.add(waiting=waiting)
        self._cached_groups = {k: groups.pop(k) for k in [k for k in groups if k in cached]}
        return groups

    @property
    def has_cached(self) -> bool:
        """``to_answer`` found items in the cache that ``cached_rows`` has not scored yet."""
        return bool(self._cached_groups)

    def cached_rows(self, cached: dict[str, dict]) -> list[dict]:
        """The results of the items ``to_answer`` found in the cache, scored from it."""
        groups, self._cached_groups = self._cached_groups, {}
        rows = []
        for key, items in groups.items():
            rows += self.result_rows(items, key, cached[key]["response"], 0, True)
        return rows

    def count_cached(self, rows: list[dict]) -> None:
        """Count stored results answered from the cache (a scoring failure among them is not a failed call)."""
        self.progress.answered(rows, cached=True, count_failed=False)
        self.emit(force=True)

    # -- main
    async def _main(self) -> None:
        h = self.handle
        h.set_on_cancel(self._cancel_tasks)
        if h.cancelled:
            self._cancel_tasks()
        plan = self.plan
        items = await asyncio.to_thread(run_items, plan)
        # the first prompts' keys now, the others' while the first calls are at the model (``later_items.feed``)
        head, rest = later_items.split_head(items, self.claim_block)
        keys = {it["idx"]: call_key(plan, it, self.draw) for it in head}
        # another run or a page of this process may recover journals meanwhile: a write conflict, done again
        done_rows, done, cached, waiting_keys, first_claim, first_keys = await store.aretry_conflicts(
            lambda: self._setup(items, head, keys))
        if self.preparing is not None:   # the model's one-off costs (started by start_run): before the first call
            await asyncio.to_thread(self.preparing.join)
        prog = dict(total=len(items), done=len(done_rows), correct=sum(1 for r in done_rows if r[1]),
                    cached=sum(1 for r in done_rows if r[2]), cost_usd=float(sum(r[3] for r in done_rows)))
        self.progress.set(**prog)
        self.emit(force=True)

        groups = self.to_answer(head, keys, done, cached, waiting_keys)
        await self._store_cached(cached)
        journal = Journal(store.journal_dir(self.db_path), self.run_id)
        writer, feed = await self._make_calls(journal, groups, rest, done, first_claim, first_keys)
        await self._finish(journal, writer, feed)

    def _setup(self, items: list[dict], head: list[dict], keys: dict[int, str]) -> tuple:
        """The run's start in one transaction (journals of dead processes merged first): its row marked running,
        the results it already has, which of the first calls are cached or waited for, and the first block of
        calls claimed (no extra DB open before the first call)."""
        with store.connect(self.db_path) as con:
            with store.transaction(con):
                _, recovered = recover_into(con, self.db_path)
                have = con.execute("SELECT count(*) FROM items WHERE run_id = ?", [self.run_id]).fetchall()[0][0]
                if have < len(items):
                    self._items_missing = items   # inserted with the cached answers, or while the first calls fly
                store.update_run(con, self.run_id, status="running", n_items=len(items))
                done_rows = con.execute(
                    """SELECT r.idx, r.correct, coalesce(r.cached, false),
                              CASE WHEN coalesce(r.cached, false) THEN 0 ELSE coalesce(c.cost_usd, 0) END
                       FROM results r LEFT JOIN calls c USING (cache_key)
                       WHERE r.run_id = ? AND r.error IS NULL""", [self.run_id]).fetchall()
                done = {r[0] for r in done_rows}
                order = list(dict.fromkeys(keys[it["idx"]] for it in head if it["idx"] not in done))
                cached, waiting_keys = later_items.cached_and_waiting(con, order)
                first_keys = [k for k in order if k not in cached and k not in waiting_keys][:self.claim_block]
                first_claim = claims.claim(con, first_keys, self.owner, self.run_id, self.lease_s)
            delete_journals(recovered)   # only after the COMMIT
        return done_rows, done, cached, waiting_keys, first_claim, first_keys

    async def _store_cached(self, cached: dict[str, dict]) -> None:
        """Answers already in the cache: scored and stored in one transaction (with the run's items if missing)."""
        cached_rows = self.cached_rows(cached)
        if not cached_rows:
            return

        def write_cached():
            with store.connect(self.db_path) as con, store.transaction(con):
                if self._items_missing is not None:
                    store.insert_items(con, self.run_id, self._items_missing)
                store.write_calls_results(con, [], cached_rows)
                store.refresh_run_counts(con, self.run_id)
            self._items_missing = None
        await asyncio.to_thread(write_cached)
        self.count_cached(cached_rows)

    async def _make_calls(self, journal: Journal, groups: dict, rest: list[dict], done: set[int], first_claim,
                          first_keys: list[str]) -> tuple[JournalWriter, asyncio.Task | None]:
        """Make the calls still to make on ``concurrency`` workers, merging their answers as they come. Returns the
        journal's writer and the task feeding the later items (None: there were none)."""
        h = self.handle
        loop = asyncio.get_running_loop()
        # The items' rows (if missing) and the scorer's warm-up are done in a thread while the first wave of calls
        # is at the model. Answers are journalled (durable, reported) meanwhile, but none
        # is merged before the items are in the DB (``_merge``), so the DB never holds results of items it does not
        # have; the workers do not wait for the insert (claim blocks take turns with it under the run's db_lock). A
        # failed insert stops the run; the next run in this process, or any command once this process has ended,
        # merges its journalled answers as cached calls.
        first = next(iter(groups.values()))[0] if groups else None
        items_ready = self.items_ready = loop.create_task(self._insert_items_during_first_wave(first))
        items_ready.add_done_callback(self._items_inserted)
        writer = JournalWriter(journal, on_failure=lambda exc: self._cancel_tasks())
        feed = loop.create_task(later_items.feed(self, rest, done)) if rest else None
        work = self.work = SharedWork(self, groups, first_claim, first_keys, self.claim_block, items_ready, feed)
        gc_pacing.freeze_plan()   # the plan lives as long as the run: not traversed by every collection
        self._drained = work.drained
        stop_merging = asyncio.Event()
        merger = loop.create_task(self._merge_loop(writer, stop_merging))
        self.progress.set(calls_started_at=time.time())
        slots = self.concurrency if feed is not None else min(self.concurrency, len(groups))
        self._tasks = [loop.create_task(self._worker(work, writer)) for _ in range(slots)]
        if h.cancelled:
            self._cancel_tasks()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await work.close()
        await asyncio.gather(*list(self._commits), return_exceptions=True)
        await writer.close()
        stop_merging.set()
        self._drained.set()   # wakes the merge loop if it still waits for the drain (cancelled, failed workers)
        await merger
        try:
            await items_ready   # re-raises a failed insert: the run ends with status 'error'
        except BaseException:
            journal.close(delete=False)   # its answers: merged as cached calls by the next command on this DB
            raise
        return writer, feed

    async def _finish(self, journal: Journal, writer: JournalWriter, feed: asyncio.Task | None) -> None:
        """The run's last merge with its final status and counts, and the error it stopped on, if any."""
        h = self.handle
        p = h.progress()
        status = "cancelled" if h.cancelled else ("done" if p.failed == 0 and p.done >= p.total else
                                                  "waiting" if p.waiting else "incomplete")
        feed_error = feed.exception() if feed is not None and feed.done() and not feed.cancelled() else None
        if writer.error is not None or feed_error is not None:
            status = "error"
        # the last records and the run's final counts/status in one transaction (one DB open, not two)
        counts = await self._merge(writer, final=True, status=status)
        journal.close(delete=counts is not None)
        if counts is not None:
            self.progress.set(done=counts["n_done"], failed=counts["n_failed"], correct=counts["n_correct"],
                      cost_usd=float(counts["cost_usd"] or 0.0), correct_strict=counts["n_correct_strict"],
                      scored_strict=counts["n_scored_strict"])
        error = None
        if writer.error is not None:
            error = (f"cannot write results ({_why(writer.error)} in {journal.path.parent}); the run stopped at "
                     f"{p.done}/{p.total} answered, every answer reported is kept; free space and run the same "
                     "command again to continue")
        elif counts is None:
            status = "error"
            error = (f"cannot write to the database ({_why(self._merge_error)}); the {p.done} answers are safe in "
                     f"{journal.path} and the next command on this database merges them")
        elif feed_error is not None:
            error = (f"cannot prepare the run's later items ({_why(feed_error)}); the {p.done} answers are stored; "
                     "run the same command again to continue")
        if error is not None:
            await asyncio.to_thread(self._mark_failed)
        self.progress.set(status=status, in_flight=0, **({"error": redact(error, self._secret)} if error else {}))
        self.emit(force=True)

    def _items_inserted(self, task: asyncio.Task) -> None:
        if task.cancelled() or task.exception() is not None:
            self._cancel_tasks()   # nothing could be merged: no more calls (``_main`` re-raises the error)

    def _items_stored(self) -> bool:
        """The run's items are in the DB (its results may be merged)."""
        t = self.items_ready
        return t is not None and t.done() and not t.cancelled() and t.exception() is None

    def _release_claims(self) -> None:
        """Best effort: drop this run's claims (the run stopped on an error before its final merge; they lapse with
        their lease otherwise)."""
        try:
            with self.db_lock, store.connect(self.db_path) as con, store.transaction(con):
                claims.release_run(con, self.owner, self.run_id)
        except store.STORE_ERRORS as exc:
            log.info("run %s: its claims could not be released (%s); they lapse with their lease", self.run_id,
                     type(exc).__name__)

    def _mark_failed(self) -> None:
        """Best effort: the run is not left 'running' (if even this cannot be written, the next command's journal
        recovery marks it interrupted: its process is gone by then)."""
        try:
            store.set_run_status(self.db_path, self.run_id, "error", finished=True)
        except store.STORE_ERRORS as exc:
            log.info("run %s: its status could not be set to 'error' (%s); journal recovery marks it later",
                     self.run_id, type(exc).__name__)

    def _cancel_tasks(self) -> None:
        for t in self._tasks:
            t.cancel()

    async def _merge_loop(self, writer: JournalWriter, stop: asyncio.Event) -> None:
        """Merge every MERGE_INTERVAL seconds, and once more as soon as the last calls are sent (the loop is idle
        while they are at the model), so the final merge after them has only their records left."""
        drained_merged = False
        while not stop.is_set():
            wake = self._drained if not drained_merged else stop
            try:
                await asyncio.wait_for(wake.wait(), timeout=store.MERGE_INTERVAL)
            except asyncio.TimeoutError:
                pass
            if self._drained.is_set():
                drained_merged = True
            if not stop.is_set():
                await self._merge(writer, final=False)

    async def _merge(self, writer: JournalWriter, final: bool, status: str | None = None):
        """Move durable journal records into DuckDB and refresh the run's counts (``final``: also set ``status`` and
        finished_at). Returns the run's counts when nothing is left unmerged, else None. Nothing is merged before
        the run's items are in the DB (the final merge comes after their insert)."""
        if not final and not self._items_stored():
            return {}
        records, writer.committed = writer.committed, []
        if not records and not final:
            return {}

        def do():
            with self.db_lock, store.connect(self.db_path, timeout=60.0 if final else 2.0) as con, \
                    store.transaction(con):
                if records:
                    merge_records(con, [dict(r) for r in records])
                    # the answers are in the cache now: identical runs waiting for them take them from there
                    claims.release(con, [r.get("key") for r in records], self.owner, self.run_id)
                if final:
                    claims.release_run(con, self.owner, self.run_id)
                return store.refresh_run_counts(con, self.run_id, status=status, finished=final)

        # busy file, a write conflict with another thread, a full disk: the records are safe in the journal; the
        # final merge tries again, the periodic one leaves them to the next merge
        failures = (store.DatabaseBusy, duckdb.TransactionException, duckdb.IOException, OSError)
        try:
            return await store.aretry_conflicts(do, errors=failures, attempts=5 if final else 1, step=0.2)
        except failures as exc:
            self._merge_error = exc
            log.info("run %s: merge postponed (%s)", self.run_id, type(exc).__name__)
        writer.committed[:0] = records  # try again at the next merge (or recover_journals() later)
        return None

    async def _worker(self, work: SharedWork, writer: JournalWriter) -> None:
        """One concurrency slot. Pipelined: while call k+1 is at the model, call k's journal record is being
        fsynced; call k+1 is not reported before call k is durable. So per slot at most two calls are "sent but not
        durable" (one at the model, one in the group commit) — after a kill -9 at most 2 × concurrency calls can be
        sent again, in practice the ones at the model plus the few of the last group commit."""
        h = self.handle
        pending: asyncio.Task | None = None
        try:
            while (got := await work.take()) is not None:
                key, items = got
                if h.cancelled:
                    break
                self.progress.add(in_flight=1)
                try:
                    record, ok, _, cost = await self._call(key, items)
                finally:
                    self.progress.add(in_flight=-1)
                if pending is not None:
                    await asyncio.shield(pending)
                pending = asyncio.ensure_future(self._commit(writer, record, ok, cost, len(items)))
                self._commits.add(pending)
                pending.add_done_callback(self._commit_done)
            if pending is not None:
                await asyncio.shield(pending)
        except asyncio.CancelledError:
            return

    def _commit_done(self, task: asyncio.Task) -> None:
        self._commits.discard(task)
        if not task.cancelled():
            task.exception()   # retrieved: a failed write is reported once, by the journal writer's error

    async def _commit(self, writer: JournalWriter, record: dict, ok: bool, cost, n_items: int) -> None:
        await writer.commit(record)   # durable (fsynced) before it counts
        if ok:
            self.progress.answered(record["results"], cached=False, calls=1, cost_usd=cost or 0.0)
        else:
            self.progress.add(failed=n_items)
        self.emit()

    async def _call(self, key: str, items: list[dict]) -> tuple[dict, bool, int, float | None]:
        """One distinct prompt, called under the run's retry policy. Returns (journal record, success, attempts,
        cost)."""
        item = items[0]
        prompt = item["prompt"]
        params = self.plan.params_for(item)
        request = Request(prompt=prompt, params=params, item=item, task=self.plan.task_name,
                          shape=self.plan.shape_for(item))
        est_tokens = estimate_in_tokens(prompt) + estimate_out_tokens(item, params)
        outcome = await call_with_retries(self.retry_policy, lambda n: self._attempt(request, est_tokens),
                                          pause=self.pause, on_retry=self._count_retry)
        attempts, completion = outcome.attempts, outcome.value
        if completion is None:
            return ({"calls": [], "results": self._failure_rows(items, key, outcome.reason, attempts), "key": key},
                    False, attempts, None)
        # a reply that quotes a key (or part of one) is stored and scored without it
        text = redact(completion.text, self._secret, keylike=False)
        tokens_real = None
        if completion.tokens_in is not None and completion.tokens_out is not None:
            tokens_real = completion.tokens_in + completion.tokens_out
        self.limiter.settle(est_tokens, tokens_real)
        call = {
            "cache_key": key, "model": self.plan.model_spec, "base_url": self.plan.base_url,
            "params_json": self.plan.params_json(params), "prompt_sha": store.sha256(prompt),
            "draw": self.draw, "response": text, "latency_ms": completion.latency_ms,
            "tokens_in": completion.tokens_in, "tokens_out": completion.tokens_out,
            "cost_usd": completion.cost_usd, "finish_reason": completion.finish_reason,
            "dropped_params": (store.canonical_json(list(completion.dropped_params))
                               if completion.dropped_params else "[]"),
            "error": None, "attempts": attempts, "at": store.now_utc(),
            "reasoning": (redact(completion.reasoning, self._secret, keylike=False)
                          if completion.reasoning else None),
            "tokens_reasoning": completion.tokens_reasoning,
            "cost_reasoning_usd": completion.cost_reasoning_usd,
            "reasoning_sent": completion.reasoning_sent,
        }
        results = self.result_rows(items, key, text, attempts, False)
        return {"calls": [call], "results": results, "key": key}, True, attempts, completion.cost_usd

    def _count_retry(self) -> None:
        self.progress.add(retries=1)

    async def _attempt(self, request: Request, est_tokens: int) -> Completion:
        """One attempt of a call, behind the run's circuit breaker and rate limit: the completion, or ``Retry`` /
        ``Failed`` (core.models.retry_policy) saying what the policy makes of the failure. Tells the breaker whether
        the endpoint answered."""
        breaker = self.breaker
        generation, probe = await breaker.admit()   # waits while the endpoint is down (run-wide)
        await self.limiter.acquire(est_tokens)
        reported = False
        try:
            async with asyncio.timeout(self.call_timeout):   # cheaper than wait_for (no extra task)
                completion: Completion = await self.model.complete(request)
            if completion is None or completion.text is None:
                raise RetryableError("empty reply")
        except (RetryableError, asyncio.TimeoutError) as exc:
            timed_out = isinstance(exc, asyncio.TimeoutError) or "timed out" in str(exc)
            if isinstance(exc, asyncio.TimeoutError):
                exc = RetryableError(f"timeout after {self.call_timeout:g} s")
            reason = redact(str(exc), self._secret)
            if exc.connection:   # an outage costs time, not attempts: the breaker paces the retries
                breaker.failed(generation, probe)
                reported = True
                if breaker.gave_up:
                    raise Failed(f"{reason}; the endpoint was unreachable for {breaker.down_for():.0f} s") from None
                raise Retry(reason, exc.retry_after, unreachable=True) from None
            if not timed_out:    # the endpoint answered, if only with an error: it is reachable
                breaker.reached(generation, probe)
                reported = True
            raise Retry(reason, exc.retry_after) from None
        except ModelError as exc:
            breaker.reached(generation, probe)
            reported = True
            raise Failed(redact(str(exc), self._secret)) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — a bug in a provider: recorded, not retried blindly
            reason = redact(f"{type(exc).__name__}: {exc}", self._secret)
            log.info("run %s: the provider failed unexpectedly: %s", self.run_id, reason)
            raise Failed(reason) from None
        else:
            breaker.reached(generation, probe)
            reported = True
            return completion
        finally:
            if not reported:     # cancelled, timed out or a provider bug: no verdict on the endpoint
                breaker.abandoned(probe)


def _why(exc: BaseException | None) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    text = str(exc).splitlines()[0] if exc is not None and str(exc) else type(exc).__name__
    return text[:200]

"""Batch runs: a run's prompts through the provider's batch interface (OpenAI Batch, Anthropic Message Batches) at
half the list price, kill-safe.

One *pass* of a batch run (repeated every ``poll_interval`` seconds until nothing is left, or once with
``wait=False``):

1. What is left: items without a successful result; prompts already in the ``calls`` cache are answered from it (as
   in a live run); prompts sitting in a batch not yet collected — this run's or another's — are waiting.
2. Batches this process never heard back about (phase 'submitting', their process gone) are looked up at the
   provider: adopted when found, otherwise marked lost (their prompts were never sent and are free again).
3. Every open batch is polled; its state and counts go to the store; an ended one is collected — calls, scored
   results and each request's outcome in one transaction (``batch_collect.collect``).
4. Prompts whose batch requests failed (errored, expired, cancelled, the whole batch failed, no line came back)
   ``max_attempts`` times are recorded as failed; the others are due again.
5. Due prompts go out in new batches of at most ``limits.max_requests`` requests and ``limits.max_bytes`` bytes,
   ``custom_id`` = the prompt's cache key. Each batch is first written to the store with its requests
   (``store.batches.claim``, which also refuses any prompt another open batch already holds), then created at the
   provider, then its provider id is stored.

So the store knows a batch before the provider does; a kill -9 at any moment loses nothing, the same command
re-attaches, and nothing already submitted is submitted again unless its outcome was a failure. The one window —
killed after the provider created a batch and before its id was stored — is closed by step 2 (OpenAI: our id is in
the batch's metadata; Anthropic: the one unknown batch created since then with our number of requests).

A run following its batches has status 'running'; one that stops following while batches are open (``wait=False``,
Ctrl-C, a closed app, a kill) is 'waiting', never 'failed'. A batch cancelled by the user is collected (finished
requests kept) and the run then stops submitting; running it again resubmits the cancelled prompts.
"""

from __future__ import annotations

import logging
import threading

from core import store
from core.errors import UserError
from core.models.base import ModelError, RetryableError, redact
from core.models.batch import batch_backend
from core.models.batch.common import TRANSFER_TIMEOUT
from core.models.reasoning import sent_in
from core.runner.batch_collect import RunItems, collect, give_up, store_state
from core.runner.plan import Plan, call_key, result_rows, run_items
from core.store import batches as batch_store
from core.store.journal import delete_journals, owner_alive, owner_tag, recover_into

POLL_INTERVAL = 60.0          # seconds between polls of a batch run (providers finish within minutes to 24 h)
SUBMIT_FAILURES = 3           # passes in a row whose submission failed with a transient error before giving up
SUBMIT_WINDOW = TRANSFER_TIMEOUT + 60.0   # a batch 'submitting' for longer was left behind, whoever wrote it

log = logging.getLogger(__name__)

_SUBMITTING: set[str] = set()  # batch ids this process is creating right now (their rows say 'submitting')
_SUBMITTING_LOCK = threading.Lock()


def chunks(entries, limits):
    """Greedy split of (key, entry, nbytes) into batches within the limits (lazily: one batch in memory)."""
    chunk, size = [], 0
    for key, entry, nbytes in entries:
        if nbytes > limits.max_bytes:
            raise ModelError(f"one request is {nbytes:,} bytes, more than the per-batch limit of "
                             f"{limits.max_bytes:,} bytes")
        if chunk and (len(chunk) >= limits.max_requests or size + nbytes > limits.max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((key, entry, nbytes))
        size += nbytes
    if chunk:
        yield chunk


class BatchExecutor:
    """A batch run (see the module docstring). ``handle`` is the run's core.runner.handle.RunHandle (the handle
    module starts executors); progress goes to its ``recorder``."""

    def __init__(self, plan: Plan, model, handle, *, run_id, draw, db_path, max_attempts, on_progress,
                 api_key, wait=True, poll_interval=None, limits=None):
        self.plan, self.model, self.handle = plan, model, handle
        self.progress = handle.recorder
        self.run_id, self.draw, self.db_path = run_id, draw, db_path
        self.max_attempts, self.on_progress, self.wait = max_attempts, on_progress, wait
        self.poll_interval = POLL_INTERVAL if poll_interval is None else float(poll_interval)
        self.limits = limits
        self._secret = api_key
        self.params_json = store.canonical_json(plan.params.to_dict())
        self.backend = None
        self.user_cancelled = False
        self.submit_failures = 0
        self.calls = 0
        self.given_up: set[str] = set()

    # -- thread
    def thread_main(self) -> None:
        try:
            self._main()
        except BaseException as exc:  # noqa: BLE001 — reported on the handle, never a silent death
            msg = redact(str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}", self._secret)
            status = "error"
            try:
                with store.connect(self.db_path) as con:
                    if batch_store.summary(con, self.run_id)["waiting_items"]:
                        status = "waiting"    # the batches are safe at the provider; the same command re-attaches
                store.set_run_status(self.db_path, self.run_id, status, finished=True)
            except store.STORE_ERRORS as store_exc:
                log.info("run %s: its status could not be set to %r (%s); journal recovery marks it later",
                         self.run_id, status, type(store_exc).__name__)
            self.progress.set(status=status, error=msg)
            self._emit()
        finally:
            if self.backend is not None:
                self.backend.close()
            self.handle.finish()

    def _emit(self) -> None:
        if self.on_progress is not None:
            try:
                self.on_progress(self.handle.progress())
            except Exception as exc:  # noqa: BLE001 — a broken UI callback must not kill the run
                log.info("run %s: the progress callback failed: %s: %s", self.run_id, type(exc).__name__, exc)

    def _key(self, item: dict) -> str:
        """The item's cache key: the same as a live call's (its own parameters: a reply cap may be the item's)."""
        return call_key(self.plan, item, self.draw)

    def _request(self, item: dict) -> tuple[dict, list[str]]:
        """The request body of ``item``'s call and the parameters dropped or changed in it: the run's, or with the
        item's own reply cap / reasoning effort (an effort the model lacks is sent as another, or not at all, and
        the thinking form may leave sampling parameters out: each item's own record)."""
        params = self.plan.params_for(item)
        if params is self.plan.params:
            return self.body, self.dropped
        if params not in self._capped:
            self._capped[params] = self.backend.request_body(params)
        return self._capped[params]

    def _body(self, item: dict) -> dict:
        return self._request(item)[0]

    def _carried(self, item: dict) -> dict:
        """What ``item``'s request carries, as its batch request records it at submission (and collection writes
        onto its call): the parameters dropped or changed, and what was sent for the reasoning effort."""
        body, dropped = self._request(item)
        return {"dropped_params": store.canonical_json(list(dict.fromkeys(dropped))), "reasoning_sent": sent_in(body)}

    # -- main
    def _main(self) -> None:
        plan = self.plan
        items = run_items(plan)
        self.by_idx = {it["idx"]: it for it in items}
        self.groups: dict[str, list[dict]] = {}
        for it in items:
            self.groups.setdefault(self._key(it), []).append(it)
        self.ctx = RunItems(self.run_id, plan.task, plan.model_spec, plan.base_url, self.params_json, self.draw,
                            self.by_idx.__getitem__)
        self.backend = batch_backend(self.model, self.limits)
        self.body, self.dropped = self.backend.request_body(plan.params)
        self._capped: dict = {}   # (body, dropped) of items with their own parameters (reply cap, effort)

        with store.connect(self.db_path) as con:
            with store.transaction(con):
                _, recovered = recover_into(con, self.db_path)
                if con.execute("SELECT count(*) FROM items WHERE run_id = ?", [self.run_id]).fetchall()[0][0] \
                        < len(items):
                    store.insert_items(con, self.run_id, items)
                store.update_run(con, self.run_id, status="running", n_items=len(items))
            delete_journals(recovered)
        self.progress.set(total=len(items))

        while True:
            left = self._pass()
            if not self.wait or self.handle.cancelled or not left:
                break
            self.handle.wait_cancelled(self.poll_interval)

        waiting = self._report()
        p = self.handle.progress()
        status = ("waiting" if waiting else "done" if p.done >= p.total and not p.failed else
                  "cancelled" if self.user_cancelled or self.handle.cancelled else "incomplete")
        store.set_run_status(self.db_path, self.run_id, status, finished=True)
        self.progress.set(status=status)
        self._emit()

    def _pass(self) -> bool:
        """One pass (see the module docstring). Returns whether anything is still open or due. Each step opens the
        store briefly (an open costs ~20 ms, so they are few: one read, one write per state change)."""
        snap = self._snapshot()
        changed = False
        if snap["cached"]:
            self._answer_from_cache(snap["cached"], snap["pending_all"])
            changed = True
        polled = []
        for batch in snap["open"]:
            if self.handle.cancelled:
                return True
            if batch["phase"] == "submitting":
                changed |= self._reconcile(batch)
            else:
                state = self._retrieve(batch)
                if state is not None:
                    polled.append((batch, state))
        if polled:
            with store.connect(self.db_path) as con, store.transaction(con):
                for batch, state in polled:
                    store_state(con, batch["batch_id"], state)
        for batch, state in polled:
            if state.ended and not self.handle.cancelled:
                changed |= self._collect(batch, state)
        if changed:
            snap = self._snapshot()
        pending, attempts, flying = snap["pending"], snap["attempts"], snap["flying"]
        # given up in this session: failed for good until the run is started again (then a fresh allowance)
        due = {k: v for k, v in pending.items() if k not in flying and k not in self.given_up}
        spent = {k: v for k, v in due.items() if attempts.get(k, (0, None))[0] >= self.max_attempts}
        if spent:
            give_up(self.db_path, self.run_id, spent, {k: attempts[k][1] for k in spent},
                    {k: attempts[k][0] for k in spent})
            self.given_up |= set(spent)
            due = {k: v for k, v in due.items() if k not in spent}
        if due and not self.user_cancelled and not self.handle.cancelled:
            self._submit(due)
        waiting = self._report()
        return bool(waiting) or bool(due and not self.user_cancelled)

    def _pending(self, con) -> dict[str, list[dict]]:
        """cache key → this run's items without a successful result."""
        done = {r[0] for r in con.execute("SELECT idx FROM results WHERE run_id = ? AND error IS NULL",
                                          [self.run_id]).fetchall()}
        pending: dict[str, list[dict]] = {}
        for key, items in self.groups.items():
            left = [it for it in items if it["idx"] not in done] if done else items
            if left:
                pending[key] = left
        return pending

    def _snapshot(self) -> dict:
        """pending (uncached key → items), cached (key → call), open (batches relevant here), attempts (failed, by
        key) and flying (pending keys sitting in a batch not yet collected), read in one connection."""
        with store.connect(self.db_path) as con:
            pending = self._pending(con)
            cached = store.lookup_calls(con, pending)
            uncached = [k for k in pending if k not in cached]
            return {"pending": {k: pending[k] for k in uncached}, "pending_all": pending, "cached": cached,
                    "open": batch_store.open_for(con, self.run_id, uncached),
                    "attempts": batch_store.failed_attempts(con, self.run_id),
                    "flying": batch_store.in_flight(con, uncached)}

    def _answer_from_cache(self, cached: dict, pending: dict) -> None:
        rows = []
        for key, call in cached.items():
            rows += result_rows(self.plan.task, self.run_id, pending[key], key, call["response"], 0, True)
        with store.connect(self.db_path) as con, store.transaction(con):
            store.write_calls_results(con, [], rows)
            store.refresh_run_counts(con, self.run_id)

    # -- batches at the provider
    def _backend_for(self, batch: dict):
        """This run's back end, or one for another run's batch (same model: same key)."""
        if batch["model"] == self.plan.model_spec and (batch.get("base_url") or None) == self.plan.base_url:
            return self.backend
        from core.models import get_model

        return batch_backend(get_model(batch["model"], base_url=batch.get("base_url"), api_key=self._secret))

    def _reconcile(self, batch: dict) -> bool:
        """A batch row left 'submitting': adopt the provider's batch, or mark it lost if it was never created.
        Returns whether the row changed."""
        with _SUBMITTING_LOCK:
            ours_now = batch["batch_id"] in _SUBMITTING
        created = batch.get("created_at")
        stale = created is not None and (store.now_utc() - created).total_seconds() > SUBMIT_WINDOW
        if ours_now or (not stale and batch.get("owner") != owner_tag() and owner_alive(batch.get("owner"))):
            return False   # being created right now by this or another live process (or one on another machine)
        backend = self._backend_for(batch)
        with store.connect(self.db_path) as con:
            known = [r[0] for r in con.execute("SELECT provider_batch_id FROM batches WHERE provider = ? AND "
                                               "provider_batch_id IS NOT NULL", [batch["provider"]]).fetchall()]
        state = backend.find(batch["batch_id"], batch.get("created_at"), int(batch["n_requests"] or 0), known)
        with store.connect(self.db_path) as con, store.transaction(con):
            if state is None:
                batch_store.mark_lost(con, batch["batch_id"], "the provider never created this batch")
            else:
                batch_store.update(con, batch["batch_id"], phase="open", provider_batch_id=state.provider_batch_id,
                                   input_file_id=state.input_file_id, submitted_at=state.created_at)
                store_state(con, batch["batch_id"], state)
        return True

    def _retrieve(self, batch: dict):
        """The batch's state at the provider, or None when the provider cannot say now (asked again next pass)."""
        backend = self._backend_for(batch)
        try:
            return backend.retrieve(batch["provider_batch_id"])
        except RetryableError:
            return None
        finally:
            if backend is not self.backend:
                backend.close()

    def _collect(self, batch: dict, state) -> bool:
        backend = self._backend_for(batch)
        try:
            outcomes = collect(self.db_path, backend, {**batch, "ended_at": store.now_utc()}, state,
                               {self.run_id: self.ctx})
        except RetryableError:
            return False   # the results could not be read now: the next pass collects them
        finally:
            if backend is not self.backend:
                backend.close()
        if batch.get("run_id") == self.run_id:
            self.calls += sum(1 for o in outcomes if o.kind == "succeeded")
            if batch.get("cancel_requested"):
                self.user_cancelled = True
        for o in outcomes:   # a model that refuses a sampling parameter: drop it from the next batches
            if o.kind == "errored" and o.error and self.backend.learn_refusal(o.error, self.body):
                self.body, self.dropped = self.backend.request_body(self.plan.params)
                self._capped.clear()
        return True

    def _entries(self, due: dict[str, list[dict]]):
        for key in due:
            entry = self.backend.entry(key, due[key][0]["prompt"], self._body(due[key][0]))
            yield key, entry, self.backend.entry_bytes(entry)

    def _submit(self, due: dict[str, list[dict]]) -> None:
        provider = self.backend.provider
        for chunk in chunks(self._entries(due), self.backend.limits):
            if self.handle.cancelled:
                return
            batch_id = batch_store.new_batch_id()
            carried = {key: self._carried(due[key][0]) for key, _, _ in chunk}
            requests = [{"custom_id": key, "run_id": self.run_id, "idx": it["idx"], "cache_key": key, **carried[key]}
                        for key, _, _ in chunk for it in due[key]]
            with _SUBMITTING_LOCK:
                _SUBMITTING.add(batch_id)
            try:
                with store.connect(self.db_path) as con, store.transaction(con):
                    mine = batch_store.claim(con, {
                        "batch_id": batch_id, "provider": provider, "run_id": self.run_id,
                        "model": self.plan.model_spec, "base_url": self.plan.base_url, "owner": owner_tag(),
                        "n_bytes": sum(n for _, _, n in chunk),
                        "dropped_params": store.canonical_json(list(self.dropped))}, requests)
                claimed = {r["custom_id"] for r in mine}
                entries = [entry for key, entry, _ in chunk if key in claimed]
                if not entries:
                    continue
                try:
                    state = self.backend.submit(batch_id, entries)
                except (RetryableError, ModelError) as exc:
                    self._submission_failed(batch_id, len(entries), exc)
                    return
                self.submit_failures = 0
                with store.connect(self.db_path) as con, store.transaction(con):
                    batch_store.update(con, batch_id, phase="open", provider_batch_id=state.provider_batch_id,
                                       input_file_id=state.input_file_id, submitted_at=store.now_utc())
                    store_state(con, batch_id, state)
            finally:
                with _SUBMITTING_LOCK:
                    _SUBMITTING.discard(batch_id)

    def _submission_failed(self, batch_id: str, n: int, exc: Exception) -> None:
        """The create call failed. Refused (ModelError: a 4xx): nothing was created, the run stops with the reason.
        Transient (a timeout, a 5xx): the provider may have created it after all — look it up."""
        with _SUBMITTING_LOCK:
            _SUBMITTING.discard(batch_id)
        if isinstance(exc, ModelError):
            with store.connect(self.db_path) as con, store.transaction(con):
                batch_store.mark_lost(con, batch_id, str(exc))
            raise exc
        try:
            with store.connect(self.db_path) as con:
                batch = batch_store.get(con, batch_id)
            self._reconcile(batch)
        except RetryableError as look_exc:   # cannot tell now: the row stays 'submitting', the next pass looks again
            log.info("batch %s: the provider cannot say now whether it was created (%s)", batch_id,
                     redact(str(look_exc), self._secret)[:200])
        self.submit_failures += 1
        if self.submit_failures >= SUBMIT_FAILURES or not self.wait:
            raise UserError(f"could not submit a batch of {n} requests: {redact(str(exc), self._secret)}")

    # -- progress
    def _report(self) -> int:
        """Counts into the run row and the handle (one connection). Returns the items waiting on batches."""
        with store.connect(self.db_path) as con:
            counts = store.refresh_run_counts(con, self.run_id)
            pending = self._pending(con)
            flying = batch_store.in_flight(con, pending)
            states = dict(con.execute(
                """SELECT CASE WHEN phase = 'open' THEN coalesce(status, 'open') ELSE phase END AS s, count(*)
                   FROM batches WHERE run_id = ? GROUP BY s""", [self.run_id]).fetchall())
        waiting = sum(len(pending[k]) for k in flying)
        self.progress.set(done=int(counts["n_done"]), failed=int(counts["n_failed"]),
                            cached=int(counts["n_cached"]), correct=int(counts["n_correct"] or 0),
                            cost_usd=float(counts["cost_usd"] or 0.0), calls=self.calls,
                            waiting=waiting, batches={k: int(v) for k, v in states.items()})
        self._emit()
        return waiting

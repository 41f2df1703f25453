"""Starting, resuming and following runs: a run executes on a background thread with its own event loop; its
handle (progress, cancel, wait) is found again by run id across Streamlit reruns."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Callable

from core import store
from core.config import RunOptions
from core.errors import UserError
from core.redaction import remember
from core.runner.batch import BatchExecutor
from core.runner.breaker import GIVE_UP_AFTER
from core.runner.executor import Executor
from core.runner.plan import Progress, find_run, make_plan, prefetch_items, register_run
from core.runner.progress import ProgressRecorder
from core.store.journal import owner_tag

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------------------------------------- handle


_REGISTRY: dict[str, "RunHandle"] = {}
_REGISTRY_LOCK = threading.Lock()


def get_handle(run_id: str) -> "RunHandle | None":
    with _REGISTRY_LOCK:
        return _REGISTRY.get(run_id)


def active_runs() -> list["RunHandle"]:
    with _REGISTRY_LOCK:
        return [h for h in _REGISTRY.values() if not h.done]


def live_handle(run_id: str) -> "RunHandle | None":
    """The handle of ``run_id`` if that run is executing in this process now."""
    h = get_handle(run_id)
    return h if h is not None and not h.done else None


def register(handle: "RunHandle", *, unless_live: bool = False) -> "RunHandle":
    """Make ``handle`` the one ``get_handle`` finds for its run. ``unless_live``: if a handle of the same run is
    executing now, that one is kept and returned instead (checked and registered under one lock)."""
    with _REGISTRY_LOCK:
        existing = _REGISTRY.get(handle.run_id)
        if unless_live and existing is not None and not existing.done:
            return existing
        _REGISTRY[handle.run_id] = handle
    return handle


class RunHandle:
    """A run executing in a background thread. Thread-safe: progress(), cancel(), wait(), done.

    The executor behind it reports to ``recorder`` (core/runner/progress.py) and tells the handle about its thread
    and event loop (``start``, ``set_loop``, ``set_on_cancel``) and its end (``finish``)."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.recorder = ProgressRecorder(run_id)
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_cancel: Callable[[], None] | None = None

    def progress(self) -> Progress:
        return self.recorder.snapshot()

    def cancel(self) -> None:
        """Stop making new calls now; calls in flight are abandoned, finished ones are kept."""
        self._cancel.set()
        loop, cb = self._loop, self._on_cancel
        if loop is not None and cb is not None:
            try:
                loop.call_soon_threadsafe(cb)
            except RuntimeError:
                log.debug("run %s: its event loop closed before the cancel reached it", self.run_id)

    # -- the executor's side
    def start(self, target: Callable[[], None], name: str) -> None:
        """Run ``target`` (the executor's main) on a daemon thread of this handle."""
        self._thread = threading.Thread(target=target, name=name, daemon=True)
        self._thread.start()

    def set_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """The executor's event loop (None once it is closed): ``cancel`` reaches the executor through it."""
        self._loop = loop

    def set_on_cancel(self, callback: Callable[[], None] | None) -> None:
        """Called on the executor's loop when the run is cancelled (stops its tasks)."""
        self._on_cancel = callback

    def wait_cancelled(self, timeout: float | None) -> bool:
        """Sleep up to ``timeout`` seconds, waking at once if the run is cancelled; returns whether it was."""
        return self._cancel.wait(timeout)

    def finish(self) -> None:
        """The executor has ended: ``done`` turns true and ``wait`` returns."""
        self._finished.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> Progress:
        self._finished.wait(timeout)
        return self.progress()

    def __repr__(self) -> str:
        p = self.progress()
        return f"<RunHandle {self.run_id} {p.status} {p.done}/{p.total}>"


# ----------------------------------------------------------------------------------------------------------- start/run


def start_run(config: dict, model, *, params=None, base_url=None, api_key=None, db_path=None, concurrency=None,
              fresh=False, name=None, limit=None, rpm=None, tpm=None, max_attempts=6, call_timeout=120.0,
              source="app", on_progress: Callable[[Progress], None] | None = None, model_timeout: float | None = None,
              batch: bool = False, wait: bool = True, poll_interval: float | None = None, batch_limits=None,
              limit_pick: str = "spread", outage_limit: float = GIVE_UP_AFTER, _run_id: str | None = None
              ) -> RunHandle:
    """Validate, register the run in the DB and start it in a background thread. Returns at once.

    ``model`` is a spec string (``local/smollm2``, ``openai/gpt-4o-mini``, ``openai-compatible/<name>`` …) or a
    ready Model object. ``api_key`` goes to the model only; it is never stored. Raises ConfigError/UserError/ModelError
    for bad input before anything starts. If the same run is already active in this process, its handle is returned.

    ``batch=True`` (openai/ and anthropic/ only) sends the run's uncached prompts through the provider's batch
    interface instead of live calls (core/runner/batch.py): it polls every ``poll_interval`` seconds until every
    batch is collected, or (``wait=False``) submits, collects what has ended and returns, leaving the run
    'waiting'. ``batch_limits`` (a ``core.models.batch.BatchLimits``) caps requests and bytes per batch.
    While the endpoint cannot be reached the run pauses (core/runner/breaker.py); after ``outage_limit`` seconds of
    continuous unreachability its remaining calls fail (retried by the next run).
    """
    remember(api_key)
    if batch:
        from core.models.batch import supports_batch

        spec_str = model if isinstance(model, str) else getattr(model, "spec", "")
        if not supports_batch(spec_str):
            raise UserError(f"batch submission is for openai/ and anthropic/ models, not {spec_str}; for a vLLM "
                            "box use export-batch / import-batch or the live openai-compatible/ path")
        if poll_interval is not None and not (isinstance(poll_interval, (int, float)) and poll_interval >= 0):
            raise UserError(f"poll interval must be a number of seconds >= 0, got {poll_interval!r}")
    if isinstance(model, str):
        from core.models import get_model

        # the client's own timeout is the run's per-call timeout (a fixed 60 s cut every longer --timeout short)
        model_obj = get_model(model, base_url=base_url, api_key=api_key,
                              timeout=model_timeout if model_timeout is not None else call_timeout)
    else:
        model_obj = model
    validate = getattr(model_obj, "validate", None)
    if callable(validate):
        validate()
    if callable(getattr(model_obj, "use_store", None)):   # a model that keeps what its provider says of it
        model_obj.use_store(db_path)
    spec = model_obj.spec
    plan = make_plan(config, spec, params, base_url, limit, name, source, limit_pick)
    if plan.params.answer_format in ("constrained", "members") and not getattr(model_obj, "constrained", False):
        from core.models.base import ModelError

        raise ModelError(f"{spec} cannot constrain its answers (no grammar or guided decoding in its API); use "
                         "answer format 'free', or local/smollm2 or an openai-compatible server")
    preparing = _start_prepare(model_obj)   # overlaps the model's one-off costs with planning and DB setup
    if concurrency is None:
        concurrency = int(getattr(model_obj, "default_concurrency", 1) or 1)
    RunOptions(concurrency=concurrency, rpm=rpm, tpm=tpm, max_attempts=max_attempts, call_timeout=call_timeout,
               limit=limit).checked()
    prefetch_items(plan)   # generated while the run is registered below

    with store.connect(db_path) as con, store.transaction(con):
        if _run_id is not None:   # resume_run: exactly this run (its key and draw), whatever is newer
            rows = con.execute("SELECT run_id, draw FROM runs WHERE run_id = ? AND run_key = ?",
                               [_run_id, plan.run_key]).fetchall()
            if not rows:
                raise UserError(f"run {_run_id} does not match its stored configuration; start it anew instead")
            run_id, draw, exists = rows[0][0], int(rows[0][1]), True
        else:
            run_id, draw, exists = find_run(con, plan, fresh)
        existing = live_handle(run_id)
        if existing is not None:
            return existing
        run_json = store.canonical_json({
            "config": plan.config_dict, "model": spec, "base_url": plan.base_url, "params": plan.params.to_dict(),
            "limit": limit, "limit_pick": plan.limit_pick if limit is not None else None, "draw": draw,
            "owner": owner_tag(), "concurrency": concurrency,
            "max_attempts": max_attempts, "call_timeout": call_timeout, "rpm": rpm, "tpm": tpm, "batch": bool(batch),
        })
        register_run(con, plan, run_id, draw, exists, run_json)

    handle = RunHandle(run_id)
    handle.recorder.set(status="running")
    register(handle)
    if batch:
        executor = BatchExecutor(plan, model_obj, handle, run_id=run_id, draw=draw, db_path=db_path,
                                  max_attempts=max_attempts, on_progress=on_progress, api_key=api_key, wait=wait,
                                  poll_interval=poll_interval, limits=batch_limits)
    else:
        executor = Executor(plan, model_obj, handle, run_id=run_id, draw=draw, db_path=db_path,
                             concurrency=concurrency, rpm=rpm, tpm=tpm, max_attempts=max_attempts,
                             call_timeout=call_timeout, on_progress=on_progress, fresh=fresh, api_key=api_key,
                             preparing=preparing, outage_limit=outage_limit)
    handle.start(executor.thread_main, name=f"run-{run_id}")
    return handle


def resume_run(run_id: str, *, api_key=None, db_path=None, concurrency=None, on_progress=None,
               source: str = "app", batch: bool | None = None, wait: bool = True,
               poll_interval: float | None = None) -> RunHandle:
    """Continue a stored run exactly as it was started (config, model, params, base URL, limit and draw, from its
    run_json): finished items are kept, failed and missing ones are called. Raises UserError for an unknown or
    imported run. ``api_key`` is only needed for cloud models and is never stored. A batch run re-attaches to its
    batches (``batch=None``: the way it was last started; ``wait=False``: one pass — "collect now")."""
    row = store.get_run(db_path, run_id)
    if row is None:
        raise UserError(f"no run {run_id!r} in the database")
    try:
        spec = json.loads(row.get("run_json") or "{}")
    except ValueError:
        spec = {}
    if not spec.get("config") or (row.get("source") or "").startswith("import") or not spec.get("model"):
        raise UserError(f"run {run_id} cannot be resumed (imported, or stored without its run configuration)")
    h = start_run(spec["config"], spec["model"], params=spec.get("params"), base_url=spec.get("base_url"),
                  api_key=api_key, db_path=db_path, concurrency=concurrency or spec.get("concurrency"),
                  limit=spec.get("limit"), limit_pick=spec.get("limit_pick") or "first",
                  rpm=spec.get("rpm"), tpm=spec.get("tpm"),
                  max_attempts=spec.get("max_attempts") or 6, call_timeout=spec.get("call_timeout") or 120.0,
                  source=source, on_progress=on_progress, _run_id=run_id,
                  batch=bool(spec.get("batch")) if batch is None else batch, wait=wait, poll_interval=poll_interval)
    return h


def run(config: dict, model, *, on_progress: Callable[[Progress], None] | None = None, **kwargs) -> Progress:
    """Blocking run (the CLI). Ctrl-C cancels: finished calls are kept and the run can be resumed."""
    kwargs.setdefault("source", "cli")
    handle = start_run(config, model, on_progress=on_progress, **kwargs)
    try:
        while not handle.done:
            handle.wait(0.2)
    except KeyboardInterrupt:
        handle.cancel()
        handle.wait()
        raise
    return handle.progress()


# ----------------------------------------------------------------------------------------------------------- executor


def _start_prepare(model) -> threading.Thread | None:
    """Run ``model.prepare()`` (optional: one-off first-call costs such as importing an HTTP library) in a thread."""
    prepare = getattr(model, "prepare", None)
    if not callable(prepare):
        return None

    def go():
        try:
            prepare()
        except Exception as exc:   # only a head start; the first real call reports any real problem
            log.debug("model.prepare() failed (%s); the first call reports any real problem", type(exc).__name__)

    thread = threading.Thread(target=go, name="model-prepare", daemon=True)
    thread.start()
    return thread

"""Batch runner: config + model → calls (cached, concurrent, retried, rate-limited) → scored results in the store.

Public API::

    start_run(config, model, *, params=None, base_url=None, api_key=None, db_path=None, concurrency=None,
              fresh=False, name=None, limit=None, rpm=None, tpm=None, max_attempts=6, call_timeout=120.0,
              source="app", on_progress=None) -> RunHandle        # background thread with its own event loop
    run(config, model, ..., on_progress=callback) -> Progress       # blocking (the CLI); Ctrl-C cancels cleanly
    resume_run(run_id, *, api_key=None, db_path=None) -> RunHandle  # continue a stored run exactly (Runs page)
    estimate(config, model, *, params=None, base_url=None, db_path=None, fresh=False, limit=None) -> Estimate
    get_handle(run_id) -> RunHandle | None ; active_runs() -> list[RunHandle]   # survive Streamlit reruns

A *run* is (task config, model spec, sampling params, base_url[, limit]); its ``run_key`` is a stable hash of those.
Running the same thing again resumes the newest run with that key (finished items are skipped, failed ones retried)
instead of starting over; ``fresh=True`` starts a new run with a new *draw index*, which is part of every cache key,
so every call is made anew. ``run_id = "<task>-<run_key[:10]>-d<draw>"``.

How one call goes: cache lookup (bulk, once at start: identical (model, params, prompt, draw) already stored → scored
from the stored response, no call) → wait for a concurrency slot (``concurrency`` workers; default
``model.default_concurrency``) → rate limits (requests/tokens per minute) → ``model.complete`` under a per-call timeout
→ on ``RetryableError`` / timeout: exponential back-off with full jitter, at least the server's Retry-After (which also
pauses every worker), up to ``max_attempts``; ``ModelError`` fails at once → the finished call and the scored results
of all items sharing its prompt are appended to the run's journal and fsynced (group commit) → only then the call
counts as finished (progress, callbacks). A slot pipelines: its next call goes out while the previous record is
being fsynced, but is not reported before it. So at most 2 × ``concurrency`` calls are ever "in flight" = sent but
not durable (at most ``concurrency`` at the model); after a kill -9 only those can be sent again. The journal is
merged into DuckDB every ``store.MERGE_INTERVAL`` seconds in a short transaction (see ``core/store.py`` for why the
file is never held open).
A failed call is recorded with its reason in ``results.error``; re-running the run retries it.

Throughput (``bench/runner_throughput.py``): everything before the first call is kept short — the model's one-off
costs (``model.prepare()``, e.g. importing aiohttp) run in a thread from ``start_run`` on; journal recovery, the done
rows and the cache lookup share one DB transaction; a new run's item rows are inserted (and the scorer warmed up)
while the first wave of calls is at the model, and no call is journalled before they are in. The last records and
the final status go in one transaction, after an extra merge made as soon as the last calls are sent.

Cancel stops new calls at once, abandons calls in flight, keeps every finished one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from core import store
from core.errors import ConfigError, UserError
from core.models.base import Completion, ModelError, Request, RetryableError, redact
from core.models.params import SamplingParams
from core.ratelimit import RateLimiter
from core.store_journal import Journal, delete_journals, merge_records, owner_tag, recover_into
from core.tasks import task_of_config
from core.tasks.base import stable_id

CHARS_PER_TOKEN = 4.0          # token estimate from prompt length (English text, BPE tokenisers)
MAX_BACKOFF = 60.0             # cap of one back-off sleep (seconds), Retry-After excepted
BASE_BACKOFF = 0.5
PROGRESS_EVERY = 0.1           # seconds between progress callbacks (the final one always fires)
FIRST_WAVE_HEAD_START = 0.02   # seconds the workers get to send the first calls before setup leftovers run


# ----------------------------------------------------------------------------------------------------------- data


@dataclass
class Progress:
    run_id: str = ""
    total: int = 0          # items in the run
    done: int = 0           # items answered (this session and earlier ones), cached ones included
    cached: int = 0         # of which answered from the cache
    failed: int = 0         # items whose call failed for good (retried by the next run)
    correct: int = 0
    cost_usd: float = 0.0   # cost of the run's calls (cached answers cost nothing)
    calls: int = 0          # model calls that succeeded in this session
    retries: int = 0        # retried attempts in this session
    in_flight: int = 0
    status: str = "pending"  # pending | running | done | incomplete | cancelled | error
    started_at: float = field(default_factory=time.time)
    calls_started_at: float | None = None   # when the first model call was sent (after setup and cache lookup)
    elapsed: float = 0.0
    error: str | None = None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.done if self.done else None

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.failed)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "incomplete", "cancelled", "error")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "accuracy": self.accuracy}


@dataclass(frozen=True)
class Estimate:
    n_items: int
    n_cached: int        # items answered from the cache or already done in the resumed run
    n_calls: int         # distinct calls still to make
    tokens_in: int
    tokens_out: int
    cost_usd: float | None   # None = unknown price (self-hosted endpoint, unknown model)
    run_id: str = ""


@dataclass
class _Plan:
    task: Any
    task_name: str
    cfg: Any
    config_dict: dict
    model_spec: str
    base_url: str | None
    params: SamplingParams
    limit: int | None
    run_key: str
    name: str | None
    source: str


def _clean_base_url(base_url: str | None) -> str | None:
    """Drop user:password@ from a URL before it is stored or hashed (credentials never reach the DB)."""
    if not base_url:
        return None
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url.strip())
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _plan(config: dict, model_spec: str, params, base_url, limit, name, source, task_module=None) -> _Plan:
    if not isinstance(config, dict):
        raise ConfigError("config must be a mapping (YAML dictionary)")
    task = task_module or task_of_config(config)
    cfg = task.load_config({k: v for k, v in config.items()})
    task_name = config.get("task") or getattr(task, "TASK", None) or task.__name__.rsplit(".", 1)[-1]
    try:
        cfg_dict = cfg.to_dict()
    except AttributeError:
        cfg_dict = dict(config)
    cfg_dict = {"task": task_name, **{k: v for k, v in cfg_dict.items() if k != "task"}}
    params = SamplingParams.from_dict(params) if not isinstance(params, SamplingParams) else params
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a whole number >= 1, got {limit!r}")
    base_url = _clean_base_url(base_url)
    run_key = stable_id({"config": cfg_dict, "model": model_spec, "base_url": base_url,
                         "params": params.to_dict(), "limit": limit}, n=16)
    return _Plan(task, task_name, cfg, cfg_dict, model_spec, base_url, params, limit, run_key, name, source)


def _items(plan: _Plan) -> list[dict]:
    out = []
    for it in plan.task.items(plan.cfg):
        if plan.limit is not None and len(out) >= plan.limit:
            break
        out.append(it)
    return out


def _find_run(con, plan: _Plan, fresh: bool) -> tuple[str, int, bool]:
    """(run_id, draw, exists): the newest run with this key, or a new one (fresh → a never-used draw)."""
    if not fresh:
        row = con.execute("SELECT run_id, draw FROM runs WHERE run_key = ? ORDER BY draw DESC LIMIT 1",
                          [plan.run_key]).fetchall()
        if row:
            return row[0][0], int(row[0][1]), True
        draw = 0
    else:
        row = con.execute(
            "SELECT max(draw) FROM runs WHERE model = ? AND coalesce(base_url, '') = ? AND params_json = ?",
            [plan.model_spec, plan.base_url or "", store.canonical_json(plan.params.to_dict())]).fetchall()
        draw = 1 + int(row[0][0]) if row and row[0][0] is not None else 1
    return f"{plan.task_name}-{plan.run_key[:10]}-d{draw}", draw, False


def _estimate_out_tokens(item: dict, params: SamplingParams) -> int:
    truth = item.get("truth")
    return int(min(params.max_tokens, len(json.dumps(truth, default=str)) / CHARS_PER_TOKEN * 1.5 + 16))


def _estimate_in_tokens(prompt: str) -> int:
    return int(len(prompt) / CHARS_PER_TOKEN) + 1


# ----------------------------------------------------------------------------------------------------------- estimate


def estimate(config: dict, model, *, params=None, base_url=None, db_path=None, fresh=False, limit=None,
             task_module=None) -> Estimate:
    """Counts, tokens and cost of running ``config`` on ``model`` now (cached calls and finished items subtracted)."""
    spec = model if isinstance(model, str) else model.spec
    plan = _plan(config, spec, params, base_url, limit, None, "estimate", task_module)
    items = _items(plan)
    with store.connect(db_path) as con:
        run_id, draw, exists = _find_run(con, plan, fresh)
        done = set()
        if exists:
            done = {r[0] for r in con.execute(
                "SELECT idx FROM results WHERE run_id = ? AND error IS NULL", [run_id]).fetchall()}
        pending = [it for it in items if it["idx"] not in done]
        keys = {store.cache_key(spec, plan.base_url, plan.params.to_dict(), it["prompt"], draw): it for it in pending}
        cached = store.lookup_calls(con, keys) if not fresh else {}
    to_call = {k: it for k, it in keys.items() if k not in cached}
    n_cached = len(items) - sum(1 for it in pending
                                if store.cache_key(spec, plan.base_url, plan.params.to_dict(), it["prompt"], draw)
                                in to_call)
    tin = sum(_estimate_in_tokens(it["prompt"]) for it in to_call.values())
    tout = sum(_estimate_out_tokens(it, plan.params) for it in to_call.values())
    cost = None
    try:
        from core.models import estimate_cost

        cost = estimate_cost(spec, tin, tout)
    except ImportError:
        pass
    return Estimate(len(items), n_cached, len(to_call), tin, tout, cost, run_id)


# ----------------------------------------------------------------------------------------------------------- handle


_REGISTRY: dict[str, "RunHandle"] = {}
_REGISTRY_LOCK = threading.Lock()


def get_handle(run_id: str) -> "RunHandle | None":
    with _REGISTRY_LOCK:
        return _REGISTRY.get(run_id)


def active_runs() -> list["RunHandle"]:
    with _REGISTRY_LOCK:
        return [h for h in _REGISTRY.values() if not h.done]


class RunHandle:
    """A run executing in a background thread. Thread-safe: progress(), cancel(), wait(), done."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self._progress = Progress(run_id=run_id)
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_cancel: Callable[[], None] | None = None

    def progress(self) -> Progress:
        with self._lock:
            p = dataclasses.replace(self._progress)
        if not p.finished:
            p.elapsed = time.time() - p.started_at
        return p

    def _update(self, **changes) -> Progress:
        with self._lock:
            for k, v in changes.items():
                setattr(self._progress, k, v)
            self._progress.elapsed = time.time() - self._progress.started_at
            return dataclasses.replace(self._progress)

    def cancel(self) -> None:
        """Stop making new calls now; calls in flight are abandoned, finished ones are kept."""
        self._cancel.set()
        loop, cb = self._loop, self._on_cancel
        if loop is not None and cb is not None:
            try:
                loop.call_soon_threadsafe(cb)
            except RuntimeError:
                pass  # loop already closed

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
              source="app", on_progress: Callable[[Progress], None] | None = None, task_module=None,
              model_timeout: float = 60.0, _run_id: str | None = None) -> RunHandle:
    """Validate, register the run in the DB and start it in a background thread. Returns at once.

    ``model`` is a spec string (``local/smollm2``, ``openai/gpt-4o-mini``, ``openai-compatible/<name>`` …) or a
    ready Model object. ``api_key`` goes to the model only; it is never stored. Raises ConfigError/UserError/ModelError
    for bad input before anything starts. If the same run is already active in this process, its handle is returned.
    """
    if isinstance(model, str):
        from core.models import get_model

        model_obj = get_model(model, base_url=base_url, api_key=api_key, timeout=model_timeout)
    else:
        model_obj = model
    validate = getattr(model_obj, "validate", None)
    if callable(validate):
        validate()
    preparing = _start_prepare(model_obj)   # overlaps the model's one-off costs with planning and DB setup
    spec = model_obj.spec
    plan = _plan(config, spec, params, base_url, limit, name, source, task_module)
    if concurrency is None:
        concurrency = int(getattr(model_obj, "default_concurrency", 1) or 1)
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a whole number >= 1, got {concurrency!r}")
    if not isinstance(max_attempts, int) or max_attempts < 1:
        raise ConfigError(f"max_attempts must be a whole number >= 1, got {max_attempts!r}")
    for label, value in (("requests per minute", rpm), ("tokens per minute", tpm), ("call timeout", call_timeout)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ConfigError(f"{label} must be a positive number, got {value!r}")

    with store.connect(db_path) as con, store.transaction(con):
        if _run_id is not None:   # resume_run: exactly this run (its key and draw), whatever is newer
            rows = con.execute("SELECT run_id, draw FROM runs WHERE run_id = ? AND run_key = ?",
                               [_run_id, plan.run_key]).fetchall()
            if not rows:
                raise UserError(f"run {_run_id} does not match its stored configuration; start it anew instead")
            run_id, draw, exists = rows[0][0], int(rows[0][1]), True
        else:
            run_id, draw, exists = _find_run(con, plan, fresh)
        with _REGISTRY_LOCK:
            existing = _REGISTRY.get(run_id)
            if existing is not None and not existing.done:
                return existing
        run_json = store.canonical_json({
            "config": plan.config_dict, "model": spec, "base_url": plan.base_url, "params": plan.params.to_dict(),
            "limit": limit, "draw": draw, "owner": owner_tag(), "concurrency": concurrency,
            "max_attempts": max_attempts, "call_timeout": call_timeout, "rpm": rpm, "tpm": tpm,
        })
        if exists:
            con.execute("UPDATE runs SET status = 'running', run_json = ?, updated_at = ? WHERE run_id = ?",
                        [run_json, store.now_utc(), run_id])
        else:
            con.execute(
                """INSERT INTO runs (run_id, run_key, draw, created_at, updated_at, task, name, config_json, run_json,
                   model, base_url, params_json, status, n_items, n_done, n_failed, n_cached, cost_usd, source,
                   schema_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', NULL, 0, 0, 0, 0, ?, ?)""",
                [run_id, plan.run_key, draw, store.now_utc(), store.now_utc(), plan.task_name,
                 name or f"{plan.task_name} · {spec}", store.canonical_json(plan.config_dict), run_json, spec,
                 plan.base_url, store.canonical_json(plan.params.to_dict()), source, store.SCHEMA_VERSION])

    handle = RunHandle(run_id)
    handle._update(status="running")
    with _REGISTRY_LOCK:
        _REGISTRY[run_id] = handle
    executor = _Executor(plan, model_obj, handle, run_id=run_id, draw=draw, db_path=db_path,
                         concurrency=concurrency, rpm=rpm, tpm=tpm, max_attempts=max_attempts,
                         call_timeout=call_timeout, on_progress=on_progress, fresh=fresh, api_key=api_key,
                         preparing=preparing)
    thread = threading.Thread(target=executor.thread_main, name=f"run-{run_id}", daemon=True)
    handle._thread = thread
    thread.start()
    return handle


def resume_run(run_id: str, *, api_key=None, db_path=None, concurrency=None, on_progress=None,
               source: str = "app") -> RunHandle:
    """Continue a stored run exactly as it was started (config, model, params, base URL, limit and draw, from its
    run_json): finished items are kept, failed and missing ones are called. Raises UserError for an unknown or
    imported run. ``api_key`` is only needed for cloud models and is never stored."""
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
                  limit=spec.get("limit"), rpm=spec.get("rpm"), tpm=spec.get("tpm"),
                  max_attempts=spec.get("max_attempts") or 6, call_timeout=spec.get("call_timeout") or 120.0,
                  source=source, on_progress=on_progress, _run_id=run_id)
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
        except Exception:
            pass   # only a head start; the first real call reports any real problem

    thread = threading.Thread(target=go, name="model-prepare", daemon=True)
    thread.start()
    return thread


class _JournalWriter:
    """Group commit: records queued by workers are written and fsynced together; ``commit`` returns when durable."""

    def __init__(self, journal: Journal, ready: asyncio.Future | None = None):
        self.journal = journal
        self.ready = ready    # awaited before the first append (the run's items must be in the DB first)
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
                    if self.ready is not None:
                        await asyncio.shield(self.ready)
                    # in a thread: the loop keeps serving the calls in flight meanwhile (slots are pipelined, so
                    # the fsync latency is off the critical path)
                    await asyncio.to_thread(self.journal.append, [r for r, _ in batch])
                except Exception as exc:  # disk full etc.: the calls are not durable → not finished
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
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


class _Executor:
    def __init__(self, plan: _Plan, model, handle: RunHandle, *, run_id, draw, db_path, concurrency, rpm, tpm,
                 max_attempts, call_timeout, on_progress, fresh, api_key, preparing=None):
        self.plan, self.model, self.handle = plan, model, handle
        self.preparing: threading.Thread | None = preparing
        self._items_missing: list[dict] | None = None   # the run's items, until their rows are in the DB
        self._left: int | None = None                    # calls not yet taken by a worker
        self._drained: asyncio.Event | None = None       # set when the last call has been taken
        self.run_id, self.draw, self.db_path = run_id, draw, db_path
        self.concurrency, self.max_attempts, self.call_timeout = concurrency, max_attempts, call_timeout
        self.limiter = RateLimiter(rpm, tpm)
        self.on_progress = on_progress
        self.fresh = fresh
        self._secret = api_key  # only to redact it from unexpected error messages; never stored
        self.params_dict = plan.params.to_dict()
        self.params_json = store.canonical_json(self.params_dict)
        self.pause_until = 0.0
        self._last_emit = 0.0
        self._tasks: list[asyncio.Task] = []
        self._commits: set[asyncio.Task] = set()

    # -- thread / loop
    def thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        self.handle._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 — reported on the handle, never a silent death
            msg = redact(f"{type(exc).__name__}: {exc}" if not isinstance(exc, UserError) else str(exc), self._secret)
            self.handle._update(status="error", error=msg)
            try:
                store.set_run_status(self.db_path, self.run_id, "error", finished=True)
            except Exception:
                pass
            self._emit(force=True)
        finally:
            try:
                aclose = getattr(self.model, "aclose", None)
                if callable(aclose):
                    loop.run_until_complete(aclose())
            except Exception:
                pass
            self.handle._loop = None
            loop.close()
            self.handle._finished.set()

    def _emit(self, force: bool = False) -> None:
        if self.on_progress is None:
            return
        now = time.monotonic()
        if not force and now - self._last_emit < PROGRESS_EVERY:
            return
        self._last_emit = now
        try:
            self.on_progress(self.handle.progress())
        except Exception:
            pass  # a broken UI callback must not kill the run

    async def _insert_items_during_first_wave(self, item: dict | None) -> None:
        """Insert the run's items if missing, and warm the scorer up (its lazy imports; scoring an empty reply is
        pure and cheap) — in a thread, once the workers have sent the first calls, so the event loop is idle
        waiting for the model meanwhile instead of running this before the first call."""
        if item is not None:   # calls to make: let the workers send them first
            await asyncio.sleep(FIRST_WAVE_HEAD_START)

        def do():
            try:
                if item is not None:
                    self.plan.task.score(item, "")
            except Exception:
                pass   # a warm-up only saves time; the real scoring reports any real problem
            if self._items_missing is not None:
                with store.connect(self.db_path) as con, store.transaction(con):
                    store.insert_items(con, self.run_id, self._items_missing)
                self._items_missing = None

        await asyncio.to_thread(do)

    def _key(self, prompt: str) -> str:
        return store.cache_key(self.plan.model_spec, self.plan.base_url, self.params_dict, prompt, self.draw)

    # -- scoring
    def _result_rows(self, items: list[dict], key: str, text: str, attempts: int, cached: bool) -> list[dict]:
        rows = []
        at = store.now_utc()
        for it in items:
            row = {"run_id": self.run_id, "idx": it["idx"], "cache_key": key, "attempts": attempts,
                   "cached": cached, "at": at, "error": None}
            try:
                score = self.plan.task.score(it, text)
            except Exception as exc:  # a scoring bug must not lose the call: it stays cached, re-scored next run
                row["error"] = f"scoring failed: {type(exc).__name__}: {exc}"[:500]
            else:
                for k, v in score.items():
                    if k == "parsed" and v is not None and not isinstance(v, str):
                        v = store.canonical_json(v)
                    row[k] = v
            rows.append(row)
        return rows

    def _failure_rows(self, items: list[dict], key: str, reason: str, attempts: int) -> list[dict]:
        at = store.now_utc()
        return [{"run_id": self.run_id, "idx": it["idx"], "cache_key": None, "error": reason[:1000],
                 "attempts": attempts, "cached": False, "at": at} for it in items]

    # -- main
    async def _main(self) -> None:
        h = self.handle
        loop = asyncio.get_running_loop()
        h._on_cancel = self._cancel_tasks
        if h.cancelled:
            self._cancel_tasks()
        plan = self.plan
        items = await asyncio.to_thread(_items, plan)
        by_idx = {it["idx"]: it for it in items}
        keys = {it["idx"]: self._key(it["prompt"]) for it in items}

        def setup():
            with store.connect(self.db_path) as con:
                with store.transaction(con):
                    _, recovered = recover_into(con, self.db_path)   # journals of dead processes first
                    out = setup_in(con)
                delete_journals(recovered)   # only after the COMMIT
            return out

        def setup_in(con):
            have = con.execute("SELECT count(*) FROM items WHERE run_id = ?", [self.run_id]).fetchall()[0][0]
            if have < len(items):
                self._items_missing = items   # inserted with the cached answers, or while the first calls fly
            con.execute("UPDATE runs SET n_items = ?, status = 'running', updated_at = ? WHERE run_id = ?",
                        [len(items), store.now_utc(), self.run_id])
            done_rows = con.execute(
                """SELECT r.idx, r.correct, coalesce(r.cached, false),
                          CASE WHEN coalesce(r.cached, false) THEN 0 ELSE coalesce(c.cost_usd, 0) END
                   FROM results r LEFT JOIN calls c USING (cache_key)
                   WHERE r.run_id = ? AND r.error IS NULL""", [self.run_id]).fetchall()
            done = {r[0] for r in done_rows}
            pending_keys = {keys[i] for i in by_idx if i not in done}
            cached = store.lookup_calls(con, pending_keys)
            return done_rows, done, cached

        done_rows, done, cached = await asyncio.to_thread(setup)
        if self.preparing is not None:   # the model's one-off costs (started by start_run): before the first call
            await asyncio.to_thread(self.preparing.join)
        prog = dict(total=len(items), done=len(done_rows), correct=sum(1 for r in done_rows if r[1]),
                    cached=sum(1 for r in done_rows if r[2]), cost_usd=float(sum(r[3] for r in done_rows)))
        h._update(**prog)
        self._emit(force=True)

        # answers already in the cache: score them and store in one transaction
        groups: dict[str, list[dict]] = {}
        for it in items:
            if it["idx"] in done:
                continue
            groups.setdefault(keys[it["idx"]], []).append(it)
        cached_rows = []
        for key in [k for k in groups if k in cached]:
            cached_rows += self._result_rows(groups.pop(key), key, cached[key]["response"], 0, True)
        if cached_rows:
            def write_cached():
                with store.connect(self.db_path) as con, store.transaction(con):
                    if self._items_missing is not None:
                        store.insert_items(con, self.run_id, self._items_missing)
                    store.write_calls_results(con, [], cached_rows)
                    store.refresh_run_counts(con, self.run_id)
                self._items_missing = None
            await asyncio.to_thread(write_cached)
            ok = [r for r in cached_rows if r.get("error") is None]
            p = h.progress()
            h._update(done=p.done + len(ok), cached=p.cached + len(ok),
                      correct=p.correct + sum(1 for r in ok if r.get("correct")))
            self._emit(force=True)

        # the calls still to make. The items' rows (if missing) and the scorer's warm-up are done in a thread while
        # the first wave of calls is at the model; no call is journalled (so none is reported or merged) before
        # the items are in the DB, so the DB never holds results of items it does not have.
        journal = Journal(store.journal_dir(self.db_path), self.run_id)
        first = next(iter(groups.values()))[0] if groups else None
        items_ready = loop.create_task(self._insert_items_during_first_wave(first))
        writer = _JournalWriter(journal, ready=items_ready)
        work = iter(list(groups.items()))
        self._left, self._drained = len(groups), asyncio.Event()
        if not groups:
            self._drained.set()
        stop_merging = asyncio.Event()
        merger = loop.create_task(self._merge_loop(writer, stop_merging))
        h._update(calls_started_at=time.time())
        self._tasks = [loop.create_task(self._worker(work, writer)) for _ in range(min(self.concurrency, len(groups)))]
        if h.cancelled:
            self._cancel_tasks()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*list(self._commits), return_exceptions=True)
        await writer.close()
        stop_merging.set()
        self._drained.set()   # wakes the merge loop if it still waits for the drain (cancelled, failed workers)
        await merger
        await items_ready   # re-raises a failed insert: the run ends with status 'error', its calls stay cached

        p = h.progress()
        status = "cancelled" if h.cancelled else ("done" if p.failed == 0 and p.done >= p.total else "incomplete")
        # the last records and the run's final counts/status in one transaction (one DB open, not two)
        counts = await self._merge(writer, final=True, status=status)
        journal.close(delete=counts is not None)
        if counts is not None:
            h._update(done=counts["n_done"], failed=counts["n_failed"], correct=counts["n_correct"],
                      cost_usd=float(counts["cost_usd"] or 0.0))
        h._update(status=status, in_flight=0)
        self._emit(force=True)

    def _cancel_tasks(self) -> None:
        for t in self._tasks:
            t.cancel()

    async def _merge_loop(self, writer: _JournalWriter, stop: asyncio.Event) -> None:
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

    async def _merge(self, writer: _JournalWriter, final: bool, status: str | None = None):
        """Move durable journal records into DuckDB and refresh the run's counts (``final``: also set ``status`` and
        finished_at). Returns the run's counts when nothing is left unmerged, else None."""
        records, writer.committed = writer.committed, []
        if not records and not final:
            return {}

        def do():
            with store.connect(self.db_path, timeout=60.0 if final else 2.0) as con, store.transaction(con):
                if records:
                    merge_records(con, [dict(r) for r in records])
                return store.refresh_run_counts(con, self.run_id, status=status, finished=final)

        import duckdb

        for attempt in range(5 if final else 1):
            try:
                return await asyncio.to_thread(do)
            except (store.DatabaseBusy, duckdb.TransactionException, duckdb.IOException):
                # busy file or a write conflict with another thread: the records are safe in the journal
                await asyncio.sleep(0.2 * (attempt + 1) if final else 0)
        writer.committed[:0] = records  # try again at the next merge (or recover_journals() later)
        return None

    async def _worker(self, work: Iterator, writer: _JournalWriter) -> None:
        """One concurrency slot. Pipelined: while call k+1 is at the model, call k's journal record is being
        fsynced; call k+1 is not reported before call k is durable. So per slot at most two calls are "sent but not
        durable" (one at the model, one in the group commit) — after a kill -9 at most 2 × concurrency calls can be
        sent again, in practice the ones at the model plus the few of the last group commit."""
        h = self.handle
        pending: asyncio.Task | None = None
        try:
            for key, items in work:
                if h.cancelled:
                    break
                if self._left is not None:
                    self._left -= 1
                    if self._left == 0:
                        self._drained.set()   # the last call is being sent
                with h._lock:
                    h._progress.in_flight += 1
                try:
                    record, ok, _, cost = await self._call(key, items)
                finally:
                    with h._lock:
                        h._progress.in_flight -= 1
                if pending is not None:
                    await asyncio.shield(pending)
                pending = asyncio.ensure_future(self._commit(writer, record, ok, cost, len(items)))
                self._commits.add(pending)
                pending.add_done_callback(self._commits.discard)
            if pending is not None:
                await asyncio.shield(pending)
        except asyncio.CancelledError:
            return

    async def _commit(self, writer: _JournalWriter, record: dict, ok: bool, cost, n_items: int) -> None:
        await writer.commit(record)   # durable (fsynced) before it counts
        h = self.handle
        with h._lock:
            p = h._progress
            if ok:
                good = [r for r in record["results"] if r.get("error") is None]
                p.done += len(good)
                p.failed += len(record["results"]) - len(good)
                p.correct += sum(1 for r in good if r.get("correct"))
                p.calls += 1
                p.cost_usd += cost or 0.0
            else:
                p.failed += n_items
        self._emit()

    async def _call(self, key: str, items: list[dict]) -> tuple[dict, bool, int, float | None]:
        """One distinct prompt: call with retries. Returns (journal record, success, attempts, cost)."""
        item = items[0]
        prompt = item["prompt"]
        request = Request(prompt=prompt, params=self.plan.params, item=item, task=self.plan.task_name)
        est_tokens = _estimate_in_tokens(prompt) + _estimate_out_tokens(item, self.plan.params)
        reason = "not attempted"
        for attempt in range(1, self.max_attempts + 1):
            wait = self.pause_until - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await self.limiter.acquire(est_tokens)
            try:
                async with asyncio.timeout(self.call_timeout):   # cheaper than wait_for (no extra task)
                    completion: Completion = await self.model.complete(request)
                if completion is None or completion.text is None:
                    raise RetryableError("empty reply")
            except (RetryableError, asyncio.TimeoutError) as exc:
                if isinstance(exc, asyncio.TimeoutError):
                    exc = RetryableError(f"timeout after {self.call_timeout:g} s")
                reason = redact(str(exc), self._secret)
                if attempt == self.max_attempts:
                    break
                delay = random.uniform(0, min(MAX_BACKOFF, BASE_BACKOFF * 2 ** (attempt - 1)))
                if exc.retry_after is not None:
                    delay = max(delay, exc.retry_after)
                    self.pause_until = max(self.pause_until, time.monotonic() + exc.retry_after)
                with self.handle._lock:
                    self.handle._progress.retries += 1
                await asyncio.sleep(delay)
                continue
            except ModelError as exc:
                reason = redact(str(exc), self._secret)
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an unexpected bug in a provider: record it, do not retry blindly
                reason = redact(f"{type(exc).__name__}: {exc}", self._secret)
                break
            else:
                tokens_real = None
                if completion.tokens_in is not None and completion.tokens_out is not None:
                    tokens_real = completion.tokens_in + completion.tokens_out
                self.limiter.settle(est_tokens, tokens_real)
                call = {
                    "cache_key": key, "model": self.plan.model_spec, "base_url": self.plan.base_url,
                    "params_json": self.params_json, "prompt_sha": store.sha256(prompt), "draw": self.draw,
                    "response": completion.text, "latency_ms": completion.latency_ms,
                    "tokens_in": completion.tokens_in, "tokens_out": completion.tokens_out,
                    "cost_usd": completion.cost_usd, "finish_reason": completion.finish_reason,
                    "dropped_params": store.canonical_json(list(completion.dropped_params or ())),
                    "error": None, "attempts": attempt, "at": store.now_utc(),
                }
                results = self._result_rows(items, key, completion.text, attempt, False)
                return {"calls": [call], "results": results}, True, attempt, completion.cost_usd
        return {"calls": [], "results": self._failure_rows(items, key, reason, attempt)}, False, attempt, None


Iterator = Iterable  # typing alias used above (kept local to avoid importing typing.Iterator twice)

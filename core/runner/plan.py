"""What a run is before it runs: the validated task config, model, parameters and limit behind a stable run
key; which stored run it continues; its items; its estimate (calls still to make, tokens, cost); its progress record."""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from core import store
from core.config import RunOptions, run_spec
from core.errors import UserError
from core.models.params import SamplingParams
from core.tasks.base import stable_id

CHARS_PER_TOKEN = 4.0          # token estimate from prompt length (English text, BPE tokenisers)


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
    waiting: int = 0        # items whose prompt sits in a provider batch not yet collected
    batches: dict = field(default_factory=dict)   # batch runs: provider status (or our phase) → number of batches
    status: str = "pending"  # pending | running | waiting (on provider batches) | done | incomplete | cancelled | error
    started_at: float = field(default_factory=time.time)
    calls_started_at: float | None = None   # when the first model call was sent (after setup and cache lookup)
    elapsed: float = 0.0
    error: str | None = None
    # the strict verdict (the SetLexSem reference's answer rule) as stored: correct answers among the items it
    # scored, from the run's counts when its last results were merged (None before that, or when they were not)
    correct_strict: int | None = None
    scored_strict: int | None = None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.done if self.done else None

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.failed)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "incomplete", "cancelled", "error", "waiting")

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
class Plan:
    task: Any
    task_name: str
    cfg: Any
    config_dict: dict
    model_spec: str
    base_url: str | None
    params: SamplingParams          # the run's parameters (stop sequences resolved); what runs.params_json holds
    limit: int | None
    run_key: str
    name: str | None
    source: str
    limit_pick: str = "spread"      # how ``limit`` picks its items: "spread" over the grid, or "first" (older runs)
    # item index -> (the run's parameters, the item's): the cache key and the call both ask. A dict, not an
    # lru_cache: the item (a dict) is not hashable, and the memo lives and dies with the plan
    _item_params: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def params_for(self, item: dict) -> SamplingParams:
        """The parameters of ``item``'s call: the run's, with the reply cap of an answer-only item (``answer_cap``)
        and the item's own reasoning effort when the config crosses it (the ``reasoning`` factor)."""
        p = self.params
        effort = item.get("reasoning")
        if not p.answer_cap and (effort is None or effort == p.reasoning_effort):
            return p
        idx = item.get("idx")
        memo = self._item_params
        got = memo.get(idx)
        if got is not None and got[0] is p:
            return got[1]
        cap = self.task.reply_cap(self.cfg, item) if p.answer_cap else None
        if cap is not None and cap >= p.max_tokens:
            cap = None
        variant = (cap, effort if effort is not None else p.reasoning_effort)
        out = p if variant == (None, p.reasoning_effort) else _variant(p, *variant)
        if idx is not None:
            memo[idx] = (p, out)
        return out

    def params_json(self, params: SamplingParams) -> str:
        """``canonical_json(params.to_dict())``, written once per distinct parameters (a call record holds it)."""
        return params_json(params)

    def start_items(self) -> None:
        """Start generating the run's items in a thread; the next ``take_items`` returns them."""
        pending: Future = Future()

        def generate():
            try:
                pending.set_result(self._generate_items())
            except BaseException as exc:  # noqa: BLE001 — handed to the caller of take_items
                pending.set_exception(exc)

        self.__dict__["_items_pending"] = pending   # present only while items are being generated ahead
        threading.Thread(target=generate, name="plan-items", daemon=True).start()

    def take_items(self) -> list[dict]:
        """The run's items: those ``start_items`` is generating (taken once), else generated now."""
        pending = self.__dict__.pop("_items_pending", None)
        if pending is not None:
            return pending.result()
        return self._generate_items()

    def _generate_items(self) -> list[dict]:
        from core.tasks import in_run_order, select_items

        return in_run_order(self.task, self.cfg, list(select_items(self.task, self.cfg, self.limit, self.limit_pick)))

    def shape_for(self, item: dict):
        """The answer's form for a constrained call (None for answer format "free")."""
        if self.params.answer_format not in ("constrained", "members"):
            return None
        from core.models.base import AnswerShape

        return AnswerShape(**self.task.answer_grammar(self.cfg, item, members=self.params.answer_format == "members"))


@functools.lru_cache(maxsize=256)
def _variant(params: SamplingParams, cap: int | None, effort: str) -> SamplingParams:
    """``params`` with an item's own reply cap and reasoning effort: one object per variant, not per item."""
    return params.replace(max_tokens=int(cap) if cap is not None else params.max_tokens, reasoning_effort=effort)


@functools.lru_cache(maxsize=256)
def params_json(params: SamplingParams) -> str:
    """``canonical_json(params.to_dict())``, once per distinct parameters."""
    return store.canonical_json(params.to_dict())


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


def make_plan(config: dict, model_spec: str, params, base_url, limit, name, source, limit_pick: str = "spread"
              ) -> Plan:
    """Validate through core.config (the one path every entry point takes) and key the run."""
    spec = run_spec(config)
    cfg_dict = spec.config_dict()
    if isinstance(params, SamplingParams):
        sampling = params
    else:
        sampling = SamplingParams.from_dict({**spec.params, **(params or {})})
    if sampling.stop is None:   # "the task's own" stop sequences, recorded as such with the run
        sampling = sampling.replace(stop=tuple(spec.task_module.STOP))
    RunOptions(limit=limit).checked()
    if limit_pick not in ("spread", "first"):
        raise ValueError(f"limit_pick must be 'spread' or 'first', got {limit_pick!r}")
    base_url = _clean_base_url(base_url)
    # a limited run picks its items by spreading them over the grid; runs stored before that picked the first N
    # (limit_pick "first", kept in their run_json) and keep their key, so they resume as they were
    limit_key = limit if limit is None or limit_pick == "first" else {"n": limit, "pick": "spread"}
    key = {"config": cfg_dict, "model": model_spec, "base_url": base_url, "params": sampling.to_dict(),
           "limit": limit_key}
    generator = getattr(spec.task_module, "GENERATOR_VERSION", None)
    if generator is not None:   # a run stored by an older generator is never continued with other items
        key["generator"] = generator
    run_key = stable_id(key, n=16)
    return Plan(spec.task_module, spec.task, spec.config, cfg_dict, model_spec, base_url, sampling, limit, run_key,
                 name, source, limit_pick)


def run_items(plan: Plan) -> list[dict]:
    """The run's items: all of them, or ``limit`` of them spread over the grid (``core.tasks.select_items``) — the
    ones ``prefetch_items`` is generating, if it was called (generated once either way)."""
    return plan.take_items()


def prefetch_items(plan: Plan) -> None:
    """Start generating the run's items in a thread, so that registering the run in the DB (which waits on DuckDB
    much of the time) overlaps it; the next ``run_items(plan)`` takes them. A generation error is raised there, as
    without the prefetch."""
    plan.start_items()


def find_run(con, plan: Plan, fresh: bool) -> tuple[str, int, bool]:
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


def register_run(con, plan: Plan, run_id: str, draw: int, exists: bool, run_json: str,
                 status: str = "running") -> None:
    """Insert the run's row, or mark an existing one ``status`` with its new run_json (caller's transaction)."""
    if exists:
        store.update_run(con, run_id, status=status, run_json=run_json)
        return
    store.insert_run(
        con, run_id=run_id, run_key=plan.run_key, draw=draw, task=plan.task_name,
        name=plan.name or f"{plan.task_name} · {plan.model_spec}", config_json=store.canonical_json(plan.config_dict),
        run_json=run_json, model=plan.model_spec, base_url=plan.base_url,
        params_json=store.canonical_json(plan.params.to_dict()), status=status, source=plan.source)


def estimate_out_tokens(item: dict, params: SamplingParams) -> int:
    truth = item.get("truth")
    return int(min(params.max_tokens, len(json.dumps(truth, default=str)) / CHARS_PER_TOKEN * 1.5 + 16))


def estimate_in_tokens(prompt: str) -> int:
    return int(len(prompt) / CHARS_PER_TOKEN) + 1


def result_rows(task, run_id: str, items: list[dict], key: str, text: str, attempts: int, cached: bool
                ) -> list[dict]:
    """Scored result rows of the items answered by one response (a scoring bug is recorded, never raised: the call
    stays cached and is re-scored by the next run)."""
    rows = []
    at = store.now_utc()
    for it in items:
        row = {"run_id": run_id, "idx": it["idx"], "cache_key": key, "attempts": attempts, "cached": cached,
               "at": at, "error": None}
        try:
            score = task.score(it, text)
        except Exception as exc:
            row["error"] = f"scoring failed: {type(exc).__name__}: {exc}"[:500]
        else:
            for k, v in score.items():
                if k == "parsed" and v is not None and not isinstance(v, str):
                    v = store.canonical_json(v)
                row[k] = v
        rows.append(row)
    return rows


def failure_rows(run_id: str, items: list[dict], reason: str, attempts: int) -> list[dict]:
    at = store.now_utc()
    return [{"run_id": run_id, "idx": it["idx"], "cache_key": None, "error": reason[:1000], "attempts": attempts,
             "cached": False, "at": at} for it in items]


# ----------------------------------------------------------------------------------------------------------- estimate


def call_key(plan: Plan, item: dict, draw: int) -> str:
    """The cache key of ``item``'s call in this run (its own parameters: a reply cap may be the item's)."""
    return _cache_keys(plan.model_spec, plan.base_url, plan.params_for(item))(item["prompt"], draw)


@functools.lru_cache(maxsize=256)
def _cache_keys(model_spec: str, base_url: str | None, params: SamplingParams):
    """One ``CacheKeys`` per distinct (model, base URL, parameters): a run has one per reply cap."""
    from core.store.cache import CacheKeys

    return CacheKeys(model_spec, base_url, params.to_dict())


def estimate(config: dict, model, *, params=None, base_url=None, db_path=None, fresh=False, limit=None,
             batch: bool = False) -> Estimate:
    """Counts, tokens and cost of running ``config`` on ``model`` now (cached calls and finished items subtracted);
    ``batch``: at the provider's batch price (half the list price; ``core.models.pricing.BATCH_DISCOUNT``)."""
    spec = model if isinstance(model, str) else model.spec
    if batch:
        from core.models.batch import supports_batch

        if not supports_batch(spec):
            raise UserError(f"batch prices are for openai/ and anthropic/ models, not {spec}")
    plan = make_plan(config, spec, params, base_url, limit, None, "estimate")
    items = run_items(plan)
    with store.connect(db_path) as con:
        run_id, draw, exists = find_run(con, plan, fresh)
        done = set()
        if exists:
            done = {r[0] for r in con.execute(
                "SELECT idx FROM results WHERE run_id = ? AND error IS NULL", [run_id]).fetchall()}
        pending = [it for it in items if it["idx"] not in done]
        keys = {call_key(plan, it, draw): it for it in pending}
        cached = store.lookup_calls(con, keys) if not fresh else {}
    to_call = {k: it for k, it in keys.items() if k not in cached}
    n_cached = len(items) - sum(1 for it in pending if call_key(plan, it, draw) in to_call)
    tin = sum(estimate_in_tokens(it["prompt"]) for it in to_call.values())
    tout = sum(estimate_out_tokens(it, plan.params_for(it)) for it in to_call.values())
    cost = None
    try:
        from core.models import estimate_cost

        cost = estimate_cost(spec, tin, tout, batch=batch)
    except ImportError:
        pass
    return Estimate(len(items), n_cached, len(to_call), tin, tout, cost, run_id)

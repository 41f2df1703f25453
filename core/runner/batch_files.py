"""Runs beyond this machine through files in the OpenAI batch format: ``export_batch`` writes a run's uncached
prompts as requests (``vllm run-batch -i requests.jsonl -o results.jsonl --model M`` runs them on any GPU box, Ray
Data shards the same file across nodes; an ``openai/`` export can be uploaded to OpenAI by hand), and
``import_batch`` scores and stores the results file — vLLM's, or OpenAI's own output and error files — as a run.

``custom_id`` is the prompt's cache key under (model spec, no base URL, sampling parameters, draw), so the results
map back to their items exactly, a results file for another config, model or parameters matches nothing (and is
refused), and importing the same file twice changes nothing. With a base URL (the Ray engine's HTTP path, ``ray_run``) the
keys, the request bodies and the run are the live runner's own (``plan.call_key``: the base URL and each item's
reply cap in the key), so either engine continues the other's run from the cache. Sampling parameters go into every request body —
``top_k`` and the run's stop sequences included for ``openai-compatible/`` and ``vllm/`` (vLLM honours them); an
``openai/`` export takes OpenAI's rules (no ``top_k``; ``max_completion_tokens``).
"""

from __future__ import annotations

import os
from pathlib import Path

from core import store
from core.errors import ImportFileError, UserError
from core.files import check_output_path
from core.models.batch.jsonl import MAX_LINE, dumps, parse_lines, request_line
from core.models.pricing import estimate_cost
from core.models.reasoning import (
    active as reasoning_active,
    budget,
    changed,
    openai_level,
    openai_value,
    reasoning_cost,
    sent_for,
    template_switch,
    thinks,
)
from core.runner.plan import call_key, failure_rows, find_run, make_plan, register_run, result_rows, run_items
from core.store import claims
from core.store.journal import owner_tag

FILE_PROVIDERS = ("openai-compatible", "openai", "vllm")
CHUNK = 5000            # result rows per transaction while importing


def request_body(spec: str, params) -> tuple[dict, list[str]]:
    """The sampling part of each request body for ``spec`` and the parameters left out of it."""
    from core.models import get_model
    from core.models.registry import parse_spec

    provider, _ = parse_spec(spec)
    if provider not in FILE_PROVIDERS:
        raise UserError(f"batch files are in the OpenAI batch format, for openai-compatible/<model> or vllm/<model> "
                        f"(vLLM) or openai/<model>; not {spec} (anthropic/ models: run --batch)")
    if provider == "openai":
        return get_model(spec).request_body(params)
    body = {k: v for k, v in (("temperature", params.temperature), ("top_p", params.top_p),
                              ("top_k", params.top_k), ("max_tokens", params.max_tokens), ("seed", params.seed))
            if v is not None}
    dropped: list[str] = []
    if params.stop:   # the run's stop sequences (as the live server gets them; none while the model thinks)
        if thinks(params):
            dropped.append("stop")
        else:
            body["stop"] = list(params.stop)
    if reasoning_active(params):   # as the live openai-compatible path sends it (core/models/reasoning.py)
        off = params.reasoning_effort == "off"   # said by the chat-template switch alone
        level = None if off else openai_level(params.reasoning_effort, "openai-compatible")
        if level is not None:
            body["reasoning_effort"] = openai_value(level, "openai-compatible")
        if not off:   # a level the table lacks goes as the nearest, recorded
            dropped.extend(changed(params.reasoning_effort, level))
        body["chat_template_kwargs"] = template_switch(params)
        body["max_tokens"] = params.max_tokens + budget(level or params.reasoning_effort)
    return body, dropped


def prepare_file_run(config: dict, model: str, params, limit, name=None, source="export-batch", base_url=None):
    plan = make_plan(config, model, params, base_url, limit, name, source)
    if getattr(plan.cfg, "reasoning", None):
        raise UserError("batch files carry one reasoning effort for every request: give it with --reasoning-effort "
                        "and leave 'reasoning' out of the config (or run the grid live or with --batch)")
    body, dropped = request_body(plan.model_spec, plan.params)
    return plan, body, dropped


def item_key(plan, item: dict, draw: int, params_dict: dict) -> str:
    """The cache key of ``item``'s call: the live runner's (``call_key``) for a run with a base URL, else the batch
    file's (no base URL, the run's parameters)."""
    if plan.base_url is not None:
        return call_key(plan, item, draw)
    return store.cache_key(plan.model_spec, None, params_dict, item["prompt"], draw)


def item_params(plan, item: dict):
    """The sampling parameters of ``item``'s call (its own reply cap in a run with a base URL)."""
    return plan.params_for(item) if plan.base_url is not None else plan.params


def batch_run_id(config: dict, model: str, *, params=None, limit=None, db_path=None) -> str:
    """The run id ``export_batch`` and ``import_batch`` use for (config, model, params, limit); raises for bad input."""
    plan, _, _ = prepare_file_run(config, model, params, limit)
    with store.connect(db_path) as con:
        return find_run(con, plan, False)[0]


def shard_paths(out: Path, shards: int) -> list[Path]:
    """The files of a sharded export: requests-00001-of-00004.jsonl … (one file, ``out`` itself, when shards is 1)."""
    if shards <= 1:
        return [out]
    return [out.with_name(f"{out.stem}-{i + 1:05d}-of-{shards:05d}{out.suffix}") for i in range(shards)]


def export_batch(config: dict, model: str, out_path, *, params=None, limit=None, db_path=None,
                 shards: int = 1) -> dict:
    """Write the prompts of (config, model, params) that are neither answered in the run nor in the cache as OpenAI
    batch requests, one per distinct prompt — in ``shards`` files of near-equal size (consecutive requests; one
    ``vllm run-batch`` or Ray task each). Returns counts: items, cached (already answered), requests, and files."""
    out = check_output_path(out_path, (".jsonl",), flag="--out")
    plan, body, _ = prepare_file_run(config, model, params, limit)
    if plan.params.answer_format != "free":   # a request line carries no grammar: the run would claim one it lacks
        raise UserError(f"batch files (and --engine ray) send free-form requests; answer format "
                        f"{plan.params.answer_format!r} is for live runs")
    items = run_items(plan)
    params_dict = plan.params.to_dict()
    with store.connect(db_path) as con:
        run_id, draw, exists = find_run(con, plan, False)
        done = _answered(con, run_id) if exists else set()
        keys: dict[str, str] = {}
        for it in items:
            if it["idx"] not in done:
                keys.setdefault(store.cache_key(plan.model_spec, None, params_dict, it["prompt"], draw), it["prompt"])
        cached = store.lookup_calls(con, keys)
    name = plan.model_spec.split("/", 1)[1]
    todo = [(key, prompt) for key, prompt in keys.items() if key not in cached]
    paths = shard_paths(out, max(1, int(shards)))
    per = -(-len(todo) // len(paths)) if todo else 0
    for i, path in enumerate(paths):
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.writelines(dumps(request_line(key, name, prompt, body))
                              for key, prompt in todo[i * per:(i + 1) * per])
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return {"run_id": run_id, "items": len(items), "answered": len(items) - sum(
        1 for it in items if it["idx"] not in done), "cached": len(cached), "requests": len(todo),
        "files": [str(p) for p in paths]}


def _lines(path: Path):
    name = path.name
    if not path.exists():
        raise ImportFileError(f"{name}: file not found")
    if path.is_dir():
        raise ImportFileError(f"{name}: is a directory, not a file")
    try:
        with open(path, "rb") as fh:
            while line := fh.readline(MAX_LINE + 1):   # a 2 GB line is refused after MAX_LINE bytes, not read whole
                yield line
                if len(line) > MAX_LINE:
                    return
    except OSError as exc:
        raise ImportFileError(f"{name}: cannot read the file ({exc.strerror or exc})") from None


def import_batch(paths, config: dict, model: str, *, params=None, limit=None, db_path=None, name=None) -> dict:
    """Score and store a batch results file (or several: OpenAI's output and error files) as the run of (config,
    model, params): each line's custom_id is matched to the items of that prompt; a line that did not succeed
    records its items as failed (unless already answered). ImportFileError — and nothing written — when no line
    matches. Returns counts: matched, answered, failed, unmatched (lines for no item of this run), and the run id."""
    paths = [Path(p).expanduser() for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not paths:
        raise UserError("no results file given")
    label = paths[0].name if len(paths) == 1 else f"{len(paths)} files"
    return BatchImporter(config, model, params=params, limit=limit, db_path=db_path, name=name,
                         source=f"import-batch:{label}").import_files(paths)


class BatchImporter:
    """``import_batch`` with its preparation — the run's plan, items, cache keys and run id — done once, then any
    number of results files imported into the run: the Ray engine imports each block through one, so a block costs
    its own lines, not the whole run again (the items go in with the first rows only)."""

    def __init__(self, config: dict, model: str, *, params=None, limit=None, db_path=None, name=None,
                 source: str = "import-batch"):
        plan, _, dropped = prepare_file_run(config, model, params, limit, name, source[:300])
        items = run_items(plan)
        with store.connect(db_path) as con:
            run_id, draw, exists = find_run(con, plan, False)
        self._setup(plan, dropped, items, run_id, draw, exists, limit, db_path)

    @classmethod
    def for_run(cls, plan, dropped: list, items: list[dict], run_id: str, draw: int, *, limit=None, db_path=None,
                owner: str | None = None, run_json: str = "") -> "BatchImporter":
        """An importer into a run already registered (the Ray engine's): ``owner``'s claims on the keys of each
        import are released in the transaction that stores their answers."""
        self = cls.__new__(cls)
        self._setup(plan, dropped, items, run_id, draw, True, limit, db_path, owner, run_json)
        return self

    def _setup(self, plan, dropped, items, run_id, draw, exists, limit, db_path, owner=None, run_json=""):
        self.plan, self.dropped, self.items = plan, dropped, items
        self.limit, self.db_path = limit, db_path
        self.params_dict = plan.params.to_dict()
        self.run_id, self.draw = run_id, draw
        self.by_key: dict[str, list[dict]] = {}
        for it in items:
            self.by_key.setdefault(item_key(plan, it, draw, self.params_dict), []).append(it)
        self.writer = _Writer(db_path, plan, run_id, draw, exists, items, run_json, owner=owner)

    def import_files(self, paths, finish: bool = True) -> dict:
        """One import (see ``import_batch``) of ``paths`` into the run (``finish``: then set its final status)."""
        paths = [Path(p).expanduser() for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
        label = paths[0].name if len(paths) == 1 else f"{len(paths)} files"
        plan, run_id, draw, by_key = self.plan, self.run_id, self.draw, self.by_key
        dropped = self.dropped
        # first pass: the whole file is read and checked before anything is written (a bad line changes nothing)
        counts = {"run_id": run_id, "matched": 0, "answered": 0, "failed": 0, "unmatched": 0, "lines": 0}
        for path in paths:
            for out in parse_lines(_lines(path), path.name):
                counts["lines"] += 1
                its = by_key.get(out.custom_id)
                if its is None:
                    counts["unmatched"] += 1
                    continue
                counts["matched"] += 1
                counts["answered" if out.kind == "succeeded" else "failed"] += len(its)
        if counts["matched"] == 0:
            raise ImportFileError(
                f"{label}: none of its {counts['lines']} line(s) matches an item of this config and model (custom_id "
                "is the cache key export-batch wrote: use the same --config, --model, sampling flags and --limit)")

        w = self.writer
        if finish:
            w.run_json = _run_json(plan, self.limit, draw, [p.name for p in paths])
        batch_price = plan.model_spec.startswith("openai/")   # OpenAI's own output files: the batch price

        at = store.now_utc()
        seen: set[str] = set()
        for path in paths:
            for out in parse_lines(_lines(path), path.name):
                its = by_key.get(out.custom_id)
                if its is None:
                    continue
                w.keys.append(out.custom_id)
                if out.kind == "succeeded":
                    if out.custom_id not in seen:
                        seen.add(out.custom_id)
                        w.calls.append({
                            "cache_key": out.custom_id, "model": plan.model_spec, "base_url": plan.base_url,
                            "params_json": store.canonical_json(item_params(plan, its[0]).to_dict()),
                            "prompt_sha": store.sha256(its[0]["prompt"]), "draw": draw, "response": out.text,
                            "latency_ms": None, "tokens_in": out.tokens_in, "tokens_out": out.tokens_out,
                            "cost_usd": estimate_cost(plan.model_spec, out.tokens_in, out.tokens_out,
                                                      batch=batch_price),
                            "finish_reason": out.finish_reason, "dropped_params": store.canonical_json(dropped),
                            "error": None, "attempts": 1, "at": at, "reasoning": out.reasoning,
                            "tokens_reasoning": out.tokens_reasoning,
                            "cost_reasoning_usd": reasoning_cost(plan.model_spec, out.tokens_reasoning,
                                                                 batch=batch_price),
                            "reasoning_sent": sent_for(plan.model_spec, plan.params)})
                    w.results.extend(result_rows(plan.task, run_id, its, out.custom_id, out.text, 1, False))
                else:
                    reason = f"batch file: {out.kind}: {out.error or ''}".strip()
                    w.results.extend(failure_rows(run_id, its, reason, 1))
                if len(w.results) >= CHUNK:
                    w.flush()
        w.flush(final=finish)
        return counts


def import_cached(config: dict, model: str, *, params=None, limit=None, db_path=None, name=None) -> int:
    """Score into the run of (config, model, params) its unanswered items whose prompt the cache answers already (a
    call of another run: a limited one, another config with the same prompts). ``export_batch`` leaves those
    prompts out of the requests, so without this they would never be answered in the run. Returns the number of
    items scored (0: nothing written)."""
    plan, _, _ = prepare_file_run(config, model, params, limit, name, "import-batch:cache")
    items = run_items(plan)
    params_dict = plan.params.to_dict()
    with store.connect(db_path) as con:
        run_id, draw, exists = find_run(con, plan, False)
        done = _answered(con, run_id) if exists else set()
        by_key: dict[str, list[dict]] = {}
        for it in items:
            if it["idx"] not in done:
                by_key.setdefault(store.cache_key(plan.model_spec, None, params_dict, it["prompt"], draw),
                                  []).append(it)
        cached = store.lookup_calls(con, by_key)
    if not cached:
        return 0
    w = _Writer(db_path, plan, run_id, draw, exists, items, _run_json(plan, limit, draw, []))
    for key, call in cached.items():
        w.results.extend(result_rows(plan.task, run_id, by_key[key], key, call["response"], 0, True))
        if len(w.results) >= CHUNK:
            w.flush()
    w.flush(final=True)
    return w.written


class _Writer:
    """The rows of one import into a run, written in chunks of short transactions: the run registered and its items
    inserted with the first chunk (a view never shows results alone), its counts and status refreshed with the
    last."""

    def __init__(self, db_path, plan, run_id: str, draw: int, exists: bool, items: list[dict], run_json: str,
                 owner: str | None = None):
        self.db_path, self.plan, self.run_id, self.draw, self.items, self.run_json = (db_path, plan, run_id, draw,
                                                                                      items, run_json)
        self.registered, self.items_in = exists, False
        self.owner = owner            # whose claims on ``keys`` go with their answers (None: no claims)
        self.calls: list[dict] = []
        self.results: list[dict] = []
        self.keys: list[str] = []     # the keys answered (or failed) by the rows of this chunk
        self.written = 0

    def flush(self, final: bool = False) -> None:
        with store.connect(self.db_path) as con, store.transaction(con):
            if not self.registered:
                register_run(con, self.plan, self.run_id, self.draw, False, self.run_json, status="incomplete")
                self.registered = True
            if not self.items_in:   # the items first (with the first rows): the view never shows results alone
                store.insert_items(con, self.run_id, self.items)
                self.items_in = True
            store.write_calls_results(con, self.calls, self.results)
            if self.owner is not None and self.keys:   # answered or failed for good: an identical run may go on
                claims.release(con, self.keys, self.owner, self.run_id)
            if final:
                store.update_run(con, self.run_id, n_items=len(self.items), run_json=self.run_json)
                c = store.refresh_run_counts(con, self.run_id)
                store.refresh_run_counts(con, self.run_id, finished=True,
                                         status="done" if c["n_done"] >= len(self.items) else "incomplete")
            elif self.owner is not None:   # a run in progress (the Ray engine's): its counts follow each chunk
                store.refresh_run_counts(con, self.run_id)
        self.written += len(self.results)
        self.calls.clear()
        self.results.clear()
        self.keys.clear()


def _answered(con, run_id: str) -> set:
    return {r[0] for r in con.execute("SELECT idx FROM results WHERE run_id = ? AND error IS NULL",
                                      [run_id]).fetchall()}


def _run_json(plan, limit, draw: int, files: list[str]) -> str:
    return store.canonical_json({"config": plan.config_dict, "model": plan.model_spec, "base_url": None,
                                 "params": plan.params.to_dict(), "limit": limit, "draw": draw, "owner": owner_tag(),
                                 "batch_file": files})

"""`run --engine ray` (issue 21): a run's uncached requests, exported by ``export_batch`` in the OpenAI batch format
(the shard files of ``export-batch --shards``), sent through one Ray Data stage, and each block of output lines
imported into the run through ``import_batch`` as it completes — so a killed driver loses at most the blocks in
flight and the same command continues from the cache. One pipeline (``run_pipeline``), two stages:

* ``openai-compatible/<model>`` + a base URL (``run_ray``): a ``map_batches`` actor pool, each actor an async HTTP
  client with bounded in-flight requests and its own retries (429, 5xx, timeouts, non-JSON replies);
* ``vllm/<hf-model-or-path>`` (``run_vllm``): Ray Data's vLLM processor (``ray.data.llm.vLLMEngineProcessorConfig``
  + ``build_processor``) on the cluster's GPUs, replicas × tensor-parallel size, the finish reason derived from the
  token counts and the cap (``ray_mapping``).

A local Ray starts by itself when no address is given (or ``local``); ``auto`` or a cluster's GCS ``host:port``
join a cluster as a driver (Ray Data 2.60 does not run through Ray Client, ``ray://``: refused with the way round).
The worker code (``ray_workers``, ``ray_mapping``) is shipped to the workers by value, so they need Ray and httpx or
vLLM, not this project. ``start_ray_run`` runs the HTTP path on a background thread
behind a ``RunHandle`` (the dashboard's "Run on a Ray cluster").
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

from core.errors import UserError
from core.runner.ray_workers import LINE, REQUEST, HttpCaller, as_line, vllm_postprocess, vllm_preprocess

__all__ = ["HttpCaller", "check_ray_address", "run_pipeline", "run_ray", "run_vllm", "start_ray", "start_ray_run",
           "vllm_config_kwargs"]

_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
_ADDRESS = re.compile(rf"(?:ray://)?({_HOST}):([0-9]{{1,5}})", re.IGNORECASE)   # ray:// to refuse it
_RAY_LOCK = threading.Lock()
_CONNECTED: dict[str, str | None] = {"address": None}   # what this process's Ray was started with / joined


def check_ray_address(address) -> str | None:
    """The Ray address normalised — ``local`` (start a Ray in this process), ``auto`` (the cluster this machine is
    part of) or ``host:port`` (a cluster's GCS address: this process joins it as a driver) — None for empty;
    UserError naming the accepted forms otherwise. A Ray Client address (``ray://host:10001``) is refused with the
    way round: Ray Data 2.60 does not run through Ray Client (its executor needs a driver's core worker)."""
    if address is None:
        return None
    text = address.strip() if isinstance(address, str) else None
    if text == "":
        return None
    if text is not None and text.lower() in ("local", "auto"):
        return text.lower()
    m = _ADDRESS.fullmatch(text or "")
    if m is None or not 0 < int(m.group(2)) < 65536:
        raise UserError(f"the Ray address must be local, auto or host:6379 (a cluster's GCS address); got "
                        f"{address!r}")
    if text.lower().startswith("ray://"):
        raise UserError(f"Ray Data does not run through Ray Client ({text}): give the cluster's GCS address "
                        f"{m.group(1)}:6379 (this machine joins as a driver and must be reachable from the cluster), "
                        "or run the command on a cluster node with auto (ray job submit … -- python -m core run …)")
    return f"{m.group(1)}:{int(m.group(2))}"


def ship_worker_code() -> None:
    """Pickle the worker code by value: Ray's workers then need no checkout of this project."""
    from ray import cloudpickle

    from core.runner import ray_mapping, ray_workers

    for module in (ray_mapping, ray_workers):
        cloudpickle.register_pickle_by_value(module)


def start_ray(address: str | None = None) -> str:
    """Start a local Ray (``None`` / ``local``) or join the cluster at ``address``, once per process; returns the
    address in use. Joining another cluster than the one this process already uses is refused (one process talks to
    one Ray); a Ray that cannot be started or reached is one UserError."""
    import ray

    want = check_ray_address(address) or "local"
    with _RAY_LOCK:
        if ray.is_initialized():
            have = _CONNECTED["address"]
            if address and have and want != have:
                raise UserError(f"this process already uses the Ray at {have}; one process talks to one Ray cluster "
                                f"(run the CLI, or restart the app, for {want})")
            return have or want
        try:
            if want == "local":
                ray.init(num_cpus=max(1, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False,
                         logging_level="ERROR", _temp_dir=tempfile.mkdtemp(prefix="studio-ray-"))
            else:
                ray.init(address=want, log_to_driver=False, logging_level="ERROR")
        except Exception as exc:  # noqa: BLE001  (ConnectionError, RuntimeError, an authentication error …)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            if want == "local":
                raise UserError(f"cannot start a local Ray: {first}") from None
            raise UserError(f"cannot join the Ray at {want}: {first} (is it up? a cluster with token authentication "
                            "needs RAY_AUTH_MODE=token and its token in RAY_AUTH_TOKEN or ~/.ray/auth_token)") from None
        _CONNECTED["address"] = want
        return want


# ------------------------------------------------------------------------------------------------------ the pipeline


def run_pipeline(config: dict, model: str, stage, *, params=None, limit=None, db_path=None, address=None,
                 shards: int = 1, block_size: int = 64, name: str | None = None, on_block=None, stop=None) -> dict:
    """Export the uncached requests of (config, model, params) as ``shards`` files, send them through ``stage``
    (a function Dataset → Dataset from a ``request`` column to a ``line`` column) and import each block of
    ``block_size`` output lines into the run as it arrives. ``on_block(totals)`` is called after the export and
    after each block; ``stop()`` true ends the run between blocks (what is imported stays). Items whose prompt the
    cache answers (another run's call) are scored from it first. Returns totals: run_id, items, cached (prompts),
    requests (sent), blocks, lines, answered and failed (items), stopped."""
    from core.runner.batch_files import BatchImporter, export_batch, import_cached

    check_ray_address(address)
    block_size = max(1, int(block_size))
    shards = max(1, int(shards))
    work = Path(tempfile.mkdtemp(prefix="studio-ray-run-"))
    try:
        ex = export_batch(config, model, work / "requests.jsonl", params=params, limit=limit, db_path=db_path,
                          shards=shards)
        totals = {"run_id": ex["run_id"], "items": ex["items"], "cached": ex["cached"], "requests": ex["requests"],
                  "blocks": 0, "lines": 0, "answered": 0, "failed": 0, "stopped": False}
        lines = [ln for f in ex["files"] for ln in Path(f).read_text(encoding="utf-8").splitlines() if ln.strip()]
        if ex["cached"]:   # prompts another run answered: left out of the requests, scored from the cache here
            import_cached(config, model, params=params, limit=limit, db_path=db_path, name=name)
        if on_block:
            on_block(dict(totals))
        if not lines:
            return totals
        start_ray(address)
        import logging

        import ray

        ship_worker_code()
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        ray.data.DataContext.get_current().enable_progress_bars = False
        importer = BatchImporter(config, model, params=params, limit=limit, db_path=db_path, name=name,
                                 source="import-batch:ray")
        ds = ray.data.from_items([{REQUEST: ln} for ln in lines],
                                 override_num_blocks=max(shards, -(-len(lines) // block_size)))
        for n, batch in enumerate(stage(ds).iter_batches(batch_size=block_size, batch_format="numpy")):
            out = work / f"block-{n:06d}.jsonl"
            out.write_text("".join(f"{ln}\n" for ln in batch[LINE]), encoding="utf-8")
            c = importer.import_files([out])
            out.unlink(missing_ok=True)
            totals["blocks"] += 1
            totals["lines"] += c["matched"]
            totals["answered"] += c["answered"]
            totals["failed"] += c["failed"]
            if on_block:
                on_block(dict(totals))
            if stop is not None and stop():
                totals["stopped"] = True
                break
        return totals
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------------------ HTTP stage


def _http_model(model: str, base_url) -> None:
    from core.models.registry import check_base_url, parse_spec

    if parse_spec(model)[0] != "openai-compatible":
        raise UserError("the Ray engine sends openai-compatible/<model> to a base URL, or runs vllm/<model> on the "
                        f"cluster's GPUs; not {model}")
    if not base_url:
        raise UserError(f"{model} on Ray needs a base URL (--base-url: the endpoint every Ray actor calls)")
    check_base_url(base_url)


def http_stage(base_url: str, *, actors: int = 2, concurrency: int = 32, block_size: int = 64,
               timeout: float = 120.0, max_attempts: int = 6, api_key: str | None = None,
               actor_env: dict | None = None):
    """The HTTP stage: ``actors`` HttpCaller actors, ``concurrency`` requests in flight in all."""
    actors = max(1, int(actors))

    def stage(ds):
        import ray

        return ds.map_batches(HttpCaller, batch_size=max(1, int(block_size)),
                              compute=ray.data.ActorPoolStrategy(size=actors), fn_constructor_kwargs={
            "base_url": base_url, "inflight": max(1, int(concurrency) // actors), "timeout": timeout,
            "max_attempts": max_attempts, "api_key": api_key, "env": actor_env})

    return stage


def run_ray(config: dict, model: str, base_url: str, *, params=None, limit=None, db_path=None, address=None,
            concurrency: int = 32, actors: int = 2, block_size: int = 64, timeout: float = 120.0,
            max_attempts: int = 6, on_block=None, actor_env: dict | None = None, api_key: str | None = None,
            name: str | None = None, stop=None) -> dict:
    """Run (config, ``openai-compatible/`` model, params) against ``base_url`` through Ray Data; returns the
    totals of ``run_pipeline``. ``api_key`` defaults to the provider's variable (OPENAI_COMPATIBLE_API_KEY)."""
    from core.models.providers import key_env_for
    from core.redaction import remember

    _http_model(model, base_url)
    if api_key is None:
        api_key = os.environ.get(key_env_for(model) or "") or None
    remember(api_key)
    stage = http_stage(base_url, actors=actors, concurrency=concurrency, block_size=block_size, timeout=timeout,
                       max_attempts=max_attempts, api_key=api_key, actor_env=actor_env)
    return run_pipeline(config, model, stage, params=params, limit=limit, db_path=db_path, address=address,
                        shards=actors, block_size=block_size, name=name, on_block=on_block, stop=stop)


# ------------------------------------------------------------------------------------------------------ vLLM stage


def _positive(value, flag: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if n < 1 or n != value:
        raise UserError(f"{flag} must be a whole number >= 1, got {value!r}")
    return n


def vllm_config_kwargs(model_source: str, *, replicas: int = 1, tp: int = 1, batch_size: int = 64,
                       max_model_len: int | None = None, accelerator_type: str | None = None) -> dict:
    """The keyword arguments of ``ray.data.llm.vLLMEngineProcessorConfig`` for a vllm/ run: ``replicas`` engines
    (``concurrency``) of ``tp`` GPUs each (``engine_kwargs.tensor_parallel_size``); a row the engine fails on
    becomes that item's error line instead of aborting the dataset (``should_continue_on_error``); the text is
    vLLM's own (no separate detokenize stage: stop sequences are cut as a vLLM server cuts them)."""
    if not isinstance(model_source, str) or not model_source.strip():
        raise UserError("a vllm/ model needs a Hugging Face model id or a path after vllm/")
    engine = {"tensor_parallel_size": _positive(tp, "--vllm-tp")}
    if max_model_len is not None:
        engine["max_model_len"] = _positive(max_model_len, "--vllm-max-model-len")
    kwargs = {"model_source": model_source.strip(), "engine_kwargs": engine,
              "concurrency": _positive(replicas, "--vllm-replicas"),
              "batch_size": _positive(batch_size, "--vllm-batch-size"),
              "should_continue_on_error": True, "detokenize_stage": False}
    if accelerator_type:
        kwargs["accelerator_type"] = str(accelerator_type)
    return kwargs


def _check_gpus(tp: int) -> None:
    import ray

    gpus = float(ray.cluster_resources().get("GPU", 0))
    if gpus < tp:
        raise UserError(f"the Ray cluster has {gpus:g} GPU(s) and a vllm/ replica needs {tp} (--vllm-tp); join a "
                        "GPU cluster with --ray-address auto or head:6379 (its GPU nodes must be up when the "
                        "run starts)")


def vllm_stage(model_source: str, *, builder=None, **settings):
    """The vLLM stage: Ray Data's vLLM processor between our preprocess (request line → engine row) and postprocess
    (engine row → output line). ``builder`` stands for ``ray.data.llm.build_processor`` (the CPU tests pass one that
    puts a stand-in engine stage into Ray's own ``Processor``; then no GPU is asked for)."""
    kwargs = vllm_config_kwargs(model_source, **settings)

    def stage(ds):
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig

        if builder is None:
            _check_gpus(kwargs["engine_kwargs"]["tensor_parallel_size"])
        processor = (builder or build_processor)(vLLMEngineProcessorConfig(**kwargs), preprocess=vllm_preprocess,
                                                 postprocess=vllm_postprocess)
        return processor(ds).map(as_line)

    return stage


def run_vllm(config: dict, model: str, *, params=None, limit=None, db_path=None, address=None, replicas: int = 1,
             tp: int = 1, batch_size: int = 64, max_model_len: int | None = None,
             accelerator_type: str | None = None, block_size: int = 64, on_block=None, name: str | None = None,
             stop=None, builder=None) -> dict:
    """Run (config, ``vllm/<model>``, params) on the Ray cluster's GPUs through Ray Data's vLLM processor; returns
    the totals of ``run_pipeline``."""
    from core.models.registry import parse_spec

    provider, source = parse_spec(model)
    if provider != "vllm":
        raise UserError(f"run_vllm runs vllm/<model>, not {model}")
    stage = vllm_stage(source, builder=builder, replicas=replicas, tp=tp, batch_size=batch_size,
                       max_model_len=max_model_len, accelerator_type=accelerator_type)
    return run_pipeline(config, model, stage, params=params, limit=limit, db_path=db_path, address=address,
                        shards=replicas, block_size=block_size, name=name, on_block=on_block, stop=stop)


# ------------------------------------------------------------------------------------------------------ background run


def _counts(db_path, run_id: str, totals: dict) -> dict:
    """Progress fields of a Ray run from the store (what ``import_batch`` has written so far)."""
    from core import store

    with store.connect(db_path) as con:
        row = con.execute("SELECT n_done, n_failed, n_cached, cost_usd FROM runs WHERE run_id = ?",
                          [run_id]).fetchall()
        correct = con.execute("SELECT count(*) FILTER (WHERE correct) FROM results WHERE run_id = ? AND error IS "
                              "NULL", [run_id]).fetchall()[0][0]
    done, failed, cached, cost = row[0] if row else (0, 0, 0, 0.0)
    return {"total": int(totals["items"]), "done": int(done or 0), "failed": int(failed or 0),
            "cached": int(cached or 0), "cost_usd": float(cost or 0.0), "correct": int(correct or 0),
            "calls": int(totals["lines"])}


def start_ray_run(config: dict, model: str, base_url: str, *, address: str | None = None, params=None,
                  api_key: str | None = None, db_path=None, name: str | None = None, limit=None,
                  concurrency: int = 32, actors: int = 2, block_size: int = 64, timeout: float = 120.0,
                  max_attempts: int = 6):
    """``run_ray`` on a background thread behind a ``RunHandle`` (progress, cancel between blocks, wait), found again
    by run id like a live run's (``runner.get_handle``). Bad input — model, base URL, Ray address, config — raises
    here, before anything starts."""
    import time

    from core.redaction import remember
    from core.runner.batch_files import batch_run_id
    from core.runner.handle import _REGISTRY, _REGISTRY_LOCK, RunHandle

    remember(api_key)
    check_ray_address(address)
    _http_model(model, base_url)
    run_id = batch_run_id(config, model, params=params, limit=limit, db_path=db_path)
    with _REGISTRY_LOCK:
        existing = _REGISTRY.get(run_id)
        if existing is not None and not existing.done:
            return existing
        handle = RunHandle(run_id)
        handle._update(status="running", calls_started_at=time.time())
        _REGISTRY[run_id] = handle

    def on_block(totals: dict) -> None:
        handle._update(**_counts(db_path, run_id, totals))

    def main() -> None:
        try:
            t = run_ray(config, model, base_url, params=params, limit=limit, db_path=db_path, address=address,
                        concurrency=concurrency, actors=actors, block_size=block_size, timeout=timeout,
                        max_attempts=max_attempts, api_key=api_key, name=name, on_block=on_block,
                        stop=lambda: handle.cancelled)
            p = _counts(db_path, run_id, t)
            status = "cancelled" if t["stopped"] else "done" if p["done"] >= p["total"] else "incomplete"
            handle._update(status=status, **p)
        except UserError as exc:
            handle._update(status="error", error=str(exc))
        except Exception as exc:  # noqa: BLE001  (Ray's own failures: one readable line on the page)
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            handle._update(status="error", error=f"the Ray run failed: {type(exc).__name__}: {first}")
        finally:
            handle._finished.set()

    thread = threading.Thread(target=main, name=f"ray-run-{run_id}", daemon=True)
    handle._thread = thread
    thread.start()
    return handle

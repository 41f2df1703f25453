"""`run --engine ray`: a run's uncached requests in the OpenAI batch format sent through one Ray Data stage, each block
of output lines imported into the run as it completes — so a killed driver loses at most the blocks in flight and
the same command continues from the cache. One pipeline (``run_pipeline``), two stages:

* ``openai-compatible/<model>`` + a base URL (``run_ray``): a ``map_batches`` actor pool, each actor an async HTTP
  client with bounded in-flight requests under the live runner's retry policy (``core.models.retry_policy``). The
  run is the live runner's run (``ray_run``): the same run id, cache keys and claims, so either engine resumes the
  other's run without a call, and identical runs on either engine share their calls;
* ``vllm/<hf-model-or-path>`` (``run_vllm``): Ray Data's vLLM processor (``ray.data.llm.vLLMEngineProcessorConfig``
  + ``build_processor``) on the cluster's GPUs, replicas × tensor-parallel size, the finish reason derived from the
  token counts and the cap (``ray_mapping``); its keys are the batch files' (no base URL).

A local Ray starts by itself when no address is given (or ``local``); ``auto`` or a cluster's GCS ``host:port``
join a cluster as a driver after a bounded probe (``ray_connect``; Ray Data 2.60 does not run through Ray Client,
``ray://``: refused with the way round). The cluster is watched while a run uses it: a cluster that stops answering
ends the run with ``ClusterLost``. The worker code (``ray_workers``, ``ray_mapping``, ``retry_policy``) is shipped
to the workers by value, so they need Ray and httpx or vLLM, not this project. ``start_ray_run`` runs the HTTP path
on a background thread behind a ``RunHandle`` (the dashboard's "Run on a Ray cluster"; Cancel also stops a join).
"""

from __future__ import annotations

import logging
import os
import threading
import time

from core.errors import UserError
from core.runner.ray_connect import check_ray_address, ship_worker_code, start_ray, watch_cluster
from core.runner.ray_workers import LINE, REQUEST, HttpCaller, as_line, vllm_postprocess, vllm_preprocess

log = logging.getLogger(__name__)

__all__ = ["HttpCaller", "check_ray_address", "run_pipeline", "run_ray", "run_vllm", "start_ray", "start_ray_run",
           "vllm_config_kwargs"]


class ClusterLost(UserError):
    """The Ray cluster stopped answering while a run used it."""


def _positive(value, flag: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        n = 0
    if isinstance(value, bool) or n < 1 or n != value:
        raise UserError(f"{flag} must be a whole number >= 1, got {value!r}")
    return n


# ------------------------------------------------------------------------------------------------------ the pipeline


def run_pipeline(config: dict, model: str, stage, *, params=None, limit=None, db_path=None, address=None,
                 shards: int = 1, block_size: int = 64, name: str | None = None, on_block=None, stop=None,
                 base_url: str | None = None, settings: dict | None = None, lease_s: float = 3600.0,
                 on_lost=None) -> dict:
    """Run (config, model, params) through ``stage`` (a function Dataset → Dataset from a ``request`` column to a
    ``line`` column) as the live runner's run (``ray_run.RayRun``: its run id, cache keys and claims), importing
    each block of ``block_size`` output lines as it arrives. ``on_block(totals)`` is called after each claim round
    and each block; ``stop()`` true ends the run between blocks (what is imported stays). ``on_lost()`` is called
    (from a watch thread) if the cluster stops answering; the run then ends with ``ClusterLost``. Returns totals:
    run_id, items, cached (items scored from the cache), requests (sent), blocks, lines, answered and failed
    (items), shared (items another run answered), stopped."""
    from core.runner.ray_run import POLL, RayRun

    check_ray_address(address)
    block_size = _positive(block_size, "--ray-block-size")
    shards = _positive(shards, "--ray-actors")
    run = RayRun(config, model, params=params, limit=limit, db_path=db_path, base_url=base_url, name=name,
                 settings=settings, lease_s=lease_s, source="ray" if base_url else "ray:vllm")
    totals = {"run_id": run.run_id, "items": len(run.items), "cached": 0, "requests": 0, "blocks": 0, "lines": 0,
              "answered": 0, "failed": 0, "shared": 0, "stopped": False}
    lost = threading.Event()
    watch = None

    def stopped() -> bool:
        return bool(stop is not None and stop())

    try:
        keys, scored = run.claim(None)
        totals["cached"] += scored
        totals["requests"] += len(keys)
        if on_block:
            on_block(dict(totals))
        while True:
            if keys:
                if watch is None:
                    watch = _start(address, stopped, lost, on_lost)
                _send(run, stage, keys, shards, block_size, totals, on_block, stopped, lost)
            if totals["stopped"] or not run.waiting:
                break
            time.sleep(POLL)   # keys another run is sending: their answers, or their lapsed claims, come later
            if stopped():
                totals["stopped"] = True
                break
            keys, scored = run.claim(sorted(run.waiting))
            totals["shared"] += scored
            totals["requests"] += len(keys)
            if on_block:
                on_block(dict(totals))
        run.finish("cancelled" if totals["stopped"] else None)
        return totals
    except BaseException:
        run.release()
        if lost.is_set():
            raise ClusterLost(_lost_message(totals)) from None
        raise
    finally:
        if watch is not None:
            watch.set()


def _lost_message(totals: dict) -> str:
    return (f"the Ray cluster stopped answering (its processes were stopped or killed); {totals['answered']} "
            "item(s) answered are stored: run the same command again to continue")


def _start(address, stopped, lost: threading.Event, on_lost):
    """Start or join Ray (bounded, see ``ray_connect``) and watch the cluster for the rest of the run."""
    import logging

    import ray

    start_ray(address, stop=stopped)
    ship_worker_code()
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ray.data.DataContext.get_current().enable_progress_bars = False

    def gone() -> None:
        lost.set()
        if on_lost is not None:
            on_lost()

    return watch_cluster(gone)


def _send(run, stage, keys: list[str], shards: int, block_size: int, totals: dict, on_block, stopped, lost) -> None:
    """One pass of ``keys`` through the Ray stage, each block imported into the run as it comes back."""
    from pathlib import Path

    import ray

    from core.models.batch.jsonl import dumps
    from core.runner.ray_connect import drop_folder, work_folder

    lines = [dumps(run.request(k)).rstrip("\n") for k in keys]
    work = Path(work_folder())
    try:
        ds = ray.data.from_items([{REQUEST: ln} for ln in lines],
                                 override_num_blocks=max(shards, -(-len(lines) // block_size)))
        for n, batch in enumerate(stage(ds).iter_batches(batch_size=block_size, batch_format="numpy")):
            if lost.is_set():
                raise ClusterLost(_lost_message(totals))
            out = work / f"block-{n:06d}.jsonl"
            out.write_text("".join(f"{ln}\n" for ln in batch[LINE]), encoding="utf-8")
            c = run.importer.import_files([out], finish=False)
            out.unlink(missing_ok=True)
            totals["blocks"] += 1
            totals["lines"] += c["matched"]
            totals["answered"] += c["answered"]
            totals["failed"] += c["failed"]
            if on_block:
                on_block(dict(totals))
            if stopped():
                totals["stopped"] = True
                break
    finally:
        drop_folder(str(work))


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
    actors = _positive(actors, "--ray-actors")

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
            name: str | None = None, stop=None, on_lost=None) -> dict:
    """Run (config, ``openai-compatible/`` model, params) against ``base_url`` through Ray Data; returns the
    totals of ``run_pipeline``. ``api_key`` defaults to the provider's variable (OPENAI_COMPATIBLE_API_KEY)."""
    from core.config import RunOptions
    from core.models.providers import key_env_for
    from core.redaction import remember

    _http_model(model, base_url)
    check_ray_address(address)
    actors = _positive(actors, "--ray-actors")
    block_size = _positive(block_size, "--ray-block-size")
    RunOptions(concurrency=concurrency, max_attempts=max_attempts, call_timeout=timeout).checked()
    if api_key is None:
        api_key = os.environ.get(key_env_for(model) or "") or None
    remember(api_key)
    stage = http_stage(base_url, actors=actors, concurrency=concurrency, block_size=block_size, timeout=timeout,
                       max_attempts=max_attempts, api_key=api_key, actor_env=actor_env)
    settings = {"concurrency": concurrency, "max_attempts": max_attempts, "call_timeout": timeout, "rpm": None,
                "tpm": None, "batch": False, "ray_actors": actors, "ray_block_size": block_size}
    return run_pipeline(config, model, stage, params=params, limit=limit, db_path=db_path, address=address,
                        shards=actors, block_size=block_size, name=name, on_block=on_block, stop=stop,
                        base_url=base_url, settings=settings, lease_s=ray_lease(max_attempts, timeout),
                        on_lost=on_lost)


def ray_lease(max_attempts: int, timeout: float) -> float:
    """How long a Ray run's claims hold while its owner lives: the live runner's lease for one call, at least an
    hour — a Ray run claims its keys a round at a time, not a block at a time."""
    from core.models.retry_policy import MAX_BACKOFF
    from core.runner.breaker import GIVE_UP_AFTER

    return max(3600.0, 2 * max_attempts * (timeout + MAX_BACKOFF) + GIVE_UP_AFTER + 60)


# ------------------------------------------------------------------------------------------------------ vLLM stage


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
             stop=None, builder=None, on_lost=None) -> dict:
    """Run (config, ``vllm/<model>``, params) on the Ray cluster's GPUs through Ray Data's vLLM processor; returns
    the totals of ``run_pipeline``."""
    from core.models.registry import parse_spec

    provider, source = parse_spec(model)
    if provider != "vllm":
        raise UserError(f"run_vllm runs vllm/<model>, not {model}")
    stage = vllm_stage(source, builder=builder, replicas=replicas, tp=tp, batch_size=batch_size,
                       max_model_len=max_model_len, accelerator_type=accelerator_type)
    return run_pipeline(config, model, stage, params=params, limit=limit, db_path=db_path, address=address,
                        shards=replicas, block_size=block_size, name=name, on_block=on_block, stop=stop,
                        on_lost=on_lost)


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
    from core.runner.handle import RunHandle, register
    from core.runner.ray_run import ray_run_id

    remember(api_key)
    check_ray_address(address)
    _http_model(model, base_url)
    _positive(actors, "--ray-actors")
    _positive(block_size, "--ray-block-size")
    run_id = ray_run_id(config, model, base_url, params=params, limit=limit, db_path=db_path)
    handle = RunHandle(run_id)
    handle.recorder.set(status="running", calls_started_at=time.time())
    if (existing := register(handle, unless_live=True)) is not handle:
        return existing
    progress = handle.recorder

    def on_block(totals: dict) -> None:
        progress.set(**_counts(db_path, run_id, totals))

    def main() -> None:
        try:
            t = run_ray(config, model, base_url, params=params, limit=limit, db_path=db_path, address=address,
                        concurrency=concurrency, actors=actors, block_size=block_size, timeout=timeout,
                        max_attempts=max_attempts, api_key=api_key, name=name, on_block=on_block,
                        stop=lambda: handle.cancelled)
            p = _counts(db_path, run_id, t)
            status = "cancelled" if t["stopped"] else "done" if p["done"] >= p["total"] else "incomplete"
            progress.set(status=status, **p)
        except UserError as exc:
            if handle.cancelled:   # cancelled while joining the cluster: nothing was sent
                progress.set(status="cancelled")
            else:
                progress.set(status="error", error=str(exc))
        except Exception as exc:  # noqa: BLE001  (Ray's own failures: one readable line on the page)
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            log.info("Ray run %s failed (%s); its status says why", run_id, type(exc).__name__)
            progress.set(status="error", error=f"the Ray run failed: {type(exc).__name__}: {first}")
        finally:
            handle.finish()

    handle.start(main, name=f"ray-run-{run_id}")
    return handle

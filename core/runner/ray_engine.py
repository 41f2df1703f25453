"""`run --engine ray` (issue 21, first cut): the uncached requests of a run, exported by ``export_batch`` in the OpenAI
batch format, sent through a Ray Data ``map_batches`` actor pool — each actor an async HTTP client with bounded
in-flight requests and its own retries (429, 5xx, timeouts, non-JSON replies) — and each block of output lines
imported into the run through ``import_batch`` as it completes, so a killed driver loses at most the blocks in flight
and the same command continues from the cache. A local Ray starts by itself when no address is given.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
from pathlib import Path

from core.runner.ray_mapping import error_line, http_output_line

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class HttpCaller:
    """One Ray actor: posts a block's request lines to ``base_url`` with at most ``inflight`` in flight."""

    def __init__(self, base_url: str, inflight: int = 8, timeout: float = 120.0, max_attempts: int = 6,
                 api_key: str | None = None, env: dict | None = None):
        os.environ.update(env or {})   # extra environment for the actor (the fault-injection tests use it)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.inflight, self.timeout, self.max_attempts = max(1, int(inflight)), float(timeout), int(max_attempts)
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def _one(self, client, sem, line: str) -> str:
        import httpx

        req = json.loads(line)
        cid, status, detail = req["custom_id"], None, ""
        for attempt in range(self.max_attempts):
            async with sem:
                try:
                    r = await client.post(self.url, json=req["body"], headers=self.headers)
                    status = r.status_code
                    try:
                        body = r.json()
                    except ValueError:
                        body = None
                    if status == 200 and isinstance(body, dict):
                        return json.dumps(http_output_line(cid, 200, body))
                    if status != 200 and status not in RETRY_STATUS:
                        return json.dumps(http_output_line(cid, status, body))
                    detail = "reply is not JSON" if status == 200 else f"HTTP {status}"
                except httpx.HTTPError as exc:   # timeouts, refused connections: retried
                    status, detail = None, f"{type(exc).__name__}"
            await asyncio.sleep(min(8.0, 0.05 * 2 ** attempt) * (0.5 + random.random()))
        return json.dumps(error_line(cid, f"{detail} after {self.max_attempts} attempts"))

    async def _all(self, lines):
        import httpx

        sem = asyncio.Semaphore(self.inflight)
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            return await asyncio.gather(*(self._one(client, sem, ln) for ln in lines))

    def __call__(self, batch: dict) -> dict:
        from core.store.faults import fault

        out = list(asyncio.run(self._all(list(batch["line"]))))
        fault("ray-actor-block")   # tests: the actor dies with a block answered but not handed back
        return {"line": out}


def start_ray(address: str | None = None) -> None:
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    else:
        ray.init(num_cpus=max(1, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR", _temp_dir=tempfile.mkdtemp(prefix="studio-ray-"))


def run_ray(config: dict, model: str, base_url: str, *, params=None, limit=None, db_path=None, address=None,
            concurrency: int = 32, actors: int = 2, block_size: int = 64, timeout: float = 120.0,
            max_attempts: int = 6, on_block=None, actor_env: dict | None = None) -> dict:
    """Run (config, model, params) through Ray Data; returns counts (requests sent, blocks, answered, failed)."""
    import ray

    from core.runner.batch_files import export_batch, import_batch

    work = Path(tempfile.mkdtemp(prefix="studio-ray-run-"))
    req = work / "requests.jsonl"
    # the same shard files `export-batch --shards` writes: one per actor
    ex = export_batch(config, model, req, params=params, limit=limit, db_path=db_path, shards=max(1, int(actors)))
    totals = {"run_id": ex["run_id"], "requests": ex["requests"], "blocks": 0, "answered": 0, "failed": 0}
    lines = [ln for f in ex["files"] for ln in Path(f).read_text(encoding="utf-8").splitlines() if ln.strip()]
    if not lines:
        return totals
    start_ray(address)
    import logging

    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    actors = max(1, int(actors))
    ds = ray.data.from_items([{"line": ln} for ln in lines],
                             override_num_blocks=max(actors, -(-len(lines) // block_size)))
    ds = ds.map_batches(HttpCaller, batch_size=block_size, compute=ray.data.ActorPoolStrategy(size=actors),
                        fn_constructor_kwargs={
        "base_url": base_url, "inflight": max(1, concurrency // actors), "timeout": timeout,
        "max_attempts": max_attempts, "api_key": os.environ.get("OPENAI_API_KEY"), "env": actor_env})
    for n, batch in enumerate(ds.iter_batches(batch_size=block_size, batch_format="numpy")):
        out = work / f"block-{n:06d}.jsonl"
        out.write_text("".join(f"{ln}\n" for ln in batch["line"]), encoding="utf-8")
        c = import_batch(out, config, model, params=params, limit=limit, db_path=db_path)
        totals["blocks"] += 1
        totals["answered"] += c["answered"]
        totals["failed"] += c["failed"]
        out.unlink(missing_ok=True)
        if on_block:
            on_block(totals)
    return totals

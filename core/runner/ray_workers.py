"""What runs on Ray's workers (issue 21): the HTTP actor of ``run --engine ray`` with an ``openai-compatible/`` model,
and the preprocess / postprocess around Ray Data's vLLM processor with a ``vllm/`` model. Both read a ``request``
column (an OpenAI batch request line, as ``export_batch`` writes it) and leave a ``line`` column (an OpenAI batch
output line, as ``import_batch`` reads it).

The driver ships this module and ``ray_mapping`` to the workers by value (``cloudpickle.register_pickle_by_value``,
see ``ray_engine.ship_worker_code``): a worker needs Python, Ray and httpx (HTTP) or vLLM (GPU), not this project.
So nothing here imports the rest of ``core`` at module level.
"""

from __future__ import annotations

import asyncio
import json
import os
import random

from core.runner.ray_mapping import ERROR_COLUMN, engine_output_line, engine_row, error_line, http_output_line

REQUEST, LINE = "request", "line"
RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class HttpCaller:
    """One Ray actor: posts a block's request lines to ``base_url`` with at most ``inflight`` in flight, retrying
    429, 5xx, timeouts and non-JSON replies with jittered back-off."""

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
        out = list(asyncio.run(self._all(list(batch[REQUEST]))))
        if os.environ.get("STUDIO_FAULT"):   # tests: the actor dies with a block answered but not handed back
            from core.store.faults import fault

            fault("ray-actor-block")
        return {LINE: out}


def vllm_preprocess(row: dict) -> dict:
    """Request line → the vLLM processor's input row (messages, sampling_params, custom_id, reply_cap)."""
    return engine_row(json.loads(row[REQUEST]))


def vllm_postprocess(row: dict) -> dict:
    """The vLLM processor's output row → ``{"line": <OpenAI batch output line>}``."""
    return {LINE: json.dumps(engine_output_line(row))}


def as_line(row: dict) -> dict:
    """Every row out of the vLLM processor as one output line: Ray hands a row the engine failed on
    (``__inference_error__``) past the postprocess, whole; it becomes the error line of its ``custom_id``."""
    if row.get(ERROR_COLUMN) or not isinstance(row.get(LINE), str):
        return vllm_postprocess(row)
    return {LINE: row[LINE]}

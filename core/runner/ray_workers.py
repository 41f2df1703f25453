"""What runs on Ray's workers: the HTTP actor of ``run --engine ray`` with an ``openai-compatible/`` model,
and the preprocess / postprocess around Ray Data's vLLM processor with a ``vllm/`` model. Both read a ``request``
column (an OpenAI batch request line, as ``export_batch`` writes it) and leave a ``line`` column (an OpenAI batch
output line, as ``import_batch`` reads it).

The driver ships this module, ``ray_mapping`` and ``retry_policy`` to the workers by value
(``cloudpickle.register_pickle_by_value``, see ``ray_connect.ship_worker_code``): a worker needs Python, Ray and
httpx with tenacity (HTTP) or vLLM (GPU), not this project.
So nothing here imports the rest of ``core`` at module level.
"""

from __future__ import annotations

import asyncio
import json
import os

from core.models.retry_policy import (
    Pause,
    Retry,
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
    reply_problem,
    retryable_status,
)
from core.runner.ray_mapping import ERROR_COLUMN, engine_output_line, engine_row, error_line, http_output_line

REQUEST, LINE = "request", "line"


class HttpCaller:
    """One Ray actor: posts a block's request lines to ``base_url`` with at most ``inflight`` in flight, under the
    live runner's retry policy (``core.models.retry_policy``): 408/409/425/429/5xx, timeouts, protocol errors and
    2xx replies that are no chat completion are retried after a full-jitter back-off of at least the server's
    Retry-After (which also pauses the actor's other requests); unreachable-endpoint errors cost time, not
    attempts (with no circuit breaker here, each such retry backs off); any other status fails the request at
    once."""

    def __init__(self, base_url: str, inflight: int = 8, timeout: float = 120.0, max_attempts: int = 6,
                 api_key: str | None = None, env: dict | None = None):
        os.environ.update(env or {})   # extra environment for the actor (the fault-injection tests use it)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.inflight, self.timeout = max(1, int(inflight)), float(timeout)
        self.policy = RetryPolicy(max_attempts=int(max_attempts))   # the live runner's, backing off in an outage too
        self.pause = Pause()   # a server's Retry-After pauses the actor's other requests
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def _attempt(self, client, line_body: dict) -> tuple[int, object]:
        """One POST → the final (status, output body), or ``Retry`` (core.models.retry_policy) when the policy
        retries what came back."""
        import httpx

        try:
            r = await client.post(self.url, json=line_body, headers=self.headers)
        except httpx.ConnectError as exc:
            raise Retry(f"connection error ({type(exc).__name__})", unreachable=True) from None
        except httpx.HTTPError as exc:   # timeouts, resets, protocol errors
            raise Retry(f"{type(exc).__name__}") from None
        try:
            body = r.json()
        except ValueError:
            body = None
        if r.status_code >= 300:
            if retryable_status(r.status_code):
                raise Retry(f"HTTP {r.status_code}", parse_retry_after(r.headers))
            return r.status_code, body
        problem = reply_problem(body)
        if problem is not None:
            raise Retry(problem)
        return 200, body

    async def _one(self, client, sem, line: str) -> str:
        req = json.loads(line)
        cid = req["custom_id"]

        async def attempt(n: int):
            async with sem:
                return await self._attempt(client, req["body"])

        outcome = await call_with_retries(self.policy, attempt, pause=self.pause)
        if outcome.value is not None:
            return json.dumps(http_output_line(cid, *outcome.value))
        return json.dumps(error_line(cid, f"{outcome.reason} after {outcome.attempts} attempts"))

    async def _all(self, lines):
        import httpx

        sem = asyncio.Semaphore(self.inflight)
        limits = httpx.Limits(max_connections=self.inflight, max_keepalive_connections=self.inflight)
        async with httpx.AsyncClient(timeout=self.timeout, limits=limits) as client:
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

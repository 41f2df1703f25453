"""A loopback stand-in of the Anthropic Messages and Models APIs for thinking, written for the tests: spoken to by the
official SDK through its ``base_url`` (``http://127.0.0.1:P``).

    GET  /v1/models/{id}     the model's description (``ModelInfo`` with ``capabilities``) when ``describe`` is on
                             and the model is one of ``MODELS``; else 404 (a gateway without the Models API)
    POST /v1/messages        a reply with a ``thinking`` block (holding a decoy ``<answer>``) and the answer, when the
                             request's thinking is one the model accepts; else HTTP 400 with the API's own words

The models, as the API describes them (``MODELS``): ``claude-opus-4-7`` takes only adaptive thinking with
``output_config.effort`` in low … max (a budget gets "thinking.type.enabled is not supported for this model. Use
thinking.type.adaptive and output_config.effort …"); ``claude-haiku-4-5`` takes only budgets (adaptive thinking or
an effort gets a 400); ``claude-opus-4-6`` takes both, with efforts low, medium, high and max (``xhigh`` is refused).
``refusal(params)`` gives the 400 text for a request's params (None: accepted) — the batch stand-in uses it too.

``answer(prompt, params)`` writes the answer (params: the request body, so an answer may depend on the effort);
``thinking(prompt, params)`` the reasoning. ``bodies`` keeps every Messages body received, ``counts`` counts requests by
kind (``models``, ``messages``, ``refused``).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Callable

from aiohttp import web

EFFORTS = ("low", "medium", "high", "xhigh", "max")


def model_info(model_id: str, *, adaptive: bool, enabled: bool, efforts: tuple[str, ...] = ()) -> dict:
    """A Models API description of a model, shaped as the API returns it."""
    yes = lambda b: {"supported": bool(b)}   # noqa: E731
    return {
        "type": "model", "id": model_id, "display_name": model_id.replace("-", " ").title(),
        "created_at": "2026-04-16T00:00:00Z",
        "max_input_tokens": 200000, "max_tokens": 128000,
        "capabilities": {
            "batch": yes(True), "citations": yes(True), "code_execution": yes(False),
            "context_management": {"supported": False, "clear_thinking_20251015": None,
                                   "clear_tool_uses_20250919": None, "compact_20260112": None},
            "effort": {"supported": bool(efforts), **{e: yes(e in efforts) for e in EFFORTS}},
            "image_input": yes(True), "pdf_input": yes(True),
            "server_tools": {"supported": False},
            "structured_outputs": yes(True),
            "thinking": {"supported": adaptive or enabled,
                         "types": {"adaptive": yes(adaptive), "enabled": yes(enabled), "disabled": yes(True),
                                   "between_tools": yes(False)}},
        },
    }


MODELS = {
    "claude-opus-4-7": model_info("claude-opus-4-7", adaptive=True, enabled=False, efforts=EFFORTS),
    "claude-opus-4-6": model_info("claude-opus-4-6", adaptive=True, enabled=True,
                                  efforts=("low", "medium", "high", "max")),
    "claude-haiku-4-5": model_info("claude-haiku-4-5", adaptive=False, enabled=True),
}


def refusal(params: dict, models: dict = MODELS) -> str | None:
    """The 400 message the API gives a request with ``params`` (None: accepted)."""
    info = models.get(params.get("model"))
    if info is None:
        return None
    types = info["capabilities"]["thinking"]["types"]
    effort_cap = info["capabilities"]["effort"]
    kind = (params.get("thinking") or {}).get("type")
    effort = (params.get("output_config") or {}).get("effort")
    if kind == "enabled" and not types["enabled"]["supported"]:
        return ("thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and "
                "output_config.effort to control thinking behavior.")
    if kind == "adaptive" and not types["adaptive"]["supported"]:
        return "thinking.type.adaptive is not supported for this model."
    if effort is not None:
        if not effort_cap["supported"]:
            return "output_config.effort: effort is not supported for this model."
        if not effort_cap.get(effort, {}).get("supported"):
            ok = [e for e in EFFORTS if effort_cap[e]["supported"]]
            return (f"output_config.effort: Input should be {', '.join(repr(e) for e in ok[:-1])} or "
                    f"{ok[-1]!r}")
    if kind == "enabled" and params.get("max_tokens", 0) <= (params.get("thinking") or {}).get("budget_tokens", 0):
        return "max_tokens must be greater than thinking.budget_tokens"
    return None


def default_thinking(prompt: str, params: dict | None = None) -> str:
    return "Let me work it out. A first guess: <answer>{0}</answer>. No — check each member again."


class AnthropicStandIn:
    def __init__(self, *, answer: Callable[[str, dict], str], thinking: Callable[[str, dict], str] = default_thinking,
                 describe: bool = True, models: dict | None = None, host: str = "127.0.0.1"):
        self.answer, self.thinking, self.describe = answer, thinking, describe
        self.models = dict(MODELS if models is None else models)
        self.host, self.port = host, 0
        self.lock = threading.Lock()
        self.bodies: list[dict] = []
        self.counts: Counter = Counter()
        self._loop = None
        self._thread = None
        self._runner = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "AnthropicStandIn":
        ready = threading.Event()

        async def serve():
            app = web.Application()
            app.add_routes([web.get("/v1/models/{mid}", self._model), web.post("/v1/messages", self._messages)])
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]

        def main():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(serve())
            ready.set()
            try:
                self._loop.run_forever()
            finally:
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
                self._loop.close()

        self._thread = threading.Thread(target=main, daemon=True, name="anthropic-standin")
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    @staticmethod
    def _keyed(request: web.Request) -> bool:
        """A key came: ``x-api-key``, or a bearer token (what recent SDKs send)."""
        return bool(request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix(
            "Bearer ").strip())

    @staticmethod
    def _error(status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"type": "error", "error": {"type": kind, "message": message},
                                  "request_id": "req_standin"}, status=status)

    async def _model(self, request: web.Request) -> web.Response:
        mid = request.match_info["mid"]
        with self.lock:
            self.counts["models"] += 1
        if not self._keyed(request):
            return self._error(401, "authentication_error", "invalid x-api-key")
        if not self.describe or mid not in self.models:
            return self._error(404, "not_found_error", f"model: {mid}")
        return web.json_response(self.models[mid])

    async def _messages(self, request: web.Request) -> web.Response:
        if not self._keyed(request):
            return self._error(401, "authentication_error", "invalid x-api-key")
        params = await request.json()
        with self.lock:
            self.bodies.append(params)
            self.counts["messages"] += 1
        why = refusal(params, self.models)
        if why is not None:
            with self.lock:
                self.counts["refused"] += 1
            return self._error(400, "invalid_request_error", why)
        prompt = "".join(str(m.get("content", "")) for m in params.get("messages", []))
        text = self.answer(prompt, params)
        content = [{"type": "text", "text": text}]
        usage = {"input_tokens": max(1, len(prompt) // 4), "output_tokens": max(1, len(text) // 3)}
        if (params.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
            thought = self.thinking(prompt, params)
            content.insert(0, {"type": "thinking", "thinking": thought, "signature": "c2lnbmF0dXJl"})
            usage["output_tokens"] += len(thought) // 4
            usage["output_tokens_details"] = {"thinking_tokens": len(thought) // 4}
        return web.json_response({"id": "msg_standin", "type": "message", "role": "assistant",
                                  "model": params.get("model"), "content": content, "stop_reason": "end_turn",
                                  "stop_sequence": None, "usage": usage})

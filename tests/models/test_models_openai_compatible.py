"""The openai-compatible provider (direct OpenAI HTTP API over aiohttp) against the real loopback HTTP server
(tests/support/loopback.py) with scripted failures: 429 + Retry-After, 500, malformed JSON, a hang past the timeout,
plus a key-echoing 401, a rejected sampling parameter, an unreachable server, and the request it sends."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from core.models import ModelError, Request, RetryableError, SamplingParams, get_model
from tests.support.loopback import LoopbackServer

PROMPT = "Set A is {3, 17}. Set B is {17, 42}. What is A union B?"
KEY = "sk-compat-0123456789abcdefSECRET"


class ScriptedServer(LoopbackServer):
    """The loopback server, failing its first requests in the given order (then answering normally)."""

    def __init__(self, script: list[str], **kw):
        super().__init__(0.0, hang=3.0, retry_after_ms=1500, **kw)
        self.script = list(script)
        self.bodies: list[dict] = []
        self.auth: list[str] = []

    def _failure(self, key, n):
        return self.script.pop(0) if self.script else None

    async def _chat(self, body: bytes, auth: str = ""):
        self.bodies.append(json.loads(body))
        self.auth.append(auth)
        if self.script and self.script[0] == "reject-top_p":
            self.script.pop(0)
            return 400, {}, json.dumps({"error": {"message": "Unsupported parameter: 'top_p' is not supported "
                                                             "with this model.", "type": "invalid_request_error"}}).encode()
        return await super()._chat(body, auth)


@pytest.fixture
def server_factory():
    started = []

    def make(script=(), **kw):
        s = ScriptedServer(list(script), **kw).start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def call(model, params=None):
    async def go():
        try:
            return await model.complete(Request(PROMPT, params or SamplingParams()))
        finally:
            await model.aclose()
    return asyncio.run(go())


def test_success_sends_the_openai_body_and_reads_text_tokens(server_factory, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-must-never-travel-0000")
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    srv = server_factory()
    c = call(get_model("openai-compatible/loop", base_url=srv.base_url), SamplingParams(seed=7))
    assert c.text == "{1, 2}" and c.finish_reason == "stop"
    assert c.tokens_in == len(PROMPT) // 4 and c.tokens_out == 2
    assert c.cost_usd is None and c.dropped_params == () and c.latency_ms > 0
    (body,) = srv.bodies
    assert body == {"model": "loop", "messages": [{"role": "user", "content": PROMPT}], "temperature": 0.25,
                    "top_p": 0.25, "top_k": 20, "max_tokens": 512, "seed": 7}
    assert srv.auth == [""]          # keyless: no Authorization header, and never OPENAI_API_KEY


def test_429_is_retryable_with_the_servers_retry_after(server_factory):
    srv = server_factory(["429"])
    with pytest.raises(RetryableError) as info:
        call(get_model("openai-compatible/loop", base_url=srv.base_url))
    assert info.value.retry_after == pytest.approx(1.5)        # retry-after-ms wins over retry-after
    assert "rate limited (HTTP 429)" in info.value.reason


def test_500_is_retryable(server_factory):
    srv = server_factory(["500"])
    with pytest.raises(RetryableError, match=r"server error \(HTTP 500\): internal error") as info:
        call(get_model("openai-compatible/loop", base_url=srv.base_url))
    assert info.value.retry_after is None


def test_malformed_json_body_is_retryable(server_factory):
    srv = server_factory(["malformed"])
    with pytest.raises(RetryableError, match="malformed JSON"):
        call(get_model("openai-compatible/loop", base_url=srv.base_url))


def test_a_hang_past_the_timeout_is_retryable(server_factory):
    srv = server_factory(["timeout"])
    with pytest.raises(RetryableError, match="timed out"):
        call(get_model("openai-compatible/loop", base_url=srv.base_url, timeout=0.5))


def test_empty_completion_is_retryable(server_factory):
    srv = server_factory(answer="   ")
    with pytest.raises(RetryableError, match="empty completion"):
        call(get_model("openai-compatible/loop", base_url=srv.base_url))


def test_each_failure_then_success_through_the_runner_retry_loop(server_factory, tmp_path):
    """The same failures through the runner: every item ends answered once, after its retries."""
    from core import runner

    srv = server_factory(["429", "500", "malformed", "timeout"])
    srv.retry_after_ms = 50
    cfg = {"task": "setops", "samples": 1, "sizes": [2], "members": ["numbers"], "seed": 3}   # 4 items
    p = runner.run(cfg, "openai-compatible/loop", base_url=srv.base_url, db_path=tmp_path / "r.duckdb",
                   concurrency=1, call_timeout=0.5, max_attempts=6)
    assert p.status == "done" and p.done == 4 and p.failed == 0 and p.retries == 4
    assert srv.stats()["total_answered"] == 4


def test_401_is_a_model_error_and_the_echoed_key_is_redacted(server_factory):
    srv = server_factory(reject_key=True)
    with pytest.raises(ModelError, match="authentication failed") as info:
        call(get_model("openai-compatible/loop", base_url=srv.base_url, api_key=KEY))
    assert srv.auth == [f"Bearer {KEY}"]
    assert KEY not in str(info.value) and KEY not in repr(info.value)


def test_a_rejected_sampling_parameter_is_dropped_and_reported(server_factory):
    srv = server_factory(["reject-top_p"])
    model = get_model("openai-compatible/loop", base_url=srv.base_url)
    c = call(model)
    assert c.text == "{1, 2}" and c.dropped_params == ("top_p",)
    assert "top_p" in srv.bodies[0] and "top_p" not in srv.bodies[1]
    again = call(model)                           # remembered for this model object: not sent any more
    assert again.dropped_params == ("top_p",) and "top_p" not in srv.bodies[2]


def test_unreachable_server_is_a_retryable_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RetryableError, match="connection error"):
        call(get_model("openai-compatible/loop", base_url=f"http://127.0.0.1:{port}/v1", timeout=5))


def test_http_error_statuses_map_like_the_sdk_paths(server_factory):
    srv = server_factory()

    async def status(code):
        async def _chat(body, auth=""):
            return code, {}, json.dumps({"error": {"message": f"status {code}"}}).encode()
        srv._chat = _chat
        model = get_model("openai-compatible/loop", base_url=srv.base_url)
        try:
            await model.complete(Request(PROMPT))
        except (ModelError, RetryableError) as exc:
            return type(exc).__name__
        finally:
            await model.aclose()

    kinds = {code: asyncio.run(status(code)) for code in (400, 403, 404, 408, 409, 503)}
    assert kinds == {400: "ModelError", 403: "ModelError", 404: "ModelError", 408: "RetryableError",
                     409: "RetryableError", 503: "RetryableError"}

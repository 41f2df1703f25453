"""OpenAI and Anthropic cloud paths through their official SDKs, with an httpx transport replaying realistic
payloads (tests/data/replay/) via ``httpx2.MockTransport`` (the successor of httpx that openai>=3 / anthropic>=2 use;
the openai SDK also still takes a classic ``httpx`` client, tested once below): success, 429 + Retry-After, 5xx, malformed JSON, timeouts, connection errors, auth
errors, parameter handling. No network; the SDKs do all the HTTP/JSON work for real."""

from __future__ import annotations

import asyncio
import json

import httpx as classic_httpx
import httpx2 as httpx  # the transport both SDKs are built on now (anthropic accepts only httpx2 clients)
import pytest

from core.models import ModelError, Request, RetryableError, SamplingParams, estimate_cost, get_model
from tests.support import DATA

REPLAY = DATA / "replay"
FAKE_KEY = "sk-test-0123456789abcdefFAKEKEYcdef"


def payload(name: str) -> dict:
    return json.loads((REPLAY / name).read_text())


def reply(status: int, name: str | None = None, headers: dict | None = None, raw: bytes | None = None, lib=httpx):
    """A scripted response: JSON payload file, or raw bytes."""
    hdrs = {"content-type": "application/json", **(headers or {})}
    if raw is not None:
        return lambda request: lib.Response(status, headers=hdrs, content=raw, request=request)
    return lambda request: lib.Response(status, headers=hdrs, json=payload(name), request=request)


def fail_with(exc_type):
    def respond(request):
        raise exc_type("simulated", request=request)
    return respond


def replay_model(spec: str, script: list, lib=httpx, **kwargs):
    """Model whose SDK client talks to a MockTransport playing ``script`` (one entry per HTTP request)."""
    seen: list = []

    def handler(request):
        seen.append(request)
        if not script:
            raise AssertionError(f"unexpected extra request #{len(seen)}")
        return script.pop(0)(request)

    client = lib.AsyncClient(transport=lib.MockTransport(handler))
    kwargs.setdefault("api_key", FAKE_KEY)
    model = get_model(spec, http_client=client, timeout=5, **kwargs)
    return model, seen


def body(request: httpx.Request) -> dict:
    return json.loads(request.content)


def run(coro):
    return asyncio.run(coro)


PROMPT = "Set A is {3, 17}. Set B is {17, 42}. What is A union B? Answer with a JSON list."
REQ = Request(prompt=PROMPT, params=SamplingParams())


def assert_no_key(exc: BaseException, key: str = FAKE_KEY):
    for text in (str(exc), repr(exc), getattr(exc, "reason", "")):
        assert key not in text
        assert key[-8:] not in text
        assert "sk-test" not in text


# ---------------------------------------------------------------------------------------------------- OpenAI
def test_openai_success_records_tokens_cost_and_sends_sampling_params():
    model, seen = replay_model("openai/gpt-4o-mini", [reply(200, "openai_chat_completion.json")])
    c = run(model.complete(REQ))
    assert c.text == "[3, 17, 42]"
    assert (c.tokens_in, c.tokens_out) == (61, 9)
    assert c.finish_reason == "stop"
    assert c.cost_usd == pytest.approx(estimate_cost("openai/gpt-4o-mini", 61, 9))
    assert c.cost_usd == pytest.approx((61 * 0.15 + 9 * 0.60) / 1e6)
    assert c.latency_ms >= 0
    assert c.dropped_params == ("top_k",)
    (req,) = seen
    assert req.url.path.endswith("/chat/completions")
    b = body(req)
    assert b["model"] == "gpt-4o-mini"
    assert b["messages"] == [{"role": "user", "content": PROMPT}]
    assert b["temperature"] == 0.25 and b["top_p"] == 0.25
    assert b["max_completion_tokens"] == 512
    assert "top_k" not in b and "seed" not in b
    assert req.headers["authorization"] == f"Bearer {FAKE_KEY}"


def test_openai_sdk_also_accepts_a_classic_httpx_client():
    model, seen = replay_model("openai/gpt-4o-mini", [
        reply(200, "openai_chat_completion.json", lib=classic_httpx),
        reply(429, "openai_error_429.json", {"retry-after": "3"}, lib=classic_httpx),
        fail_with(classic_httpx.ReadTimeout),
    ], lib=classic_httpx)
    assert run(model.complete(REQ)).text == "[3, 17, 42]"
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert info.value.retry_after == 3.0
    with pytest.raises(RetryableError, match="timed out"):
        run(model.complete(REQ))
    assert len(seen) == 3


def test_openai_seed_is_sent_when_set():
    model, seen = replay_model("openai/gpt-4o-mini", [reply(200, "openai_chat_completion.json")])
    run(model.complete(Request(prompt=PROMPT, params=SamplingParams(seed=7, top_k=None))))
    b = body(seen[0])
    assert b["seed"] == 7


@pytest.mark.parametrize("headers, expected", [
    ({"retry-after": "20"}, 20.0),
    ({"retry-after-ms": "1500", "retry-after": "2"}, 1.5),
    ({}, None),
])
def test_openai_429_is_retryable_with_retry_after(headers, expected):
    hdrs = {"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0", **headers}
    model, seen = replay_model("openai/gpt-4o-mini", [reply(429, "openai_error_429.json", hdrs)])
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert info.value.retry_after == expected
    assert "429" in info.value.reason and "rate" in info.value.reason.lower()
    assert len(seen) == 1, "the SDK must not retry on its own (the runner does)"


@pytest.mark.parametrize("status", [500, 502, 503])
def test_openai_5xx_is_retryable(status):
    model, seen = replay_model("openai/gpt-4o-mini", [reply(status, "openai_error_500.json")])
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert str(status) in info.value.reason
    assert len(seen) == 1


@pytest.mark.parametrize("raw", [
    b'{"id": "chatcmpl-CXr8k", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assis',
    b"<html><body>502 Bad Gateway</body></html>",
    b"",
])
def test_openai_malformed_body_is_retryable(raw):
    model, _ = replay_model("openai/gpt-4o-mini", [reply(200, raw=raw)])
    with pytest.raises(RetryableError):
        run(model.complete(REQ))


def test_openai_empty_completion_is_retryable():
    model, _ = replay_model("openai/gpt-4o-mini", [reply(200, "openai_chat_completion_empty.json")])
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert "empty" in info.value.reason


@pytest.mark.parametrize("exc_type, word", [(httpx.ReadTimeout, "timed out"), (httpx.ConnectTimeout, "timed out"),
                                            (httpx.ConnectError, "connection")])
def test_openai_timeouts_and_connection_errors_are_retryable(exc_type, word):
    model, seen = replay_model("openai/gpt-4o-mini", [fail_with(exc_type)])
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert word in info.value.reason
    assert len(seen) == 1


def test_openai_401_is_model_error_without_the_key():
    model, _ = replay_model("openai/gpt-4o-mini", [reply(401, "openai_error_401.json")])
    with pytest.raises(ModelError) as info:
        run(model.complete(REQ))
    assert "401" in str(info.value) and "OPENAI_API_KEY" in str(info.value)
    assert_no_key(info.value)
    assert FAKE_KEY not in repr(model) and FAKE_KEY not in str(model)


def test_openai_404_unknown_model_is_model_error_with_reason():
    model, _ = replay_model("openai/gpt-9-imaginary", [reply(404, "openai_error_404_model.json")])
    with pytest.raises(ModelError) as info:
        run(model.complete(REQ))
    assert "gpt-9-imaginary" in str(info.value) and "404" in str(info.value)


def test_openai_reasoning_model_drops_temperature_and_top_p():
    model, seen = replay_model("openai/o3-mini", [reply(200, "openai_chat_completion.json")])
    c = run(model.complete(REQ))
    b = body(seen[0])
    assert "temperature" not in b and "top_p" not in b and "top_k" not in b
    assert set(c.dropped_params) == {"temperature", "top_p", "top_k"}


def test_openai_unsupported_parameter_is_dropped_resent_once_and_remembered():
    model, seen = replay_model("openai/gpt-4o-mini", [
        reply(400, "openai_error_400_unsupported_temperature.json"),
        reply(200, "openai_chat_completion.json"),
        reply(200, "openai_chat_completion.json"),
    ])
    c = run(model.complete(REQ))
    assert "temperature" in body(seen[0]) and "temperature" not in body(seen[1])
    assert body(seen[1])["top_p"] == 0.25
    assert "temperature" in c.dropped_params
    c2 = run(model.complete(REQ))
    assert len(seen) == 3 and "temperature" not in body(seen[2])
    assert "temperature" in c2.dropped_params


def test_openai_missing_key_is_a_clear_model_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = get_model("openai/gpt-4o-mini")
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        model.validate()
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        run(model.complete(REQ))


def test_openai_key_from_environment_is_used_but_never_shown(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    model, seen = replay_model("openai/gpt-4o-mini", [reply(500, "openai_error_500.json")], api_key=None)
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert seen[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert_no_key(info.value)
    assert FAKE_KEY not in repr(model)


# ------------------------------------------------------------------------------------------ openai-compatible
def test_openai_compatible_sends_top_k_and_never_the_openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    model, seen = replay_model("openai-compatible/smollm2", [reply(200, "openai_chat_completion.json")],
                               api_key=None, base_url="http://127.0.0.1:9/v1")
    c = run(model.complete(REQ))
    (req,) = seen
    assert str(req.url) == "http://127.0.0.1:9/v1/chat/completions"
    b = body(req)
    assert b["top_k"] == 20 and b["temperature"] == 0.25 and b["top_p"] == 0.25 and b["max_tokens"] == 512
    assert FAKE_KEY not in req.headers.get("authorization", "")
    assert c.dropped_params == ()
    assert c.cost_usd is None  # a self-hosted endpoint has no known price


def test_openai_compatible_needs_a_valid_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match="base URL"):
        get_model("openai-compatible/llama3")
    with pytest.raises(ModelError, match="http"):
        get_model("openai-compatible/llama3", base_url="localhost:8000")


# ------------------------------------------------------------------------------------------------- Anthropic
def test_anthropic_success_sends_temperature_top_p_top_k_for_older_models():
    model, seen = replay_model("anthropic/claude-3-5-haiku-20241022", [reply(200, "anthropic_message.json")])
    c = run(model.complete(REQ))
    assert c.text == '["apple", "pear"]'
    assert (c.tokens_in, c.tokens_out) == (58, 11)
    assert c.finish_reason == "end_turn"
    assert c.cost_usd == pytest.approx((58 * 0.80 + 11 * 4.00) / 1e6)
    assert c.dropped_params == ()
    (req,) = seen
    assert req.url.path == "/v1/messages"
    assert FAKE_KEY in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))
    b = body(req)
    assert b["model"] == "claude-3-5-haiku-20241022"
    assert b["messages"] == [{"role": "user", "content": PROMPT}]
    assert (b["temperature"], b["top_p"], b["top_k"], b["max_tokens"]) == (0.25, 0.25, 20, 512)


@pytest.mark.parametrize("name", ["claude-sonnet-4-5-20250929", "claude-haiku-4-5", "claude-opus-4-1-20250805",
                                  "claude-opus-4-6"])
def test_anthropic_4_1_to_4_6_models_drop_top_p_keep_temperature(name):
    model, seen = replay_model(f"anthropic/{name}", [reply(200, "anthropic_message.json")])
    c = run(model.complete(REQ))
    b = body(seen[0])
    assert "top_p" not in b and b["temperature"] == 0.25 and b["top_k"] == 20
    assert c.dropped_params == ("top_p",)


@pytest.mark.parametrize("name", ["claude-sonnet-4-20250514", "claude-opus-4-20250514", "claude-3-7-sonnet-latest"])
def test_anthropic_models_that_accept_both_get_both(name):
    model, seen = replay_model(f"anthropic/{name}", [reply(200, "anthropic_message.json")])
    run(model.complete(REQ))
    b = body(seen[0])
    assert b["top_p"] == 0.25 and b["temperature"] == 0.25


@pytest.mark.parametrize("name", ["claude-opus-4-7", "claude-sonnet-5-20260601", "claude-haiku-5-1"])
def test_anthropic_models_after_opus_4_6_get_no_sampling_parameters(name):
    model, seen = replay_model(f"anthropic/{name}", [reply(200, "anthropic_message.json")])
    c = run(model.complete(REQ))
    b = body(seen[0])
    assert not {"temperature", "top_p", "top_k"} & set(b)
    assert b["max_tokens"] == 512
    assert c.dropped_params == ("temperature", "top_p", "top_k")


def test_anthropic_deprecated_parameters_of_an_unknown_model_are_dropped_one_by_one():
    model, seen = replay_model("anthropic/claude-next-preview", [
        reply(400, "anthropic_error_400_temperature_deprecated.json"),
        reply(400, "anthropic_error_400_top_p_deprecated.json"),
        reply(200, "anthropic_message.json"),
        reply(200, "anthropic_message.json"),
    ])
    c = run(model.complete(REQ))
    assert [sorted({"temperature", "top_p", "top_k"} & set(body(r))) for r in seen] == [
        ["temperature", "top_k", "top_p"], ["top_k", "top_p"], ["top_k"]]
    assert c.dropped_params == ("temperature", "top_p")
    run(model.complete(REQ))
    assert len(seen) == 4 and sorted({"temperature", "top_p", "top_k"} & set(body(seen[3]))) == ["top_k"]


def test_anthropic_other_bad_requests_are_model_errors():
    model, seen = replay_model("anthropic/claude-haiku-4-5", [reply(400, "anthropic_error_400_prompt_too_long.json")])
    with pytest.raises(ModelError, match="prompt is too long"):
        run(model.complete(REQ))
    assert len(seen) == 1


def test_anthropic_rejection_of_temperature_with_top_p_is_handled_and_remembered():
    model, seen = replay_model("anthropic/claude-3-7-sonnet-20250219", [
        reply(400, "anthropic_error_400_temperature_top_p.json"),
        reply(200, "anthropic_message.json"),
        reply(200, "anthropic_message.json"),
    ])
    c = run(model.complete(REQ))
    assert "top_p" in body(seen[0]) and "top_p" not in body(seen[1])
    assert c.dropped_params == ("top_p",)
    run(model.complete(REQ))
    assert len(seen) == 3 and "top_p" not in body(seen[2])


def test_anthropic_seed_is_dropped():
    model, seen = replay_model("anthropic/claude-3-5-haiku-20241022", [reply(200, "anthropic_message.json")])
    c = run(model.complete(Request(prompt=PROMPT, params=SamplingParams(seed=3))))
    assert "seed" not in body(seen[0])
    assert c.dropped_params == ("seed",)


def test_anthropic_429_is_retryable_with_retry_after():
    hdrs = {"retry-after": "7", "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0", "request-id": "req_011CVtwxbUMYkHKtk3YxAbCd"}
    model, seen = replay_model("anthropic/claude-haiku-4-5", [reply(429, "anthropic_error_429.json", hdrs)])
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert info.value.retry_after == 7.0
    assert "429" in info.value.reason
    assert len(seen) == 1


@pytest.mark.parametrize("status, name", [(500, "anthropic_error_500.json"), (529, "anthropic_error_529.json")])
def test_anthropic_server_errors_are_retryable(status, name):
    model, seen = replay_model("anthropic/claude-haiku-4-5", [reply(status, name)])
    with pytest.raises(RetryableError) as info:
        run(model.complete(REQ))
    assert str(status) in info.value.reason
    assert len(seen) == 1


def test_anthropic_malformed_json_is_retryable():
    model, _ = replay_model("anthropic/claude-haiku-4-5",
                            [reply(200, raw=b'{"id": "msg_01XF", "type": "message", "content": [{"type": "te')])
    with pytest.raises(RetryableError):
        run(model.complete(REQ))


@pytest.mark.parametrize("exc_type", [httpx.ReadTimeout, httpx.ConnectError])
def test_anthropic_timeouts_and_connection_errors_are_retryable(exc_type):
    model, seen = replay_model("anthropic/claude-haiku-4-5", [fail_with(exc_type)])
    with pytest.raises(RetryableError):
        run(model.complete(REQ))
    assert len(seen) == 1


def test_anthropic_401_is_model_error_without_the_key():
    model, _ = replay_model("anthropic/claude-haiku-4-5", [reply(401, "anthropic_error_401.json")])
    with pytest.raises(ModelError) as info:
        run(model.complete(REQ))
    assert "401" in str(info.value) and "ANTHROPIC_API_KEY" in str(info.value)
    assert_no_key(info.value)
    assert FAKE_KEY not in repr(model)


def test_anthropic_missing_key_is_a_clear_model_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic/claude-haiku-4-5").validate()

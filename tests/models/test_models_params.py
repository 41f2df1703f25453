"""Sampling parameters, pricing, spec parsing, Retry-After parsing, key redaction — no network, no model."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from core.errors import ConfigError, UserError
from core.models import (
    PROVIDERS,
    ModelError,
    RetryableError,
    SamplingParams,
    estimate_cost,
    get_model,
    parse_spec,
    price_per_million,
)
from core.models.base import parse_retry_after, redact


def test_defaults_follow_the_paper_and_round_trip():
    p = SamplingParams()
    assert (p.temperature, p.top_p, p.top_k) == (0.25, 0.25, 20)
    d = p.to_dict()
    assert list(d) == ["temperature", "top_p", "top_k", "max_tokens", "seed", "answer_cap", "stop", "answer_format"]
    assert (d["answer_cap"], d["stop"], d["answer_format"]) == (True, None, "free")
    assert SamplingParams.from_dict(d) == p
    assert SamplingParams.from_dict({"temperature": 0.7}) == SamplingParams(temperature=0.7)
    assert SamplingParams.from_dict(None) == p
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.temperature = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("bad", [
    {"temperature": -0.1}, {"temperature": "hot"}, {"temperature": float("nan")}, {"top_p": 0}, {"top_p": 1.5},
    {"top_k": 0}, {"top_k": 2.5}, {"top_k": True}, {"max_tokens": 0}, {"seed": -1}, {"topk": 20},
    {"answer_cap": "yes"}, {"answer_format": "json"}, {"stop": [""]}, {"stop": ["a", "b", "c", "d", "e"]},
    {"stop": 3},
])
def test_bad_params_are_config_errors(bad):
    with pytest.raises(ConfigError):
        SamplingParams.from_dict(bad)


def test_none_means_do_not_send():
    p = SamplingParams(temperature=None, top_p=None, top_k=None)
    assert p.to_dict()["top_k"] is None


def test_pricing_matches_longest_prefix_and_is_honest_about_unknowns():
    assert price_per_million("openai/gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert price_per_million("openai/gpt-4o-2024-08-06") == (2.50, 10.00)
    assert price_per_million("anthropic/claude-opus-4-1-20250805") == (15.0, 75.0)
    assert price_per_million("anthropic/claude-opus-4-5") == (5.0, 25.0)
    assert estimate_cost("openai/gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert estimate_cost("local/smollm2", 10_000, 10_000) == 0.0
    assert estimate_cost("reference/solver", None, None) == 0.0
    assert estimate_cost("openai-compatible/llama3", 100, 100) is None
    assert estimate_cost("openai/some-future-model", 100, 100) is None
    assert estimate_cost("openai/gpt-4o", None, 5) is None


def test_specs_are_parsed_with_clear_errors():
    assert parse_spec(" OpenAI/gpt-4o ") == ("openai", "gpt-4o")
    for bad in ["gpt-4o", "openai/", "mystery/model", "", None]:
        with pytest.raises(ModelError):
            parse_spec(bad)
    with pytest.raises(UserError):  # ModelError is a UserError: the CLI prints one line
        get_model("local/llama-70b")
    with pytest.raises(ModelError):
        get_model("openai/gpt-4o", timeout=0)


def test_model_objects_describe_themselves_without_network():
    local = get_model("local/smollm2")
    solver = get_model("reference/solver")
    assert (local.spec, local.provider, local.default_concurrency) == ("local/smollm2", "local", 1)
    assert (solver.spec, solver.default_concurrency) == ("reference/solver", 64)
    oa = get_model("openai/gpt-4o-mini", api_key="sk-secret-abcdefgh12345678")
    an = get_model("anthropic/claude-haiku-4-5", api_key="sk-ant-secret-abcdefgh12345678")
    assert (oa.default_concurrency, an.default_concurrency) == (16, 8)
    assert "top_k" not in oa.supported_params and "top_k" in an.supported_params
    for m in (oa, an):
        assert "secret" not in repr(m) and "secret" not in str(m)
    info = {p.provider: p for p in PROVIDERS.values()}
    assert info["openai-compatible"].needs_base_url
    assert {p.provider: p.default_concurrency for p in PROVIDERS.values()} == {
        "local": 1, "reference": 64, "openai": 16, "anthropic": 8, "openai-compatible": 8, "vllm": 1}
    assert [p.provider for p in PROVIDERS.values() if not p.live] == ["vllm"]
    with pytest.raises(ModelError, match="--engine ray"):
        get_model("vllm/Qwen/Qwen2.5-0.5B-Instruct")


def test_retry_after_parsing():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-4"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None
    when = datetime.now(UTC) + timedelta(seconds=30)
    got = parse_retry_after({"retry-after": format_datetime(when, usegmt=True)})
    assert 25 <= got <= 31


def test_redaction():
    key = "sk-proj-AbCdEf0123456789xyz"
    assert key not in redact(f"bad key {key} here", key)
    assert "sk-ant-api03-ZZZZ" not in redact("Incorrect key sk-ant-api03-ZZZZyyyy")
    assert "sk-proj-****" not in redact("Incorrect API key provided: sk-proj-*****************1234.")
    assert redact("nothing to hide") == "nothing to hide"


def test_retryable_error_carries_reason_and_hint():
    e = RetryableError("rate limited", 2.5)
    assert e.reason == "rate limited" and e.retry_after == 2.5 and "2.5" in str(e)


def test_completion_to_dict_is_json_ready():
    import json

    from core.models import Completion

    c = Completion("[1]", 10, 2, 12.5, 0.0, "stop", ("top_k",))
    assert json.loads(json.dumps(c.to_dict())) == {"text": "[1]", "tokens_in": 10, "tokens_out": 2, "latency_ms": 12.5,
                                                   "cost_usd": 0.0, "finish_reason": "stop",
                                                   "dropped_params": ["top_k"], "reasoning": None,
                                                   "tokens_reasoning": None, "cost_reasoning_usd": None,
                                                   "reasoning_sent": None}


@pytest.mark.parametrize("url, why", [("http://127.0.0.1:99999/v1", "invalid port"), ("localhost:8080/v1", "look like"),
                                      ("ftp://host/v1", "look like"), ("http:///v1", "look like")])
def test_a_base_url_that_cannot_be_an_endpoint_is_refused_when_the_model_is_built(url, why):
    with pytest.raises(ModelError, match=why):
        get_model("openai-compatible/m", base_url=url)


@pytest.mark.parametrize("spec", ["reference/solver", "local/smollm2"])
def test_a_base_url_for_an_in_process_model_is_refused(spec):
    with pytest.raises(ModelError, match="does not apply"):
        get_model(spec, base_url="http://127.0.0.1:8080/v1")


def test_a_good_base_url_is_kept_stripped():
    assert get_model("openai-compatible/m", base_url=" http://127.0.0.1:8080/v1 ").base_url.rstrip("/") == \
        "http://127.0.0.1:8080/v1"

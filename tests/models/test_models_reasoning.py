"""Reasoning effort through the official SDKs (replayed payloads, tests/data/replay/) and their batch paths (the
batch stand-in): what each provider is sent for an effort, and a reply's reasoning, reasoning tokens and their cost
kept apart from its answer."""

from __future__ import annotations

import json

import pytest

import tests.models.test_models_replay as replay
from core import runner, store
from core.models import SamplingParams, estimate_cost
from core.models.reasoning import BUDGETS, split_inline
from tests.support.batch_standin import BatchStandIn

EFFORT = SamplingParams(reasoning_effort="high", max_tokens=300)


def test_openai_sends_reasoning_effort_and_keeps_reasoning_tokens_apart():
    model, seen = replay.replay_model("openai/o4-mini", [replay.reply(200, "openai_reasoning_completion.json")])
    c = replay.run(model.complete(replay.Request("p", EFFORT)))
    sent = replay.body(seen[0])
    assert sent["reasoning_effort"] == "high"
    assert sent["max_completion_tokens"] == 300 + BUDGETS["high"]     # reasoning tokens count against the cap
    assert "temperature" not in sent and "top_p" not in sent
    assert c.text == "<answer>{3, 17, 42}</answer>"
    assert (c.tokens_out, c.tokens_reasoning) == (466, 448)
    assert c.cost_reasoning_usd == pytest.approx(estimate_cost("openai/o4-mini", 0, 448))
    assert c.cost_usd == pytest.approx(estimate_cost("openai/o4-mini", 61, 466))
    assert json.loads(c.reasoning_sent) == {"reasoning_effort": "high"}


def test_openai_without_an_effort_sends_none_and_stores_none():
    model, seen = replay.replay_model("openai/gpt-4o-mini", [replay.reply(200, "openai_chat_completion.json")])
    c = replay.run(model.complete(replay.Request("p", SamplingParams())))
    assert "reasoning_effort" not in replay.body(seen[0])
    assert c.reasoning_sent is None and c.reasoning is None and c.tokens_reasoning == 0


def test_openai_model_refusing_the_effort_has_it_dropped_and_listed():
    refusal = lambda request: replay.httpx.Response(   # noqa: E731
        400, json={"error": {"message": "Unsupported parameter: 'reasoning_effort' is not supported with this "
                                        "model.", "type": "invalid_request_error", "param": "reasoning_effort",
                             "code": "unsupported_parameter"}}, request=request)
    model, seen = replay.replay_model("openai/gpt-4o-mini", [refusal, replay.reply(200, "openai_chat_completion.json")])
    c = replay.run(model.complete(replay.Request("p", EFFORT)))
    assert "reasoning_effort" in replay.body(seen[0]) and "reasoning_effort" not in replay.body(seen[1])
    assert replay.body(seen[1])["max_completion_tokens"] == 300
    assert "reasoning_effort" in c.dropped_params and c.reasoning_sent is None


def test_anthropic_thinking_budget_temperature_rule_and_blocks_apart():
    no_description = lambda request: replay.httpx.Response(   # noqa: E731  (the Models API asked first: 404)
        404, json={"type": "error", "error": {"type": "not_found_error", "message": "model"}}, request=request)
    model, seen = replay.replay_model("anthropic/claude-sonnet-4-5-20250929",
                                      [no_description, replay.reply(200, "anthropic_thinking_message.json")])
    params = SamplingParams(reasoning_effort="medium", max_tokens=300, temperature=0.25, top_p=0.25, top_k=20)
    c = replay.run(model.complete(replay.Request("p", params)))
    assert seen[0].url.path == "/v1/models/claude-sonnet-4-5-20250929"
    sent = replay.body(seen[1])
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS["medium"]}
    assert sent["max_tokens"] == 300 + BUDGETS["medium"] > sent["thinking"]["budget_tokens"]
    assert not {"temperature", "top_p", "top_k"} & set(sent)                # temperature stays at the API's 1
    assert {"temperature", "top_p", "top_k"} <= set(c.dropped_params)
    assert c.text == '<answer>{"apple", "pear"}</answer>'
    assert "plum" in c.reasoning and "plum" not in c.text                 # the decoy stays in the reasoning
    assert (c.tokens_out, c.tokens_reasoning) == (212, 196)
    assert c.cost_reasoning_usd == pytest.approx(estimate_cost("anthropic/claude-sonnet-4-5", 0, 196))
    assert json.loads(c.reasoning_sent) == {"thinking": {"type": "enabled", "budget_tokens": BUDGETS["medium"]}}


def test_anthropic_without_an_effort_sends_no_thinking():
    model, seen = replay.replay_model("anthropic/claude-sonnet-4-20250514", [replay.reply(200, "anthropic_message.json")])
    c = replay.run(model.complete(replay.Request("p", SamplingParams())))
    sent = replay.body(seen[0])
    assert "thinking" not in sent and sent["temperature"] == 0.25
    assert c.reasoning is None and c.reasoning_sent is None


@pytest.mark.parametrize("text, answer, reasoning", [
    ("<think>A is {1}. <answer>{9}</answer>?</think>\n<answer>{1}</answer>", "<answer>{1}</answer>",
     "A is {1}. <answer>{9}</answer>?"),
    ("opened by the template. <answer>{9}</answer></think><answer>{1}</answer>", "<answer>{1}</answer>",
     "opened by the template. <answer>{9}</answer>"),
    ("<thinking>the approach's own</thinking><answer>{1}</answer>", "<thinking>the approach's own</thinking>"
     "<answer>{1}</answer>", None),
    ("<answer>{1}</answer>", "<answer>{1}</answer>", None),
])
def test_inline_think_blocks_are_split_off(text, answer, reasoning):
    assert split_inline(text) == (answer, reasoning)


SMALL = {"task": "setops", "samples": 4, "sizes": [2], "members": ["numbers"], "seed": 9,
         "operations": ["union", "intersection"], "reasoning": ["low", "high"]}   # 16 items, 8 prompts
MODELS = {"openai": "openai/o4-mini", "anthropic": "anthropic/claude-haiku-4-5"}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_paths_carry_the_effort_of_each_item_and_keep_reasoning_apart(tmp_path, monkeypatch, provider):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin-openai-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-standin-0000")
    from core.config import run_spec

    spec = run_spec(SMALL)
    answers = {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}
    srv = BatchStandIn(answer=answers.__getitem__).start()
    db = tmp_path / "b.duckdb"
    try:
        p = runner.run(SMALL, MODELS[provider], base_url=srv.openai_url if provider == "openai" else srv.anthropic_url,
                       db_path=db, batch=True, poll_interval=0.01)
    finally:
        srv.stop()
    assert (p.status, p.total, p.done, p.correct) == ("done", 16, 16, 16)   # the decoy in the thinking never counts
    if provider == "anthropic":
        assert sorted(b["thinking"]["budget_tokens"] for b in srv.bodies) == sorted(
            [BUDGETS["high"]] * 8 + [BUDGETS["low"]] * 8)
    else:
        efforts = sorted(b["reasoning_effort"] for b in srv.bodies)
        assert efforts == ["high"] * 8 + ["low"] * 8
    with store.connect(db) as con:
        rows = con.execute("SELECT reasoning, reasoning_text, tokens_reasoning, tokens_answer, reasoning_sent, "
                           "response FROM v_results").fetchall()
    assert len(rows) == 16 and {r[0] for r in rows} == {"low", "high"}
    for effort, text, t_reason, t_answer, sent, response in rows:
        assert t_reason > 0 and t_answer > 0 and "{0}" not in response
        if provider == "anthropic":
            assert "{0}" in text
            assert json.loads(sent)["thinking"]["budget_tokens"] == BUDGETS[effort]
        else:
            assert text is None   # OpenAI keeps its reasoning hidden: only its tokens are known
            assert json.loads(sent) == {"reasoning_effort": effort}

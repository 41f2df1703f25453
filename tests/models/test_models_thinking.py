"""How a Claude model is asked to think, through the official SDK with replaying transports (tests/data/replay/):
the Models API's description decides adaptive thinking with an effort or a budget, asked once per model and kept in
the store; a model without a description is guessed from its name and corrected by its first refusal, re-sent
once — and many calls in flight meet that refusal once, not once each. The effort table's nearest-level rule, the
OpenAI levels beyond high, and the batch bodies."""

from __future__ import annotations

import asyncio
import json

import pytest

import tests.models.test_models_replay as replay
from core.models import SamplingParams, capabilities as C
from core.models.reasoning import ALLOWANCE, BUDGETS, accepted_values, nearest, openai_level
from tests.support.anthropic_standin import MODELS, refusal

httpx = replay.httpx


@pytest.fixture(autouse=True)
def _fresh_modes():
    C.forget_all()   # modes learnt by one test are not another's
    yield
    C.forget_all()


def at(effort: str, **kw) -> SamplingParams:
    return SamplingParams(reasoning_effort=effort, max_tokens=300, **kw)


def described(name: str):
    return lambda request: httpx.Response(200, json=MODELS[name], request=request)


def not_found(request):
    return httpx.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": "no such"}},
                          request=request)


def server(rules: str | None = None, describe: bool = True):
    """A handler behaving as the API does for the model named in each request (tests/support/anthropic_standin
    rules), answering with the thinking payload; ``rules`` names the model whose rules apply to every request."""
    seen = {"models": 0, "messages": 0, "refused": 0}

    def handle(request):
        if request.url.path.startswith("/v1/models/"):
            seen["models"] += 1
            name = request.url.path.rsplit("/", 1)[1]
            return described(name)(request) if describe and name in MODELS else not_found(request)
        seen["messages"] += 1
        params = replay.body(request)
        why = refusal({**params, "model": rules or params["model"]})
        if why is not None:
            seen["refused"] += 1
            return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error",
                                                                        "message": why}}, request=request)
        return replay.reply(200, "anthropic_thinking_message.json")(request)
    return handle, seen


def model_on(spec: str, handler):
    sent: list = []

    def record(request):
        sent.append(request)
        return handler(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(record))
    from core.models import get_model

    return get_model(spec, http_client=client, timeout=5, api_key=replay.FAKE_KEY), sent


def messages(sent) -> list[dict]:
    return [replay.body(r) for r in sent if r.url.path.endswith("/v1/messages")]


# ---------------------------------------------------------------------------------------------------- described
def test_capabilities_endpoint_decides_adaptive_thinking_at_max_once_per_model():
    handler, seen = server()
    model, sent = model_on("anthropic/claude-opus-4-7", handler)
    c = replay.run(model.complete(replay.Request("p", at("max", temperature=0.25))))
    replay.run(model.complete(replay.Request("q", at("low"))))
    assert seen == {"models": 1, "messages": 2, "refused": 0}        # described once, never refused
    assert sent[0].url.path == "/v1/models/claude-opus-4-7"
    first, second = messages(sent)
    assert first["thinking"] == {"type": "adaptive"} and first["output_config"] == {"effort": "max"}
    assert first["max_tokens"] == 300 + ALLOWANCE["max"]
    assert "temperature" not in first and "temperature" in c.dropped_params
    assert second["output_config"] == {"effort": "low"}
    assert json.loads(c.reasoning_sent) == {"thinking": {"type": "adaptive"}, "output_config": {"effort": "max"}}
    assert c.text == '<answer>{"apple", "pear"}</answer>' and "plum" in c.reasoning   # the decoy stays apart
    assert model.thinking_mode().source == "models-api"


def test_adaptive_model_without_an_effort_capability_gets_adaptive_thinking_without_an_effort():
    """A description with adaptive thinking but no effort capability: no output_config is sent (the stand-in refuses
    one, as the API would), the level is recorded as dropped, and nothing is refused."""
    from tests.support.anthropic_standin import model_info

    models = {**MODELS, "claude-next": model_info("claude-next", adaptive=True, enabled=False)}

    def handle(request):
        if request.url.path.startswith("/v1/models/"):
            return httpx.Response(200, json=models["claude-next"], request=request)
        why = refusal({**replay.body(request), "model": "claude-next"}, models)
        if why is not None:
            return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error",
                                                                        "message": why}}, request=request)
        return replay.reply(200, "anthropic_thinking_message.json")(request)

    model, sent = model_on("anthropic/claude-next", handle)
    c = replay.run(model.complete(replay.Request("p", at("medium"))))
    (body,) = messages(sent)
    assert body["thinking"] == {"type": "adaptive"} and "output_config" not in body
    assert "reasoning_effort" in c.dropped_params and c.text == '<answer>{"apple", "pear"}</answer>'


def test_budget_only_model_still_gets_a_budget():
    handler, seen = server()
    model, sent = model_on("anthropic/claude-haiku-4-5", handler)
    c = replay.run(model.complete(replay.Request("p", at("high"))))
    (body,) = messages(sent)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS["high"]} and "output_config" not in body
    assert body["max_tokens"] == 300 + BUDGETS["high"]
    assert seen["refused"] == 0 and not [d for d in c.dropped_params if d.startswith("reasoning_effort")]


def test_a_level_the_model_lacks_goes_as_the_nearest_and_is_recorded():
    handler, seen = server()
    model, sent = model_on("anthropic/claude-opus-4-6", handler)   # efforts low, medium, high, max: no xhigh
    c = replay.run(model.complete(replay.Request("p", at("xhigh"))))
    (body,) = messages(sent)
    assert body["output_config"] == {"effort": "high"}                 # high and max are as near: the lower
    assert "reasoning_effort=high" in c.dropped_params and seen["refused"] == 0
    c2 = replay.run(model.complete(replay.Request("p", at("minimal"))))
    assert messages(sent)[-1]["output_config"] == {"effort": "low"} and "reasoning_effort=low" in c2.dropped_params


def test_off_asks_for_no_thinking_and_keeps_sampling():
    handler, _ = server()
    model, sent = model_on("anthropic/claude-opus-4-6", handler)
    replay.run(model.complete(replay.Request("p", at("off", temperature=0.25))))
    (body,) = messages(sent)
    assert body["thinking"] == {"type": "disabled"} and "output_config" not in body and body["temperature"] == 0.25


def test_the_description_is_kept_in_the_store_and_not_asked_again(tmp_path):
    from core import store
    from core.store import model_info

    db = tmp_path / "m.duckdb"
    with store.connect(db):
        pass
    handler, seen = server()
    model, _ = model_on("anthropic/claude-opus-4-7", handler)
    model.use_store(db)
    replay.run(model.complete(replay.Request("p", at("high"))))
    with store.connect(db) as con:
        kept = C.ThinkingMode.from_json(model_info.get(con, "anthropic/claude-opus-4-7", ""))
    assert kept is not None and kept.form == "adaptive" and "max" in kept.efforts and kept.source == "models-api"
    C.forget_all()                                                      # as a new process
    handler2, seen2 = server()
    again, sent2 = model_on("anthropic/claude-opus-4-7", handler2)
    again.use_store(db)
    replay.run(again.complete(replay.Request("p", at("max"))))
    assert seen["models"] == 1 and seen2["models"] == 0
    assert messages(sent2)[0]["output_config"] == {"effort": "max"}


# ---------------------------------------------------------------------------------------------- learnt by refusal
def test_adaptive_only_model_without_description_refuses_a_budget_once_for_all_calls_in_flight():
    """A model the name says nothing about (guessed: budgets) behind a gateway without the Models API: 8 calls at
    once; the first is refused, the mode learnt, that call re-sent once; the 7 others waited and go adaptive."""
    handler, seen = server(rules="claude-opus-4-7", describe=False)
    model, sent = model_on("anthropic/claude-next", handler)

    async def many():
        return await asyncio.gather(*(model.complete(replay.Request(f"p{i}", at("high"))) for i in range(8)))

    done = replay.run(many())
    assert len(done) == 8 and all(c.text for c in done)
    assert seen["refused"] == 1 and seen["messages"] == 9 and seen["models"] == 1
    bodies = messages(sent)
    assert bodies[0]["thinking"]["type"] == "enabled"
    assert all(b["thinking"] == {"type": "adaptive"} and b["output_config"] == {"effort": "high"} for b in bodies[1:])
    assert model.thinking_mode().source == "refusal"


def test_older_model_refusing_adaptive_thinking_and_effort_is_resent_with_a_budget():
    """claude-opus-4-6 by name thinks adaptively; behind a gateway that serves a budget-only model under it (no
    description), the adaptive request is refused and re-sent once with a budget."""
    handler, seen = server(rules="claude-haiku-4-5", describe=False)
    model, sent = model_on("anthropic/claude-opus-4-6", handler)
    c = replay.run(model.complete(replay.Request("p", at("medium"))))
    first, second = messages(sent)
    assert first["thinking"] == {"type": "adaptive"} and first["output_config"] == {"effort": "medium"}
    assert second["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS["medium"]} and "output_config" not in second
    assert seen["refused"] == 1 and json.loads(c.reasoning_sent)["thinking"]["type"] == "enabled"


def test_a_known_name_without_description_meets_its_refusal_once_under_concurrency():
    """The name's rules are a guess too: claude-opus-4-6 (adaptive by name) behind a loopback gateway without the
    Models API that serves a budget-only model under that name, 8 calls truly in flight at once: the first goes
    alone and is refused once, the others wait and go with a budget."""
    from core.models import get_model
    from core.models.base import Request
    from tests.support.anthropic_standin import AnthropicStandIn

    srv = AnthropicStandIn(answer=lambda prompt, params: '<answer>{"apple", "pear"}</answer>', describe=False,
                           models={"claude-opus-4-6": MODELS["claude-haiku-4-5"]}).start()
    try:
        model = get_model("anthropic/claude-opus-4-6", base_url=srv.base_url, api_key=replay.FAKE_KEY, timeout=10)

        async def many():
            try:
                return await asyncio.gather(*(model.complete(Request(f"p{i}", at("medium"))) for i in range(8)))
            finally:
                await model.aclose()

        done = asyncio.run(many())
    finally:
        srv.stop()
    assert [c.text for c in done] == ['<answer>{"apple", "pear"}</answer>'] * 8
    assert all("<answer>{0}</answer>" in c.reasoning for c in done)       # the decoy stays in the reasoning
    assert srv.counts["refused"] == 1 and srv.counts["messages"] == 9 and srv.counts["models"] == 1
    assert [b["thinking"]["type"] for b in srv.bodies[1:]] == ["enabled"] * 8


def test_a_refusal_is_resent_once_only():
    """A server that refuses budgets and adaptive thinking alike: one re-send, then the call fails (no loop)."""
    from core.models import ModelError

    def handler(request):
        if request.url.path.startswith("/v1/models/"):
            return not_found(request)
        kind = replay.body(request)["thinking"]["type"]
        msg = ("thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and "
               "output_config.effort" if kind == "enabled" else "thinking.type.adaptive is not supported for "
                                                                   "this model.")
        return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": msg}},
                              request=request)

    model, sent = model_on("anthropic/claude-next", handler)
    with pytest.raises(ModelError, match="adaptive is not supported"):
        replay.run(model.complete(replay.Request("p", at("low"))))
    assert len(messages(sent)) == 2


@pytest.mark.parametrize("text, sent, form", [
    ("thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort",
     {"thinking": {"type": "enabled", "budget_tokens": 2048}}, "adaptive"),
    ("thinking.type.adaptive is not supported for this model.", {"thinking": {"type": "adaptive"}}, "budget"),
    ("output_config.effort: effort is not supported for this model.",
     {"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}}, "budget"),
    ("`temperature` is deprecated for this model.", {"thinking": {"type": "enabled", "budget_tokens": 2048}}, None),
])
def test_which_refusals_teach_the_thinking_form(text, sent, form):
    learnt = C.ThinkingMode.from_name("claude-next").learn_from_refusal(text, sent)
    assert (learnt.form if learnt else None) == form


def test_a_refused_effort_level_narrows_the_levels():
    mode = C.ThinkingMode("adaptive", C.ADAPTIVE_EFFORTS)
    learnt = mode.learn_from_refusal("output_config.effort: Input should be 'low', 'medium', 'high' or 'max'",
                                     {"thinking": {"type": "adaptive"}, "output_config": {"effort": "xhigh"}})
    assert learnt.form == "adaptive" and learnt.efforts == ("low", "medium", "high", "max")


# ---------------------------------------------------------------------------------------------------- the table
def test_nearest_level_rule():
    assert nearest("max", ["low", "medium", "high", "xhigh"]) == "xhigh"
    assert nearest("xhigh", ["high", "max"]) == "high"                # a tie goes to the lower level
    assert nearest("minimal", ["low", "high"]) == "low"
    assert nearest("high", []) is None
    assert openai_level("max") == "xhigh" and openai_level("off") == "off"
    assert openai_level("xhigh", accepted={"low", "medium", "high"}) == "high"


def test_openai_error_texts_list_the_values_taken():
    assert accepted_values("Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. "
                           "Supported values are: 'low', 'medium', and 'high'.") == {"low", "medium", "high"}
    assert accepted_values("Unsupported parameter: 'reasoning_effort' is not supported with this model.") is None


def test_openai_max_goes_as_xhigh_and_off_as_none_and_a_refused_value_as_the_nearest_listed():
    def refuse_xhigh(request):
        effort = replay.body(request).get("reasoning_effort")
        if effort in ("xhigh", "none"):
            return httpx.Response(400, json={"error": {
                "message": f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
                           "Supported values are: 'low', 'medium', and 'high'.", "type": "invalid_request_error",
                "param": "reasoning_effort", "code": "unsupported_value"}}, request=request)
        return replay.reply(200, "openai_reasoning_completion.json")(request)

    model, seen = replay.replay_model("openai/o4-mini", [refuse_xhigh] * 3)
    c = replay.run(model.complete(replay.Request("p", at("max"))))
    assert [replay.body(r)["reasoning_effort"] for r in seen] == ["xhigh", "high"]
    assert "reasoning_effort=high" in c.dropped_params
    assert replay.body(seen[1])["max_completion_tokens"] == 300 + ALLOWANCE["high"]
    assert json.loads(c.reasoning_sent) == {"reasoning_effort": "high"}
    replay.run(model.complete(replay.Request("p", at("xhigh"))))     # learnt: no second refusal
    assert replay.body(seen[2])["reasoning_effort"] == "high"


def test_openai_off_is_reasoning_effort_none():
    model, seen = replay.replay_model("openai/gpt-5.1", [replay.reply(200, "openai_reasoning_completion.json")])
    c = replay.run(model.complete(replay.Request("p", at("off"))))
    sent = replay.body(seen[0])
    assert sent["reasoning_effort"] == "none" and sent["max_completion_tokens"] == 300
    assert c.dropped_params.count("reasoning_effort") == 0


def test_off_refused_is_never_sent_as_a_thinking_level():
    """A model that cannot be asked for no reasoning (its refusal lists only thinking levels): ``off`` is not sent
    as the nearest level (that would ask for the reasoning ``off`` asks not to do) but dropped — the call re-sent
    once without an effort, the drop recorded; the same as an Anthropic model without ``thinking: disabled``."""
    from core.models.capabilities import ThinkingMode
    from core.models.reasoning import anthropic_fields

    assert openai_level("off", "openai", {"low", "medium", "high"}) is None
    assert openai_level("off", "openai", {"none", "low"}) == "off"
    no_off = ThinkingMode("adaptive", ("low", "medium", "high"), False, "models-api", True)
    assert anthropic_fields("off", no_off) == ({}, 0, ["reasoning_effort"])

    def refuse_none(request):
        effort = replay.body(request).get("reasoning_effort")
        if effort == "none":
            return httpx.Response(400, json={"error": {
                "message": "Unsupported value: 'reasoning_effort' does not support 'none' with this model. "
                           "Supported values are: 'low', 'medium', and 'high'.", "type": "invalid_request_error",
                "param": "reasoning_effort", "code": "unsupported_value"}}, request=request)
        return replay.reply(200, "openai_reasoning_completion.json")(request)

    model, seen = replay.replay_model("openai/o4-mini", [refuse_none] * 2)
    c = replay.run(model.complete(replay.Request("p", at("off"))))
    assert [replay.body(r).get("reasoning_effort") for r in seen] == ["none", None]
    assert "reasoning_effort" in c.dropped_params and c.reasoning_sent is None


# ---------------------------------------------------------------------------------------------------- batches
SMALL = {"task": "setops", "samples": 3, "sizes": [2], "members": ["numbers"], "seed": 5,
         "operations": ["union", "intersection"], "reasoning": ["low", "max"]}   # 12 items, 6 prompts


@pytest.mark.parametrize("name, thinking", [("claude-opus-4-7", "adaptive"), ("claude-haiku-4-5", "enabled")])
def test_anthropic_batch_bodies_carry_the_models_thinking(tmp_path, monkeypatch, name, thinking):
    from core import runner, store
    from core.config import run_spec
    from tests.support.batch_standin import BatchStandIn

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-standin-0000")
    spec = run_spec(SMALL)
    answers = {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}
    srv = BatchStandIn(answer=answers.__getitem__, refuse=refusal).start()
    db = tmp_path / "b.duckdb"
    try:
        p = runner.run(SMALL, f"anthropic/{name}", base_url=srv.anthropic_url, db_path=db, batch=True,
                       poll_interval=0.01)
    finally:
        srv.stop()
    assert (p.status, p.total, p.done, p.correct) == ("done", 12, 12, 12)
    kinds = {b["thinking"]["type"] for b in srv.bodies}
    assert kinds == {thinking}                                        # never one refused request
    if thinking == "adaptive":
        assert sorted(b["output_config"]["effort"] for b in srv.bodies) == ["low"] * 6 + ["max"] * 6
    else:
        assert sorted(b["thinking"]["budget_tokens"] for b in srv.bodies) == [BUDGETS["low"]] * 6 + [BUDGETS["max"]] * 6
    with store.connect(db) as con:
        sent = con.execute("SELECT DISTINCT reasoning, reasoning_sent FROM v_results").fetchall()
    assert {json.loads(s)["thinking"]["type"] for _, s in sent} == {thinking}


def test_anthropic_batch_of_an_unknown_model_probes_once_before_the_batch(tmp_path, monkeypatch):
    """A model the name says nothing about (guessed: budgets) that takes only adaptive thinking, behind an endpoint
    without the Models API, in a grid crossing efforts: one small live call finds out (refused), and every batch
    request goes adaptive; every item is answered."""
    from core import runner
    from core.config import run_spec
    from tests.support.batch_standin import BatchStandIn

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-standin-0000")
    spec = run_spec(SMALL)
    answers = {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}
    srv = BatchStandIn(answer=answers.__getitem__,
                       refuse=lambda p: refusal({**p, "model": "claude-opus-4-7"})).start()
    try:
        p = runner.run(SMALL, "anthropic/claude-next", base_url=srv.anthropic_url, db_path=tmp_path / "l.duckdb",
                       batch=True, poll_interval=0.01)
    finally:
        srv.stop()
    assert (p.status, p.done, p.correct) == ("done", 12, 12)
    assert [b["thinking"]["type"] for b in srv.bodies] == ["adaptive"] * 12   # no batch request refused
    assert srv.stats()["plain_calls"] == 1          # the probe: refused (a budget); the batch goes adaptive


def test_openai_compatible_off_switches_thinking_off_and_a_refused_value_goes_nearest():
    def server(request):
        sent = replay.body(request)
        if sent.get("reasoning_effort") == "xhigh":   # vLLM's own words for a value it does not take
            return httpx.Response(400, json={"error": {"message": "1 validation error: reasoning_effort: Input "
                                                                  "should be 'low', 'medium' or 'high'",
                                                       "type": "BadRequestError"}}, request=request)
        return replay.reply(200, "openai_chat_completion.json")(request)

    model, seen = replay.replay_model("openai-compatible/qwen3", [server] * 3, base_url="http://127.0.0.1:9/v1")
    c = replay.run(model.complete(replay.Request("p", at("off", stop=("</answer>",)))))
    off = replay.body(seen[0])
    assert off["chat_template_kwargs"] == {"enable_thinking": False} and "reasoning_effort" not in off
    assert off["stop"] == ["</answer>"] and off["max_tokens"] == 300 and not c.dropped_params
    c = replay.run(model.complete(replay.Request("p", at("max"))))
    assert [replay.body(r).get("reasoning_effort") for r in seen[1:]] == ["xhigh", "high"]
    assert replay.body(seen[2])["chat_template_kwargs"] == {"enable_thinking": True}
    assert "reasoning_effort=high" in c.dropped_params


def test_batch_file_bodies_send_the_nearest_level_as_the_live_server_gets_it_and_record_it():
    """export-batch for an OpenAI-compatible server: max (which the table's reasoning_effort lacks) goes as xhigh
    with xhigh's allowance, recorded in the dropped parameters as the live call records it; off sends the switch
    alone; a stop sequence left out while the model thinks is recorded too."""
    from core.runner.batch_files import request_body

    body, dropped = request_body("openai-compatible/qwen3", at("max", stop=("</answer>",)))
    assert body["reasoning_effort"] == "xhigh" and body["max_tokens"] == 300 + ALLOWANCE["xhigh"]
    assert body["chat_template_kwargs"] == {"enable_thinking": True} and "stop" not in body
    assert "reasoning_effort=xhigh" in dropped and "stop" in dropped
    body, dropped = request_body("openai-compatible/qwen3", at("off", stop=("</answer>",)))
    assert "reasoning_effort" not in body and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["stop"] == ["</answer>"] and body["max_tokens"] == 300 and dropped == []
    body, dropped = request_body("openai-compatible/qwen3", at("high"))
    assert body["reasoning_effort"] == "high" and body["max_tokens"] == 300 + ALLOWANCE["high"] and dropped == []


def test_anthropic_batch_records_each_items_own_substitution_and_drops(tmp_path, monkeypatch):
    """claude-opus-4-6 lacks xhigh: in a batch of a grid crossing low and xhigh, the xhigh items go at high. Each
    call records what its own request carried, as submitted: the level sent instead and the temperature left out
    while thinking (the run's own parameters sent the temperature); the run's closing note says so."""
    from core import runner, store
    from core.cli.commands.run import effort_notes
    from core.config import run_spec
    from tests.support.batch_standin import BatchStandIn

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-standin-0000")
    grid = {**SMALL, "reasoning": ["low", "xhigh"]}
    spec = run_spec(grid)
    answers = {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}
    srv = BatchStandIn(answer=answers.__getitem__, refuse=refusal).start()
    db = tmp_path / "b.duckdb"
    try:
        p = runner.run(grid, "anthropic/claude-opus-4-6", base_url=srv.anthropic_url, db_path=db, batch=True,
                       poll_interval=0.01, params={"temperature": 0.5})
    finally:
        srv.stop()
    assert (p.status, p.done) == ("done", 12)
    assert sorted(b["output_config"]["effort"] for b in srv.bodies) == ["high"] * 6 + ["low"] * 6
    assert not any("temperature" in b for b in srv.bodies)
    with store.connect(db) as con:
        rows = con.execute("SELECT v.reasoning, c.dropped_params, c.reasoning_sent FROM v_results v "
                           "JOIN calls c USING (cache_key)").fetchall()
        recorded = con.execute("SELECT count(*) FROM batch_requests WHERE dropped_params IS NOT NULL").fetchall()
    assert len(rows) == 12 and recorded[0][0] == 12
    for asked, dropped, sent in rows:
        dropped = json.loads(dropped)
        assert "temperature" in dropped
        assert ("reasoning_effort=high" in dropped) == (asked == "xhigh")
        assert json.loads(sent) == {"thinking": {"type": "adaptive"},
                                    "output_config": {"effort": "high" if asked == "xhigh" else "low"}}
    notes = effort_notes(db, p.run_id)
    assert len(notes) == 1 and "xhigh was sent as high" in notes[0] and "on 6 call(s)" in notes[0]


def test_openai_batch_records_each_items_own_substitution(tmp_path, monkeypatch):
    """OpenAI's reasoning_effort has no max: in a batch of a grid crossing low and max, the max items go as xhigh,
    and each call records it (the run's own parameters carry no effort: nothing to substitute run-wide)."""
    from core import runner, store
    from core.config import run_spec
    from tests.support.batch_standin import BatchStandIn

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin-openai-0000")
    spec = run_spec(SMALL)
    answers = {it["prompt"]: spec.task_module.solve(it) for it in spec.task_module.items(spec.config)}
    srv = BatchStandIn(answer=answers.__getitem__).start()
    db = tmp_path / "o.duckdb"
    try:
        p = runner.run(SMALL, "openai/o4-mini", base_url=srv.openai_url, db_path=db, batch=True, poll_interval=0.01)
    finally:
        srv.stop()
    assert (p.status, p.done) == ("done", 12)
    assert sorted(b["reasoning_effort"] for b in srv.bodies) == ["low"] * 6 + ["xhigh"] * 6
    with store.connect(db) as con:
        rows = con.execute("SELECT v.reasoning, c.dropped_params, c.reasoning_sent FROM v_results v "
                           "JOIN calls c USING (cache_key)").fetchall()
    assert len(rows) == 12
    for asked, dropped, sent in rows:
        assert ("reasoning_effort=xhigh" in json.loads(dropped)) == (asked == "max")
        assert json.loads(sent) == {"reasoning_effort": "xhigh" if asked == "max" else "low"}

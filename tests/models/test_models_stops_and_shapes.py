"""Replies end when complete and can be constrained (SPEC M9), per provider: stop sequences sent in each API's own
field and put back into the reply text, guided decoding for OpenAI-compatible servers (and noticing a server that
ignores it), refusal of constrained answers where an API cannot constrain them. The SDK providers talk to an
``httpx2.MockTransport``; the openai-compatible one to the real loopback HTTP server."""

from __future__ import annotations

import asyncio
import json

import httpx2 as httpx
import pytest

from core.models import ModelError, Request, SamplingParams, get_model
from core.models.base import AnswerShape, restore_stop
from tests.models.test_models_replay import FAKE_KEY, body, payload, replay_model
from tests.support.loopback import LoopbackServer

STOP = SamplingParams(stop=("</answer>",))
SHAPE = AnswerShape(gbnf='root ::= "<answer>{" [0-9, ]* "}</answer>"\n', regex=r"<answer>\{[0-9, ]*\}</answer>")


def test_restore_stop_puts_back_a_closing_tag_only_where_the_tag_was_left_open():
    assert restore_stop("<answer>{1, 2}", ("</answer>",), "stop") == "<answer>{1, 2}</answer>"
    assert restore_stop("<answer>{1}</answer> done", ("</answer>",), "stop") == "<answer>{1}</answer> done"
    assert restore_stop("no tags at all", ("</answer>",), "stop") == "no tags at all"
    assert restore_stop("<answer>{1, 2", ("</answer>",), "length") == "<answer>{1, 2"   # cut by the cap: not ended
    assert restore_stop("<answer>{1}", (), "stop") == "<answer>{1}"
    assert restore_stop("<answer>{1}", ("</answer>",), "stop_sequence", matched="</answer>") == "<answer>{1}</answer>"


def _openai_reply(text: str, finish: str = "stop"):
    doc = payload("openai_chat_completion.json")
    doc["choices"][0]["message"]["content"] = text
    doc["choices"][0]["finish_reason"] = finish
    return lambda request: httpx.Response(200, json=doc, request=request)


def test_openai_sends_stop_and_gives_back_the_reply_with_its_closing_tag():
    model, seen = replay_model("openai/gpt-4o-mini", [_openai_reply("<answer>{1, 2}")])
    c = asyncio.run(model.complete(Request("p", STOP)))
    assert body(seen[0])["stop"] == ["</answer>"]
    assert c.text == "<answer>{1, 2}</answer>" and "stop" not in c.dropped_params


def test_openai_reasoning_models_get_no_stop_and_say_so():
    model, seen = replay_model("openai/o3-mini", [_openai_reply("<answer>{1}</answer>")])
    c = asyncio.run(model.complete(Request("p", STOP)))
    assert "stop" not in body(seen[0]) and "stop" in c.dropped_params


def test_anthropic_sends_stop_sequences_and_puts_the_matched_one_back():
    doc = payload("anthropic_message.json")
    doc["content"][0]["text"] = "<answer>{'oak'}"
    doc["stop_reason"], doc["stop_sequence"] = "stop_sequence", "</answer>"
    model, seen = replay_model("anthropic/claude-haiku-4-5",
                               [lambda request: httpx.Response(200, json=doc, request=request)])
    c = asyncio.run(model.complete(Request("p", STOP)))
    assert body(seen[0])["stop_sequences"] == ["</answer>"]
    assert c.text == "<answer>{'oak'}</answer>" and c.finish_reason == "stop_sequence"


@pytest.mark.parametrize("spec", ["openai/gpt-4o-mini", "anthropic/claude-haiku-4-5"])
def test_constrained_answers_are_refused_before_a_run_where_the_api_cannot_constrain(spec, tmp_path):
    from core import runner, store

    db = tmp_path / "r.duckdb"
    with pytest.raises(ModelError, match="cannot constrain"):
        runner.start_run({"task": "setops", "samples": 1, "sizes": [2], "operations": ["union"]}, spec,
                         params={"answer_format": "constrained"}, api_key=FAKE_KEY, db_path=db)
    assert not db.exists() or store.list_runs(db).empty   # refused before anything was stored


class Echo(LoopbackServer):
    """The loopback server answering a fixed text and keeping the request bodies."""

    def __init__(self, text: str):
        super().__init__(0.0)
        self.text, self.bodies = text, []

    async def _chat(self, raw: bytes, auth: str = ""):
        self.bodies.append(json.loads(raw))
        doc = {"id": "x", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": self.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3}}
        return 200, {}, json.dumps(doc).encode()


@pytest.mark.parametrize("reply, honoured", [("<answer>{4, 5}", True), ("Sure! A set is a collection", False)])
def test_openai_compatible_sends_the_answer_form_and_notices_a_server_that_ignores_it(reply, honoured):
    server = Echo(reply).start()
    try:
        model = get_model("openai-compatible/m", base_url=server.base_url)
        params = SamplingParams(stop=("</answer>",), answer_format="constrained")

        async def go():
            try:
                return await model.complete(Request("p", params, shape=SHAPE))
            finally:
                await model.aclose()

        c = asyncio.run(go())
    finally:
        server.stop()
    sent = server.bodies[0]
    assert sent["stop"] == ["</answer>"]
    assert sent["grammar"] == SHAPE.gbnf and sent["guided_regex"] == SHAPE.regex
    assert sent["structured_outputs"] == {"regex": SHAPE.regex}
    assert ("answer_format" in c.dropped_params) is (not honoured)
    if honoured:
        assert c.text == "<answer>{4, 5}</answer>"


def test_free_answers_send_no_constraint():
    server = Echo("<answer>{1}</answer>").start()
    try:
        model = get_model("openai-compatible/m", base_url=server.base_url)
        asyncio.run(model.complete(Request("p", SamplingParams())))
    finally:
        server.stop()
    assert not {"grammar", "guided_regex", "structured_outputs", "stop"} & set(server.bodies[0])

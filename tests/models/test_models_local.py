"""The embedded model (SmolLM2 via llama-cpp-python) answers for real, in-process, with no key; and the reference
solver answers every item correctly."""

from __future__ import annotations

import asyncio
import time

import pytest

from core.models import Request, SamplingParams, get_model

SET_PROMPT = ("You are given two sets of numbers.\nSet A: [3, 8, 15]\nSet B: [8, 21]\n"
              "What is the union of A and B? Answer only with the members as a JSON list, for example [1, 2].")


@pytest.mark.slow
def test_embedded_model_answers_a_set_prompt_with_tokens_and_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = get_model("local/smollm2")
    model.validate()
    params = SamplingParams(max_tokens=16, seed=1)
    c = asyncio.run(model.complete(Request(prompt=SET_PROMPT, params=params)))
    assert c.text.strip()
    assert c.tokens_in > 20  # the chat template wraps the prompt
    assert 0 < c.tokens_out <= 16
    assert c.finish_reason in ("stop", "length")
    assert c.cost_usd == 0.0 and c.dropped_params == ()
    assert c.latency_ms > 0


@pytest.mark.slow
def test_embedded_model_is_reproducible_with_a_seed_and_honours_max_tokens():
    model = get_model("local/smollm2")
    params = SamplingParams(max_tokens=8, seed=123)
    a = model.complete_sync(Request(prompt=SET_PROMPT, params=params))
    b = model.complete_sync(Request(prompt=SET_PROMPT, params=params))
    assert a.text == b.text
    short = model.complete_sync(Request(prompt="Count from 1 to 100, separated by commas.",
                                        params=SamplingParams(max_tokens=4, seed=1)))
    assert short.tokens_out <= 4 and short.finish_reason == "length"


@pytest.mark.slow
def test_embedded_model_does_not_block_the_event_loop():
    """While a call runs in its worker thread, other coroutines keep running."""
    model = get_model("local/smollm2")
    ticks = []

    async def ticker():
        for _ in range(1000):
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.01)

    async def main():
        t = asyncio.create_task(ticker())
        c = await model.complete(Request(prompt=SET_PROMPT, params=SamplingParams(max_tokens=8, seed=2)))
        t.cancel()
        return c

    c = asyncio.run(main())
    assert c.tokens_out > 0
    assert len(ticks) >= 3, "the event loop was blocked during inference"


def test_embedded_model_reports_a_too_long_prompt_as_model_error(monkeypatch):
    pytest.importorskip("llama_cpp")
    from core.models import ModelError

    model = get_model("local/smollm2")
    with pytest.raises(ModelError, match="context"):
        model.complete_sync(Request(prompt="apple " * 20000, params=SamplingParams(max_tokens=8)))


def test_reference_solver_returns_the_truth_for_real_items():
    setops = pytest.importorskip("core.tasks.setops")
    from core.tasks import get_task

    task = get_task("setops")
    cfg = task.load_config({"task": "setops", "seed": 5})
    solver = get_model("reference/solver")

    async def answer_all(items):
        return await asyncio.gather(*(solver.complete(Request(prompt=it["prompt"], item=it, task="setops"))
                                      for it in items))

    items = [task.item(cfg, i) for i in range(min(20, task.count(cfg)))]
    completions = asyncio.run(answer_all(items))
    for it, c in zip(items, completions):
        assert task.score(it, c.text)["correct"] is True
        assert c.cost_usd == 0.0
    assert setops is not None


def test_reference_solver_without_item_is_a_model_error():
    from core.models import ModelError

    with pytest.raises(ModelError):
        asyncio.run(get_model("reference/solver").complete(Request(prompt="x")))


@pytest.mark.slow
def test_a_cancelled_or_timed_out_call_frees_the_model_quickly(monkeypatch):
    import itertools

    import core.models.providers.local_llama as local_llama

    prompt = "Write a very long story about a dragon, at least 2000 words."
    # time budget: generation stops at the deadline like at max_tokens, with what was written so far
    # a fake clock that advances 1 s per look: the 5.5 s budget runs out after the 6th generated token
    ticks = itertools.count()
    monkeypatch.setattr(local_llama, "_clock", lambda: float(next(ticks)))
    model = get_model("local/smollm2", timeout=5.5)
    c = model.complete_sync(Request(prompt=prompt, params=SamplingParams(max_tokens=2000, seed=1)))
    assert model.last_interrupt == "timeout" and c.finish_reason == "timeout"
    assert 0 < c.tokens_out <= 8 and c.text.strip()
    monkeypatch.undo()

    # cancellation from asyncio (the runner's wait_for): the worker thread stops and the lock is released
    model = get_model("local/smollm2", timeout=600)

    async def cancel_soon():
        try:
            await asyncio.wait_for(model.complete(Request(prompt=prompt, params=SamplingParams(max_tokens=2000))), 0.5)
        except asyncio.TimeoutError:
            pass

    asyncio.run(cancel_soon())  # asyncio.run waits for the worker thread to end
    assert model.last_interrupt == "cancelled", "the cancelled generation ran on in the background"
    ok = model.complete_sync(Request(prompt=SET_PROMPT, params=SamplingParams(max_tokens=4, seed=1)))
    assert ok.tokens_out > 0 and model.last_interrupt is None


@pytest.mark.slow
def test_embedded_model_stops_after_the_stop_sequence_keeping_it():
    """A grammar that lets the reply go on after </answer> shows the stop sequence at work: the reply ends with the
    tag (kept in the text, as the parsers expect), not with the text the grammar would have allowed after it."""
    from core.models.base import AnswerShape

    model = get_model("local/smollm2")
    shape = AnswerShape(gbnf='root ::= "<answer>{7}</answer>" [a-z ]{5,40}\n', regex=".*")
    c = model.complete_sync(Request(prompt="Write anything.", shape=shape, params=SamplingParams(
        max_tokens=40, seed=2, stop=("</answer>",), answer_format="constrained")))
    assert c.text == "<answer>{7}</answer>" and c.finish_reason == "stop"


@pytest.mark.slow
def test_embedded_model_constrained_answers_have_the_answers_form():
    from core.models.base import AnswerShape
    from core.tasks import setops

    cfg = setops.load_config({"task": "setops", "samples": 2, "sizes": [2], "operations": ["union", "intersection"],
                              "members": ["numbers", "words"], "lengths": [2]})
    model = get_model("local/smollm2")
    for i in setops.spread(cfg, 4):
        item = setops.item(cfg, i)
        shape = AnswerShape(**setops.answer_grammar(cfg, item))
        c = model.complete_sync(Request(prompt=item["prompt"], shape=shape, params=SamplingParams(
            max_tokens=setops.reply_cap(cfg, item), stop=setops.STOP, answer_format="constrained", seed=i)))
        assert c.finish_reason == "length" or shape.matches(c.text), c.text
        if c.finish_reason != "length":
            assert setops.score(item, c.text)["followed"]


@pytest.mark.slow
def test_a_run_records_the_reply_cap_of_each_call_and_the_rule_with_the_run(tmp_path):
    """An answer-only approach: each call's stored parameters hold the cap sized to its item's answer (below the
    512 default) and the stop sequence; the run's parameters hold the rule (answer_cap, stop, answer_format)."""
    import json

    from core import runner, store
    from core.tasks import setops

    cfg = {"task": "setops", "seed": 5, "samples": 1, "sizes": [2], "operations": ["union", "intersection"],
           "members": ["numbers"], "lengths": [2], "approaches": ["baseline"]}
    p = runner.run(cfg, "local/smollm2", params={"answer_format": "constrained"}, db_path=tmp_path / "r.duckdb")
    assert p.done == 2
    with store.connect(tmp_path / "r.duckdb") as con:
        run_params = json.loads(con.execute("SELECT params_json FROM runs").fetchone()[0])
        calls = con.execute("SELECT i.set_a, i.set_b, c.params_json, c.tokens_out FROM items i JOIN results r "
                            "USING (run_id, idx) JOIN calls c USING (cache_key)").fetchall()
    assert (run_params["answer_cap"], run_params["stop"], run_params["answer_format"]) == \
        (True, ["</answer>"], "constrained")
    loaded = setops.load_config(cfg)
    for set_a, set_b, params_json, tokens_out in calls:
        sent = json.loads(params_json)
        cap = setops.reply_cap(loaded, {"approach": "baseline", "set_a": json.loads(set_a),
                                        "set_b": json.loads(set_b)})
        assert sent["max_tokens"] == cap < 512 and tokens_out <= cap and sent["stop"] == ["</answer>"]


@pytest.mark.slow
def test_embedded_model_samples_exactly_like_create_chat_completion_with_the_stored_parameters():
    """Our call (chat template + stopping criteria) samples as llama-cpp-python's create_chat_completion does with
    the stored parameters and nothing else (no repeat penalty slipped in by a lower-level default)."""
    from core.models.providers.local_llama import get_llama

    params = SamplingParams(max_tokens=48, seed=7)
    ours = get_model("local/smollm2").complete_sync(Request(prompt=SET_PROMPT, params=params))
    theirs = get_llama().create_chat_completion(
        messages=[{"role": "user", "content": SET_PROMPT}], max_tokens=48, seed=7, temperature=0.25, top_p=0.25,
        top_k=20, min_p=0.0)
    assert ours.text == theirs["choices"][0]["message"]["content"]
    assert ours.tokens_out == theirs["usage"]["completion_tokens"]

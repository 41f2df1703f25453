"""The embedded model's warm-up: when it loads, the chat template's opening (shared by every prompt) is evaluated
into the KV cache, so the first call evaluates only the rest of its prompt — and replies as it does without it.

The reply check runs a few items of the shipped recording's config on an emptied context, once cold (the whole
prompt evaluated in one go) and once warmed, and compares the texts. llama.cpp's arithmetic can depend on how a
prompt is cut into evaluation batches, so this is the check that the cut the warm-up makes leaves these replies as
they are (on the machine that runs it)."""

from __future__ import annotations

import pytest

from core.analysis import presenter as P
from core.config import read_run_spec
from core.models import Request
from core.models.providers import embedded, local_llama as L
from core.runner.plan import make_plan, run_items

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not embedded.installed(embedded.resolve("default")),
                                                   reason="local/default is not installed")]

ITEMS = 2   # draw 0 of the recording's config, as sampled and swapped


@pytest.fixture(scope="module")
def demo():
    path = P.recording_path()
    spec = read_run_spec(path.with_suffix(".yaml"))
    plan = make_plan(dict(spec.config_dict(), samples=ITEMS // 2), "local/default", spec.params, None, None, None,
                     "test")
    return plan, run_items(plan)


def _request(plan, item) -> Request:
    return Request(prompt=item["prompt"], params=plan.params_for(item), item=item, task=plan.task_name,
                   shape=plan.shape_for(item))


def test_the_warm_prefix_opens_every_prompt_and_is_reused(demo, monkeypatch):
    plan, items = demo
    llama = L.get_llama("default")
    prefix = L.chat_prefix_tokens(llama)
    assert 0 < len(prefix) < 64
    formatter = L.chat_formatter(llama)
    for item in items:
        rendered = formatter(messages=[{"role": "user", "content": item["prompt"]}])
        whole = llama.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True)
        assert whole[:len(prefix)] == prefix
    model = L.LocalLlamaModel("local/default", "default")
    with L.call_lock("default"):
        llama.reset()
        assert L.warm_chat_prefix(llama) == len(prefix) == llama.n_tokens
    evaluated = []
    real_eval = llama.eval
    monkeypatch.setattr(llama, "eval", lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens)))
    got = model.complete_sync(_request(plan, items[0]))
    assert evaluated[0] == got.tokens_in - len(prefix)     # the warm tokens were not evaluated again


def test_warm_and_cold_first_calls_give_the_same_replies(demo):
    plan, items = demo
    llama = L.get_llama("default")
    model = L.LocalLlamaModel("local/default", "default")
    replies = {}
    for warm in (False, True):
        for item in items:
            with L.call_lock("default"):
                llama.reset()
                if warm:
                    L.warm_chat_prefix(llama)
            replies[warm, item["idx"]] = model.complete_sync(_request(plan, item)).text
    for item in items:
        assert replies[True, item["idx"]] == replies[False, item["idx"]], item["idx"]

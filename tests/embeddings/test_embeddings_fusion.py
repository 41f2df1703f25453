"""Fusion (E2): prompt and word budget, reply cleaning, and fusing through a chat model with the response cache
(OpenAI SDK over a replayed httpx transport; the embedded model in a slow test)."""

import json

import pytest

from core.embeddings.fusion import clean_fusion, fuse_tuples, fusion_prompt, max_words
from core.embeddings.samples import SentenceTuple

TRIPLES = [SentenceTuple("a1", "The cat slept on the warm mat all day.", "The dog barked at the mail carrier.",
                         "Then the mail carrier left a parcel.", "", "")]


def test_word_budget_and_prompt():
    a, b = "one two three four five", "six seven eight nine ten eleven twelve"
    assert max_words(a, b) == 6            # ½·(5 + 7)
    assert max_words("a b c", "d e") == 2  # ½·5 rounded down
    p = fusion_prompt(a, b)
    assert "no more than 6 words" in p and a in p and b in p and "paraphraser" in p


@pytest.mark.parametrize("reply, want", [
    ("Merged sentence: The cat slept.", "The cat slept."),
    ('"The cat slept."\n\nNote: I kept it short.', "The cat slept."),
    ("  The cat slept.  ", "The cat slept."),
    ("Here is the merged sentence:\nSentence 1: The cat.\nSentence 2: The dog.\nThe cat and dog slept.",
     "The cat and dog slept."),
    ("", ""),
])
def test_clean_fusion(reply, want):
    assert clean_fusion(reply) == want


def _chat_transport(calls):
    import httpx

    def handler(request):
        body = json.loads(request.content)
        calls.append(body)
        prompt = body["messages"][-1]["content"]
        text = "Merged: " + prompt.split("Sentence 1: ")[1].split("\n")[0].split()[0] + " fused."
        return httpx.Response(200, json={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 4, "total_tokens": 44}})
    return httpx.MockTransport(handler)


def test_fuse_through_openai_replay_uses_the_call_cache(tmp_path):
    import httpx

    calls = []
    db = tmp_path / "s.duckdb"
    kw = dict(api_key="sk-test", db_path=db, http_client=httpx.AsyncClient(transport=_chat_transport(calls)))
    out = fuse_tuples(TRIPLES, "openai/gpt-4o-mini", **kw)
    assert (out[0].s1, out[0].s2) == ("The fused.", "The fused.")
    assert len(calls) == 2 and calls[0]["temperature"] == 0.5
    assert "no more than" in calls[0]["messages"][-1]["content"]
    kw["http_client"] = httpx.AsyncClient(transport=_chat_transport(calls))
    again = fuse_tuples(TRIPLES, "openai/gpt-4o-mini", **kw)
    assert again == out and len(calls) == 2          # second time: all from the cache


@pytest.mark.slow
def test_fuse_with_the_embedded_model(tmp_path):
    pytest.importorskip("llama_cpp")
    out = fuse_tuples(TRIPLES, "local/smollm2", db_path=tmp_path / "s.duckdb")
    assert out[0].s_prev == TRIPLES[0].s_prev
    assert out[0].s1 and out[0].s2

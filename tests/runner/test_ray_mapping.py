"""The pure Ray/vLLM mappings (issue 21): request line -> engine row -> output line, read back by import-batch's
parser; a truncated reply is marked ``length``."""

from core.models.batch.jsonl import outcome_of, request_line
from core.runner.ray_mapping import engine_output_line, engine_row, finish_reason, http_output_line


def _req(max_tokens=16):
    return request_line("k1", "m", "List the words.", {"temperature": 0.0, "max_tokens": max_tokens, "seed": 3})


def test_engine_row_carries_messages_and_sampling():
    row = engine_row(_req())
    assert row["custom_id"] == "k1"
    assert row["messages"] == [{"role": "user", "content": "List the words."}]
    assert row["sampling_params"] == {"temperature": 0.0, "max_tokens": 16, "seed": 3}


def test_engine_output_round_trips_and_finish_from_counts():
    row = engine_row(_req(max_tokens=4))
    full = dict(row, generated_text="a b", num_generated_tokens=2, num_input_tokens=7)
    cut = dict(row, generated_text="a b c d", generated_tokens=[1, 2, 3, 4], prompt_token_ids=[0] * 7)
    ok, trunc = outcome_of(engine_output_line(full)), outcome_of(engine_output_line(cut))
    assert (ok.kind, ok.text, ok.tokens_in, ok.tokens_out, ok.finish_reason) == ("succeeded", "a b", 7, 2, "stop")
    assert (trunc.kind, trunc.tokens_out, trunc.finish_reason) == ("succeeded", 4, "length")


def test_finish_reason_unknown_without_counts():
    assert finish_reason(None, 4) is None
    assert finish_reason(3, None) == "stop"


def test_http_output_lines():
    body = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": {}}
    assert outcome_of(http_output_line("k", 200, body)).kind == "succeeded"
    assert outcome_of(http_output_line("k", 200, None)).kind == "errored"
    bad = outcome_of(http_output_line("k", 500, None))
    assert bad.kind == "errored" and "500" in bad.error

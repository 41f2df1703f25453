"""The pure Ray/vLLM mappings (issue 21): request line -> engine row -> output line, read back by import-batch's
parser; a truncated reply is marked ``length`` — also when the engine has consumed ``sampling_params`` (Ray 2.60's
vLLM stage pops it off the row), from the ``reply_cap`` column; an engine failure is the item's error line."""

import json

import numpy as np
import pytest

from core.models.batch.jsonl import outcome_of, request_line
from core.runner.ray_mapping import engine_output_line, engine_row, finish_reason, http_output_line
from core.runner.ray_workers import LINE, REQUEST, as_line, vllm_postprocess, vllm_preprocess


def _req(max_tokens=16, **extra):
    return request_line("k1", "m", "List the words.", {"temperature": 0.0, "max_tokens": max_tokens, "seed": 3,
                                                        **extra})


def _after_engine(row: dict, **out) -> dict:
    """What the postprocess gets in Ray 2.60: the row that went in, less what the vLLM stage popped off it
    (``sampling_params``), plus the engine's output columns."""
    row = {k: v for k, v in row.items() if k != "sampling_params"}
    return {**row, **out}


def test_engine_row_carries_messages_sampling_stop_and_cap():
    row = engine_row(_req(stop=["</answer>"]))
    assert row["custom_id"] == "k1"
    assert row["messages"] == [{"role": "user", "content": "List the words."}]
    assert row["sampling_params"] == {"temperature": 0.0, "max_tokens": 16, "seed": 3, "stop": ["</answer>"]}
    assert row["reply_cap"] == 16 and "model" not in row    # a "model" column would make vLLM look for a LoRA
    assert engine_row(_req(stop="END"))["sampling_params"]["stop"] == ["END"]
    assert "stop" not in engine_row(_req(stop=[]))["sampling_params"]


def test_engine_output_round_trips_and_finish_from_counts():
    row = engine_row(_req(max_tokens=4))
    full = _after_engine(row, generated_text="a b", num_generated_tokens=2, num_input_tokens=7)
    cut = _after_engine(row, generated_text="a b c d", generated_tokens=[1, 2, 3, 4], prompt_token_ids=[0] * 7)
    ok, trunc = outcome_of(engine_output_line(full)), outcome_of(engine_output_line(cut))
    assert (ok.kind, ok.text, ok.tokens_in, ok.tokens_out, ok.finish_reason) == ("succeeded", "a b", 7, 2, "stop")
    assert (trunc.kind, trunc.tokens_out, trunc.finish_reason) == ("succeeded", 4, "length")


def test_counts_from_numpy_columns_of_a_ray_block():
    row = _after_engine(engine_row(_req(max_tokens=1)), generated_text="a", generated_tokens=np.array([5]),
                        prompt_token_ids=np.array([1, 2, 3]))
    out = outcome_of(engine_output_line(row))
    assert (out.tokens_in, out.tokens_out, out.finish_reason) == (3, 1, "length")   # one token, not token id 5
    row = _after_engine(engine_row(_req()), generated_text="a", num_generated_tokens=np.int64(3),
                        num_input_tokens=np.int64(9))
    assert outcome_of(engine_output_line(row)).tokens_out == 3


def test_finish_reason_unknown_without_counts():
    assert finish_reason(None, 4) is None
    assert finish_reason(3, None) == "stop"
    assert finish_reason(4, 4) == "length"


def test_an_engine_failure_is_the_items_error_line():
    row = _after_engine(engine_row(_req()), generated_text="", num_generated_tokens=0, num_input_tokens=0,
                        __inference_error__="ValueError: prompt is longer than max_model_len")
    out = outcome_of(engine_output_line(row))
    assert out.kind == "errored" and "max_model_len" in out.error
    # Ray hands such a row past the postprocess, whole (its request line still in it): as_line makes it an error
    whole = {REQUEST: json.dumps(_req()), **row}
    assert outcome_of(json.loads(as_line(whole)[LINE])).kind == "errored"


def test_worker_functions_round_trip():
    line = json.dumps(_req(max_tokens=2))
    row = vllm_preprocess({REQUEST: line})
    done = vllm_postprocess(_after_engine(row, generated_text="x y", num_generated_tokens=2, num_input_tokens=4))
    assert outcome_of(json.loads(as_line(done)[LINE])).finish_reason == "length"


def test_http_output_lines():
    body = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": {}}
    assert outcome_of(http_output_line("k", 200, body)).kind == "succeeded"
    assert outcome_of(http_output_line("k", 200, None)).kind == "errored"
    bad = outcome_of(http_output_line("k", 500, None))
    assert bad.kind == "errored" and "500" in bad.error


def test_the_vllm_output_columns_we_read_exist_in_ray():
    """Ray's own output model of the vLLM stage still has the columns the mapping reads (catches a rename)."""
    stage = pytest.importorskip("ray.llm._internal.batch.stages.vllm_engine_stage")
    fields = set(stage.vLLMOutputData.model_fields)
    assert {"generated_text", "generated_tokens", "num_generated_tokens", "num_input_tokens",
            "prompt_token_ids"} <= fields

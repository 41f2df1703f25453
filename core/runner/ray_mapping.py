"""Pure mappings shared by the Ray paths: an OpenAI batch request line (what ``export_batch`` writes) to
the row Ray Data's vLLM processor takes, and an engine's or an HTTP endpoint's answer back to an OpenAI batch output
line (what ``import_batch`` reads). No Ray import here: these run and are tested on any CPU machine.

The finish reason of a vLLM engine row is derived from its token counts and the request's cap — ``length`` when the
generated tokens reached ``max_tokens``, else ``stop`` — never hard-coded, so a truncated reply is stored as one. The
cap travels in its own column (``reply_cap``): Ray 2.60's vLLM stage pops ``sampling_params`` off the row before the
postprocess sees it. The engine's output columns (``vLLMOutputData`` in ray/llm/_internal/batch/stages/
vllm_engine_stage.py) are ``generated_text``, ``generated_tokens``, ``num_generated_tokens``, ``prompt``,
``prompt_token_ids``, ``num_input_tokens`` …; a row the engine failed on (``should_continue_on_error``) carries its
message in ``__inference_error__`` and becomes an error line.
"""

from __future__ import annotations

SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop")
ERROR_COLUMN = "__inference_error__"     # Ray's column for a row the engine failed on (should_continue_on_error)


def engine_row(request: dict) -> dict:
    """The vLLM processor row for one OpenAI batch request line: custom_id, chat messages, sampling params, and the
    reply cap again as ``reply_cap`` (the engine consumes ``sampling_params``; the finish reason needs the cap)."""
    body = request.get("body") or {}
    sampling = {k: body[k] for k in SAMPLING_KEYS if body.get(k) is not None}
    if "max_completion_tokens" in body and "max_tokens" not in sampling:
        sampling["max_tokens"] = body["max_completion_tokens"]
    if "stop" in sampling:
        sampling["stop"] = [sampling["stop"]] if isinstance(sampling["stop"], str) else list(sampling["stop"])
        if not sampling["stop"]:
            del sampling["stop"]
    return {"custom_id": request["custom_id"], "messages": list(body.get("messages") or []),
            "sampling_params": sampling, "reply_cap": sampling.get("max_tokens")}


def finish_reason(n_generated, cap) -> str | None:
    """``length`` when the generated token count reached the cap, ``stop`` when below it, None when unknown."""
    if n_generated is None:
        return None
    if cap is not None and int(n_generated) >= int(cap):
        return "length"
    return "stop"


def _count(value):
    """A token count from a count or a sequence of token ids (lists, numpy arrays out of Ray blocks)."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    try:
        return len(value)
    except TypeError:                            # a number (int, numpy scalar)
        try:
            return int(value)
        except (TypeError, ValueError):
            return None


def success_line(custom_id: str, text: str, tokens_in, tokens_out, finish: str | None) -> dict:
    """An OpenAI batch output line for a completed chat completion."""
    return {"custom_id": custom_id, "error": None, "response": {"status_code": 200, "body": {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out}}}}


def error_line(custom_id: str, message: str, status: int | None = None) -> dict:
    """An OpenAI batch output line for a request that did not succeed (HTTP status when there was one)."""
    if status is not None:
        return {"custom_id": custom_id, "error": None,
                "response": {"status_code": int(status), "body": {"error": {"message": message}}}}
    return {"custom_id": custom_id, "error": {"code": "request_failed", "message": message}, "response": None}


def engine_output_line(row: dict) -> dict:
    """The OpenAI batch output line for one row out of the vLLM processor (``generated_text``, token ids or counts,
    and ``reply_cap`` — else the ``sampling_params`` the row went in with, when still there — as the cap)."""
    cid = row["custom_id"]
    failed = row.get(ERROR_COLUMN)
    if failed:
        return error_line(cid, f"vLLM engine: {failed}")
    text = row.get("generated_text")
    if not isinstance(text, str):
        return error_line(cid, "engine returned no text")
    n_out = _count(row.get("num_generated_tokens"))
    if n_out is None:
        n_out = _count(row.get("generated_tokens"))
    n_in = _count(row.get("num_input_tokens"))
    if n_in is None:
        n_in = _count(row.get("prompt_token_ids"))
    cap = row.get("reply_cap")
    if cap is None:
        cap = (row.get("sampling_params") or {}).get("max_tokens")
    return success_line(cid, text, n_in, n_out, finish_reason(n_out, cap))


def http_output_line(custom_id: str, status: int, body) -> dict:
    """The OpenAI batch output line for an endpoint's final HTTP answer (body parsed JSON, or None when not JSON)."""
    if status == 200 and isinstance(body, dict):
        return {"custom_id": custom_id, "error": None, "response": {"status_code": 200, "body": body}}
    if status == 200:
        return error_line(custom_id, "reply is not JSON")
    return error_line(custom_id, f"HTTP {status}", status=status)

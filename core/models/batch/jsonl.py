"""The OpenAI batch file format — what OpenAI's Batch API takes and returns, and what ``vllm run-batch`` reads and
writes — one JSON object per line.

Request line::

    {"custom_id": "<id>", "method": "POST", "url": "/v1/chat/completions",
     "body": {"model": "<name>", "messages": [{"role": "user", "content": "<prompt>"}], "temperature": …, …}}

Output line (OpenAI's output and error files, vLLM's results file)::

    {"id": "…", "custom_id": "<id>", "response": {"status_code": 200, "request_id": "…", "body": {chat.completion}},
     "error": null}

A reply's ``message.reasoning_content`` (or ``reasoning``; an inline ``<think>…</think>`` block otherwise) and
``usage.completion_tokens_details.reasoning_tokens`` are kept apart from its answer.

A request that did not succeed has a non-200 ``status_code`` (its body holds the provider's error), or no response
and an ``error`` object ``{"code": …, "message": …}`` — OpenAI uses the codes ``batch_expired`` and
``batch_cancelled`` for requests its batch never ran.
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator

from core.errors import ImportFileError
from core.models.batch.common import Outcome, int_or_none
from core.models.reasoning import split_inline

ENDPOINT = "/v1/chat/completions"
MAX_LINE = 50 * 1024 * 1024     # one line of a results file: far above any chat completion
_KIND_OF_CODE = {"batch_expired": "expired", "batch_cancelled": "cancelled", "batch_canceled": "cancelled"}


def request_line(custom_id: str, model_name: str, prompt: str, body: dict) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT,
            "body": {"model": model_name, "messages": [{"role": "user", "content": prompt}], **body}}


def dumps(obj: dict) -> str:
    """One line (with its newline), compact and UTF-8 as is (byte counts are what the file will hold)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def line_bytes(obj: dict) -> int:
    return len(dumps(obj).encode("utf-8"))


def _text(value, limit: int = 300) -> str:
    return " ".join(str(value).split())[:limit]


def _error_message(err) -> str:
    if isinstance(err, dict):
        inner = err.get("error", err)
        if isinstance(inner, dict):
            msg = inner.get("message") or inner.get("code") or inner.get("type")
            code = inner.get("code")
            return _text(f"{msg} ({code})" if code and code != msg else msg or inner)
        return _text(inner)
    return _text(err) if err else "no detail"


def outcome_of(line: dict) -> Outcome:
    """The Outcome of one output line; ValueError when the line is not in the format at all."""
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str) or not line["custom_id"]:
        raise ValueError("no custom_id")
    cid = line["custom_id"]
    response, error = line.get("response"), line.get("error")
    if isinstance(response, dict):
        status = response.get("status_code")
        body = response.get("body")
        if status == 200 and isinstance(body, dict):
            return _completion(cid, body)
        if status is not None or body is not None:
            detail = _error_message(body) if body else _error_message(error)
            return Outcome(cid, "errored", error=f"HTTP {status}: {detail}")
    if error:
        code = error.get("code") if isinstance(error, dict) else None
        kind = _KIND_OF_CODE.get(str(code or "").lower(), "errored")
        return Outcome(cid, kind, error=_error_message(error))
    raise ValueError("neither a response nor an error")


def _completion(cid: str, body: dict) -> Outcome:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return Outcome(cid, "errored", error="response without choices")
    choice = choices[0]
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    if not isinstance(text, str) or not text.strip():
        return Outcome(cid, "errored", error=f"empty completion (finish_reason={finish})")
    thought = message.get("reasoning_content") or message.get("reasoning")
    thought = thought if isinstance(thought, str) and thought.strip() else None
    if thought is None:
        text, thought = split_inline(text)
        if not text.strip():
            return Outcome(cid, "errored", error=f"empty answer after the reasoning (finish_reason={finish})")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    details = usage.get("completion_tokens_details")
    return Outcome(cid, "succeeded", text=text, tokens_in=int_or_none(usage.get("prompt_tokens")),
                   tokens_out=int_or_none(usage.get("completion_tokens")), finish_reason=finish, reasoning=thought,
                   tokens_reasoning=int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict)
                   else None)


def parse_lines(lines: Iterable[bytes | str], what: str) -> Iterator[Outcome]:
    """Outcomes of an output file's lines (blank lines skipped, a UTF-8 byte-order mark at the start accepted);
    ImportFileError naming the first bad line — too long, not UTF-8, not JSON, nested too deeply, not in the format,
    or a custom_id seen on an earlier line (each request has one outcome: which of two would count?)."""
    seen: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        if isinstance(raw, bytes):
            if len(raw) > MAX_LINE:
                raise ImportFileError(f"{what}: line {n} is longer than {MAX_LINE // (1024 * 1024)} MB")
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ImportFileError(f"{what}: line {n} is not UTF-8 text") from None
        if n == 1:
            raw = raw.lstrip("\ufeff")
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except RecursionError:
            raise ImportFileError(f"{what}: line {n} is nested too deeply") from None
        except ValueError:
            raise ImportFileError(f"{what}: line {n} is not JSON") from None
        try:
            out = outcome_of(line)
        except (ValueError, TypeError, RecursionError) as exc:
            raise ImportFileError(f"{what}: line {n} is not an OpenAI batch output line ({exc})") from None
        first = seen.setdefault(out.custom_id, n)
        if first != n:
            raise ImportFileError(f"{what}: custom_id {out.custom_id[:24]}… appears on line {first} and again on "
                                  f"line {n}; a results file holds one outcome per request")
        yield out

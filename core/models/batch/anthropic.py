"""Anthropic Message Batches through the official SDK: ``messages.batches.create`` takes the requests inline
(``{"custom_id", "params": {model, max_tokens, messages, sampling…}}``), ``retrieve`` reports in_progress →
(canceling →) ended with per-outcome counts, and ``results`` streams one line per request: succeeded (a Message),
errored, canceled or expired.

A batch carries no metadata, so one whose creation we never heard back about is recognised by what we know of it:
created at or after our submission started, with exactly our number of requests, and unknown to the store (the
caller passes the provider ids it already has).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Iterable, Iterator

import anthropic

from core.models.base import RetryableError
from core.models.batch.common import TRANSFER_TIMEOUT, BatchState, Outcome, SdkBatch, int_or_none
from core.models.providers.anthropic import split_blocks, thinking_tokens

FIND_PAGES = 5
CLOCK_SLACK = timedelta(minutes=5)     # our clock vs the provider's


def _naive_utc(v) -> datetime | None:
    if not isinstance(v, datetime):
        return None
    return v.astimezone(timezone.utc).replace(tzinfo=None) if v.tzinfo else v


def _error_text(result) -> str:
    err = getattr(result, "error", None)
    inner = getattr(err, "error", None) or err
    msg = getattr(inner, "message", None) or getattr(inner, "type", None) or "errored"
    kind = getattr(inner, "type", None)
    return " ".join(f"{msg} ({kind})".split())[:300] if kind and kind != msg else " ".join(str(msg).split())[:300]


class AnthropicBatch(SdkBatch):
    provider = "anthropic"

    sdk_errors = (anthropic.AnthropicError,)

    # -- requests

    def entry(self, custom_id: str, prompt: str, body: dict) -> dict:
        return {"custom_id": custom_id,
                "params": {"model": self.model.name, "messages": [{"role": "user", "content": prompt}], **body}}

    @staticmethod
    def entry_bytes(entry: dict) -> int:
        return len(json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1

    def learn_refusal(self, text: str, body: dict) -> str | None:
        return self.model.learn_refusal(text, body)

    # -- lifecycle
    def submit(self, batch_id: str, entries: list[dict]) -> BatchState:
        return self._state(self._call(self._sdk().messages.batches.create, requests=entries,
                                      timeout=TRANSFER_TIMEOUT))

    def retrieve(self, provider_batch_id: str) -> BatchState:
        return self._state(self._call(self._sdk().messages.batches.retrieve, provider_batch_id))

    def cancel(self, provider_batch_id: str) -> BatchState:
        return self._state(self._call(self._sdk().messages.batches.cancel, provider_batch_id))

    def find(self, batch_id: str, since: datetime | None, n_requests: int,
             known: Iterable[str] = ()) -> BatchState | None:
        """The one batch created since ``since`` with ``n_requests`` requests that is not in ``known``; None when
        there is none (or more than one: then nothing can be told apart)."""
        known = set(known)
        floor = (since - CLOCK_SLACK) if since else None
        found: list = []
        page = self._call(self._sdk().messages.batches.list, limit=100)
        for _ in range(FIND_PAGES):
            older = False
            for batch in page.data or []:
                created = _naive_utc(getattr(batch, "created_at", None))
                if floor is not None and created is not None and created < floor:
                    older = True
                    continue
                counts = getattr(batch, "request_counts", None)
                total = sum(int_or_none(getattr(counts, k, None)) or 0
                            for k in ("processing", "succeeded", "errored", "canceled", "expired"))
                if batch.id not in known and total == n_requests:
                    found.append(batch)
            if older or not page.has_next_page():
                break
            page = self._call(page.get_next_page)
        return self._state(found[0]) if len(found) == 1 else None

    def outcomes(self, state: BatchState) -> Iterator[Outcome]:
        stream = self._call(self._sdk().messages.batches.results, state.provider_batch_id, timeout=TRANSFER_TIMEOUT)
        try:
            lines = list(stream)   # the whole stream first: a connection dropped halfway yields nothing
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self.model.error_for(exc) from None
        except Exception as exc:   # the HTTP library's own errors while streaming
            raise RetryableError(f"{self.spec}: reading the results of {state.provider_batch_id} failed "
                                 f"({type(exc).__name__})") from None
        for line in lines:
            result = line.result
            kind = getattr(result, "type", None)
            if kind == "succeeded":
                yield self._succeeded(line.custom_id, result.message)
            elif kind == "errored":
                yield Outcome(line.custom_id, "errored", error=_error_text(result))
            elif kind in ("canceled", "expired"):
                yield Outcome(line.custom_id, "cancelled" if kind == "canceled" else "expired",
                              error=f"request {kind} before it ran")
            else:
                yield Outcome(line.custom_id, "errored", error=f"unknown result type {kind!r}")

    @staticmethod
    def _succeeded(custom_id: str, message) -> Outcome:
        blocks = getattr(message, "content", None) or []
        text, thought = split_blocks(blocks)
        stop = getattr(message, "stop_reason", None)
        if not text.strip():
            return Outcome(custom_id, "errored", error=f"empty completion (stop_reason={stop})")
        usage = getattr(message, "usage", None)
        return Outcome(custom_id, "succeeded", text=text, reasoning=thought, tokens_reasoning=thinking_tokens(usage),
                       tokens_in=int_or_none(getattr(usage, "input_tokens", None)),
                       tokens_out=int_or_none(getattr(usage, "output_tokens", None)),
                       finish_reason=stop if isinstance(stop, str) else None)

    def _state(self, batch) -> BatchState:
        counts = getattr(batch, "request_counts", None)
        get = lambda k: int_or_none(getattr(counts, k, None)) or 0   # noqa: E731
        status = str(getattr(batch, "processing_status", "") or "")
        return BatchState(
            provider_batch_id=batch.id, status=status, ended=status == "ended",
            counts={"succeeded": get("succeeded"), "errored": get("errored"), "expired": get("expired"),
                    "cancelled": get("canceled"), "processing": get("processing")},
            created_at=_naive_utc(getattr(batch, "created_at", None)))

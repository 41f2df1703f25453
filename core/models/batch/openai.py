"""OpenAI Batch through the official SDK: the requests go up as one JSONL file (``files.create``, purpose
``batch``), ``batches.create`` starts it (endpoint /v1/chat/completions, 24 h window), ``batches.retrieve`` reports
validating → in_progress → finalizing → completed (or failed, expired, cancelling → cancelled), and the output and
error files hold one line per request (``core.models.batch.jsonl``).

Our batch id travels in the batch's ``metadata`` (``studio_batch``), so a batch whose creation we never heard back
about (killed right after the call) is found again with ``batches.list``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable, Iterator

import openai

from core.models.batch.common import TRANSFER_TIMEOUT, BatchState, Outcome, SdkBatch, int_or_none
from core.models.batch.jsonl import ENDPOINT, dumps, line_bytes, parse_lines, request_line

ENDED = ("completed", "failed", "expired", "cancelled")
TAG = "studio_batch"
FIND_PAGES = 5                  # batches.list pages (100 each) searched for a batch we lost track of


def _ts(v) -> datetime | None:
    return datetime.fromtimestamp(v, timezone.utc).replace(tzinfo=None) if isinstance(v, (int, float)) else None


class OpenAIBatch(SdkBatch):
    provider = "openai"

    sdk_errors = (openai.OpenAIError,)

    # -- requests

    def entry(self, custom_id: str, prompt: str, body: dict) -> dict:
        return request_line(custom_id, self.model.name, prompt, body)

    @staticmethod
    def entry_bytes(entry: dict) -> int:
        return line_bytes(entry)

    def learn_refusal(self, text: str, body: dict) -> str | None:
        return self.model.learn_refusal(text, body)

    # -- lifecycle
    def submit(self, batch_id: str, entries: list[dict]) -> BatchState:
        data = "".join(dumps(e) for e in entries).encode("utf-8")
        sdk = self._sdk()
        uploaded = self._call(sdk.files.create, file=(f"{batch_id}.jsonl", data, "application/jsonl"),
                              purpose="batch", timeout=TRANSFER_TIMEOUT)
        batch = self._call(sdk.batches.create, input_file_id=uploaded.id, endpoint=ENDPOINT,
                           completion_window="24h", metadata={TAG: batch_id})
        return self._state(batch)

    def retrieve(self, provider_batch_id: str) -> BatchState:
        return self._state(self._call(self._sdk().batches.retrieve, provider_batch_id))

    def cancel(self, provider_batch_id: str) -> BatchState:
        return self._state(self._call(self._sdk().batches.cancel, provider_batch_id))

    def find(self, batch_id: str, since: datetime | None, n_requests: int,
             known: Iterable[str] = ()) -> BatchState | None:
        """The batch created with our id in its metadata, if the provider has one."""
        page = self._call(self._sdk().batches.list, limit=100)
        for _ in range(FIND_PAGES):
            for batch in page.data or []:
                if (getattr(batch, "metadata", None) or {}).get(TAG) == batch_id:
                    return self._state(batch)
            if not page.has_next_page():
                break
            page = self._call(page.get_next_page)
        return None

    def outcomes(self, state: BatchState) -> Iterator[Outcome]:
        """Every request's outcome from the output and error files (what is in neither is for the caller)."""
        for file_id, what in ((state.output_file_id, "output file"), (state.error_file_id, "error file")):
            if not file_id:
                continue
            content = self._call(self._sdk().files.content, file_id, timeout=TRANSFER_TIMEOUT)
            yield from parse_lines(content.content.splitlines(), f"{state.provider_batch_id} {what}")

    def _state(self, batch) -> BatchState:
        counts = getattr(batch, "request_counts", None)
        done, failed, total = (int_or_none(getattr(counts, k, None)) or 0 for k in ("completed", "failed", "total"))
        status = str(getattr(batch, "status", "") or "")
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        error = "; ".join(filter(None, (getattr(e, "message", None) for e in errors)))[:500] or None
        return BatchState(
            provider_batch_id=batch.id, status=status, ended=status in ENDED,
            counts={"succeeded": done, "errored": failed,
                    "processing": max(0, total - done - failed) if status not in ENDED else 0},
            input_file_id=getattr(batch, "input_file_id", None), output_file_id=getattr(batch, "output_file_id", None),
            error_file_id=getattr(batch, "error_file_id", None), error=error,
            created_at=_ts(getattr(batch, "created_at", None)))

"""What the batch back ends share: limits per batch, a batch's state, one request's outcome."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from core.models.base import ModelError

log = logging.getLogger(__name__)

BATCH_PROVIDERS = ("openai", "anthropic")
TRANSFER_TIMEOUT = 900.0     # seconds for a call that moves a whole batch (upload, inline create, results download)


@dataclass(frozen=True)
class BatchLimits:
    """How much one batch may hold. Defaults: the providers' published per-batch limits."""

    max_requests: int
    max_bytes: int

    def __post_init__(self) -> None:
        for name in ("max_requests", "max_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ModelError(f"batch {name.replace('_', ' ')} must be a whole number >= 1, got {v!r}")


# OpenAI: 50,000 requests and 200 MB per input file; Anthropic: 100,000 requests and 256 MB per batch.
DEFAULT_LIMITS: dict[str, BatchLimits] = {
    "openai": BatchLimits(50_000, 200 * 1024 * 1024),
    "anthropic": BatchLimits(100_000, 256 * 1024 * 1024),
}


@dataclass
class BatchState:
    provider_batch_id: str
    status: str                      # the provider's word
    ended: bool                      # no request is still processing: outcomes can be read
    counts: dict = field(default_factory=dict)   # succeeded / errored / expired / cancelled / processing
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    error: str | None = None         # why the whole batch failed (OpenAI 'failed': the input did not validate)
    created_at: datetime | None = None


@dataclass(frozen=True)
class Outcome:
    custom_id: str
    kind: str                        # succeeded | errored | expired | cancelled
    text: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    finish_reason: str | None = None
    error: str | None = None
    reasoning: str | None = None          # the reply's reasoning, apart from its answer (``text``)
    tokens_reasoning: int | None = None   # of tokens_out, the reasoning tokens (None: not counted apart)


def int_or_none(v) -> int | None:
    """A count as a provider reports it, or None (not an int, or outside what a token count can be: 10**30 from a
    hostile file would overflow the database's BIGINT)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 53 else None


class SdkBatch:
    """What the providers' batch back ends share: the live model they wrap supplies the SDK client, the mapping of
    SDK errors to ModelError (``sdk_errors`` names the SDK's own) and the request body (sampling parameters)."""

    provider = ""
    sdk_errors: tuple = ()

    def __init__(self, model, limits: BatchLimits):
        self.model, self.limits = model, limits
        self._client = None

    @property
    def spec(self) -> str:
        return self.model.spec

    def _sdk(self):
        if self._client is None:
            self._client = self.model.sync_client()
        return self._client

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (*self.sdk_errors, ValueError) as exc:
            raise self.model.error_for(exc) from None

    def request_body(self, params) -> tuple[dict, list[str]]:
        return self.model.request_body(params)

    def close(self) -> None:
        """Close the SDK client (a later call opens a new one)."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # noqa: BLE001 — closing must not hide how the batch call went
                log.debug("closing the batch SDK client failed (%s)", type(exc).__name__)

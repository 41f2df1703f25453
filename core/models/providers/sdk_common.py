"""Shared plumbing of the HTTP providers (the openai/anthropic SDKs, the direct openai-compatible client): client per
event loop, error mapping.

Both SDKs raise the same family of exceptions (APIStatusError with ``status_code``/``response``, APITimeoutError,
APIConnectionError, APIResponseValidationError). ``map_sdk_error`` turns them into the runner's two kinds:
RetryableError for 408/409/429/5xx, timeouts, connection errors and unreadable bodies; ModelError for the rest.
Messages are redacted so a key can never leak through an exception.
"""

from __future__ import annotations

import asyncio
import json
import logging
from types import ModuleType

from core.models.base import ModelError, RetryableError, parse_retry_after, redact
from core.models.retry_policy import RETRYABLE_STATUS, retryable_status

log = logging.getLogger(__name__)

__all__ = ["RETRYABLE_STATUS", "describe_status", "error_text", "map_sdk_error", "map_status"]


def error_text(body, fallback: str = "") -> str:
    """Short text of an HTTP error body (``{"error": {"message": ...}}``, ``{"error": "..."}``, ``{"message": ...}``),
    else ``fallback``; whitespace collapsed, at most 300 characters. Not yet redacted."""
    msg = None
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            msg = err.get("message")
        elif isinstance(err, str):
            msg = err
    if not msg:
        msg = fallback
    msg = " ".join(str(msg).split())
    return msg[:300]


def describe_status(exc) -> str:
    """Short, key-free text for an HTTP error from the SDK: its provider message if any."""
    return error_text(getattr(exc, "body", None), getattr(exc, "message", None) or str(exc))


def map_status(status: int, headers, text: str, *, label: str, key_env: str, secret: str | None):
    """RetryableError (408/409/425/429/5xx, with the server's Retry-After) or ModelError for an HTTP error status."""
    text = redact(text, secret)
    if retryable_status(status):
        kind = "rate limited" if status == 429 else "server error" if status >= 500 else "temporary error"
        return RetryableError(f"{label}: {kind} (HTTP {status}): {text}", parse_retry_after(headers))
    if status == 401:
        return ModelError(f"{label}: authentication failed (HTTP 401) — check {key_env}")
    if status == 403:
        return ModelError(f"{label}: permission denied (HTTP 403) — the key may not have access to this model")
    if status == 404:
        return ModelError(f"{label}: not found (HTTP 404): {text}")
    return ModelError(f"{label}: request rejected (HTTP {status}): {text}")


def map_sdk_error(exc: BaseException, sdk: ModuleType, *, label: str, key_env: str, secret: str | None):
    """Return the RetryableError / ModelError for an SDK exception (the caller raises it ``from None``)."""
    if isinstance(exc, sdk.APITimeoutError):
        return RetryableError(f"{label}: request timed out")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = type(cause).__name__ if cause is not None else "no response"
        return RetryableError(f"{label}: connection error ({detail})", connection=True)
    if isinstance(exc, sdk.APIResponseValidationError):
        return RetryableError(f"{label}: malformed response body")
    if isinstance(exc, sdk.APIStatusError):
        return map_status(exc.status_code, getattr(exc.response, "headers", None), describe_status(exc),
                          label=label, key_env=key_env, secret=secret)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return RetryableError(f"{label}: malformed JSON in response body")
    if isinstance(exc, sdk.APIError):
        return RetryableError(f"{label}: {redact(describe_status(exc), secret)}")
    return None


class ClientPerLoop:
    """Holds one SDK client per running event loop.

    httpx connection pools belong to the loop that opened them; the runner runs each batch in its own loop (in a
    background thread), so a model object reused across runs must not share a client between loops.
    """

    def __init__(self, factory, injected_http_client=None):
        self._factory = factory
        self._injected = injected_http_client
        self._loop = None
        self._client = None

    def get(self):
        loop = asyncio.get_running_loop()
        if self._client is None or (self._injected is None and self._loop is not loop):
            self._client = self._factory(self._injected)
            self._loop = loop
        return self._client

    async def aclose(self):
        client, self._client = self._client, None
        if client is not None and self._injected is None:
            try:   # httpx/httpx2 clients close with aclose(), the SDK clients with close()
                close = getattr(client, "aclose", None) or client.close
                await close()
            except Exception as exc:  # noqa: BLE001 — a client whose loop is gone must not hide the real outcome
                log.debug("closing the SDK client failed (%s)", type(exc).__name__)

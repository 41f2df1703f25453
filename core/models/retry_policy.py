"""The one retry policy of every engine that calls a model over HTTP: which answers are worth another attempt, how
long to wait before it, and what a server's Retry-After asks for. The live runner (``core.runner.executor``), the
HTTP providers (``sdk_common``, ``openai_compatible``) and the Ray engine's HTTP actors (``core.runner.ray_workers``)
all take it from here.

Standard library only, and nothing else of this project imported: the Ray engine ships this module to its workers
by value (``cloudpickle.register_pickle_by_value``), so a worker runs it without a checkout of the project.

* Retried: 408/409/425/429 and every 5xx (a 429's or 503's ``retry-after-ms`` / ``Retry-After`` is waited out at
  least), timeouts, connection and protocol errors, and a 2xx reply that is not a chat completion (not JSON, no
  choices, an empty message). Any other status fails at once.
* Back-off before attempt n + 1: full jitter, uniform in [0, min(MAX_BACKOFF, BASE_BACKOFF · 2^(n-1))], at least
  the server's Retry-After.
* An endpoint that cannot be reached (connection refused or reset) costs time, not attempts: up to
  ``UNREACHABLE_PER_ATTEMPT`` such errors per attempt.
"""

from __future__ import annotations

import random

MAX_BACKOFF = 60.0             # cap of one back-off sleep (seconds), Retry-After excepted
BASE_BACKOFF = 0.5
UNREACHABLE_PER_ATTEMPT = 20   # connection errors a call may meet per attempt
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def retryable_status(status: int) -> bool:
    """An HTTP error status worth another attempt (408/409/425/429, 5xx)."""
    return status in RETRYABLE_STATUS or status >= 500


def backoff_delay(attempt: int, retry_after: float | None = None, *, rng=random) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): full jitter, at least ``retry_after``."""
    delay = rng.uniform(0, min(MAX_BACKOFF, BASE_BACKOFF * 2 ** (max(1, int(attempt)) - 1)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


def parse_retry_after(headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date); None if absent/bad."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            value = float(ms) / 1000.0
            return value if value >= 0 and value == value else None
        raw = headers.get("retry-after")
    except (TypeError, ValueError):
        return None
    if raw is None:
        return None
    try:
        value = float(raw)
        return value if value >= 0 and value == value else None
    except ValueError:
        pass
    try:
        from datetime import datetime, timezone
        from email.utils import parsedate_to_datetime

        when = parsedate_to_datetime(raw)
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def reply_problem(doc) -> str | None:
    """Why a 2xx reply is not a usable chat completion (retried), or None when it is one."""
    if not isinstance(doc, dict):
        return "malformed JSON in response body"
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "response without choices"
    message = choices[0].get("message")
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str) or not text.strip():
        return f"empty completion (finish_reason={choices[0].get('finish_reason')})"
    return None

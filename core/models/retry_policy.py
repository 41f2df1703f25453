"""The one retry policy of every engine that calls a model over HTTP: which answers are worth another attempt, how
long to wait before it, and what a server's Retry-After asks for. The live runner (``core.runner.executor``), the
HTTP providers (``sdk_common``, ``openai_compatible``) and the Ray engine's HTTP actors (``core.runner.ray_workers``)
all take it from here: the policy is data (``RetryPolicy``) and ``call_with_retries`` runs a call under it, its
retries on tenacity.

Standard library only at import, and nothing else of this project imported: the Ray engine ships this module to its
workers by value (``cloudpickle.register_pickle_by_value``), so a worker runs it without a checkout of the project
(tenacity is imported when a call is first retried; a call answered at its first attempt never needs it).

* Retried: 408/409/425/429 and every 5xx (a 429's or 503's ``retry-after-ms`` / ``Retry-After`` is waited out at
  least), timeouts, connection and protocol errors, and a 2xx reply that is not a chat completion (not JSON, no
  choices, an empty message). Any other status fails at once.
* Back-off before attempt n + 1: full jitter, uniform in [0, min(MAX_BACKOFF, BASE_BACKOFF · 2^(n-1))], at least
  the server's Retry-After.
* An endpoint that cannot be reached (connection refused or reset) costs time, not attempts: up to
  ``UNREACHABLE_PER_ATTEMPT`` such errors per attempt.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

MAX_BACKOFF = 60.0             # cap of one back-off sleep (seconds), Retry-After excepted
BASE_BACKOFF = 0.5
UNREACHABLE_PER_ATTEMPT = 20   # connection errors a call may meet per attempt
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def retryable_status(status: int) -> bool:
    """An HTTP error status worth another attempt (408/409/425/429, 5xx)."""
    return status in RETRYABLE_STATUS or status >= 500


def backoff_delay(attempt: int, retry_after: float | None = None, *, rng=random, base: float = BASE_BACKOFF,
                  cap: float = MAX_BACKOFF) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): full jitter, at least ``retry_after``."""
    delay = rng.uniform(0, min(cap, base * 2 ** (max(1, int(attempt)) - 1)))
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


# ------------------------------------------------------------------------------------------------ the policy


@dataclass(frozen=True)
class RetryPolicy:
    """How a call is retried. Retried: an attempt that raises ``Retry`` (an engine raises it for the statuses of
    ``retryable_status``, timeouts, connection and protocol errors and replies that are no chat completion, as the
    module docstring lists); ``Failed`` and any other error end the call at once. ``max_attempts`` attempts at most;
    before attempt n + 1 a full-jitter back-off (``base_backoff`` · 2^(n-1), capped at ``max_backoff``) of at least
    the server's Retry-After, which also pauses the engine's other calls (``Pause``). An unreachable endpoint
    (``Retry.unreachable``) costs time, not attempts, up to ``unreachable_per_attempt`` times ``max_attempts``
    such errors; ``outage_backoff`` False: such a retry does not back off (a circuit breaker paces them)."""

    max_attempts: int = 6
    base_backoff: float = BASE_BACKOFF
    max_backoff: float = MAX_BACKOFF
    unreachable_per_attempt: int = UNREACHABLE_PER_ATTEMPT
    outage_backoff: bool = True

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        return backoff_delay(attempt, retry_after, base=self.base_backoff, cap=self.max_backoff)


class Retry(Exception):
    """An attempt failed in a way worth another: ``reason`` (said when the call fails for good), ``retry_after``
    (seconds the server asked for, or None), ``unreachable`` (the endpoint could not be reached at all)."""

    def __init__(self, reason: str, retry_after: float | None = None, *, unreachable: bool = False):
        super().__init__(reason)
        self.reason, self.retry_after, self.unreachable = reason, retry_after, unreachable


class Failed(Exception):
    """An attempt failed in a way no other attempt mends: the call ends with ``reason``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Pause:
    """A pause every call of an engine waits out before its next attempt (a server's Retry-After)."""

    def __init__(self) -> None:
        self.until = 0.0

    def push(self, seconds: float) -> None:
        self.until = max(self.until, time.monotonic() + seconds)

    async def wait(self) -> None:
        left = self.until - time.monotonic()
        if left > 0:
            await asyncio.sleep(left)


@dataclass(slots=True)
class Outcome:
    value: Any           # what the attempt returned; None when the call failed
    reason: str | None   # why the call failed for good; None when it was answered
    attempts: int        # attempts counted (those an outage cost are not)


class _Tally:
    """The attempts of one call as the policy counts them (tenacity's callbacks read and update it)."""

    def __init__(self, policy: RetryPolicy):
        self.policy = policy
        self.started = self.forgiven = self.unreachable = 0
        self.last_forgiven = False

    @property
    def number(self) -> int:
        return self.started - self.forgiven

    def retried(self, exc: BaseException | None) -> bool:   # tenacity's ``retry``: first of its callbacks
        if not isinstance(exc, Retry):
            return False
        self.last_forgiven = False
        if exc.unreachable:
            self.unreachable += 1
            if self.unreachable <= self.policy.max_attempts * self.policy.unreachable_per_attempt:
                self.forgiven += 1
                self.last_forgiven = True
        return True

    def wait(self, exc: Retry) -> float:
        if self.last_forgiven and not self.policy.outage_backoff:
            return 0.0
        return self.policy.delay(max(1, self.number), exc.retry_after)

    def stop(self) -> bool:
        return not self.last_forgiven and self.number >= self.policy.max_attempts


async def call_with_retries(policy: RetryPolicy, attempt: Callable[[int], Awaitable[Any]], *,
                            pause: Pause | None = None, on_retry: Callable[[], None] | None = None) -> Outcome:
    """Run a call under ``policy``: ``await attempt(n)`` (n: the attempt's number as counted) after waiting out
    ``pause``, again while it raises ``Retry`` and the policy allows; ``on_retry()`` before each retry. Returns the
    ``Outcome``; errors other than ``Retry`` and ``Failed`` (a cancellation) propagate."""
    pause = pause or Pause()
    # the first attempt outside tenacity: a call answered at once pays nothing for the retry machinery
    if pause.until:
        await pause.wait()
    try:
        return Outcome(await attempt(1), None, 1)
    except Retry as exc:
        first: Retry | None = exc
    except Failed as exc:
        return Outcome(None, exc.reason, 1)
    tally = _Tally(policy)
    tally.started = 1

    async def attempt_once():
        await pause.wait()
        tally.started += 1
        return await attempt(tally.number)

    async def again():
        nonlocal first
        if first is not None:   # the attempt already made, handed to tenacity's loop as its first
            exc, first = first, None
            raise exc
        return await attempt_once()

    from tenacity import AsyncRetrying, retry_if_exception

    def before_sleep(state) -> None:
        exc = state.outcome.exception()
        if exc.retry_after is not None:
            pause.push(exc.retry_after)
        if on_retry is not None:
            on_retry()

    retrying = AsyncRetrying(retry=retry_if_exception(tally.retried),
                             wait=lambda state: tally.wait(state.outcome.exception()),
                             stop=lambda state: tally.stop(), before_sleep=before_sleep, reraise=True)
    try:
        return Outcome(await retrying(again), None, tally.number)
    except (Retry, Failed) as exc:
        return Outcome(None, exc.reason, tally.number)

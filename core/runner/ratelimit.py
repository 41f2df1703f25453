"""Async token buckets for requests-per-minute and tokens-per-minute limits (one event loop per bucket)."""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    """Refills ``per_minute / 60`` units per second up to ``burst`` (default: 10 s worth, at least 1)."""

    def __init__(self, per_minute: float, burst: float | None = None):
        if per_minute <= 0:
            raise ValueError("rate limit must be positive")
        self.rate = per_minute / 60.0
        self.capacity = float(burst if burst is not None else max(1.0, per_minute / 6.0))
        self.level = self.capacity
        self.t = time.monotonic()
        self._lock: asyncio.Lock | None = None

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.t) * self.rate)
        self.t = now

    async def take(self, n: float = 1.0) -> None:
        """Wait until ``n`` units are available and take them (waiters are served in order)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        n = min(float(n), self.capacity)
        async with self._lock:
            while True:
                self._refill()
                if self.level >= n:
                    self.level -= n
                    return
                await asyncio.sleep((n - self.level) / self.rate)

    def adjust(self, delta: float) -> None:
        """Charge (positive) or refund (negative) units after the fact, e.g. real vs estimated tokens."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


class RateLimiter:
    """Optional RPM and TPM limits together. ``acquire(tokens)`` before a call, ``settle(est, real)`` after."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None):
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None

    async def acquire(self, tokens: float) -> None:
        if self.requests is not None:
            await self.requests.take(1)
        if self.tokens is not None:
            await self.tokens.take(tokens)

    def settle(self, estimated: float, real: float | None) -> None:
        if self.tokens is not None and real is not None:
            self.tokens.adjust(real - estimated)

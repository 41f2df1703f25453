"""A run-wide circuit breaker: while the endpoint cannot be reached, the whole run pauses instead of every worker
burning its call's attempts in seconds (without it an outage of a few seconds fails items for good).

States: **closed** (calls go out), **open** (nobody sends until ``reopen_at``), **half-open** (one call — the
probe — goes out; the others wait for its outcome). A connection error (``RetryableError.connection``: refused,
reset, unknown host) of a call sent in the current state opens the breaker; the pause doubles with every failed
probe (PAUSE_FIRST … PAUSE_MAX seconds); any answer from the endpoint (a reply, a 4xx/5xx, even a malformed body)
closes it. Connection errors of calls that were already in flight when it opened are not counted again.

While the breaker is open, a call's connection errors do not use up its attempts: an outage costs time, not items.
After ``give_up_after`` seconds of continuous unreachability the breaker gives up and the run's remaining calls fail
at once with the reason (they are retried by running again).

All methods run on the executor's event loop (no locking needed).
"""

from __future__ import annotations

import asyncio
import random
import time

PAUSE_FIRST = 0.25      # seconds before the first probe
PAUSE_MAX = 4.0         # longest pause between probes
GIVE_UP_AFTER = 120.0   # seconds of continuous unreachability after which calls fail instead of waiting


class CircuitBreaker:
    def __init__(self, give_up_after: float = GIVE_UP_AFTER):
        self.give_up_after = give_up_after
        self.generation = 0               # bumped on every state change; a call is sent "in" one generation
        self.failures = 0                 # failed probes of the current outage (0 = closed)
        self.down_since: float | None = None
        self.reopen_at = 0.0
        self.probing = False
        self.outages = 0                  # outages seen by the run (for progress / tests)
        self._changed = asyncio.Event()

    # -- state
    @property
    def down(self) -> bool:
        return self.down_since is not None

    def down_for(self) -> float:
        return 0.0 if self.down_since is None else time.monotonic() - self.down_since

    @property
    def gave_up(self) -> bool:
        return self.down and self.down_for() > self.give_up_after

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _signal(self) -> None:
        self.generation += 1
        self._wake()

    # -- the calls' side
    async def admit(self) -> tuple[int, bool]:
        """Wait until a call may be sent. Returns (generation, is_probe); the caller must report the outcome with
        ``reached`` or ``failed`` (or ``abandoned`` if the call never completed)."""
        while self.down and not self.gave_up:
            now = time.monotonic()
            if now < self.reopen_at:
                changed = self._changed
                try:
                    await asyncio.wait_for(changed.wait(), timeout=self.reopen_at - now)
                except asyncio.TimeoutError:
                    pass
                continue
            if not self.probing:
                self.probing = True
                return self.generation, True
            await self._changed.wait()   # the probe's outcome
        return self.generation, False

    def reached(self, generation: int, probe: bool) -> None:
        """The endpoint answered (whatever it said): close."""
        if probe:
            self.probing = False
        if self.down:
            self.down_since, self.failures = None, 0
            self._signal()

    def failed(self, generation: int, probe: bool) -> None:
        """A connection error of a call sent in ``generation``: open (or re-open with a longer pause)."""
        if probe:
            self.probing = False
        if generation != self.generation:
            if probe:
                self._wake()          # let a waiter take the probe
            return                    # sent before the current state: already counted
        now = time.monotonic()
        if self.down_since is None:
            self.down_since = now
            self.outages += 1
        pause = min(PAUSE_MAX, PAUSE_FIRST * 2 ** self.failures)
        self.failures += 1
        self.reopen_at = now + pause * random.uniform(0.8, 1.2)
        self._signal()

    def abandoned(self, probe: bool) -> None:
        """A call admitted as the probe ended without an outcome (cancelled): let another call probe."""
        if probe:
            self.probing = False
            self._wake()

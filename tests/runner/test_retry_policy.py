"""The model-call retry policy as data (core/models/retry_policy.py), run by ``call_with_retries`` on tenacity: what
is retried, how many attempts, the back-off asked of the policy with the server's Retry-After, outages costing time
and not attempts. The live runner and the Ray engine's HTTP actors hold the same policy class."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.models.retry_policy import Failed, Pause, Retry, RetryPolicy, call_with_retries

ROOT = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class Recorded(RetryPolicy):
    """The policy with its back-off recorded instead of slept."""
    asked: list = dataclasses.field(default_factory=list, compare=False)

    def delay(self, attempt, retry_after=None):
        self.asked.append((attempt, retry_after))
        return 0.0


def run(policy, script, **kw):
    """Attempts that follow ``script`` (an exception to raise or a value to return, in order)."""
    made = []

    async def attempt(n):
        made.append(n)
        step = script[len(made) - 1]
        if isinstance(step, BaseException):
            raise step
        return step

    return asyncio.run(call_with_retries(policy, attempt, **kw)), made


def test_an_answer_at_the_first_attempt():
    out, made = run(Recorded(), ["ok"])
    assert (out.value, out.reason, out.attempts, made) == ("ok", None, 1, [1])


def test_retried_until_answered_with_backoff_and_retry_after():
    policy, retries = Recorded(max_attempts=4), []
    pause = Pause()
    before = time.monotonic()
    out, made = run(policy, [Retry("HTTP 503"), Retry("HTTP 429", 0.2), "ok"], pause=pause,
                    on_retry=lambda: retries.append(1))
    assert (out.value, out.attempts, made, len(retries)) == ("ok", 3, [1, 2, 3], 2)
    assert policy.asked == [(1, None), (2, 0.2)]   # the back-off is asked with the server's Retry-After
    assert pause.until >= before + 0.2             # which pauses the engine's other calls too


def test_attempts_run_out_with_the_last_reason():
    out, made = run(Recorded(max_attempts=3), [Retry("HTTP 500"), Retry("timeout"), Retry("HTTP 502"), "never"])
    assert (out.value, out.reason, out.attempts, made) == (None, "HTTP 502", 3, [1, 2, 3])


def test_a_failure_no_attempt_mends_ends_the_call():
    out, made = run(Recorded(), [Retry("HTTP 503"), Failed("HTTP 401: bad key"), "never"])
    assert (out.reason, out.attempts, made) == ("HTTP 401: bad key", 2, [1, 2])
    out, made = run(Recorded(), [Failed("no such model")])
    assert (out.reason, out.attempts) == ("no such model", 1)


def test_an_outage_costs_time_not_attempts_up_to_its_allowance():
    down = Retry("connection refused", unreachable=True)
    # two attempts, two outage errors per attempt forgiven: four forgiven, then they count
    out, made = run(Recorded(max_attempts=2, unreachable_per_attempt=2), [down] * 4 + ["ok"])
    assert (out.value, out.attempts, len(made)) == ("ok", 1, 5)
    out, made = run(Recorded(max_attempts=2, unreachable_per_attempt=2), [down] * 10)
    assert (out.value, out.reason, out.attempts, len(made)) == (None, "connection refused", 2, 6)


def test_outage_backoff_is_the_policys_choice():
    down = Retry("connection refused", unreachable=True)
    paced = Recorded(outage_backoff=True)
    run(paced, [down, down, "ok"])
    assert paced.asked == [(1, None), (1, None)]   # forgiven: the attempt number stays
    by_breaker = Recorded(outage_backoff=False)   # the live runner: its circuit breaker paces an outage
    run(by_breaker, [down, down, Retry("HTTP 503"), "ok"])
    assert by_breaker.asked == [(1, None)]


def test_a_cancellation_is_not_retried():
    with pytest.raises(asyncio.CancelledError):
        run(Recorded(), [Retry("HTTP 503"), asyncio.CancelledError(), "never"])


def test_the_ray_actors_hold_the_policy_with_its_defaults():
    from core.runner.ray_workers import HttpCaller

    assert HttpCaller("http://127.0.0.1:9/v1", max_attempts=4).policy == RetryPolicy(max_attempts=4)


def test_the_policy_module_imports_no_library_for_the_ray_workers():
    code = ("import sys, importlib.util; spec = importlib.util.spec_from_file_location('rp', "
            "'core/models/retry_policy.py'); m = importlib.util.module_from_spec(spec); sys.modules['rp'] = m; "
            "spec.loader.exec_module(m); "
            "print(sorted(n for n in sys.modules if n.split('.')[0] in ('tenacity', 'core')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""Issue 13, item 6: a short outage of the endpoint costs time, not items. The run pauses as a whole while the
endpoint cannot be reached (core/runner/breaker.py) and carries on when it is back; a call's attempts are not used up
meanwhile. A 4 s outage in the middle of a CLI run: every item answered, exit 0."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from core import runner
from core.models.base import BaseModel, Completion, RetryableError
from core.runner.breaker import CircuitBreaker
from tests.support.loopback import LoopbackServer

CONFIG = {"task": "setops", "seed": 1, "samples": 25, "operations": ["union", "intersection", "difference",
                                                                  "symmetric_difference"],
          "sizes": [2, 4, 8], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


@pytest.mark.slow
def test_a_4_second_outage_mid_run_answers_every_item_and_exits_0(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    first = LoopbackServer(0.05).start()
    port, state = first.port, {}

    def outage():
        deadline = time.monotonic() + 60
        while first.stats()["total_requests"] < 60 and time.monotonic() < deadline:
            time.sleep(0.005)
        first.stop()                      # connections refused from now on …
        time.sleep(4.0)
        state["second"] = LoopbackServer(0.05, port=port).start()   # … and back on the same port 4 s later

    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    controller = threading.Thread(target=outage, daemon=True)
    controller.start()
    try:
        r = cli("run", "--config", cfg, "--model", "openai-compatible/loop", "--base-url", first.base_url,
                "--concurrency", "4", "--max-attempts", "3", "--no-progress")
        controller.join(30)
    finally:
        if "second" in state:
            state["second"].stop()
    assert r.returncode == 0, r
    assert "300/300 answered" in r.stdout and ", 0 failed" in r.stdout, r.stdout
    before, after = first.stats()["total_answered"], state["second"].stats()["total_answered"]
    assert before < 300 and after > 0 and before + after >= 300   # the outage did fall in the middle of the run


class FlakyEndpoint(BaseModel):
    """In-process model whose endpoint refuses connections between two moments (counted, not timed, by the test)."""

    provider = "test"
    default_concurrency = 4

    def __init__(self, down_after: int, down_for: float):
        super().__init__("test/flaky", "flaky")
        self.down_after, self.down_for = down_after, down_for
        self.calls = self.refused = 0
        self.down_since: float | None = None

    async def complete(self, request):
        self.calls += 1
        if self.calls > self.down_after and self.down_since is None:
            self.down_since = time.monotonic()
        if self.down_since is not None and time.monotonic() - self.down_since < self.down_for:
            self.refused += 1
            raise RetryableError("test/flaky: connection error (ClientConnectorError)", connection=True)
        await asyncio.sleep(0.005)
        return Completion("{1, 2}", 10, 3, 5.0, None, "stop")


def test_the_run_pauses_while_the_endpoint_is_down_instead_of_burning_attempts(tmp_path):
    model = FlakyEndpoint(down_after=20, down_for=2.5)
    p = runner.run(CONFIG, model, db_path=tmp_path / "s.duckdb", concurrency=8, max_attempts=2)
    assert p.status == "done" and p.done == 300 and p.failed == 0, p
    # refused calls: the ones in flight when it went down, then one probe at a time (pauses 0.25, 0.5, 1, 2 … s)
    assert 1 <= model.refused <= 8 + 12, model.refused


def test_a_long_outage_gives_up_with_the_reason(tmp_path):
    model = FlakyEndpoint(down_after=10, down_for=3600)
    p = runner.run(CONFIG, model, db_path=tmp_path / "s.duckdb", concurrency=4, max_attempts=2, outage_limit=1.0)
    assert p.status == "incomplete" and p.done >= 10 and p.done + p.failed == 300, p
    from core import store

    with store.connect(tmp_path / "s.duckdb") as con:
        reasons = {r[0] for r in con.execute("SELECT error FROM results WHERE error IS NOT NULL").fetchall()}
    assert reasons and all("connection error" in r and "unreachable for" in r for r in reasons), reasons


def test_breaker_states():
    async def go():
        b = CircuitBreaker(give_up_after=60)
        g, probe = await b.admit()
        assert (g, probe, b.down) == (0, False, False)
        b.failed(g, probe)                      # opens
        assert b.down and b.outages == 1 and b.failures == 1
        b.failed(g, False)                      # a call sent before it opened: not counted again
        assert b.failures == 1
        g2, probe2 = await b.admit()            # waits for the pause, then is the probe
        assert probe2 and g2 == b.generation
        waiter = asyncio.ensure_future(b.admit())
        await asyncio.sleep(0.01)
        assert not waiter.done()                # the others wait for the probe's outcome
        b.reached(g2, probe2)                   # the endpoint answered: closed, everyone goes
        assert (await waiter)[1] is False and not b.down and b.failures == 0
        g3, _ = await b.admit()
        b.failed(g3, False)
        b.abandoned(False)
        g4, probe4 = await b.admit()
        b.abandoned(probe4)                     # a probe that timed out: another call may probe
        _, probe5 = await b.admit()
        assert probe4 and probe5

    asyncio.run(go())

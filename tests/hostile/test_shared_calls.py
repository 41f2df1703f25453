"""Issue 13, item 4: two identical runs started together share their calls (claims per cache key, schema version
4) instead of both paying for every one: two runs of 300 items at concurrency 16 make at most 332 successful calls
in total, counted at the loopback endpoint. A claim lapses with its owner: kill -9 one of the two and the other
finishes every item."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta

import pytest

from core import store
from core.store import claims
from core.store.journal import owner_tag
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

CONFIG = {"task": "setops", "seed": 7, "samples": 25, "operations": ["union", "intersection", "difference",
                                                                  "symmetric_difference"],
          "sizes": [2, 4, 8], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
N_ITEMS, CONCURRENCY = 300, 16


def run_cmd(cfg, base_url, db):
    return [sys.executable, "-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/loop",
            "--base-url", base_url, "--concurrency", str(CONCURRENCY), "--no-progress", "--db", str(db)]


def results_of(db):
    with store.connect(db) as con:
        return (con.execute("SELECT count(*) FILTER (WHERE error IS NULL), count(*) FROM results").fetchall()[0],
                con.execute("SELECT count(*) FROM claims").fetchall()[0][0])


@pytest.fixture()
def setup(tmp_path):
    srv = LoopbackServer(0.1).start()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    yield srv, cfg, tmp_path / "studio.duckdb"
    srv.stop()


@pytest.mark.slow
def test_two_identical_runs_started_together_share_their_calls(setup):
    srv, cfg, db = setup
    procs = [subprocess.Popen(run_cmd(cfg, srv.base_url, db), cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and f"{N_ITEMS}/{N_ITEMS} answered" in out, (out, err[-2000:])
    answered = srv.stats()["total_answered"]
    assert N_ITEMS <= answered <= N_ITEMS + 2 * CONCURRENCY, answered     # ≤ 332; without claims: 600
    print(f"two identical runs: {answered} successful calls for {N_ITEMS} items")
    calls_made = [int(re.search(r"(\d+) calls this time", out).group(1)) for out, _ in outs]
    assert sum(calls_made) == answered and all(n > 0 for n in calls_made), outs   # both did part of the work
    assert results_of(db) == ((N_ITEMS, N_ITEMS), 0)                          # no claim is left behind


@pytest.mark.slow
def test_a_killed_twin_s_claims_lapse_and_the_other_finishes(setup):
    srv, cfg, db = setup
    a = subprocess.Popen(run_cmd(cfg, srv.base_url, db), cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    b = subprocess.Popen(run_cmd(cfg, srv.base_url, db), cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while srv.stats()["total_requests"] < 60 and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(a.pid, signal.SIGKILL)
    a.wait(10)
    out, err = b.communicate(timeout=180)
    assert b.returncode == 0 and f"{N_ITEMS}/{N_ITEMS} answered" in out, (out, err[-2000:])
    answered = srv.stats()["total_answered"]
    assert answered <= N_ITEMS + 2 * CONCURRENCY, answered
    print(f"killed twin: {answered} successful calls for {N_ITEMS} items")
    again = subprocess.run(run_cmd(cfg, srv.base_url, db), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "0 calls this time" in again.stdout, again.stdout
    assert results_of(db) == ((N_ITEMS, N_ITEMS), 0)


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_claims_mine_others_cached_and_lapsed(tmp_path):
    db = tmp_path / "s.duckdb"
    me = owner_tag()
    with store.connect(db) as con, store.transaction(con):
        got = claims.claim(con, ["k1", "k2", "k3"], me, "run-a", 600)
        assert got.mine == {"k1", "k2", "k3"} and not got.others and not got.cached
        again = claims.claim(con, ["k1", "k4"], me, "run-a", 600)          # idempotent for the owner
        assert again.mine == {"k1", "k4"}
        other_run = claims.claim(con, ["k1", "k5"], me, "run-b", 600)      # another run of this (live) process
        assert other_run.others == {"k1"} and other_run.mine == {"k5"}
        # a dead owner's claim lapses; so does a live owner's whose lease ran out
        gone = _dead_pid()
        con.execute("INSERT INTO claims VALUES ('dead', ?, 'run-x', ?, 600)",
                    [f"{socket.gethostname()}:{gone}", store.now_utc()])
        con.execute("INSERT INTO claims VALUES ('stale', ?, 'run-y', ?, 1)",
                    [me, store.now_utc() - timedelta(seconds=5)])
        con.execute("INSERT INTO calls (cache_key, response) VALUES ('answered', '{1}')")
        got = claims.claim(con, ["dead", "stale", "answered"], me, "run-c", 600)
        assert got.mine == {"dead", "stale"} and got.cached == {"answered"}
        claims.release(con, ["k1", "k2"], me, "run-a")
        claims.release(con, ["k5"], me, "run-a")                           # not ours: kept
        assert {r[0] for r in con.execute("SELECT cache_key FROM claims WHERE run_id = 'run-a'").fetchall()} \
            == {"k3", "k4"}
        claims.release_run(con, me, "run-a")
        assert con.execute("SELECT count(*) FROM claims WHERE run_id = 'run-a'").fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM claims WHERE run_id = 'run-b'").fetchall()[0][0] == 1

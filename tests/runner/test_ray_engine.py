"""`run --engine ray` on a local Ray (issue 21): every item answered through the actor pool despite injected
429/500/non-JSON/hang failures, each answer stored once, and the same call again sends 0 requests."""

from __future__ import annotations

import pytest

from tests.support.loopback import LoopbackServer

ray = pytest.importorskip("ray")

CONFIG = {"task": "setops", "seed": 1, "samples": 2, "operations": ["union", "intersection"],
          "sizes": [2, 4], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


@pytest.mark.slow
def test_every_item_answered_once_and_rerun_sends_nothing(local_ray, tmp_path):
    from core import store
    from core.runner.ray_engine import run_ray

    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.02, fail_rate=0.3, hang=2.0, retry_after_ms=10).start()
    try:
        c = run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, concurrency=4, actors=2,
                    block_size=4, timeout=0.5, max_attempts=6)
        st = srv.stats()
        assert c["requests"] > 0 and c["failed"] == 0
        assert st["total_answered"] == c["requests"]          # each distinct prompt answered once by the server
        assert set(st["failures"]) - {"429", "500", "timeout", "malformed"} == set()
        with store.connect(db) as con:
            n, done = con.execute("SELECT n_items, n_done FROM runs WHERE run_id = ?", [c["run_id"]]).fetchone()
            assert n == done > 0
            keys = con.execute("SELECT count(*), count(DISTINCT cache_key) FROM calls").fetchone()
            assert keys[0] == keys[1] == c["requests"]
        before = srv.stats()["total_requests"]
        again = run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, concurrency=4, actors=2)
        assert again["requests"] == 0 and srv.stats()["total_requests"] == before
    finally:
        srv.stop()


def test_ray_data_llm_names_exist():
    llm = pytest.importorskip("ray.data.llm")
    for name in ("build_processor", "vLLMEngineProcessorConfig", "HttpRequestProcessorConfig"):
        assert hasattr(llm, name), name


@pytest.mark.slow
def test_cli_engine_ray(local_ray, cli, tmp_path):
    import json

    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    srv = LoopbackServer(0.01).start()
    try:
        args = ("run", "--config", cfg, "--model", "openai-compatible/loop", "--base-url", srv.base_url,
                "--db", tmp_path / "s.duckdb", "--engine", "ray", "--no-progress")
        r = cli(*args)
        assert r.returncode == 0, r.stderr
        assert "0 failed" in r.stdout and " 0 request(s)" not in r.stdout
        sent = srv.stats()["total_requests"]
        r2 = cli(*args)
        assert r2.returncode == 0 and " 0 request(s)" in r2.stdout and srv.stats()["total_requests"] == sent
        bad = cli("run", "--config", cfg, "--model", "reference/solver", "--engine", "ray", "--db", tmp_path / "x.db")
        assert bad.returncode != 0 and "--engine ray" in bad.stderr and "Traceback" not in bad.stderr
    finally:
        srv.stop()


@pytest.mark.slow
def test_an_actor_killed_mid_run_loses_nothing(local_ray, tmp_path):
    """An actor dies (SIGKILL) after answering a block, before handing it back: Ray runs the block again on a new
    actor; every item is answered and stored once, and the requests sent twice are at most what was in flight."""
    from core import store
    from core.runner.ray_engine import run_ray

    db = tmp_path / "s.duckdb"
    marker = tmp_path / "killed-once"
    srv = LoopbackServer(0.02).start()
    try:
        # 16 items in blocks of 4: the first block an actor finishes kills it (once across the pool), whichever
        # way Ray spreads the blocks over the two actors (kill@2 never fired when each actor got one block)
        c = run_ray({**CONFIG, "samples": 4}, "openai-compatible/loop", srv.base_url, db_path=db, concurrency=4,
                    actors=2, block_size=4, actor_env={"STUDIO_FAULT": "ray-actor-block:kill@1",
                                                       "STUDIO_FAULT_ONCE": str(marker)})
        assert marker.exists()                                  # an actor was killed
        st = srv.stats()
        assert c["failed"] == 0 and c["answered"] == c["requests"] > 0
        sent_twice = st["total_requests"] - c["requests"]
        assert 0 < sent_twice <= 2 * 4                         # the killed block again (at most what was in flight)
        with store.connect(db) as con:
            n, done = con.execute("SELECT n_items, n_done FROM runs WHERE run_id = ?", [c["run_id"]]).fetchone()
            rows, distinct = con.execute("SELECT count(*), count(DISTINCT idx) FROM results WHERE run_id = ?",
                                         [c["run_id"]]).fetchone()
        assert n == done == rows == distinct > 0
    finally:
        srv.stop()


@pytest.mark.slow
def test_a_killed_driver_is_finished_by_the_same_command(local_ray, tmp_path):
    """`run --engine ray` killed (SIGKILL) after some blocks were imported: the same command sends only what is
    missing and finishes every item; once more, it sends nothing. The driver joins the test's Ray cluster, so the
    kill takes the driver alone."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from core import store
    from tests.support import ROOT

    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({**CONFIG, "samples": 10}))        # 40 items, blocks of 4
    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.2).start()
    address = ray.get_runtime_context().gcs_address
    cmd = [sys.executable, "-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/loop",
           "--base-url", srv.base_url, "--db", str(db), "--engine", "ray", "--ray-address", address,
           "--ray-actors", "1", "--ray-block-size", "4", "--concurrency", "2", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        done, deadline = 0, time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.3)
            try:
                with store.connect(db, timeout=5) as con:
                    row = con.execute("SELECT max(n_done) FROM runs").fetchone()
                done = int(row[0] or 0)
            except Exception:  # noqa: BLE001, S112  (the file is not there yet)
                continue
            if done >= 8:
                break
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert 8 <= done < 40
        first = srv.stats()["total_requests"]
        again = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert again.returncode == 0, again.stderr[-2000:]
        with store.connect(db) as con:
            n, n_done = con.execute("SELECT n_items, n_done FROM runs").fetchone()
            rows, distinct = con.execute("SELECT count(*), count(DISTINCT idx) FROM results").fetchone()
        assert n == n_done == rows == distinct == 40
        second = srv.stats()["total_requests"]
        assert second - first <= 40 - done + 8          # the rest, and at most two blocks that were in flight
        third = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert third.returncode == 0 and " 0 request(s)" in third.stdout
        assert srv.stats()["total_requests"] == second
    finally:
        srv.stop()


@pytest.mark.slow
def test_a_run_stopped_between_blocks_keeps_what_it_imported(local_ray, tmp_path):
    """stop() true after the first block: that block is in the run, nothing else is; the same call again sends only
    the rest (what was answered but not imported is not in the cache, so it is asked again)."""
    from core import store
    from core.runner.ray_engine import run_ray

    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.01).start()
    try:
        c = run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, actors=1, block_size=4,
                    stop=lambda: True)
        assert c["stopped"] and c["blocks"] == 1 and c["answered"] == 4 and c["requests"] == 8
        with store.connect(db) as con:
            assert con.execute("SELECT n_items, n_done FROM runs").fetchall() == [(8, 4)]
        rest = run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, actors=1, block_size=4)
        assert rest["requests"] == 4 and not rest["stopped"]
        with store.connect(db) as con:
            assert con.execute("SELECT status, n_done FROM runs").fetchall() == [("done", 8)]
    finally:
        srv.stop()


@pytest.mark.slow
def test_the_actors_send_the_providers_key_only(local_ray, tmp_path, monkeypatch):
    """The HTTP actors send OPENAI_COMPATIBLE_API_KEY (the provider's variable) — never OPENAI_API_KEY, a key for
    another service — and the key is nowhere in the store."""
    from core import store
    from core.runner.ray_engine import run_ray

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-for-this-server-0000")
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-compat-test-1234567890")
    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.01).start()
    try:
        run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, actors=1, block_size=8)
        assert set(srv.auth_seen) == {"Bearer sk-compat-test-1234567890"}
    finally:
        srv.stop()
    with store.connect(db) as con:
        for table in ("runs", "calls", "results", "items"):
            text = con.execute(f"SELECT * FROM {table}").fetchall()
            assert "sk-compat" not in repr(text) and "sk-openai" not in repr(text)


@pytest.mark.slow
def test_a_background_ray_run_behind_a_handle(local_ray, tmp_path):
    """start_ray_run: the handle is found by run id (as the pages find live runs), reports the store's counts and
    ends done; a bad address or model is refused before anything starts."""
    from core import runner
    from core.errors import UserError
    from core.runner.ray_engine import start_ray_run

    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.01, answer="{}").start()
    try:
        h = start_ray_run(CONFIG, "openai-compatible/loop", srv.base_url, address="local", db_path=db,
                          actors=1, block_size=4, name="on ray")
        assert runner.get_handle(h.run_id) is h
        p = h.wait(180)
        assert h.done and (p.status, p.total, p.done, p.failed, p.error) == ("done", 8, 8, 0, None)
        assert 0 < p.correct < 8          # '{}' is right for the intersections that are empty, wrong elsewhere
        with pytest.raises(UserError, match="Ray address"):
            start_ray_run(CONFIG, "openai-compatible/loop", srv.base_url, address="nowhere", db_path=db)
        with pytest.raises(UserError, match="openai-compatible"):
            start_ray_run(CONFIG, "reference/solver", srv.base_url, address="local", db_path=db)
    finally:
        srv.stop()
    from core import store

    assert store.get_run(db, h.run_id)["name"] == "on ray"


@pytest.mark.slow
def test_the_workers_need_no_checkout_of_the_project(tmp_path):
    """A driver whose Ray workers cannot import ``core`` (its own local Ray, started outside the checkout and without
    PYTHONPATH) still runs: the worker code goes with the job, pickled by value."""
    import os
    import subprocess
    import sys

    from tests.support import ROOT

    script = tmp_path / "driver.py"
    script.write_text(f"""
import sys, tempfile
sys.path.insert(0, {str(ROOT)!r})
import ray
from core.runner.ray_engine import run_ray, start_ray
from tests.support.loopback import LoopbackServer
start_ray(None)

@ray.remote
def worker_imports_core():
    try:
        import core  # noqa: F401
        return True
    except ImportError:
        return False

print("WORKER-IMPORTS-CORE", ray.get(worker_imports_core.remote()))
srv = LoopbackServer(0.01).start()
cfg = {CONFIG!r}
c = run_ray(cfg, "openai-compatible/loop", srv.base_url, db_path=tempfile.mkdtemp() + "/s.duckdb", actors=1)
print("ANSWERED", c["answered"], "OF", c["requests"], "FAILED", c["failed"])
""")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "WORKER-IMPORTS-CORE False" in r.stdout
    assert "ANSWERED 8 OF 8 FAILED 0" in r.stdout

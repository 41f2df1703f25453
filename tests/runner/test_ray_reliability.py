"""`run --engine ray` as reliable as the live runner, on a real local Ray (one for the session's Ray tests,
tests/conftest.py) against the loopback endpoint: the live retry policy under mixed faults; the live run id, cache
keys and claims (either engine resumes the other's run sending nothing; identical Ray runs at once share their calls);
a bounded join of a cluster address that does not answer (one line; the process stays free for a local Ray; Cancel
stops the join); a killed cluster ends the driver with one line; bad Ray options refused; the local Ray's temporary
folder removed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.loopback import EMPTY, FAIL_KINDS, LoopbackServer

ray = pytest.importorskip("ray")

MODEL = "openai-compatible/loop"
GRID = {"task": "setops", "seed": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
        "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


def grid(samples: int) -> dict:
    return {**GRID, "samples": samples}          # 4 items (4 distinct prompts) per sample


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(args, *, env=None, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "core", "run", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _cfg(tmp_path, samples: int) -> Path:
    path = tmp_path / f"c{samples}.yaml"
    path.write_text(json.dumps(grid(samples)))
    return path


def _error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


# ------------------------------------------------------------------------------------------------ dashboard: joins


@pytest.mark.slow
def test_a_dead_address_fails_alone_cancel_stops_a_join_and_local_still_runs(no_ray, tmp_path):
    """Before this process has a Ray: an address nobody answers ends its run with one error; a join that hangs
    (a port that accepts and says nothing) is stopped by Cancel; a later ``local`` run in the same process works."""
    from core.runner.ray_engine import start_ray_run

    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.002).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        dead = start_ray_run(grid(2), MODEL, srv.base_url, address=f"127.0.0.1:{_closed_port()}", db_path=db)
        p = dead.wait(60)
        assert dead.done and p.status == "error" and "cannot join the Ray at 127.0.0.1" in p.error
        hanging = start_ray_run(grid(3), MODEL, srv.base_url, address=f"127.0.0.1:{silent.getsockname()[1]}",
                                db_path=db)
        hanging.cancel()
        p = hanging.wait(60)
        assert hanging.done and p.status == "cancelled"
        assert not ray.is_initialized()            # neither address reached this process's Ray
        ok = start_ray_run(grid(2), MODEL, srv.base_url, address="local", db_path=db, actors=1, block_size=4)
        p = ok.wait(180)
        assert p.status == "done" and p.done == p.total == 8, (p.status, p.error)
    finally:
        silent.close()
        srv.stop()


# ------------------------------------------------------------------------------------------------ retry policy


@pytest.mark.slow
def test_mixed_faults_are_retried_as_the_live_runner_retries_them(local_ray, tmp_path):
    """15 % of requests fail — 429, 500, hangs past the timeout, non-JSON and no-choices 200s — at 64 in flight:
    the live runner and the Ray engine both answer every item."""
    from core import runner
    from core.runner.ray_engine import run_ray

    srv = LoopbackServer(0.002, fail_rate=0.15, hang=0.5, retry_after_ms=10, kinds=(*FAIL_KINDS, EMPTY)).start()
    try:
        live = runner.run(grid(40), MODEL, base_url=srv.base_url, concurrency=64, call_timeout=0.25,
                          db_path=tmp_path / "live.duckdb")
        assert live.status == "done" and live.failed == 0 and live.done == live.total == 160
        c = run_ray(grid(40), MODEL, srv.base_url, db_path=tmp_path / "ray.duckdb", concurrency=64, actors=2,
                    block_size=32, timeout=0.25)
        assert srv.stats()["failures"].get(EMPTY, 0) > 0           # every kind of fault was met
        assert set(srv.stats()["failures"]) == {*FAIL_KINDS, EMPTY}
        assert c["failed"] == 0 and c["answered"] == c["items"] == 160
    finally:
        srv.stop()


# ------------------------------------------------------------------------------------------------ one run, two engines


@pytest.mark.slow
def test_either_engine_resumes_the_others_run_sending_nothing(local_ray, tmp_path):
    from core import runner, store
    from core.runner.ray_engine import run_ray

    srv = LoopbackServer(0.002).start()
    try:
        live_db, ray_db = tmp_path / "live.duckdb", tmp_path / "ray.duckdb"
        live = runner.run(grid(4), MODEL, base_url=srv.base_url, db_path=live_db, concurrency=8)
        assert live.status == "done" and live.calls == 16
        sent = srv.stats()["total_requests"]
        again = run_ray(grid(4), MODEL, srv.base_url, db_path=live_db, actors=1, block_size=8)
        assert again["run_id"] == live.run_id and again["requests"] == 0
        assert srv.stats()["total_requests"] == sent

        first = run_ray(grid(4), MODEL, srv.base_url, db_path=ray_db, actors=1, block_size=8)
        assert first["run_id"] == live.run_id and first["requests"] == 16 and first["failed"] == 0
        sent = srv.stats()["total_requests"]
        resumed = runner.run(grid(4), MODEL, base_url=srv.base_url, db_path=ray_db, concurrency=8)
        assert resumed.run_id == live.run_id and resumed.status == "done" and resumed.calls == 0
        assert srv.stats()["total_requests"] == sent
        for db in (live_db, ray_db):                 # the same keys, written alike
            with store.connect(db) as con:
                keys = {r[0] for r in con.execute("SELECT cache_key FROM calls").fetchall()}
                runs = con.execute("SELECT run_id, status, n_done FROM runs").fetchall()
            assert runs == [(live.run_id, "done", 16)]
            if db == live_db:
                live_keys = keys
        assert keys == live_keys
        h = runner.resume_run(live.run_id, db_path=ray_db)     # the Runs page's resume of a Ray run: live, no call
        assert h.wait(60).status == "done" and srv.stats()["total_requests"] == sent
    finally:
        srv.stop()


@pytest.mark.slow
def test_two_identical_ray_runs_at_once_share_their_calls(local_ray, tmp_path):
    """Two `run --engine ray` processes on one database at once, 80 prompts: both end well, no traceback, and at
    most 80 requests reach the endpoint."""
    srv = LoopbackServer(0.05).start()
    try:
        args = ["--config", _cfg(tmp_path, 20), "--model", MODEL, "--base-url", srv.base_url, "--db",
                tmp_path / "s.duckdb", "--engine", "ray", "--ray-address", local_ray, "--ray-actors", "1",
                "--ray-block-size", "8", "--concurrency", "8", "--no-progress"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "core", "run", *map(str, args)]
        procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        outs = [p.communicate(timeout=240) for p in procs]
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0, err
            assert "Traceback" not in err and "Exception" not in err
        assert srv.stats()["total_requests"] <= 80
        assert len(srv.stats()["answered"]) == 80
        from core import store

        with store.connect(tmp_path / "s.duckdb") as con:
            assert con.execute("SELECT status, n_done FROM runs").fetchall() == [("done", 80)]
            assert con.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    finally:
        srv.stop()


# ------------------------------------------------------------------------------------------------ CLI: lines, not logs


def test_bad_ray_options_are_refused_in_one_line(cli, tmp_path):
    cfg = _cfg(tmp_path, 1)
    for flag, value in (("--ray-actors", "0"), ("--ray-actors", "-1"), ("--ray-block-size", "0"),
                        ("--ray-block-size", "-3")):
        r = cli("run", "--config", cfg, "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--db",
                tmp_path / "s.duckdb", "--engine", "ray", flag, value)
        assert r.returncode != 0 and _error_lines(r.stderr) == [f"error: {flag} must be a whole number >= 1, got "
                                                                f"{value}"], r.stderr
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.slow
def test_an_unreachable_address_is_one_error_line(tmp_path):
    r = _cli(["--config", _cfg(tmp_path, 1), "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--db",
              tmp_path / "s.duckdb", "--engine", "ray", "--ray-address", f"127.0.0.1:{_closed_port()}", "--no-progress"], timeout=60)
    lines = _error_lines(r.stderr)
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: cannot join the Ray at"), r.stderr


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


@pytest.mark.slow
def test_a_killed_local_cluster_ends_the_run_with_one_line_and_no_temp_folder(tmp_path):
    """The driver's own local Ray killed mid-run (every process it started): one `error:` line, a non-zero exit;
    no `studio-ray-*` folder is left in the temporary directory — nor after a run
    that ends well."""
    tmp = Path(tempfile.mkdtemp(prefix="sr", dir="/tmp"))     # short: Ray's socket paths must stay short
    srv = LoopbackServer(0.01).start()
    try:
        db = tmp_path / "s.duckdb"
        args = ["--config", _cfg(tmp_path, 1), "--model", MODEL, "--base-url", srv.base_url, "--db", db,
                "--engine", "ray", "--ray-actors", "1", "--no-progress"]
        ok = _cli(args, env={"TMPDIR": str(tmp)}, timeout=180)
        assert ok.returncode == 0, ok.stderr
        assert not list(tmp.glob("studio-ray-*"))
        srv.latency = 0.3
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
        cmd = [sys.executable, "-m", "core", "run", "--config", str(_cfg(tmp_path, 30)), "--model", MODEL,
               "--base-url", srv.base_url, "--db", str(db), "--engine", "ray", "--ray-actors", "1",
               "--ray-block-size", "4", "--concurrency", "2", "--no-progress"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while srv.stats()["total_answered"] < 8 + 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        for pid in _descendants(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, err = proc.communicate(timeout=60)
        lines = _error_lines(err)
        assert proc.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: the Ray cluster"), err
        assert "Traceback" not in err
        assert not list(tmp.glob("studio-ray-*"))
    finally:
        srv.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)

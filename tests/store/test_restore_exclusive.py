"""Issue 17, item 2: ``restore`` is exclusive and its swap is atomic.

- While a run of another process is live on the database, restore is refused with one line (its results would
  otherwise split between the old and the new file).
- A kill -9 at each step of restore leaves a valid database at the path: the old one (before the swap) or the
  restored one (after it), never no file and never a file that does not open.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from core import store
from core.store.backup import backup, restore
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

CFG = {"task": "setops", "samples": 5, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
KILL_POINTS = ("restore-built", "restore-checked", "restore-linked", "restore-swapped")


def _env(**extra):
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def _solver_run(db, tmp_path, seed):
    from core import runner

    runner.run({**CFG, "seed": seed}, "reference/solver", db_path=db)   # finished: nothing of it stays live


def _runs(db) -> int:
    with store.connect(db) as con:
        con.execute("SELECT count(*) FROM v_results").fetchall()
        return con.execute("SELECT count(*) FROM runs").fetchall()[0][0]


@pytest.fixture()
def two_states(tmp_path):
    """A database with two runs, and a backup taken when it had one."""
    db = tmp_path / "studio.duckdb"
    _solver_run(db, tmp_path, 1)
    folder, n = backup(db)
    assert n == 1
    _solver_run(db, tmp_path, 2)
    assert _runs(db) == 2
    return db, folder


@pytest.mark.slow
@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_kill_at_each_step_of_restore_leaves_a_valid_database(two_states, point):
    db, folder = two_states
    done = subprocess.run([sys.executable, "-m", "core", "restore", str(folder), "--db", str(db)], cwd=ROOT,
                          env=_env(STUDIO_FAULT=f"{point}:kill"), capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, (done.returncode, done.stderr[-1500:])    # it really died at that step
    assert db.is_file()
    expected = 1 if point == "restore-swapped" else 2       # restored after the swap, the old file before it
    assert _runs(db) == expected
    # and the restore can be done again after the crash
    moved, n = restore(db, folder)
    assert n == 1 and _runs(db) == 1 and moved is not None and moved.is_file()


def test_restore_keeps_the_old_file_and_merges_dead_journals_into_it(two_states):
    db, folder = two_states
    moved, n = restore(db, folder)
    assert n == 1 and _runs(db) == 1
    assert _runs(moved) == 2                     # the file it replaced, whole, under its new name
    assert not db.with_name(db.name + ".wal").exists() or _runs(db) == 1


@pytest.mark.slow
def test_restore_while_a_run_is_live_is_refused(two_states, tmp_path):
    db, folder = two_states
    srv = LoopbackServer(0.01, pause_after=4).start()   # the run stays live after 4 answers, until resume()
    cfg = tmp_path / "slow.yaml"
    cfg.write_text(json.dumps({**CFG, "seed": 3, "samples": 10, "sizes": [2, 4]}))
    run = subprocess.Popen([sys.executable, "-m", "core", "run", "--config", str(cfg), "--model",
                            "openai-compatible/loop", "--base-url", srv.base_url, "--concurrency", "2",
                            "--no-progress", "--db", str(db)], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while srv.stats()["total_answered"] < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert run.poll() is None and 4 <= srv.stats()["total_answered"] < 40   # (a call past the gate ends)
        done = subprocess.run([sys.executable, "-m", "core", "restore", str(folder), "--db", str(db)], cwd=ROOT,
                              env=_env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and "in use" in lines[0], done.stderr
        assert "Traceback" not in done.stderr
    finally:
        try:
            srv.resume()
            out, err = run.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            run.kill()
            out, err = run.communicate()
        finally:
            srv.stop()
    assert run.returncode == 0 and "40/40 answered" in out, (out, err[-1500:])
    assert _runs(db) == 3       # the live run's results all landed in the one file
    assert not list(db.parent.glob("*.replaced-*"))


def test_a_migration_is_refused_while_a_run_of_another_process_is_live(tmp_path):
    import socket

    from core.errors import UserError
    from tests.support.old_db import write_v1_database

    db = tmp_path / "old.duckdb"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:                                # a file as version-1 code wrote it, with a run that a live process owns
        write_v1_database(db, [("r1", "running", json.dumps({"owner": f"{socket.gethostname()}:{other.pid}"}))])
        with pytest.raises(UserError, match="run r1 .* is live on it"):
            with store.connect(db):
                pass
    finally:
        other.kill()
        other.wait()
    with store.connect(db) as con:      # its owner gone: the migration goes through
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("r1",)]

"""Issue 17, item 1: many processes on one database lose nothing and never corrupt it.

DuckDB alone loses committed rows (or leaves an unreadable file) when several processes cycle connect → commit →
close on one file; the store therefore opens every connection under an OS lock (core/store/oslock.py). These tests
hold that promise with real processes:

- the bare pattern that broke (six processes, each many short connect/insert/commit/close cycles through
  ``store.connect``) keeps every committed row;
- six processes × three rounds — four CLI runs against a loopback endpoint, an import, a dashboard page session —
  leave a database that opens, where every run's answered count is what its export returns.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest

from core import store
from core.store import oslock
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

PROCS, CYCLES, ROWS = 6, 60, 50

WRITER = textwrap.dedent("""
    import sys
    from core import store
    db, who, cycles, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for c in range(cycles):
        with store.connect(db) as con, store.transaction(con):
            con.execute("INSERT INTO t SELECT ?, ?, range FROM range(?)", [who, c, rows])
    print("ok")
""")


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
def test_six_processes_cycling_connect_commit_close_keep_every_row(tmp_path):
    db = tmp_path / "cycles.duckdb"
    with store.connect(db) as con:
        con.execute("CREATE TABLE t (who INTEGER, cycle INTEGER, n BIGINT)")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(w), str(CYCLES), str(ROWS)], cwd=ROOT,
                              env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(PROCS)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-1500:] for _, err in outs]
    with store.connect(db) as con:
        total, per_cycle = con.execute(
            "SELECT count(*), count(DISTINCT (who, cycle)) FROM t").fetchall()[0]
    print(f"{PROCS} processes x {CYCLES} cycles x {ROWS} rows: {total} rows kept")
    assert (total, per_cycle) == (PROCS * CYCLES * ROWS, PROCS * CYCLES)


def test_threads_of_one_process_share_the_lock_and_another_process_waits(tmp_path):
    """Within a process the lock is shared (nested and concurrent connections never wait for each other); while it
    is held, another process cannot open the file and times out with DatabaseBusy."""
    db = tmp_path / "held.duckdb"
    with store.connect(db) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    probe = ("import sys\nfrom core import store\ntry:\n    with store.connect(sys.argv[1], timeout=0.5):\n"
             "        print('opened')\nexcept store.DatabaseBusy:\n    print('busy')\n")
    with store.connect(db) as outer:
        with store.connect(db) as inner:          # nested in one thread: joins
            inner.execute("INSERT INTO t VALUES (1)")
        seen = []
        t = threading.Thread(target=lambda: seen.append(store.query_df("SELECT count(*) AS n FROM t", db_path=db)))
        t.start()
        t.join(10)                                # another thread of this process: joins
        assert not t.is_alive() and int(seen[0]["n"][0]) == 1
        assert oslock.held_by_this_process(db)
        out = subprocess.run([sys.executable, "-c", probe, str(db)], cwd=ROOT, env=_env(), capture_output=True,
                             text=True, timeout=120)
        assert out.stdout.strip() == "busy", out.stderr[-1500:]
        outer.execute("INSERT INTO t VALUES (2)")
    assert not oslock.held_by_this_process(db)
    out = subprocess.run([sys.executable, "-c", probe, str(db)], cwd=ROOT, env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "opened", out.stderr[-1500:]


def test_a_process_that_keeps_connecting_lets_another_one_in(tmp_path):
    """Fairness: threads of one process that keep overlapping their connections hold the lock only for a slice;
    another process gets its turn long before its timeout."""
    db = tmp_path / "fair.duckdb"
    with store.connect(db) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            with store.connect(db) as con:
                con.execute("SELECT count(*) FROM t").fetchall()

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        probe = ("import sys\nfrom core import store\nwith store.connect(sys.argv[1], timeout=20) as con:\n"
                 "    con.execute('INSERT INTO t VALUES (7)')\nprint('in')\n")
        out = subprocess.run([sys.executable, "-c", probe, str(db)], cwd=ROOT, env=_env(), capture_output=True,
                             text=True, timeout=120)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert out.stdout.strip() == "in", out.stderr[-1500:]


# ------------------------------------------------------------------------------------- six processes, three rounds

SETOPS = {"task": "setops", "samples": 25, "operations": ["union", "intersection", "difference",
                                                           "symmetric_difference"],
          "sizes": [2, 4], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
RUNS_PER_ROUND, ITEMS = 4, 200
PAGE = textwrap.dedent("""
    import sys
    from streamlit.testing.v1 import AppTest
    shown = 0
    for page in ("pages/runs.py", "pages/results.py", "pages/runs.py"):
        at = AppTest.from_file("app.py", default_timeout=120).run()
        at.switch_page(page).run()
        if at.exception:
            print("EXCEPTION", [e.value for e in at.exception]); sys.exit(1)
        if any("damaged" in e.value for e in at.error):
            print("DAMAGED", [e.value for e in at.error]); sys.exit(1)
        shown += 1
    print("pages", shown)
""")


def _cli(*args, db, **kw):
    return subprocess.Popen([sys.executable, "-m", "core", *args, "--db", str(db)], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _export_count(db, run_id, out):
    """``python -m core export`` of the run, in this process (the writers are separate processes; a dozen exports
    each starting Python and importing the project cost more than the rounds themselves)."""
    from core.cli import main

    assert main(["export", "--run", run_id, "--out", str(out), "--db", str(db)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return sum(1 for r in rows if r.get("error") in (None, "") and r.get("response") is not None)


@pytest.mark.slow
def test_six_processes_three_rounds_runs_import_and_a_page_lose_nothing(tmp_path):
    db = tmp_path / "studio.duckdb"
    srv = LoopbackServer(0.05).start()
    try:
        # a results file to import during the rounds: a finished solver run (made in this process, before any
        # other process opens the file), exported
        from core import runner

        assert runner.run({**SETOPS, "seed": 999, "samples": 5}, "reference/solver", db_path=db).status == "done"
        upload = tmp_path / "upload.jsonl"
        _export_count(db, "latest", upload)
        n_before = store.query_df("SELECT count(*) AS n FROM runs", db_path=db)["n"][0]
        env = {**_env(), "STUDIO_DB": str(db)}
        expected: dict[str, int] = {}
        for rnd in range(3):
            procs = {}
            for k in range(RUNS_PER_ROUND):
                cfg = tmp_path / f"r{rnd}k{k}.yaml"
                cfg.write_text(json.dumps({**SETOPS, "seed": 100 * rnd + k}))
                procs[f"run{k}"] = _cli("run", "--config", str(cfg), "--model", "openai-compatible/loop",
                                        "--base-url", srv.base_url, "--concurrency", "16", "--no-progress", db=db)
            procs["import"] = _cli("import", str(upload), db=db)
            procs["page"] = subprocess.Popen([sys.executable, "-c", PAGE], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True)
            outs = {name: (p.communicate(timeout=600), p.returncode) for name, p in procs.items()}
            for name, ((out, err), rc) in outs.items():
                assert rc == 0, (rnd, name, out[-1500:], err[-2500:])
                if name.startswith("run"):
                    m = re.search(r"run (\S+): done; (\d+)/(\d+) answered", out)
                    assert m and m.group(2) == m.group(3) == str(ITEMS), (rnd, name, out)
                    expected[m.group(1)] = ITEMS
            print(f"round {rnd}: " + "; ".join(f"{n}: {o[0].strip().splitlines()[-1][:90]}"
                                                for n, (o, _) in outs.items()))
        # the database opens, every table reads end to end, and each run's answered count is its export's
        with store.connect(db) as con:
            for table in ("runs", "items", "calls", "results"):
                con.execute(f"SELECT count(*) FROM {table}").fetchall()
            con.execute("CHECKPOINT")
            counts = dict(con.execute("SELECT run_id, n_done FROM runs").fetchall())
            n_runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
        # the same file imported three times is at most one new run (none where an export is known as its run's)
        assert n_before + len(expected) <= n_runs <= n_before + len(expected) + 1
        for run_id, n in expected.items():
            assert counts[run_id] == n
            assert _export_count(db, run_id, tmp_path / f"{run_id}.jsonl") == n
    finally:
        srv.stop()

"""`python -m core run` leaves through core.cli.exit_fast (no object-by-object interpreter teardown): what an ordinary
exit does that can be observed still happens — the exit code, everything printed, the database complete, atexit
handlers run, threads that are not daemons finished."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from core import store
from tests.support import ROOT


def test_run_subprocess_exit_code_output_and_store(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("task: setops\nsamples: 3\nsizes: [2]\nmembers: [numbers]\nseed: 2\n")
    db = tmp_path / "x.duckdb"
    r = subprocess.run([sys.executable, "-m", "core", "run", "--config", cfg, "--model", "reference/solver", "--db",
                        db, "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "done; 12/12 answered (0 cached, 12 calls this time), 0 failed, accuracy 1.000" in r.stdout
    assert r.stdout.endswith("s\n")   # the whole line, flushed into a pipe
    runs = store.list_runs(db)
    assert list(runs["status"]) == ["done"] and int(runs["n_done"].iloc[0]) == 12
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM results WHERE correct").fetchall()[0][0] == 12
    assert not list(store.journal_dir(db).glob("*.jsonl"))   # the run's journal was merged and removed


def test_exit_fast_runs_atexit_waits_for_threads_and_keeps_the_code(tmp_path):
    code = textwrap.dedent(f"""
        import atexit, sys, threading, time
        from pathlib import Path
        from core import cli
        out = Path({str(tmp_path)!r})
        atexit.register(lambda: (out / "atexit").write_text("ran"))
        def late():
            time.sleep(0.3)
            (out / "thread").write_text("finished")
        threading.Thread(target=late).start()      # not a daemon: an ordinary exit waits for it
        print("printed before exit", end="")         # no newline: still in the buffer
        cli.exit_fast(3)
        (out / "after").write_text("exit_fast returned")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, r.stderr
    assert r.stdout == "printed before exit"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "thread").read_text() == "finished"
    assert not (tmp_path / "after").exists()


def test_only_a_run_that_returned_asks_for_it(tmp_path, cli):
    from core import cli as cli_module

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("task: setops\nsamples: 1\nsizes: [2]\nmembers: [numbers]\nseed: 2\n")
    r = cli("run", "--config", cfg, "--model", "reference/solver", "--db", tmp_path / "x.duckdb", "--no-progress")
    assert r.returncode == 0 and cli_module.EXIT_FAST is True
    r = cli("generate", "setops", "--config", cfg, "--out", tmp_path / "items.jsonl")
    assert r.returncode == 0 and cli_module.EXIT_FAST is False     # other commands exit the ordinary way
    r = cli("run", "--config", cfg, "--model", "nonsense", "--db", tmp_path / "x.duckdb")
    assert r.returncode == 2 and cli_module.EXIT_FAST is False     # an error: the ordinary way too

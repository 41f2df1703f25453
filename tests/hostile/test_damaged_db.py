"""Issue 13, item 7: a truncated database is one ``error:`` line naming the file and what to do (export, run,
import; exit ≠ 0, no traceback) and one st.error on Results and Runs; a malformed line in a dead process's journal is
set aside with a warning and the rest is recovered; ``backup`` / ``restore`` bring a database back, and a schema
migration takes a backup first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from core import runner, store
from core.store.backup import backup, list_backups, restore
from core.store.journal import quarantined
from tests.hostile.conftest import HOSTILE
from tests.support import ROOT

CONFIG = {"task": "setops", "seed": 9, "samples": 10, "operations": ["union", "intersection", "difference"],
          "sizes": [2, 4], "members": ["numbers", "words"], "phrasings": ["plain"], "approaches": ["baseline"],
          "shots": [0]}


def truncate_to_half(path) -> None:
    os.truncate(path, os.path.getsize(path) // 2)


@pytest.fixture(scope="module")
def a_run_once(tmp_path_factory):
    """(store, run id) of a finished 120-item solver run, made once for the file."""
    db = tmp_path_factory.mktemp("a_run") / "studio.duckdb"
    p = runner.run(CONFIG, "reference/solver", db_path=db)
    assert p.status == "done" and p.done == 120
    return db, p.run_id


@pytest.fixture()
def db_with_a_run(a_run_once, tmp_path):
    """(store, run id): a copy of the finished run's store of the test's own (the tests damage it)."""
    db, run_id = a_run_once
    assert not db.with_name(db.name + ".wal").exists()                 # the run closed its store: the file is all
    assert not list(store.journal_dir(db).glob("*"))                  # of it (the journal merged and removed)
    copy = tmp_path / db.name
    shutil.copyfile(db, copy)
    return copy, run_id


def core_cli(*args, db) -> subprocess.CompletedProcess:
    env = {**os.environ, "STUDIO_DB": str(db), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_a_truncated_db_is_one_error_line_for_export_run_and_import(db_with_a_run, tmp_path):
    db, _ = db_with_a_run
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: setops\nsamples: 2\nsizes: [2]\nmembers: [numbers]\noperations: [union]\n")
    export = tmp_path / "before.csv"
    from core.store.exports import export_run

    export_run(db, "latest", export)
    truncate_to_half(db)
    for args in (["export", "--out", tmp_path / "x.csv"], ["run", "--config", cfg, "--model", "reference/solver",
                                                           "--no-progress"], ["import", export]):
        r = core_cli(*args, db=db)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode != 0 and len(lines) == 1, (args, r.stderr[-3000:])
        assert lines[0].startswith(f"error: database {db} is damaged") and "python -m core restore" in lines[0]
        assert "Traceback" not in r.stderr + r.stdout
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("page", ["pages/results.py", "pages/runs.py"])
def test_a_truncated_db_is_one_st_error_on_results_and_runs(db_with_a_run, page, monkeypatch):
    from streamlit.testing.v1 import AppTest

    db, _ = db_with_a_run
    truncate_to_half(db)
    monkeypatch.setenv("STUDIO_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and f"database {db} is damaged" in at.error[0].value, [e.value for e in at.error]


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_poisoned_journal_line_is_set_aside_and_the_rest_recovered(db_with_a_run, cli, caplog):
    db, run_id = db_with_a_run
    journal = store.journal_dir(db)
    journal.mkdir(exist_ok=True)
    name = f"{run_id}.{_dead_pid()}.{time.time_ns()}.jsonl"
    (journal / name).write_text((HOSTILE / "poisoned_journal.jsonl").read_text().replace("RUN_ID", run_id))
    with caplog.at_level("WARNING", logger="core.store"):
        runs = store.list_runs(db)                      # what every command and page does first
    assert run_id in set(runs["run_id"])
    assert any("5 damaged line(s)" in r.getMessage() and name in r.getMessage() for r in caplog.records)
    assert not (journal / name).exists()                # recovered and removed …
    [aside] = quarantined(db)                           # … its bad lines kept beside it
    assert aside.read_text().count("\n") == 5 and "not JSON" in aside.read_text()
    with store.connect(db) as con:
        keys = {k for (k,) in con.execute("SELECT cache_key FROM calls WHERE cache_key LIKE 'poison-test-%'")
                .fetchall()}
    assert keys == {"poison-test-good-1", "poison-test-good-2"}    # the good lines around the bad ones
    r = cli("export", "--db", db, "--out", db.parent / "after.csv")
    assert r.returncode == 0, r


def test_backup_then_restore_a_truncated_db(db_with_a_run, tmp_path, cli):
    db, run_id = db_with_a_run
    r = cli("backup", "--db", db)
    assert r.returncode == 0 and "backed up 1 run(s)" in r.stdout, r
    [folder] = list_backups(db)
    assert (folder / "schema.sql").is_file()
    truncate_to_half(db)
    r = cli("restore", "--db", db, folder)
    assert r.returncode == 0 and "restored 1 run(s)" in r.stdout and "kept as" in r.stdout, r
    assert [p for p in tmp_path.iterdir() if ".replaced-" in p.name]      # the damaged file is kept, not deleted
    r = cli("export", "--db", db, "--run", run_id, "--out", tmp_path / "back.csv")
    assert r.returncode == 0 and "exported 120 rows" in r.stdout, r
    # a .duckdb copy works as a source too; a folder that is not a backup is refused
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    moved, n = restore(db, copy)
    assert n == 1 and moved is not None
    r = cli("restore", "--db", db, tmp_path)
    assert r.returncode == 2 and "is not a backup folder" in r.stderr


def test_restore_is_refused_while_another_process_holds_the_db(db_with_a_run, tmp_path):
    db, _ = db_with_a_run
    folder, _ = backup(db)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('open', flush=True); time.sleep(30)", str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(store.DatabaseBusy, match="in use by another process"):
            restore(db, folder)
    finally:
        holder.kill()
        holder.wait()


def test_a_migration_backs_the_file_up_first(db_with_a_run):
    db, run_id = db_with_a_run
    with store.connect(db) as con:                      # make it look like a file of the previous schema
        con.execute("DROP TABLE claims")
        con.execute("DELETE FROM schema_version WHERE version = 4")
    with store.connect(db) as con:                      # this connection migrates it
        assert con.execute("SELECT count(*) FROM claims").fetchall()[0][0] == 0
    [folder] = list_backups(db)
    assert folder.name.startswith("before-v4-")
    truncate_to_half(db)
    moved, n = restore(db, folder)                       # the pre-migration copy restores (and migrates) fine
    assert n == 1 and store.get_run(db, run_id)["n_done"] == 120

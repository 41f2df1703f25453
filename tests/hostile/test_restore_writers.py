"""Restore is atomic with respect to every writer.

- An import is a live writer: a restore while it writes is refused with one line; if a swap happens under it all the
  same (its lease not seen), the import stops at its next connection with one ``error:`` line and claims nothing,
  and importing the file again brings every row back.
- Imports and restores racing in real processes never leave a run with fewer rows than its file (repeated: racy).
- A backup taken in the middle of a run, restored later, holds that run as 'interrupted' with no claims: a second
  restore is not refused for it, and a resume completes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import runner, store
from core.store import leftovers, writers
from core.store.backup import backup, restore
from core.store.db import DatabaseBusy
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

ROWS = 1_000
PART_ROWS = 100      # the import stores its rows in parts of this many (each its own transaction): 10 parts
# ``python -m core import`` with small parts, so a test can stop it between two of them
IMPORT = ("import sys, core.store.io as io, core.store.readers as readers; "
          "io.STORE_BATCH_ROWS = readers.CHUNK_ROWS = %d; from core.cli import main; sys.exit(main(sys.argv[1:]))"
          % PART_ROWS)
CFG = {"task": "setops", "seed": 11, "samples": 125, "operations": ["union", "intersection", "difference",
                                                                     "symmetric_difference"],
       "sizes": [2, 4], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


def _env(**extra) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> Path:
    """A result file in our layout: 1,000 generated items, each answered with its truth."""
    from core.cli import main

    tmp = tmp_path_factory.mktemp("answers")
    (tmp / "c.yaml").write_text(json.dumps(CFG))
    assert main(["generate", "setops", "--config", str(tmp / "c.yaml"), "--out", str(tmp / "items.jsonl"),
                 "--quiet"]) == 0
    out = tmp / "answers.jsonl"
    with open(tmp / "items.jsonl", encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            row = json.loads(line)
            row.update(response="{" + ", ".join(map(str, row["truth"])) + "}", correct=True,
                       model="reference/solver", task="setops")
            dst.write(json.dumps(row) + "\n")
    assert sum(1 for _ in open(out)) == ROWS
    return out


@pytest.fixture()
def target(tmp_path):
    """A database holding one small solver run (made in this process: the writers under test are other processes),
    and a backup of it (what every restore here brings back)."""
    db = tmp_path / "studio.duckdb"
    assert runner.run({**CFG, "samples": 2, "sizes": [2]}, "reference/solver", db_path=db).status == "done"
    folder, n = backup(db, tmp_path / "backup")
    assert n == 1
    return db, folder


def start_import(db, path, gate: Path | None = None) -> subprocess.Popen:
    extra = {"STUDIO_FAULT": "import-part-stored:pause@3", "STUDIO_FAULT_GATE": str(gate)} if gate else {}
    return subprocess.Popen([sys.executable, "-c", IMPORT, "import", "--db", str(db), str(path)], cwd=ROOT,
                            env=_env(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, proc: subprocess.Popen, limit: float = 180.0) -> None:
    """Until ``path`` exists (the child reached its pause); fails if the child ended first."""
    deadline = time.monotonic() + limit
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the import never reached its pause"
        time.sleep(0.02)


def imported_rows(db) -> dict[str, int]:
    with store.connect(db) as con:
        return dict(con.execute("SELECT ru.run_id, count(i.idx) FROM runs ru LEFT JOIN items i USING (run_id) "
                                "WHERE ru.source LIKE 'import%' GROUP BY ru.run_id").fetchall())


def test_a_restore_while_an_import_writes_is_refused(answers, target, tmp_path):
    db, folder = target
    gate = tmp_path / "gate"
    proc = start_import(db, answers, gate)
    try:
        wait_for(Path(str(gate) + ".reached"), proc)     # 3 of its 10 parts stored, the rest not yet
        with pytest.raises(DatabaseBusy, match="in use by another process: an import"):
            restore(db, folder)
        done = subprocess.run([sys.executable, "-m", "core", "restore", str(folder), "--db", str(db)], cwd=ROOT,
                              env=_env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and done.stderr.startswith("error:") and "an import" in done.stderr, done
        assert len(done.stderr.strip().splitlines()) == 1
    finally:
        gate.touch()
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and f"imported {ROWS} rows" in out, (out, err)
    assert list(imported_rows(db).values()) == [ROWS]
    assert not list(db.parent.glob("*.replaced-*"))     # never swapped


def test_a_swap_under_an_import_stops_it_and_a_rerun_brings_every_row_back(answers, target, tmp_path,
                                                                          monkeypatch):
    db, folder = target
    monkeypatch.setattr(writers, "live", lambda path: [], raising=False)   # as if its lease could not be seen
    monkeypatch.setattr(leftovers, "live_imports", lambda path: [], raising=False)
    gate = tmp_path / "gate"
    proc = start_import(db, answers, gate)
    try:
        wait_for(Path(str(gate) + ".reached"), proc)
        moved, n_runs = restore(db, folder)            # swapped under the import
        assert moved is not None and n_runs == 1
    finally:
        gate.touch()
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "imported" not in out, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: database") and "was replaced" in lines[0], err
    assert imported_rows(db) == {}                     # nothing of it in the restored file: no partial run
    again = subprocess.run([sys.executable, "-m", "core", "import", "--db", str(db), str(answers)], cwd=ROOT,
                           env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and f"imported {ROWS} rows" in again.stdout, again
    assert list(imported_rows(db).values()) == [ROWS]


@pytest.mark.parametrize("trial", range(2))
def test_imports_and_restores_racing_never_lose_rows(trial, answers, target):
    db, folder = target
    proc = start_import(db, answers)
    outcomes = []
    try:
        for _ in range(20):                            # restores one after another while the import runs
            done = subprocess.run([sys.executable, "-m", "core", "restore", str(folder), "--db", str(db)], cwd=ROOT,
                                  env=_env(), capture_output=True, text=True, timeout=300)
            assert "Traceback" not in done.stderr
            outcomes.append(done.returncode)
            if proc.poll() is not None:
                break
    finally:
        out, err = proc.communicate(timeout=300)
    if proc.returncode != 0:                           # it saw the swap: it says so and claims nothing
        assert "was replaced" in err and "imported" not in out, (out, err)
    rows = imported_rows(db)
    assert set(rows.values()) <= {ROWS}, rows          # a run of this file holds all of it, or is not there
    again = subprocess.run([sys.executable, "-m", "core", "import", "--db", str(db), str(answers)], cwd=ROOT,
                           env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again
    assert list(imported_rows(db).values()) == [ROWS], (outcomes, out, again.stdout)


def test_a_backup_taken_mid_run_restores_resumable(tmp_path):
    db = str(tmp_path / "studio.duckdb")
    cfg = {**CFG, "samples": 6, "operations": ["union", "intersection"], "sizes": [2]}    # 12 items
    srv = LoopbackServer(0.15).start()
    try:
        h = runner.start_run(cfg, "openai-compatible/loop", base_url=srv.base_url, db_path=db, concurrency=1)
        deadline = time.monotonic() + 120
        while h.progress().done < 3 and not h.done:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert not h.done
        folder, _ = backup(db, tmp_path / "mid-run")   # the run 'running', its claims held, in this process
        p = h.wait(300)
        assert p.status == "done" and p.done == 12
        with store.connect(db) as con:
            held = con.execute("SELECT count(*) FROM claims").fetchall()[0][0]
        assert held == 0
        restore(db, folder)
        with store.connect(db) as con:
            status, n_done = con.execute("SELECT status, n_done FROM runs WHERE run_id = ?", [h.run_id]).fetchall()[0]
            claims = con.execute("SELECT count(*) FROM claims").fetchall()[0][0]
        assert status == "interrupted" and claims == 0 and n_done < 12
        restore(db, folder)                            # not refused: nobody runs the restored run
        sent = srv.stats()["total_requests"]
        again = runner.resume_run(h.run_id, db_path=db).wait(300)
        assert again.status == "done" and again.done == 12
        assert srv.stats()["total_requests"] - sent <= 12 - n_done   # the stored answers kept
    finally:
        srv.stop()


def test_a_lease_refuses_restore_and_a_swapped_file_stops_its_writer(target, monkeypatch):
    """The lease in one process (an import in another thread, a batch collection): restore is refused naming it;
    a file swapped under it all the same stops its next connection."""
    import shutil

    from core.runner import batch_collect

    db, folder = target
    with store.writing(db, "an import of x.csv"):
        with pytest.raises(DatabaseBusy, match="an import of x.csv"):
            restore(db, folder)
        with store.connect(db) as con:              # the lease's file, recorded at its first connection
            con.execute("SELECT 1").fetchall()
        copy = db.with_name("copy.duckdb")
        shutil.copyfile(db, copy)
        os.replace(copy, db)                        # what a restore that did not see the lease would do
        with pytest.raises(writers.DatabaseReplaced, match="while an import of x.csv was writing"):
            with store.connect(db):
                pass
    with store.connect(db) as con:                  # the lease ended: other connections were never affected
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 1

    seen = []

    def collecting(db_path, batch, state, outcomes, known):
        with pytest.raises(DatabaseBusy, match="the collection of batch b-1") as exc:
            restore(db_path, folder)
        seen.append(str(exc.value))
        return []

    class Backend:
        def outcomes(self, state):
            return []

    monkeypatch.setattr(batch_collect, "_collect", collecting)
    assert batch_collect.collect(db, Backend(), {"batch_id": "b-1"}, None) == []
    assert len(seen) == 1

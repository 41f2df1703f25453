"""Issue 17, item 6 (backup side): a full disk or a read-only file system under ``backup`` and under the backup a
schema migration takes first is one ``error:`` line, no traceback, nothing half-written, the database unchanged —
and once there is room, the same command works. Needs a tmpfs (root, as in CI); skipped where it cannot be mounted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import duckdb
import pytest

from core import store
from tests.support import ROOT
from tests.support.old_db import write_v1_database


def _mount(where, *opts) -> bool:
    if os.geteuid() != 0:
        return False
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(opts), "tmpfs", str(where)],
                          capture_output=True, check=False).returncode == 0


@pytest.fixture()
def mounts(tmp_path):
    made = []

    def mount(*opts):
        where = tmp_path / f"m-{uuid.uuid4().hex[:6]}"
        if not _mount(where, *opts):
            pytest.skip("cannot mount a tmpfs here")
        made.append(where)
        return where

    yield mount
    for where in made:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)


def _one_error_line(done, *needles):
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _a_run(db):
    with store.connect(db) as con:
        con.execute("INSERT INTO runs (run_id, status, task) VALUES ('r1', 'done', 'setops')")


def test_backup_onto_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, mounts):
    db = tmp_path / "studio.duckdb"
    _a_run(db)
    small = mounts("size=64k")
    (small / "filler").write_bytes(b"x" * 60_000)
    out = small / "backup"
    _one_error_line(_cli("backup", "--db", str(db), "--out", str(out)), "cannot write the backup")
    assert not out.exists() and not (small / "backup.partial").exists()


def test_backup_onto_a_read_only_file_system_is_one_line(tmp_path, mounts):
    db = tmp_path / "studio.duckdb"
    _a_run(db)
    ro = mounts("size=1m", "ro")
    _one_error_line(_cli("backup", "--db", str(db), "--out", str(ro / "backup")), "cannot write the backup")


def test_a_migration_whose_backup_cannot_be_written_changes_nothing(tmp_path, mounts):
    where = mounts("size=8m")
    db = where / "old.duckdb"
    write_v1_database(db)              # a file as version-1 code wrote it, with a run in it
    filler = where / "filler"
    free = os.statvfs(where).f_bavail * os.statvfs(where).f_frsize
    filler.write_bytes(b"x" * max(0, free - 4096))
    for _ in range(2):                 # every command says the same one line while the disk is full
        _one_error_line(_cli("export", "--db", str(db), "--run", "r1", "--out", str(tmp_path / "r.csv")),
                        "schema", "backup")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] == 1
    con.close()
    filler.unlink()
    with store.connect(db) as con:     # room again: the migration goes through, the run is still there
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("r1",)]
    assert any(p.name.startswith("before-v") for p in (where / "old.duckdb.backups").iterdir())

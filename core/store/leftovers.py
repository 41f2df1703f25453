"""What killed processes leave beside the database, cleaned up the first time a process opens it.

- ``.import-<pid>-*`` staging folders of imports whose process is gone (tens of MB each), and the
  rows such an import had stored before it could write its run record (invisible: the results view joins runs —
  they would stay until the same file was imported again);
- ``<db>.backups/*.partial`` folders of backups that never completed (older than ``PARTIAL_AGE`` seconds: a live
  backup renames its folder moments after it leaves the lock);
- ``.<db>.restoring-<pid>`` files of a restore killed before its swap.

Called by ``db.connect`` under the inter-process lock, once per file and process, so no other process is writing
meanwhile; only leftovers of dead processes are touched.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

PARTIAL_AGE = 600.0
STAGING_PREFIX = ".import-"
_DONE: set[str] = set()
_GUARD = threading.Lock()
_PID = re.compile(r"-(\d+)-")


def staging_prefix() -> str:
    """The name prefix of this process's import staging folders (the pid tells whether its owner is alive)."""
    return f"{STAGING_PREFIX}{os.getpid()}-"


def live_imports(db_file: Path) -> list[str]:
    """Imports of live processes staging rows beside ``db_file`` (their folder names the process): writers that a
    restore must wait for, whichever entry point started them."""
    from core.store.liveness import pid_alive

    out = []
    folder = db_file.parent
    if folder.is_dir():
        for path in sorted(folder.glob(f"{STAGING_PREFIX}*")):
            m = _PID.match(path.name[len(STAGING_PREFIX) - 1:])
            if m and pid_alive(int(m.group(1))):
                marker = path / "run_id"
                run_id = marker.read_text().strip() if marker.is_file() else "?"
                out.append(f"an import (run {run_id}, process {m.group(1)})")
    return out


def clean_once(con, db_file: Path) -> None:
    key = str(db_file)
    with _GUARD:
        if key in _DONE:
            return
        _DONE.add(key)
    try:
        clean(con, db_file)
    except Exception as exc:  # noqa: BLE001 — tidying up must never stand between a user and their database
        log.info("cleaning up after killed processes failed (%s: %s)", type(exc).__name__, exc)


def clean(con, db_file: Path) -> dict:
    import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
    from core.store.liveness import pid_alive

    folder = db_file.parent
    removed = {"staging": 0, "orphan_rows": 0, "partial": 0, "restoring": 0}
    if folder.is_dir():
        for path in folder.glob(f"{STAGING_PREFIX}*"):
            m = _PID.match(path.name[len(STAGING_PREFIX) - 1:])
            pid = int(m.group(1)) if m else None
            if pid is None and time.time() - path.stat().st_mtime < PARTIAL_AGE:
                continue      # an older code's folder (no pid in its name) still being written, maybe
            if pid is not None and pid_alive(pid):
                continue
            marker = path / "run_id"
            run_id = marker.read_text().strip() if marker.is_file() else None
            if run_id and not con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
                for table in ("results", "items"):
                    removed["orphan_rows"] += con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id]
                                                          ).fetchall()[0][0]
                con.execute("DELETE FROM calls WHERE cache_key LIKE ?", [f"import:{run_id}:%"])
                aggregates.drop_runs(con, [run_id])
            shutil.rmtree(path, ignore_errors=True)
            removed["staging"] += 1
        for path in folder.glob(f".{db_file.name}.restoring-*"):
            m = re.search(r"restoring-(\d+)", path.name)
            if m and not pid_alive(int(m.group(1))):
                path.unlink(missing_ok=True)
                removed["restoring"] += 1
    backups = db_file.with_name(db_file.name + ".backups")
    if backups.is_dir():
        for path in backups.glob("*.partial"):
            if time.time() - path.stat().st_mtime > PARTIAL_AGE:
                shutil.rmtree(path, ignore_errors=True)
                removed["partial"] += 1
    return removed

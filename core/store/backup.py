"""Backups of the database and bringing one back (``python -m core backup`` / ``restore``).

    backup(db_path=None, out=None) -> (folder, n_runs)     DuckDB EXPORT DATABASE (Parquet + schema.sql + load.sql)
    restore(db_path, source) -> (previous file kept as, n_runs)
    list_backups(db_path=None) -> [folder, …]              newest first

A backup is taken while this process holds the file (no other process writes meanwhile), after the journals of dead
processes are merged, into ``<db>.backups/<UTC time>/`` unless told otherwise; a folder is only named as a backup once
it is complete. Schema migrations take one automatically before they change a file that holds data
(``before-v<N>-<time>``, core/store/schema.py).

``restore`` holds the database's inter-process lock throughout and refuses while a run of another process is live
or any process holds a writer's lease (an import, a batch collection: core/store/writers.py; a writer that a swap
happens under all the same stops at its next connection). It builds the new file beside the old one (IMPORT DATABASE of a backup folder, or a copy of a ``.duckdb`` file),
migrates it to the current schema, gives the old file a second name (``<db>.replaced-<time>``, never deleted) and
only then renames the new one over the path: a valid database is at the path at every instant. Nobody writes to the
restored file yet, so its runs marked 'running' (a backup taken mid-run) become 'interrupted' (resumable) and its
claims on calls in flight are dropped (``runs.settle_restored``).
"""

from __future__ import annotations

import errno
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from core.errors import UserError
from core.store import leftovers, oslock, writers
from core.store.db import DB_BUSY_TIMEOUT, DatabaseBusy, DatabaseDamaged, connect, resolve_db_path
from core.store.faults import fault
from core.store.schema import backups_dir


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def list_backups(db_path=None) -> list[Path]:
    folder = backups_dir(resolve_db_path(db_path))
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if p.is_dir() and (p / "schema.sql").is_file()
             and not p.name.endswith(".partial")]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def backup(db_path=None, out: str | os.PathLike | None = None) -> tuple[Path, int]:
    """Export the whole database into a new folder. Returns (folder, number of runs in it)."""
    from core.store.runs import recover_journals

    path = resolve_db_path(db_path)
    if not path.is_file():
        raise UserError(f"no database at {path} (nothing to back up)")
    target = Path(out).expanduser() if out else backups_dir(path) / _stamp()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UserError(f"{target} already exists; name a new folder")
    if not target.parent.is_dir():
        if out:
            raise UserError(f"output directory does not exist: {target.parent}")
        try:
            target.parent.mkdir(parents=True)
        except OSError as exc:
            raise UserError(f"cannot write a backup into {target.parent}: {exc.strerror or exc}") from None
    recover_journals(db_path)   # what killed runs journalled belongs in the backup
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with connect(db_path) as con:
            n_runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
            con.execute(f"EXPORT DATABASE {_sql_text(str(partial))} (FORMAT PARQUET)")
        if target.exists():
            target.rmdir()
        partial.rename(target)
    except (OSError, duckdb.IOException, duckdb.PermissionException) as exc:   # disk full, read-only file system
        shutil.rmtree(partial, ignore_errors=True)
        raise UserError(f"cannot write the backup to {target}: {_reason(exc)}; nothing was changed") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return target, int(n_runs)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _in_use_by(path: Path) -> str | None:
    """What keeps the database in use by another live process (a running run, its claims or journal), or None.
    Called while this process holds the inter-process lock: no other process has the file open right now, but a run
    between two of its short connections is still running."""
    from core.store.db import journal_dir
    from core.store.journal import journal_owner, owner_alive, pid_alive

    leases = writers.live(path) + leftovers.live_imports(path)   # imports, batch collection (core/store/writers.py)
    if leases:
        return f"{leases[0]} is writing to it" + (f" (and {len(leases) - 1} more writer(s))" if len(leases) > 1 else "")
    jdir = journal_dir(path)
    if jdir.is_dir():
        for journal in sorted(jdir.glob("*.jsonl")):
            owner = journal_owner(journal)
            if owner and owner[1] != os.getpid() and pid_alive(owner[1]):
                return f"run {owner[0]} (process {owner[1]}) is writing to it"
    if not path.exists():
        return None
    try:
        with connect(path, timeout=3.0) as con:
            runs = con.execute("SELECT run_id, run_json->>'owner' FROM runs WHERE status = 'running'").fetchall()
            owners = con.execute("SELECT DISTINCT owner, any_value(run_id) FROM claims GROUP BY owner").fetchall()
    except DatabaseBusy:   # we hold our lock, so a program that does not take it has the file open
        return "a program holds it open (the duckdb shell, an older version of this tool?)"
    except (DatabaseDamaged, UserError):
        return None      # a damaged file is what restore replaces; nothing can be running on it
    for run_id, owner in runs:
        if owner_alive(owner):
            return f"run {run_id} ({owner}) is running on it"
    for owner, run_id in owners:
        if owner_alive(owner):
            return f"run {run_id} ({owner}) holds claims on calls in flight"
    return None


def restore(db_path, source: str | os.PathLike) -> tuple[Path | None, int]:
    """Replace the database by a backup (a folder made by ``backup``, or a ``.duckdb`` file). Returns (where the
    previous file was moved, or None if there was none; number of runs restored).

    Exclusive: the whole restore holds the database's inter-process lock (no other process opens the file
    meanwhile) and is refused while a run of another process is live. The swap keeps a valid database at the path at
    every instant: the old file gets a second name (a hard link) first, then the new file is renamed over the path
    in one atomic step. Journals of dead runs are merged into the *old* file before it is replaced (they belong to
    it), so nothing of the old file is merged into the restored one."""
    path = resolve_db_path(db_path)
    src = Path(source).expanduser()
    if src.is_dir():
        if not (src / "schema.sql").is_file() or not (src / "load.sql").is_file():
            raise UserError(f"{src} is not a backup folder (it has no schema.sql and load.sql)")
    elif not src.is_file():
        raise UserError(f"backup not found: {src}")
    if path.exists() and src.resolve() == path.resolve():
        raise UserError("the backup is the database itself")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        hold = oslock.held(path, DB_BUSY_TIMEOUT, exclusive=True)
        hold.__enter__()
    except oslock.LockTimeout:
        raise DatabaseBusy(f"database {path} is in use by another process (the dashboard or a run?) for "
                           f"{DB_BUSY_TIMEOUT:g} s; stop it before restoring") from None
    try:
        busy = _in_use_by(path)
        if busy:
            raise DatabaseBusy(f"database {path} is in use by another process: {busy}; stop it (or let it finish) "
                               "before restoring")
        return _restore_locked(path, src)
    finally:
        hold.__exit__(None, None, None)


def _restore_locked(path: Path, src: Path) -> tuple[Path | None, int]:
    from core.store.journal import orphan_journals, recover
    from core.store.runs import settle_restored

    readable = True
    if path.exists():
        try:
            recover(path)                       # dead runs' journals belong to the old file
            with connect(path) as con:
                con.execute("CHECKPOINT")       # the old file whole, with no write-ahead log beside it
        except DatabaseDamaged:
            readable = False
    tmp = path.with_name(f".{path.name}.restoring-{os.getpid()}")
    _remove_db_files(tmp)
    try:
        if src.is_dir():
            con = duckdb.connect(str(tmp))
            try:
                con.execute(f"IMPORT DATABASE {_sql_text(str(src))}")
            except duckdb.Error as exc:
                raise UserError(f"cannot restore from {src}: {str(exc).splitlines()[0]}") from None
            finally:
                con.close()
        else:
            shutil.copyfile(src, tmp)
        fault("restore-built")
        try:
            with connect(tmp) as con:   # migrated to the current schema, and readable end to end
                n_runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
                con.execute("SELECT count(*) FROM v_results").fetchall()
                settle_restored(con)    # a backup taken mid-run: its run resumable, its claims gone
                con.execute("CHECKPOINT")
        except DatabaseDamaged as exc:
            raise UserError(f"the backup {src} cannot be read either ({str(exc).split('(', 1)[-1].split(');')[0]})"
                            ) from None
        fault("restore-checked")
    except OSError as exc:
        _remove_db_files(tmp)
        raise UserError(f"cannot restore into {path.parent}: {exc.strerror or exc}") from None
    except BaseException:
        _remove_db_files(tmp)
        raise
    finally:
        shutil.rmtree(backups_dir(tmp), ignore_errors=True)   # the migration's own copy of the source: not needed
    moved = None
    if path.exists():
        moved = path.with_name(f"{path.name}.replaced-{_stamp()}")
        n = 1
        while moved.exists() or moved.with_name(moved.name + ".wal").exists():   # a restore killed this second
            moved, n = path.with_name(f"{path.name}.replaced-{_stamp()}-{n}"), n + 1
        wal = path.with_name(path.name + ".wal")
        if wal.exists():          # only a damaged file still has one after the CHECKPOINT above
            _second_name(wal, moved.with_name(moved.name + ".wal"))
            fault("restore-wal-kept")
            wal.unlink()
        _second_name(path, moved)  # the old file under its new name too; the path still holds it
        fault("restore-linked")
        if not readable:           # journals a damaged file could not take go with it, not into the new file
            aside = moved.with_name(moved.name + ".journal")
            for journal in orphan_journals(path):
                aside.mkdir(exist_ok=True)
                os.replace(journal, aside / journal.name)
    os.replace(tmp, path)          # atomic: the path holds the old file until this instant, the new one after
    fault("restore-swapped")
    oslock.lock_path(tmp).unlink(missing_ok=True)
    return moved, int(n_runs)


def _second_name(src: Path, dst: Path) -> None:
    """``dst`` names the same file as ``src`` (a hard link; a copy where the file system has none)."""
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        shutil.copy2(src, dst)


def _remove_db_files(db_file: Path) -> None:
    for leftover in (db_file, db_file.with_name(db_file.name + ".wal")):
        leftover.unlink(missing_ok=True)

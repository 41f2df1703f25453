"""Backups of the database and bringing one back (``python -m core backup`` / ``restore``).

    backup(db_path=None, out=None) -> (folder, n_runs)     DuckDB EXPORT DATABASE (Parquet + schema.sql + load.sql)
    restore(db_path, source) -> (previous file kept as, n_runs)
    list_backups(db_path=None) -> [folder, …]              newest first

A backup is taken while this process holds the file (no other process writes meanwhile), after the journals of dead
processes are merged, into ``<db>.backups/<UTC time>/`` unless told otherwise; a folder is only named as a backup once
it is complete. Schema migrations take one automatically before they change a file that holds data
(``before-v<N>-<time>``, core/store/schema.py).

``restore`` builds the new file beside the old one (IMPORT DATABASE of a backup folder, or a copy of a ``.duckdb``
file), migrates it to the current schema, and only then moves the old file aside (``<db>.replaced-<time>``, never
deleted) and the new one into its place. It refuses while another process holds the database.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from core.errors import UserError
from core.store.db import DatabaseBusy, DatabaseDamaged, _is_lock_error, connect, is_damage, resolve_db_path
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
        target.parent.mkdir(parents=True)
    recover_journals(db_path)   # what killed runs journalled belongs in the backup
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with connect(db_path) as con:
            n_runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
            con.execute(f"EXPORT DATABASE {_sql_text(str(partial))} (FORMAT PARQUET)")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if target.exists():
        target.rmdir()
    partial.rename(target)
    return target, int(n_runs)


def _check_not_in_use(path: Path) -> None:
    """UserError when another process holds the file (a damaged or missing file is fine: it is being replaced)."""
    if not path.exists():
        return
    try:
        con = duckdb.connect(str(path))
    except duckdb.Error as exc:
        if is_damage(exc):
            return
        if _is_lock_error(exc):
            raise DatabaseBusy(f"database {path} is in use by another process (the dashboard or a run?); stop it "
                               "before restoring") from None
        return   # unreadable in some other way: replacing it is what the user asks for
    con.close()


def restore(db_path, source: str | os.PathLike) -> tuple[Path | None, int]:
    """Replace the database by a backup (a folder made by ``backup``, or a ``.duckdb`` file). Returns (where the
    previous file was moved, or None if there was none; number of runs restored)."""
    path = resolve_db_path(db_path)
    src = Path(source).expanduser()
    if src.is_dir():
        if not (src / "schema.sql").is_file() or not (src / "load.sql").is_file():
            raise UserError(f"{src} is not a backup folder (it has no schema.sql and load.sql)")
    elif not src.is_file():
        raise UserError(f"backup not found: {src}")
    if src.resolve() == path.resolve():
        raise UserError("the backup is the database itself")
    _check_not_in_use(path)
    tmp = path.with_name(f".{path.name}.restoring-{os.getpid()}")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
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
        try:
            with connect(tmp) as con:   # migrated to the current schema, and readable end to end
                n_runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
                con.execute("SELECT count(*) FROM v_results").fetchall()
                con.execute("CHECKPOINT")
        except DatabaseDamaged as exc:
            raise UserError(f"the backup {src} cannot be read either ({str(exc).split('(', 1)[-1].split(');')[0]})"
                            ) from None
    except BaseException:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(backups_dir(tmp), ignore_errors=True)   # the migration's own copy of the source: not needed
    moved = None
    if path.exists():
        moved = path.with_name(f"{path.name}.replaced-{_stamp()}")
        os.replace(path, moved)
        wal = path.with_name(path.name + ".wal")
        if wal.exists():
            os.replace(wal, moved.with_name(moved.name + ".wal"))
    os.replace(tmp, path)
    return moved, int(n_runs)

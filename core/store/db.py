"""Opening the DuckDB file: where it lives, short-lived connections held under an inter-process lock, transactions.
Nobody keeps a connection open (see core/store/__init__.py for why; the lock's design is in docs/ARCHITECTURE.md)."""

from __future__ import annotations

import os
import random
import threading
import time
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import duckdb

from core.errors import UserError
from core.files import PROJECT_ROOT  # noqa: E402
from core.store import leftovers, oslock, writers
from core.store.schema import ensure_schema

if TYPE_CHECKING:   # pandas costs ~0.2 s to import: a run never needs it (.df() imports it itself)
    import pandas as pd

DB_BUSY_TIMEOUT = 30.0      # seconds we wait for another process to release the file
MERGE_INTERVAL = 1.0        # seconds between journal → DuckDB merges during a run (dashboard lag)


class DatabaseBusy(UserError):
    """Another process kept the database file locked for longer than the timeout."""


class DatabaseDamaged(UserError):
    """The database file (or its write-ahead log) cannot be read: truncated, overwritten, not a DuckDB file."""


# what a store operation raises when the file is busy, damaged or unwritable (a full disk, a write conflict): the
# errors a best-effort write may catch and log, leaving anything else — a bug — to surface
STORE_ERRORS: tuple[type[BaseException], ...] = (duckdb.Error, UserError, OSError)


# what DuckDB says about a file it cannot read (checked on open and on every statement of a connection)
_DAMAGE = ("could not read enough bytes", "corrupt database file", "not a valid duckdb database file",
           "checksum", "failure while replaying wal", "invalid wal", "serialization error", "malformed")


def is_damage(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.Error) and any(m in str(exc).lower() for m in _DAMAGE)


def damaged(path: Path, exc: BaseException) -> DatabaseDamaged:
    """One line naming the file, what is wrong and what to do."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    backups = path.with_name(path.name + ".backups")
    have = backups.is_dir() and any(p.is_dir() and not p.name.endswith(".partial") for p in backups.iterdir())
    where = f"backups are in {backups}/" if have else "take one with python -m core backup next time"
    return DatabaseDamaged(
        f"database {path} is damaged and cannot be read ({first[:160]}); restore a backup with "
        f"python -m core restore BACKUP ({where}), or move the file aside to start a new one")


# ----------------------------------------------------------------------------------------------------------- paths


def default_db_path() -> Path:
    env = os.environ.get("STUDIO_DB")
    if env:
        return Path(env).expanduser()
    return PROJECT_ROOT / ".studio" / "studio.duckdb"


def resolve_db_path(db_path: str | os.PathLike | None = None) -> Path:
    path = Path(db_path).expanduser() if db_path else default_db_path()
    if path.exists() and path.is_dir():
        raise UserError(f"database path {path} is a directory, expected a file")
    return path


def journal_dir(db_path: str | os.PathLike | None = None) -> Path:
    path = resolve_db_path(db_path)
    return path.with_name(path.name + ".journal")


# ------------------------------------------------------------------------------------------------------ connection


# Threads of one process share one DuckDB instance per file, created by the first connection and destroyed with the
# last. Opening a connection while another thread closes the last one races in DuckDB's instance cache ("already
# attached", or a connection whose Arrow scans are missing: "python_arrow_scan does not exist"); opening and closing
# are therefore done one at a time per process (each takes microseconds to milliseconds; queries still run in
# parallel).
_OPEN_CLOSE = threading.Lock()


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    # "unique file handle conflict … already attached": two threads of one process opening the file at the same
    # moment race in DuckDB's instance cache; retrying succeeds (seen when a page reads while a run starts).
    return ("lock" in text or "being used by another process" in text or "already attached" in text
            or "file handle conflict" in text)


@contextmanager
def connect(db_path: str | os.PathLike | None = None, *, timeout: float = DB_BUSY_TIMEOUT, exclusive: bool = False
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-write connection (schema ensured), opened and closed under the database's inter-process
    lock (``core/store/oslock.py``): while it is open no other process has the file open. Close it fast: other
    processes wait meanwhile. ``exclusive`` also keeps this process's other threads out (restore)."""
    path = resolve_db_path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with ExitStack() as stack:
        try:
            stack.enter_context(oslock.held(path, timeout, exclusive=exclusive))
        except oslock.LockTimeout:
            raise DatabaseBusy(f"database {path} is busy (held by another process for {timeout:g} s)") from None
        except OSError as exc:
            raise UserError(f"cannot lock database {path} ({oslock.lock_path(path).name}: "
                            f"{exc.strerror or exc})") from None
        con = _open(path, deadline, timeout)
        try:
            writers.check(path)               # a writer of this process whose file a restore replaced stops here
            ensure_schema(con, path)
            leftovers.clean_once(con, path)   # what killed processes left beside the file (once per process)
            yield con
        except duckdb.Error as exc:   # a block that cannot be read shows only when a statement reads it
            if is_damage(exc):
                raise damaged(path, exc) from None
            raise
        finally:
            with _OPEN_CLOSE:
                try:
                    con.close()
                except duckdb.Error:   # closing a damaged file: the error above is the one to report
                    pass


def writing(db_path, what: str):
    """``with writing(db_path, "import of F"):`` — a lease that keeps ``restore`` from replacing the database while
    the block writes to it, and stops the block at its next connection if the file was replaced all the same
    (core/store/writers.py)."""
    return writers.writing(resolve_db_path(db_path), what)


def _open(path: Path, deadline: float, timeout: float) -> duckdb.DuckDBPyConnection:
    """duckdb.connect, retried while DuckDB's own lock is held (a program that does not take our lock, e.g. the
    duckdb shell, or two threads of this process racing in DuckDB's instance cache)."""
    delay = 0.005
    while True:
        try:
            with _OPEN_CLOSE:
                return duckdb.connect(str(path))
        except duckdb.Error as exc:  # IOException (lock held by another process) and friends
            if is_damage(exc):
                raise damaged(path, exc) from None
            if not _is_lock_error(exc):
                raise UserError(f"cannot open database {path}: {str(exc).splitlines()[0]}") from None
            if time.monotonic() >= deadline:
                raise DatabaseBusy(f"database {path} is busy (locked by another process for {timeout:g} s)") from None
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 0.1)


def transaction(con: duckdb.DuckDBPyConnection):
    """``with transaction(con): ...`` — BEGIN/COMMIT, ROLLBACK on error."""
    return _Tx(con)


class _Tx:
    def __init__(self, con):
        self.con = con

    def __enter__(self):
        self.con.execute("BEGIN TRANSACTION")
        return self.con

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.con.execute("COMMIT")
        else:
            try:
                self.con.execute("ROLLBACK")
            except duckdb.Error:
                pass
        return False


def query_df(sql: str, params: Sequence[Any] = (), db_path=None) -> pd.DataFrame:
    """Run one parameterised query on a short-lived connection and return a DataFrame (for pages/analysis)."""
    with connect(db_path) as con:
        return con.execute(sql, list(params)).df()


def now_utc() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)

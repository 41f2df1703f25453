"""Writers that a restore must not swap the database under, and their detection of a swap that happened anyway.

A run is seen as live by its status, claims and journal (``backup._in_use_by``). A writer that spans many short
connections without any of those — an import (its staged parts, then its run record), the collection of a provider
batch — holds a *lease* while it writes: a small file ``<db>.journal/writers/<pid>-<n>.json`` naming the process
and what it does, created before its first connection and removed after its last.

    writing(path, what)        context manager: the lease, for the resolved database path ``path``
    live(path) -> [str]        what the leases of live processes say (those of dead processes are removed)
    check(path)                called by ``db.connect`` once the file is open: a writer of this process whose
                               database file was replaced since its first connection raises DatabaseReplaced

``restore`` refuses while any lease is live, so a swap under a writer only happens if the lease could not be seen
(another machine, a lease folder that cannot be written). The writer then notices it at its next connection — the
file at the path is not the one it started writing to (device and inode differ) — and stops with one line instead
of writing the rest of its rows into the restored file and reporting success.

Imports nothing of the store (``db`` calls ``check``); the path is resolved by the caller.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.errors import UserError
from core.store.liveness import pid_alive

_GUARD = threading.Lock()
_ACTIVE: dict[str, list["_Lease"]] = {}     # database path -> leases of this process
_COUNTER = itertools.count(1)


class DatabaseReplaced(UserError):
    """The database file was replaced (a restore) while a writer of this process was writing to it."""


class _Lease:
    def __init__(self, what: str):
        self.what = what
        self.file_id: tuple[int, int] | None = None   # (device, inode) of the file at the first connection


def leases_dir(path: Path) -> Path:
    return path.with_name(path.name + ".journal") / "writers"


@contextmanager
def writing(path: Path, what: str) -> Iterator[None]:
    """Hold a lease on the database at ``path`` while the block writes to it (see the module docstring). When the
    lease file cannot be written the block still runs, and the swap detection still guards it."""
    lease = _Lease(what)
    key = str(path)
    with _GUARD:
        _ACTIVE.setdefault(key, []).append(lease)
    lease_file = leases_dir(path) / f"{os.getpid()}-{next(_COUNTER)}.json"
    try:
        lease_file.parent.mkdir(parents=True, exist_ok=True)
        lease_file.write_text(json.dumps({"pid": os.getpid(), "what": what}), encoding="utf-8")
    except OSError:
        lease_file = None
    try:
        yield
    finally:
        if lease_file is not None:
            lease_file.unlink(missing_ok=True)
        with _GUARD:
            mine = _ACTIVE.get(key, [])
            if lease in mine:
                mine.remove(lease)
            if not mine:
                _ACTIVE.pop(key, None)


def live(path: Path) -> list[str]:
    """What live writers hold a lease on the database at ``path`` (this process's included: a restore in one thread
    must not swap the file under an import in another). Leases of dead processes are removed."""
    folder = leases_dir(path)
    if not folder.is_dir():
        return []
    out = []
    for lease_file in sorted(folder.glob("*.json")):
        try:
            info = json.loads(lease_file.read_text(encoding="utf-8"))
            pid = int(info["pid"])
        except FileNotFoundError:
            continue     # its writer finished meanwhile
        except (OSError, ValueError, KeyError, TypeError):
            continue     # half written: its writer is between creating and filling it, or it is not ours
        if pid_alive(pid):
            out.append(f"{str(info.get('what') or 'a writer')[:120]} (process {pid})")
        else:
            lease_file.unlink(missing_ok=True)
    return out


def check(path: Path) -> None:
    """Raise DatabaseReplaced when a lease of this process on ``path`` started on another file than the one now at
    the path; the first connection of a lease records the file (called with the file open, under the lock)."""
    leases = _ACTIVE.get(str(path))
    if not leases:
        return
    try:
        st = os.stat(path)
    except OSError:
        return
    now = (st.st_dev, st.st_ino)
    with _GUARD:
        for lease in leases:
            if lease.file_id is None:
                lease.file_id = now
            elif lease.file_id != now:
                raise DatabaseReplaced(
                    f"database {path} was replaced (restored from a backup?) while {lease.what} was writing to it; "
                    "stopped without finishing — what it wrote went with the replaced file: run it again")

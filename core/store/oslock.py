"""The inter-process lock on a database file: one process at a time has the DuckDB file open.

DuckDB's own file lock does not make open → commit → close cycles from several processes safe: committed rows can
be lost or the file left unreadable ("checksum … does not match", "Could not read enough bytes"); under an OS lock
held from open to close nothing is lost (docs/RUNNER.md).
So every DuckDB connection of the store is opened and closed under ``flock`` on a side file, ``<db>.lock``:

- Within a process, threads share one DuckDB instance per file (safe: DuckDB's own concurrency), so the OS lock is
  taken by the first connection of the process and released with the last (a count of holders). Threads of one
  process therefore never wait for each other here; other processes wait until the count drops to zero.
- Fairness: a process whose threads keep overlapping connections would keep the lock for ever. Once a process has
  held it for ``SLICE`` seconds, a *new* holder (a thread that holds nothing yet) waits — at most ``DRAIN_WAIT`` —
  for the current holders to finish, the lock is released, and the process pauses briefly before taking it again,
  so a waiting process gets its turn. A thread that already holds the lock (a nested connection) always joins.
- ``exclusive=True`` (restore, and anything else that must see no other connection at all, even of this process)
  waits until this process holds nothing, then keeps every other thread out until it is done.
- A forked child starts with no lock (``os.register_at_fork``): it must not believe it holds its parent's.

``flock`` locks belong to the open file description: the kernel drops them when the process dies (kill -9 included),
so a crashed holder never leaves the database locked. The lock file itself is never deleted (deleting it while
another process waits on it would let two processes hold "the" lock on two different files).
"""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

SLICE = 0.25         # seconds a process may keep the lock while its threads keep overlapping
DRAIN_WAIT = 0.25    # at most this long a new holder waits for the others of its process to finish
YIELD_PAUSE = 0.02   # after a drained release, this process waits this long before taking the lock again
POLL_MAX = 0.005     # another process polls at most this far apart (jittered) while the file is held


class LockTimeout(Exception):
    """The lock was not free within the timeout."""


def lock_path(db_file: Path) -> Path:
    return db_file.with_name(db_file.name + ".lock")


class _FileLock:
    """The lock of one database file, as seen by this process."""

    def __init__(self, path: Path):
        self.path = path
        self.cond = threading.Condition()
        self.fd: int | None = None
        self.holders = 0
        self.since = 0.0            # when this process took the OS lock
        self.acquiring = False      # a thread of this process is waiting for the OS lock
        self.draining = False       # new holders wait for the current ones to finish
        self.exclusive = False      # one thread holds it alone
        self.yielded_at = 0.0       # when this process last gave the lock up for others
        self.local = threading.local()

    # -- per-thread count (nested holds always join) ---------------------------------------------------------
    def _mine(self) -> int:
        return getattr(self.local, "n", 0)

    def _set_mine(self, n: int) -> None:
        self.local.n = n

    # -- acquire / release -----------------------------------------------------------------------------------
    def acquire(self, timeout: float, exclusive: bool = False) -> None:
        deadline = time.monotonic() + timeout
        with self.cond:
            if self._mine():
                if exclusive and self.holders != self._mine():
                    raise RuntimeError("an exclusive hold was asked for while other threads of this process hold "
                                       "the database")
                self.holders += 1          # nested: this thread already holds it
                self._set_mine(self._mine() + 1)
                self.exclusive = self.exclusive or exclusive
                return
            drain_until = None
            while True:
                now = time.monotonic()
                if self.fd is not None and not self.exclusive and not exclusive:
                    if not self.draining and now - self.since > SLICE:
                        self.draining = True
                    if self.draining:
                        drain_until = drain_until or now + DRAIN_WAIT
                        if now >= drain_until:
                            self.draining = False      # the others are slow (or wait on us): join rather than stall
                    if not self.draining:
                        self.holders += 1
                        self._set_mine(self._mine() + 1)
                        return
                if self.fd is None and not self.acquiring:
                    break
                if now >= deadline:
                    raise LockTimeout()
                self.cond.wait(min(deadline - now, 0.05))
            self.acquiring = True
            pause = self.yielded_at + YIELD_PAUSE - time.monotonic()
        try:
            if pause > 0:
                time.sleep(pause)
            fd = self._take_os_lock(deadline)
        except BaseException:
            with self.cond:
                self.acquiring = False
                self.cond.notify_all()
            raise
        with self.cond:
            self.fd, self.since = fd, time.monotonic()
            self.acquiring, self.draining = False, False
            self.holders = 1
            self._set_mine(1)
            if exclusive:
                self.exclusive = True
            self.cond.notify_all()

    def _take_os_lock(self, deadline: float) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout() from None
                    time.sleep(random.uniform(0.0005, POLL_MAX))
        except BaseException:
            os.close(fd)
            raise

    def release(self) -> None:
        with self.cond:
            self._set_mine(max(0, self._mine() - 1))
            self.holders -= 1
            if self.holders > 0:
                return
            self.holders = 0
            fd, self.fd = self.fd, None
            if self.draining:
                self.yielded_at = time.monotonic()
            self.draining = self.exclusive = False
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)
            self.cond.notify_all()

    def held_here(self) -> bool:
        with self.cond:
            return self.fd is not None


_LOCKS: dict[str, _FileLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(db_file: Path) -> _FileLock:
    key = str(lock_path(db_file).absolute())
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = _FileLock(Path(key))
        return lock


def _after_fork_in_child() -> None:   # the child must not think it holds (or waits for) its parent's lock
    global _LOCKS_GUARD
    _LOCKS_GUARD = threading.Lock()
    for lock in _LOCKS.values():
        if lock.fd is not None:
            try:
                os.close(lock.fd)
            except OSError:
                pass
    _LOCKS.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def held(db_file: Path, timeout: float, exclusive: bool = False) -> Iterator[None]:
    """Hold the inter-process lock of ``db_file`` for the block. ``LockTimeout`` when it was not free in time."""
    lock = _lock_for(db_file)
    lock.acquire(timeout, exclusive=exclusive)
    try:
        yield
    finally:
        lock.release()


def held_by_this_process(db_file: Path) -> bool:
    return _lock_for(db_file).held_here()

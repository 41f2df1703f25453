"""Per-process append-only journal: how a finished call becomes durable without holding the DuckDB lock.

A runner appends one JSON line per finished call — ``{"calls": [...], "results": [...]}`` — to
``<db>.journal/<run_id>.<pid>.<ns>.jsonl`` and fsyncs before the call is reported as finished. The runner merges new
records into DuckDB about once a second (``store.MERGE_INTERVAL``) and deletes its journal at the end. A journal
whose process is gone (kill -9, power loss) is merged by ``recover()``; a torn last line (killed mid-write) is
ignored — that call was never reported, so it is simply made again. Merging is idempotent, so a crash between the DuckDB commit and the
file deletion only causes a harmless second merge.

A complete line that is not a record this code can merge (garbled by a disk fault, edited by hand, written by some
other program) is set aside — appended to ``<db>.journal/quarantine/<journal>.bad`` with a warning — and recovery
goes on with the next line: one bad line never blocks the database. ``quarantined(db_path)`` lists those
files.

Journals hold prompts' hashes, responses and scores — never API keys (the runner never sees them as data).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from datetime import datetime
from pathlib import Path

from core.store.faults import fault as _fault
from core.store.liveness import owner_alive, owner_tag, pid_alive  # noqa: F401  (re-exported)

log = logging.getLogger("core.store")
_ACTIVE: set[str] = set()        # journal paths owned by live Journal objects of this process
_ACTIVE_LOCK = threading.Lock()
_NAME = re.compile(r"^(?P<run>.+)\.(?P<pid>\d+)\.(?P<ns>\d+)\.jsonl$")


def journal_owner(path: Path) -> tuple[str, int] | None:
    """(run id as written in the file name, process id) of a journal file by its name; None for another file."""
    m = _NAME.match(path.name)
    return (m.group("run"), int(m.group("pid"))) if m else None


def _safe(run_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", run_id)[:80]


class Journal:
    """Append + fsync. Not thread-safe by itself: one writer (the runner's journal task) calls ``append``."""

    def __init__(self, directory: Path, run_id: str):
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{_safe(run_id)}.{os.getpid()}.{time.time_ns()}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with _ACTIVE_LOCK:
            _ACTIVE.add(str(self.path))

    def append(self, records: list[dict]) -> None:
        if not records:
            return
        data = "".join(json.dumps(r, ensure_ascii=False, default=_default, separators=(",", ":")) + "\n"
                       for r in records).encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            _fault("journal-append")
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            os.fdatasync(self._fd)  # data + size; enough for an append-only file
        except BaseException:
            # no half line left behind (disk full): a later append would glue onto it and both would be set aside
            try:
                os.ftruncate(self._fd, size)
            except OSError:
                pass
            raise

    def close(self, delete: bool) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if delete:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        with _ACTIVE_LOCK:
            _ACTIVE.discard(str(self.path))


def _default(obj):
    if isinstance(obj, datetime):
        return obj.isoformat()
    return str(obj)


def read_records(path: Path, bad: list[tuple[int, bytes, str]] | None = None) -> list[dict]:
    """All complete, mergeable records of a journal (a torn last line — the crash point — is left out). Lines that
    are complete but not mergeable are appended to ``bad`` as (line number, bytes, why) when a list is given."""
    out = []
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.endswith(b"\n"):
                break
            why = None
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                rec, why = None, "not JSON"
            if why is None:
                why = record_problem(rec)
            if why is None:
                out.append(rec)
            elif bad is not None:
                bad.append((number, line, why))
    return out


def record_problem(rec) -> str | None:
    """Why ``rec`` cannot be merged, or None. Checked with the very conversions the merge uses."""
    from core.store.rows import rows_table
    from core.store.schema import CALL_COLUMNS, RESULT_COLUMNS

    if not isinstance(rec, dict):
        return "not a record"
    calls, results = rec.get("calls") or [], rec.get("results") or []
    if not isinstance(calls, list) or not isinstance(results, list):
        return "calls/results are not lists"
    if not all(isinstance(c, dict) and isinstance(c.get("cache_key"), str) for c in calls):
        return "a call without a cache key"
    for r in results:
        if not isinstance(r, dict) or not isinstance(r.get("run_id"), str):
            return "a result without a run id"
        idx = r.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < 2 ** 63:
            return "a result without a valid idx"
    try:
        rows_table(_with_times([dict(c) for c in calls]), CALL_COLUMNS)
        rows_table(_with_times([dict(r) for r in results]), RESULT_COLUMNS)
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
        return f"values of the wrong type ({type(exc).__name__})"
    except Exception as exc:  # noqa: BLE001 — pyarrow's conversion errors (ArrowInvalid, ArrowTypeError …)
        log.debug("a journal line's values do not convert (%s)", type(exc).__name__)
        return f"values of the wrong type ({type(exc).__name__})"
    return None


def _with_times(rows: list[dict]) -> list[dict]:
    for row in rows:
        at = row.get("at")
        if isinstance(at, str):
            try:
                row["at"] = datetime.fromisoformat(at)
            except ValueError:
                row["at"] = None
        elif at is not None and not isinstance(at, datetime):
            row["at"] = None
    return rows


def quarantine_dir(db_path=None) -> Path:
    from core.store.db import journal_dir

    return journal_dir(db_path) / "quarantine"


def quarantined(db_path=None) -> list[Path]:
    """Files holding journal lines that were set aside."""
    folder = quarantine_dir(db_path)
    return sorted(folder.glob("*.bad")) if folder.is_dir() else []


def _quarantine(db_path, journal: Path, bad: list[tuple[int, bytes, str]]) -> None:
    folder = quarantine_dir(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (journal.name + ".bad")
    with open(target, "ab") as fh:
        for _, line, _ in bad:
            fh.write(line if line.endswith(b"\n") else line + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
    lines = ", ".join(str(n) for n, _, _ in bad[:5]) + (" …" if len(bad) > 5 else "")
    log.warning("warning: journal %s: %d damaged line(s) (line %s: %s) set aside in %s; the rest was recovered",
                journal.name, len(bad), lines, bad[0][2], target)


def merge_records(con, records: list[dict], stored_items_only: bool = False) -> set[str]:
    """Write journal records into the open connection (caller owns the transaction). Returns the run ids touched.
    ``stored_items_only`` (a dead process's journal): results of items not in the DB are left out, their calls kept
    (a run journals answers while its items are still being inserted; it merges them only after)."""
    from core.store.rows import write_calls_results

    calls, results = [], []
    for rec in records:
        calls.extend(rec.get("calls") or [])
        results.extend(rec.get("results") or [])
    _with_times(calls + results)
    write_calls_results(con, calls, results, stored_items_only=stored_items_only)
    return {r["run_id"] for r in results}


def recover(db_path=None) -> int:
    """Merge journals of dead processes into the DB and mark their runs 'interrupted' (or 'waiting' when provider
    batches still hold some of their prompts). Returns records merged."""
    from core.store.db import connect, transaction

    with connect(db_path) as con:
        with transaction(con):
            merged, orphans = recover_into(con, db_path)
        delete_journals(orphans)
    return merged


def orphan_journals(db_path=None) -> list[Path]:
    """Journal files whose writer process is gone (not ours, not a live process)."""
    from core.store.db import journal_dir

    directory = journal_dir(db_path)
    orphans: list[Path] = []
    if directory.is_dir():
        with _ACTIVE_LOCK:
            active = set(_ACTIVE)
        for path in sorted(directory.glob("*.jsonl")):
            m = _NAME.match(path.name)
            if not m or str(path) in active:
                continue
            pid = int(m.group("pid"))
            if pid != os.getpid() and pid_alive(pid):
                continue
            orphans.append(path)
    return orphans


def recover_into(con, db_path=None) -> tuple[int, list[Path]]:
    """``recover`` inside the caller's open transaction (the runner's setup uses its own connection). Returns
    (records merged, journal files merged): delete those with ``delete_journals`` only after the COMMIT."""
    from core.store.rows import refresh_run_counts

    orphans = orphan_journals(db_path)
    merged = 0
    touched: set[str] = set()
    merged_paths: list[Path] = []
    for path in orphans:
        bad: list[tuple[int, bytes, str]] = []
        try:
            records = read_records(path, bad)
        except FileNotFoundError:
            continue  # another process recovered it meanwhile
        if bad:
            _quarantine(db_path, path, bad)
        # its process may have died before its run's items were in the DB: their answers go to the cache only
        touched |= merge_records(con, records, stored_items_only=True)
        merged += len(records)
        merged_paths.append(path)
    stale = [
        run_id for run_id, owner in con.execute(
            "SELECT run_id, run_json->>'owner' FROM runs WHERE status = 'running'").fetchall()
        if not owner_alive(owner)
    ]
    # a run whose process died while provider batches hold some of its prompts is waiting on them, not broken
    waiting = {r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM batches WHERE phase IN ('submitting', 'open')").fetchall()} if stale else set()
    for run_id in sorted(touched | set(stale)):
        status = ("waiting" if run_id in waiting else "interrupted") if run_id in stale else None
        refresh_run_counts(con, run_id, status=status)
    return merged, merged_paths


def delete_journals(paths: list[Path]) -> None:
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            pass

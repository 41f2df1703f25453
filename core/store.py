"""The DuckDB store: one file holding runs, items, calls, results (+ the embedding cache), schema-versioned.

Tables (see ``core/store_schema.py`` for the DDL and migrations)::

    runs(run_id, run_key, draw, created_at, updated_at, finished_at, task, name, config_json, run_json, model,
         base_url, params_json, status, n_items, n_done, n_failed, n_cached, cost_usd, source, schema_version)
    items(run_id, idx, config_id, sample, seed, prompt, truth, <every setops and quantifier factor>, extra_json)
    calls(cache_key, model, base_url, params_json, prompt_sha, draw, response, latency_ms, tokens_in, tokens_out,
          cost_usd, finish_reason, dropped_params, error, attempts, at)          -- the response cache
    results(run_id, idx, cache_key, parsed, followed, correct, jaccard, precision, recall, truth_len, answer_len,
            made_up, empty_truth, pred, correct_gqg, error, attempts, cached, at)
    embedding_cache(encoder, text_sha, text, vector FLOAT[])
    VIEW v_results                                                                -- what the analysis queries

Concurrency across processes (the design)
-----------------------------------------
DuckDB lets one process at a time open a file read-write, and while it is open no other process can open it at all.
So **nobody holds a connection open**: every reader and writer (CLI runner, dashboard pages, imports) goes through
``connect()``, a context manager that opens the file, does one short piece of work and closes it again. Opening
retries with jittered back-off while another process holds the lock (``DB_BUSY_TIMEOUT`` seconds, then a clear
``DatabaseBusy`` error). A CLI run and an open dashboard therefore interleave: each holds the file for milliseconds.

Durability without holding the lock: the runner appends each finished call (+ the scored results of the items it
answers) to a per-process journal file next to the DB (``<db>.journal/*.jsonl``, see ``core/store_journal.py``) and
fsyncs it *before* the call counts as finished (progress, "done"). Every ``MERGE_INTERVAL`` seconds the journal's new
records are merged into DuckDB in one short transaction — that is when the dashboard sees them. A kill -9 therefore
loses no reported call: journals left by dead processes are merged by the next ``recover_journals()`` (called when a
run starts and whenever the run list is read). Merging is idempotent (upserts keyed by cache_key / (run_id, idx)).

Cache key = sha256 of (model spec, base_url, canonical params JSON, prompt, draw index). Only successful calls are
stored in ``calls``; a call that failed for good leaves its reason in ``results.error`` and is retried by the next
run. API keys are never passed to this module.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import duckdb
import pandas as pd
import pyarrow as pa

from core.errors import UserError
from core.store_schema import (
    CALL_COLUMNS,
    ITEM_COLUMNS,
    RESULT_COLUMNS,
    SCHEMA_VERSION,
    ensure_schema,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DB_BUSY_TIMEOUT = 30.0      # seconds we wait for another process to release the file
MERGE_INTERVAL = 1.0        # seconds between journal → DuckDB merges during a run (dashboard lag)


class DatabaseBusy(UserError):
    """Another process kept the database file locked for longer than the timeout."""


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


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    # "unique file handle conflict … already attached": two threads of one process opening the file at the same
    # moment race in DuckDB's instance cache; retrying succeeds (seen when a page reads while a run starts).
    return ("lock" in text or "being used by another process" in text or "already attached" in text
            or "file handle conflict" in text)


@contextmanager
def connect(db_path: str | os.PathLike | None = None, *, timeout: float = DB_BUSY_TIMEOUT
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-write connection (schema ensured). Close it fast: other processes wait while it is open."""
    path = resolve_db_path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            con = duckdb.connect(str(path))
            break
        except duckdb.Error as exc:  # IOException (lock held by another process) and friends
            if not _is_lock_error(exc):
                raise UserError(f"cannot open database {path}: {str(exc).splitlines()[0]}") from None
            if time.monotonic() >= deadline:
                raise DatabaseBusy(f"database {path} is busy (locked by another process for {timeout:g} s)") from None
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 0.1)
    try:
        ensure_schema(con)
        yield con
    finally:
        con.close()


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


# ------------------------------------------------------------------------------------------------------ cache keys


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(model: str, base_url: str | None, params: dict, prompt: str, draw: int = 0) -> str:
    """sha256 of (model spec, base_url, canonical params JSON, prompt, draw index)."""
    return sha256(canonical_json([model, base_url or None, params, prompt, int(draw)]))


def now_utc() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


# ------------------------------------------------------------------------------------------------------ row shaping


def _to_json(value: Any) -> str | None:
    if value is None:
        return None
    return canonical_json(value)


def _column(values: list, typ: pa.DataType) -> pa.Array:
    if pa.types.is_string(typ):
        return pa.array([None if v is None else (v if isinstance(v, str) else canonical_json(v)) for v in values],
                        type=typ)
    if pa.types.is_floating(typ):
        out = []
        for v in values:
            if v is None or isinstance(v, bool):
                out.append(None if v is None else float(v))
            elif isinstance(v, (int, float)):
                out.append(None if isinstance(v, float) and math.isnan(v) else float(v))
            else:
                try:
                    out.append(float(v))
                except (TypeError, ValueError):
                    out.append(None)
        return pa.array(out, type=typ)
    if pa.types.is_integer(typ):
        out = []
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out.append(None)
            elif isinstance(v, bool):
                out.append(int(v))
            elif isinstance(v, int):
                out.append(v)
            elif isinstance(v, float) and v.is_integer():
                out.append(int(v))
            else:
                try:
                    out.append(int(str(v)))
                except ValueError:
                    out.append(None)
        return pa.array(out, type=typ)
    if pa.types.is_boolean(typ):
        out = []
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out.append(None)
            elif isinstance(v, str):
                out.append({"true": True, "false": False, "1": True, "0": False}.get(v.strip().lower()))
            else:
                out.append(bool(v))
        return pa.array(out, type=typ)
    if pa.types.is_timestamp(typ):
        return pa.array(values, type=typ)
    return pa.array(values, type=typ)


JSON_ITEM_KEYS = {"truth", "set_a", "set_b", "member_hypernyms"}


def item_table(run_id: str, items: Iterable[dict]) -> pa.Table:
    """Items → an Arrow table with every known factor as a typed column; unknown keys go to ``extra_json``."""
    items = list(items)
    known = {name for name, _ in ITEM_COLUMNS}
    cols: dict[str, list] = {name: [] for name, _ in ITEM_COLUMNS}
    for it in items:
        for name, _ in ITEM_COLUMNS:
            if name == "run_id":
                cols[name].append(run_id)
            elif name == "extra_json":
                extra = {k: v for k, v in it.items() if k not in known}
                cols[name].append(canonical_json(extra) if extra else None)
            elif name in JSON_ITEM_KEYS:
                cols[name].append(_to_json(it.get(name)))
            else:
                cols[name].append(it.get(name))
    arrays = [_column(cols[name], typ) for name, typ in ITEM_COLUMNS]
    return pa.Table.from_arrays(arrays, names=[name for name, _ in ITEM_COLUMNS])


def rows_table(rows: list[dict], columns: Sequence[tuple[str, pa.DataType]]) -> pa.Table:
    arrays = [_column([r.get(name) for r in rows], typ) for name, typ in columns]
    return pa.Table.from_arrays(arrays, names=[name for name, _ in columns])


def _dedupe(rows: list[dict], key) -> list[dict]:
    seen: dict = {}
    for r in rows:
        seen[key(r)] = r
    return list(seen.values())


# ------------------------------------------------------------------------------------------------------ writes


def insert_items(con, run_id: str, items: Iterable[dict]) -> int:
    """Bulk-insert items (ignoring ones already stored for this run). Returns the number of rows offered."""
    table = item_table(run_id, items)
    if table.num_rows == 0:
        return 0
    con.register("_items_in", table)
    try:
        names = ", ".join(f'"{n}"' for n, _ in ITEM_COLUMNS)
        con.execute(f"INSERT OR IGNORE INTO items ({names}) SELECT {names} FROM _items_in")
    finally:
        con.unregister("_items_in")
    return table.num_rows


def write_calls_results(con, calls: list[dict], results: list[dict]) -> None:
    """Upsert successful calls and results (idempotent; a success is never replaced by an error)."""
    calls = _dedupe([c for c in calls if c.get("error") is None], key=lambda c: c["cache_key"])
    results = _dedupe(results, key=lambda r: (r["run_id"], int(r["idx"])))
    if calls:
        con.register("_calls_in", rows_table(calls, CALL_COLUMNS))
        try:
            names = ", ".join(f'"{n}"' for n, _ in CALL_COLUMNS)
            con.execute(f"INSERT OR IGNORE INTO calls ({names}) SELECT {names} FROM _calls_in")
        finally:
            con.unregister("_calls_in")
    if results:
        con.register("_results_in", rows_table(results, RESULT_COLUMNS))
        try:
            names = ", ".join(f'"{n}"' for n, _ in RESULT_COLUMNS)
            # a stored success (error NULL) is never overwritten by a later failure record
            con.execute(
                """DELETE FROM results USING _results_in n
                    WHERE results.run_id = n.run_id AND results.idx = n.idx
                      AND NOT (results.error IS NULL AND n.error IS NOT NULL)"""
            )
            con.execute(
                f"INSERT OR IGNORE INTO results ({names}) SELECT {names} FROM _results_in"
            )
        finally:
            con.unregister("_results_in")


def lookup_calls(con, keys: Iterable[str]) -> dict[str, dict]:
    """Successful cached calls for the given cache keys: key -> call row (dict)."""
    keys = sorted(set(keys))
    if not keys:
        return {}
    con.register("_keys_in", pa.table({"cache_key": pa.array(keys, type=pa.string())}))
    try:
        cur = con.execute(
            "SELECT c.* FROM calls c JOIN _keys_in k USING (cache_key) WHERE c.error IS NULL")
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    finally:
        con.unregister("_keys_in")
    return {row[0]: dict(zip(names, row)) for row in rows}


def refresh_run_counts(con, run_id: str, status: str | None = None, finished: bool = False) -> dict:
    """Recompute runs.n_done/n_failed/n_cached/cost_usd from results; optionally set status."""
    row = con.execute(
        """SELECT count(*) FILTER (WHERE r.error IS NULL),
                  count(*) FILTER (WHERE r.error IS NOT NULL),
                  count(*) FILTER (WHERE r.error IS NULL AND r.cached),
                  coalesce(sum(c.cost_usd) FILTER (WHERE NOT coalesce(r.cached, false)), 0),
                  count(*) FILTER (WHERE r.correct)
           FROM results r LEFT JOIN calls c USING (cache_key) WHERE r.run_id = ?""",
        [run_id],
    ).fetchall()[0]
    n_done, n_failed, n_cached, cost, n_correct = row
    sets = ["n_done = ?", "n_failed = ?", "n_cached = ?", "cost_usd = ?", "updated_at = ?"]
    args: list = [n_done, n_failed, n_cached, cost, now_utc()]
    if status is not None:
        sets.append("status = ?")
        args.append(status)
    if finished:
        sets.append("finished_at = ?")
        args.append(now_utc())
    con.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id = ?", args + [run_id])
    return {"n_done": n_done, "n_failed": n_failed, "n_cached": n_cached, "cost_usd": cost, "n_correct": n_correct}


def set_run_status(db_path, run_id: str, status: str, finished: bool = False) -> None:
    with connect(db_path) as con, transaction(con):
        refresh_run_counts(con, run_id, status=status, finished=finished)


# ------------------------------------------------------------------------------------------------------ reads


def run_columns() -> list[str]:
    from core.store_schema import RUN_COLUMNS

    return [n for n, _ in RUN_COLUMNS]


def list_runs(db_path=None, *, recover: bool = True) -> pd.DataFrame:
    """All runs, newest first (merges journals of dead processes first so killed CLI runs show up)."""
    if recover:
        recover_journals(db_path)
    with connect(db_path) as con:
        return con.execute("SELECT * FROM runs ORDER BY created_at DESC, run_id").df()


def get_run(db_path, run_id: str) -> dict | None:
    with connect(db_path) as con:
        cur = con.execute("SELECT * FROM runs WHERE run_id = ?", [run_id])
        rows = cur.fetchall()
        if not rows:
            return None
        return dict(zip([d[0] for d in cur.description], rows[0]))


def _json_dict(text) -> dict:
    if not isinstance(text, str) or not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def run_record(db_path, run_id: str) -> dict | None:
    """A run's row plus what is parsed from it: ``config`` and ``params`` (dicts; {} where absent, e.g. imported
    runs whose file carried none) and ``imported`` (bool). Missing values are None, never NaN."""
    row = get_run(db_path, run_id)
    if row is None:
        return None
    row["config"] = _json_dict(row.get("config_json"))
    row["params"] = _json_dict(row.get("params_json"))
    row["imported"] = str(row.get("source") or "").startswith("import")
    return row


def resolve_run_id(con, run: str) -> str:
    """'latest' → newest run id; otherwise check the id exists. Raises UserError."""
    if run == "latest":
        row = con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 1").fetchall()
        if not row:
            raise UserError("the database holds no runs yet")
        return row[0][0]
    row = con.execute("SELECT run_id FROM runs WHERE run_id = ?", [run]).fetchall()
    if not row:
        raise UserError(f"no run {run!r} in the database")
    return row[0][0]


def delete_run(db_path, run_id: str) -> None:
    """Delete a run with its items and results (the call cache is kept: re-running it costs nothing)."""
    with connect(db_path) as con, transaction(con):
        resolve_run_id(con, run_id)
        for table in ("results", "items", "runs"):
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])


def results_df(db_path, run_id: str) -> pd.DataFrame:
    """One row per item of a run from v_results (factors, prompt, response, parsed, metrics, call figures)."""
    with connect(db_path) as con:
        return con.execute("SELECT * FROM v_results WHERE run_id = ? ORDER BY idx", [run_id]).df()


# ------------------------------------------------------------------------------------------------------ journals


def recover_journals(db_path=None) -> int:
    """Merge journals left by processes that died (kill -9) into the DB. Returns the number of records merged."""
    from core.store_journal import recover

    return recover(db_path)


__all__ = [
    "SCHEMA_VERSION", "DatabaseBusy", "default_db_path", "resolve_db_path", "journal_dir", "connect", "transaction",
    "query_df", "cache_key", "canonical_json", "sha256", "insert_items", "write_calls_results", "lookup_calls",
    "refresh_run_counts", "set_run_status", "list_runs", "get_run", "resolve_run_id", "delete_run", "results_df",
    "recover_journals", "item_table", "now_utc",
]

"""Reading and managing runs: the run list (after merging journals of dead processes), one run's record and
results, status changes, deletion."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
from core.errors import UserError
from core.store.db import connect, now_utc, transaction
from core.store.rows import refresh_run_counts

if TYPE_CHECKING:   # not imported by a run (see db.py)
    import pandas as pd


def set_run_status(db_path, run_id: str, status: str, finished: bool = False) -> None:
    with connect(db_path) as con, transaction(con):
        refresh_run_counts(con, run_id, status=status, finished=finished)


# columns a new run's row is given by its caller; the rest start empty (counts 0, finished_at NULL)
_NEW_RUN_FIELDS = ("run_id", "run_key", "draw", "task", "name", "config_json", "run_json", "model", "base_url",
                   "params_json", "status", "source")


def insert_run(con, **fields) -> None:
    """Insert a new run's row (caller's transaction): ``fields`` are exactly the columns of ``_NEW_RUN_FIELDS``;
    created/updated now, no items counted yet, stamped with the current schema version."""
    from core.store.schema import SCHEMA_VERSION

    if set(fields) != set(_NEW_RUN_FIELDS):
        raise TypeError(f"insert_run needs exactly {', '.join(_NEW_RUN_FIELDS)}; "
                        f"got {', '.join(sorted(fields))}")
    at = now_utc()
    con.execute(
        f"""INSERT INTO runs ({', '.join(_NEW_RUN_FIELDS)}, created_at, updated_at, n_items, n_done, n_failed,
            n_cached, cost_usd, schema_version)
            VALUES ({', '.join('?' * len(_NEW_RUN_FIELDS))}, ?, ?, NULL, 0, 0, 0, 0, ?)""",
        [fields[k] for k in _NEW_RUN_FIELDS] + [at, at, SCHEMA_VERSION])


def update_run(con, run_id: str, *, status: str | None = None, n_items: int | None = None,
               run_json: str | None = None) -> None:
    """Set a run's status, its number of items and/or its run_json (those given), and its updated_at (caller's
    transaction). The counts of answers are ``refresh_run_counts``'s."""
    sets, args = ["updated_at = ?"], [now_utc()]
    for column, value in (("status", status), ("n_items", n_items), ("run_json", run_json)):
        if value is not None:
            sets.append(f"{column} = ?")
            args.append(value)
    con.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id = ?", args + [run_id])


def interrupt_unfinished(con) -> list[str]:
    """Mark every run left 'running' or 'pending' as 'interrupted' (caller's connection; for a file no process is
    running anything on). Returns the runs changed."""
    return sorted(r[0] for r in con.execute(
        "UPDATE runs SET status = 'interrupted', updated_at = ? WHERE status IN ('running', 'pending') "
        "RETURNING run_id", [now_utc()]).fetchall())


def settle_restored(con) -> list[str]:
    """Make a database just restored from a backup consistent with the fact that no process writes to it: runs it
    holds as 'running' (a backup taken mid-run) become 'interrupted' — or 'waiting' where provider batches still
    hold some of their prompts — and every claim on calls in flight is dropped, so a resume starts at once and the
    next restore is not refused for a run nobody runs. Inside the caller's connection. Returns the runs changed."""
    running = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE status = 'running' ORDER BY run_id").fetchall()]
    waiting = {r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM batches WHERE phase IN ('submitting', 'open')").fetchall()} if running else set()
    with transaction(con):
        con.execute("DELETE FROM claims")
        for run_id in running:
            refresh_run_counts(con, run_id, status="waiting" if run_id in waiting else "interrupted")
    return running


# ------------------------------------------------------------------------------------------------------ reads


def run_columns() -> list[str]:
    from core.store.schema import RUN_COLUMNS

    return [n for n, _ in RUN_COLUMNS]


def list_runs(db_path=None, *, recover: bool = True, made_here_only: bool = False) -> pd.DataFrame:
    """All runs, newest first (merges journals of dead processes first so killed CLI runs show up), with their
    ``provenance`` ('made here' or 'uploaded'; core/store/provenance.py); ``made_here_only`` leaves uploads out."""
    from core.store.provenance import made_here_sql, uploaded_sql

    if recover:
        recover_journals(db_path)
    where = f"WHERE {made_here_sql()}" if made_here_only else ""
    with connect(db_path) as con:
        return con.execute(f"SELECT *, CASE WHEN {uploaded_sql()} THEN 'uploaded' ELSE 'made here' END AS provenance "
                           f"FROM runs {where} ORDER BY created_at DESC, run_id").df()


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
    runs whose file carried none), ``imported`` (bool: an upload or a provider batch file), ``provenance`` ('made
    here' / 'uploaded') and ``batch`` (bool: last started as a provider batch run).
    Missing values are None, never NaN."""
    row = get_run(db_path, run_id)
    if row is None:
        return None
    row["config"] = _json_dict(row.get("config_json"))
    row["params"] = _json_dict(row.get("params_json"))
    row["imported"] = str(row.get("source") or "").startswith("import")
    from core.store.provenance import of_source

    row["provenance"] = of_source(row.get("source"))
    row["batch"] = bool(_json_dict(row.get("run_json")).get("batch"))   # last started through provider batches
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
        aggregates.drop_runs(con, [run_id])


def results_df(db_path, run_id: str) -> pd.DataFrame:
    """One row per item of a run from v_results (factors, prompt, response, parsed, metrics, call figures)."""
    with connect(db_path) as con:
        return con.execute("SELECT * FROM v_results WHERE run_id = ? ORDER BY idx", [run_id]).df()


# ------------------------------------------------------------------------------------------------------ journals


def recover_journals(db_path=None) -> int:
    """Merge journals left by processes that died (kill -9) into the DB. Returns the number of records merged."""
    from core.store.journal import recover

    return recover(db_path)

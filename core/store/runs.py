"""Reading and managing runs: the run list (after merging journals of dead processes), one run's record and
results, status changes, deletion."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
from core.errors import UserError
from core.store.db import connect, transaction
from core.store.rows import refresh_run_counts

if TYPE_CHECKING:   # not imported by a run (see db.py)
    import pandas as pd


def set_run_status(db_path, run_id: str, status: str, finished: bool = False) -> None:
    with connect(db_path) as con, transaction(con):
        refresh_run_counts(con, run_id, status=status, finished=finished)


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

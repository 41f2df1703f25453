"""Provider batch jobs in the store: which items went into which batch, in what state the batch is, and what came
back — written the moment it is known, so a killed process loses nothing (see core/runner/batch.py).

    batches(batch_id, provider, provider_batch_id, run_id, model, base_url, phase, status, owner, n_requests, …)
    batch_requests(batch_id, custom_id, run_id, idx, cache_key, outcome, error, retired, dropped_params,
                   reasoning_sent)

``phase`` is ours: ``submitting`` (row written, provider not yet answered), ``open`` (the provider holds it),
``collected`` (its results are in ``calls``/``results``), ``lost`` (the provider never created it). ``status`` is the
provider's own word (validating, in_progress, finalizing, completed, expired, cancelling, cancelled, failed; ended,
canceling). A request's ``outcome`` is NULL while its batch is open, then succeeded, errored, expired, cancelled,
failed (the whole batch failed), missing (no line came back for it) or lost (never submitted). Failed outcomes
count as attempts until ``retired`` (the item was recorded as failed; a later run gives it a new allowance).

All functions take an open connection; the caller owns the transaction.
"""

from __future__ import annotations

import secrets
from typing import Iterable

from core.store.db import now_utc
from core.store.rows import rows_table
from core.store.schema import BATCH_COLUMNS, BATCH_REQUEST_COLUMNS

OPEN_PHASES = ("submitting", "open")
FAILED_OUTCOMES = ("errored", "expired", "cancelled", "failed", "missing")


def new_batch_id() -> str:
    return "b-" + secrets.token_hex(8)


def _keys_table(con, name: str, keys: Iterable[str]) -> None:
    import pyarrow as pa

    con.register(name, pa.table({"cache_key": pa.array(sorted(set(keys)), type=pa.string())}))


def in_flight(con, keys: Iterable[str]) -> set[str]:
    """Those of ``keys`` that sit in a batch not yet collected (any run)."""
    keys = sorted(set(keys))
    if not keys:
        return set()
    # a list parameter, not an Arrow table (a live run asks this before its first request: see cache.lookup_calls)
    rows = con.execute(
        """SELECT DISTINCT q.cache_key FROM batch_requests q JOIN batches b USING (batch_id)
           WHERE b.phase IN ('submitting', 'open') AND q.cache_key IN (SELECT unnest(CAST(? AS VARCHAR[])))""",
        [keys]).fetchall()
    return {r[0] for r in rows}


def claim(con, batch: dict, requests: list[dict]) -> list[dict]:
    """Insert a batch row (phase 'submitting') and its requests, leaving out any request whose cache key another
    open batch already holds (two processes attaching at once never submit a prompt twice: DuckDB serialises the
    transactions). Returns the requests claimed; when none is left nothing is written."""
    taken = in_flight(con, (r["cache_key"] for r in requests))
    mine = [r for r in requests if r["cache_key"] not in taken]
    if not mine:
        return []
    now = now_utc()
    row = {"phase": "submitting", "status": None, "created_at": now, "updated_at": now, "cancel_requested": False,
           "n_requests": len({r["custom_id"] for r in mine}), **batch}
    con.register("_b_in", rows_table([row], BATCH_COLUMNS))
    con.register("_bq_in", rows_table([{**r, "batch_id": batch["batch_id"], "outcome": None, "error": None,
                                        "retired": False} for r in mine], BATCH_REQUEST_COLUMNS))
    try:
        names = ", ".join(f'"{n}"' for n, _ in BATCH_COLUMNS)
        con.execute(f"INSERT INTO batches ({names}) SELECT {names} FROM _b_in")
        names = ", ".join(f'"{n}"' for n, _ in BATCH_REQUEST_COLUMNS)
        con.execute(f"INSERT OR IGNORE INTO batch_requests ({names}) SELECT {names} FROM _bq_in")
    finally:
        con.unregister("_b_in")
        con.unregister("_bq_in")
    return mine


def update(con, batch_id: str, **fields) -> None:
    """Set columns of one batch row (updated_at always)."""
    known = {n for n, _ in BATCH_COLUMNS}
    bad = sorted(set(fields) - known)
    if bad:
        raise ValueError(f"unknown batch column(s): {bad}")
    fields["updated_at"] = now_utc()
    sets = ", ".join(f'"{k}" = ?' for k in fields)
    con.execute(f"UPDATE batches SET {sets} WHERE batch_id = ?", [*fields.values(), batch_id])


def mark_lost(con, batch_id: str, error: str | None) -> None:
    """The provider never created this batch: its requests are free to be submitted again (not an attempt)."""
    update(con, batch_id, phase="lost", error=(error or None) and error[:1000])
    con.execute("UPDATE batch_requests SET outcome = 'lost', error = ? WHERE batch_id = ? AND outcome IS NULL",
                [(error or "not submitted")[:1000], batch_id])


def set_outcomes(con, batch_id: str, outcomes: dict[str, tuple[str, str | None]], default: tuple[str, str | None]
                 ) -> None:
    """Record each request's outcome by custom_id; requests with none get ``default`` (e.g. 'missing')."""
    if outcomes:
        ids = list(outcomes)
        import pyarrow as pa

        con.register("_bo_in", pa.table({
            "custom_id": pa.array(ids, type=pa.string()),
            "outcome": pa.array([outcomes[i][0] for i in ids], type=pa.string()),
            "error": pa.array([(outcomes[i][1] or None) and outcomes[i][1][:1000] for i in ids], type=pa.string())}))
        try:
            con.execute("""UPDATE batch_requests SET outcome = o.outcome, error = o.error FROM _bo_in o
                           WHERE batch_requests.batch_id = ? AND batch_requests.custom_id = o.custom_id""",
                        [batch_id])
        finally:
            con.unregister("_bo_in")
    con.execute("UPDATE batch_requests SET outcome = ?, error = ? WHERE batch_id = ? AND outcome IS NULL",
                [default[0], default[1], batch_id])


def _dicts(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def get(con, batch_id: str) -> dict | None:
    """A batch row by our id or the provider's id."""
    rows = _dicts(con.execute("SELECT * FROM batches WHERE batch_id = ? OR provider_batch_id = ? "
                              "ORDER BY created_at LIMIT 1", [batch_id, batch_id]))
    return rows[0] if rows else None


def open_for(con, run_id: str, keys: Iterable[str] = ()) -> list[dict]:
    """Batches not yet collected that belong to ``run_id`` or hold one of ``keys`` (another run's batch may carry a
    prompt this run also needs)."""
    keys = list(keys)
    _keys_table(con, "_bo_keys", keys)
    try:
        return _dicts(con.execute(
            """SELECT * FROM batches b WHERE b.phase IN ('submitting', 'open') AND (b.run_id = ? OR EXISTS (
                   SELECT 1 FROM batch_requests q JOIN _bo_keys k USING (cache_key) WHERE q.batch_id = b.batch_id))
               ORDER BY b.created_at""", [run_id]))
    finally:
        con.unregister("_bo_keys")


def requests_of(con, batch_id: str) -> list[dict]:
    """A batch's requests: custom id, run, item, cache key, and what each carried as recorded at submission
    (``dropped_params``: a JSON list, None for a request submitted before that was recorded; ``reasoning_sent``)."""
    return _dicts(con.execute("SELECT custom_id, run_id, idx, cache_key, dropped_params, reasoning_sent "
                              "FROM batch_requests WHERE batch_id = ? ORDER BY run_id, idx", [batch_id]))


def failed_attempts(con, run_id: str) -> dict[str, tuple[int, str | None]]:
    """cache_key → (failed batch attempts not yet retired, the last error) for one run's items."""
    rows = con.execute(
        """SELECT q.cache_key, count(DISTINCT q.batch_id), arg_max(q.error, b.created_at)
           FROM batch_requests q JOIN batches b USING (batch_id)
           WHERE q.run_id = ? AND NOT coalesce(q.retired, false) AND q.outcome IN ('errored', 'expired',
                 'cancelled', 'failed', 'missing')
           GROUP BY q.cache_key""", [run_id]).fetchall()
    return {r[0]: (int(r[1]), r[2]) for r in rows}


def retire(con, run_id: str, keys: Iterable[str]) -> None:
    """The items of these keys were recorded as failed: their failed attempts no longer count."""
    keys = list(keys)
    if not keys:
        return
    _keys_table(con, "_br_keys", keys)
    try:
        con.execute("""UPDATE batch_requests SET retired = true FROM _br_keys k
                       WHERE batch_requests.run_id = ? AND batch_requests.cache_key = k.cache_key""", [run_id])
    finally:
        con.unregister("_br_keys")


def summary(con, run_id: str) -> dict:
    """How a run's batches stand: {'open': n, 'collected': n, …, 'waiting_items': n}."""
    phases = dict(con.execute("SELECT phase, count(*) FROM batches WHERE run_id = ? GROUP BY phase",
                              [run_id]).fetchall())
    waiting = con.execute(
        """SELECT count(*) FROM batch_requests q JOIN batches b USING (batch_id)
           WHERE q.run_id = ? AND b.phase IN ('submitting', 'open')""", [run_id]).fetchall()[0][0]
    return {**{k: int(v) for k, v in phases.items()}, "waiting_items": int(waiting)}


def runs_with_open_batches(con) -> set[str]:
    return {r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM batches WHERE phase IN ('submitting', 'open')").fetchall()}


def list_df(con, run_id: str | None = None):
    """Batches (newest first) with their request counts, for the CLI and the Runs page."""
    where, args = ("WHERE b.run_id = ?", [run_id]) if run_id else ("", [])
    return con.execute(
        f"""SELECT b.batch_id, b.provider, b.provider_batch_id, b.run_id, b.model, b.phase, b.status,
                   b.n_requests, b.n_succeeded, b.n_errored, b.n_expired, b.n_cancelled, b.n_processing,
                   b.n_bytes, b.cost_usd, b.cancel_requested, b.error, b.created_at, b.submitted_at, b.ended_at,
                   b.collected_at
            FROM batches b {where} ORDER BY b.created_at DESC, b.batch_id""", args).df()

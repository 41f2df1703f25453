"""Writing rows: items of a run, finished calls and their scored results (idempotent upserts), and the run's
counters derived from them."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
from core.redaction import redact
from core.store.cache import canonical_json
from core.store.db import now_utc
from core.store.schema import CALL_COLUMNS, ITEM_COLUMNS, RESULT_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa

# ------------------------------------------------------------------------------------------------------ row shaping


def _to_json(value: Any) -> str | None:
    if value is None:
        return None
    return canonical_json(value)


_NONE = type(None)
# the Python types a column's values may have for Arrow to convert them exactly as ``_column``'s rules would (NaN in
# a float column becomes NULL through ``from_pandas``); anything else takes the rules value by value
_NATIVE = {"VARCHAR": {str, _NONE}, "DOUBLE": {float, _NONE}, "BIGINT": {int, _NONE}, "BOOLEAN": {bool, _NONE}}


@functools.cache
def arrow_type(typ: str):
    """The Arrow type of a column type of core/store/schema.py (a DuckDB type name)."""
    import pyarrow as pa

    return {"VARCHAR": pa.string, "BIGINT": pa.int64, "DOUBLE": pa.float64, "BOOLEAN": pa.bool_,
            "TIMESTAMP": lambda: pa.timestamp("us")}[typ]()


def _column(values: list, column_type: str) -> pa.Array:
    """``values`` as an Arrow array of ``column_type`` (a DuckDB type name, ``arrow_type``), leniently: JSON text for structures in a string column, numbers
    from text, NaN as NULL, a value that cannot be converted as NULL. Values that all have the column's own Python
    type (what the runner writes) are handed to Arrow in one go, dozens of times faster than the rules below."""
    import pyarrow as pa

    typ = arrow_type(column_type)
    native = _NATIVE.get(column_type)
    if native is not None and set(map(type, values)) <= native:
        return pa.array(values, type=typ, from_pandas=True)
    if column_type == "VARCHAR":
        return pa.array([None if v is None else (v if isinstance(v, str) else canonical_json(v)) for v in values],
                        type=typ)
    if column_type == "DOUBLE":
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
    if column_type == "BIGINT":
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
    if column_type == "BOOLEAN":
        out = []
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out.append(None)
            elif isinstance(v, str):
                out.append({"true": True, "false": False, "1": True, "0": False}.get(v.strip().lower()))
            else:
                out.append(bool(v))
        return pa.array(out, type=typ)
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
    import pyarrow as pa

    arrays = [_column(cols[name], typ) for name, typ in ITEM_COLUMNS]
    return pa.Table.from_arrays(arrays, names=[name for name, _ in ITEM_COLUMNS])


def rows_table(rows: list[dict], columns: Sequence[tuple[str, str]]) -> pa.Table:
    import pyarrow as pa

    arrays = [_column([r.get(name) for r in rows], typ) for name, typ in columns]
    return pa.Table.from_arrays(arrays, names=[name for name, _ in columns])


def _dedupe(rows: list[dict], key) -> list[dict]:
    seen: dict = {}
    for r in rows:
        seen[key(r)] = r
    return list(seen.values())


# ------------------------------------------------------------------------------------------------------ writes


ITEMS_PER_INSERT = 4096   # items converted and inserted at a time: the copy in flight stays small beside the plan


def insert_items(con, run_id: str, items: Iterable[dict]) -> int:
    """Bulk-insert items (ignoring ones already stored for this run), ``ITEMS_PER_INSERT`` at a time in the caller's
    transaction (a big run's items as one Arrow table would be a transient larger than its plan). Returns the number
    of rows offered."""
    items = items if isinstance(items, list) else list(items)
    names = ", ".join(f'"{n}"' for n, _ in ITEM_COLUMNS)
    for start in range(0, len(items), ITEMS_PER_INSERT):
        con.register("_items_in", item_table(run_id, items[start:start + ITEMS_PER_INSERT]))
        try:
            con.execute(f"INSERT OR IGNORE INTO items ({names}) SELECT {names} FROM _items_in")
        finally:
            con.unregister("_items_in")
    if not items:
        return 0
    aggregates.after_items(con, run_id)
    return len(items)


def redact_rows(rows: list[dict]) -> list[dict]:
    """Rows with their free text (error reasons, replies) cleared of any trace of a known key (core.redaction)."""
    out = []
    for r in rows:
        if r.get("error") is not None or r.get("response") is not None:
            r = dict(r)
            if isinstance(r.get("error"), str):
                r["error"] = redact(r["error"])
            if isinstance(r.get("response"), str):
                r["response"] = redact(r["response"], keylike=False)
        out.append(r)
    return out


def write_calls_results(con, calls: list[dict], results: list[dict], stored_items_only: bool = False) -> None:
    """Upsert successful calls and results (idempotent; a success is never replaced by an error). Error reasons and
    replies are redacted on the way in: nothing the store holds carries a known key. ``stored_items_only``: results
    of items not in the DB are left out (their calls are kept: a later run scores them from the cache)."""
    calls = redact_rows(_dedupe([c for c in calls if c.get("error") is None], key=lambda c: c["cache_key"]))
    results = redact_rows(_dedupe(results, key=lambda r: (r["run_id"], int(r["idx"]))))
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
            kept = (" n WHERE EXISTS (SELECT 1 FROM items i WHERE i.run_id = n.run_id AND i.idx = n.idx)"
                    if stored_items_only else "")
            con.execute(f"INSERT OR IGNORE INTO results ({names}) SELECT {names} FROM _results_in{kept}")
            aggregates.after_results(con, "_results_in")
        finally:
            con.unregister("_results_in")


def refresh_run_counts(con, run_id: str, status: str | None = None, finished: bool = False) -> dict:
    """Recompute runs.n_done/n_failed/n_cached/cost_usd from results; optionally set status. Returns those counts
    with the correct answers under both verdicts (``n_correct``; ``n_correct_strict`` of ``n_scored_strict`` items
    with a strict verdict: a set-operation run's accuracy as the views show it by default, read from the same
    scan instead of a second query at the end of a run)."""
    row = con.execute(
        """SELECT count(*) FILTER (WHERE r.error IS NULL),
                  count(*) FILTER (WHERE r.error IS NOT NULL),
                  count(*) FILTER (WHERE r.error IS NULL AND r.cached),
                  coalesce(sum(c.cost_usd) FILTER (WHERE NOT coalesce(r.cached, false)), 0),
                  count(*) FILTER (WHERE r.correct),
                  count(*) FILTER (WHERE r.correct_strict),
                  count(r.correct_strict)
           FROM results r LEFT JOIN calls c USING (cache_key) WHERE r.run_id = ?""",
        [run_id],
    ).fetchall()[0]
    n_done, n_failed, n_cached, cost, n_correct, n_correct_strict, n_scored_strict = row
    sets = ["n_done = ?", "n_failed = ?", "n_cached = ?", "cost_usd = ?", "updated_at = ?"]
    args: list = [n_done, n_failed, n_cached, cost, now_utc()]
    if status is not None:
        sets.append("status = ?")
        args.append(status)
    if finished:
        sets.append("finished_at = ?")
        args.append(now_utc())
    con.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id = ?", args + [run_id])
    return {"n_done": n_done, "n_failed": n_failed, "n_cached": n_cached, "cost_usd": cost, "n_correct": n_correct,
            "n_correct_strict": n_correct_strict, "n_scored_strict": n_scored_strict}

"""Export runs and filtered views of them as CSV, Parquet or JSONL, through DuckDB's COPY.

    export_run(db_path, run, out_path) -> (run_id, n_rows)       # .csv | .parquet | .jsonl, by extension
    export_view(db_path, out_path, run_ids=None, filters=None) -> n_rows   # a filtered view of v_results

One row per item, columns EXPORT_COLUMNS (core/store/io.py, which reads these files back). Sets, truths and parsed
answers are JSON text in CSV/Parquet and nested values in JSONL. In CSV, every text cell a spreadsheet would take for
a formula is neutralised (core/files.py: a reply ``=HYPERLINK(…)`` is written ``'=HYPERLINK(…)``; import reads
it back as the reply). Error reasons and replies pass the one redaction function (core/redaction.py) on the way out
whenever this process knows a key. The file is written under a temporary name and moved into place.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from core import store
from core.errors import UserError
from core.files import check_output_path, neutralise_sql
from core.redaction import known_secrets, redact
from core.store.io import EXPORT_COLUMNS, FORMATS, JSON_TEXT_COLUMNS
from core.store.schema import CALL_COLUMNS, ITEM_COLUMNS, RESULT_COLUMNS, RUN_COLUMNS

_JSONL_NESTED = 'CASE WHEN json_valid("{c}") THEN CAST("{c}" AS JSON) ELSE to_json("{c}") END'
_TEXT_COLUMNS = {n for n, t in ITEM_COLUMNS + RESULT_COLUMNS + CALL_COLUMNS + RUN_COLUMNS if t == "VARCHAR"} | {
    "reasoning_text"}   # (calls.reasoning under its v_results name)
_REDACTED = {"error": "studio_redact", "response": "studio_redact_reply",   # column -> UDF (registered per export)
             "reasoning_text": "studio_redact_reply"}


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def export_run(db_path, run: str, out_path: str | os.PathLike) -> tuple[str, int]:
    """Write one row per item of ``run`` ('latest' or a run id) to CSV / Parquet / JSONL (by extension)."""
    _check_output_path(out_path)
    path = store.resolve_db_path(db_path)
    if not path.exists() and not store.journal_dir(db_path).exists():
        # reading must not leave an empty database behind (a mistyped --db would otherwise create one)
        raise UserError(f"no runs yet: no database at {path} (run or import something first, or pass --db PATH)")
    store.recover_journals(db_path)
    with store.connect(db_path) as con:
        run_id = store.resolve_run_id(con, run)
    return run_id, export_view(db_path, out_path, run_ids=[run_id])


def _column_sql(c: str, fmt: str, redacting: bool) -> str:
    expr = f'"{c}"'
    if redacting and c in _REDACTED:
        expr = f"{_REDACTED[c]}({expr})"
    if fmt == "jsonl" and c in JSON_TEXT_COLUMNS:
        expr = _JSONL_NESTED.format(c=c)
    elif fmt == "csv" and c in _TEXT_COLUMNS:
        expr = neutralise_sql(expr)
    return f'{expr} AS "{c}"'


def export_view(db_path, out_path: str | os.PathLike, *, run_ids: list[str] | None = None,
                filters: dict[str, list] | None = None) -> int:
    """Export a filtered view of v_results (R4): rows of ``run_ids`` whose column values are in ``filters``
    (``{"operation": ["union"], "size_a": [2, 4]}``; columns must be export columns; values are SQL parameters).
    Returns the number of rows written."""
    out = _check_output_path(out_path)
    fmt = FORMATS[out.suffix.lower()]
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    options = {"csv": "(FORMAT CSV, HEADER TRUE)", "parquet": "(FORMAT PARQUET)", "jsonl": "(FORMAT JSON)"}[fmt]
    redacting = bool(known_secrets())
    cols = ", ".join(_column_sql(c, fmt, redacting) for c in EXPORT_COLUMNS)
    where, params = [], []
    if run_ids is not None:
        where.append(f"run_id IN ({', '.join('?' * len(run_ids))})" if run_ids else "FALSE")
        params += list(run_ids)
    for col, values in (filters or {}).items():
        if col not in EXPORT_COLUMNS:
            raise UserError(f"cannot filter on {col!r}: not an export column")
        values = list(values)
        if not values:
            where.append("FALSE")
            continue
        nulls = any(v is None for v in values)
        values = [v for v in values if v is not None]
        parts = [f'"{col}" IN ({", ".join("?" * len(values))})'] if values else []
        if nulls:
            parts.append(f'"{col}" IS NULL')
        where.append("(" + " OR ".join(parts) + ")")
        params += values
    sql_where = ("WHERE " + " AND ".join(where)) if where else ""
    try:   # fail on an unwritable place before querying (and with the OS's words, not DuckDB's)
        open(tmp, "wb").close()
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    try:
        return _copy_export(db_path, out, tmp, cols, sql_where, params, options, redacting)
    finally:
        tmp.unlink(missing_ok=True)


def _copy_export(db_path, out: Path, tmp: Path, cols: str, sql_where: str, params: list, options: str,
                 redacting: bool) -> int:
    with store.connect(db_path) as con:
        if redacting:
            con.create_function("studio_redact", lambda t: redact(t), [duckdb.sqltypes.VARCHAR],
                                duckdb.sqltypes.VARCHAR, side_effects=False)
            con.create_function("studio_redact_reply", lambda t: redact(t, keylike=False), [duckdb.sqltypes.VARCHAR],
                                duckdb.sqltypes.VARCHAR, side_effects=False)
        con.execute(f"CREATE OR REPLACE TEMP TABLE _export AS SELECT {cols} FROM v_results {sql_where} "
                    "ORDER BY run_id, idx", params)
        n = con.execute("SELECT count(*) FROM _export").fetchall()[0][0]
        try:
            con.execute(f"COPY _export TO {_sql_literal(str(tmp))} {options}")
            os.replace(tmp, out)
        except (duckdb.Error, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
            raise UserError(f"cannot write {out}: {reason}") from None
        finally:
            con.execute("DROP TABLE IF EXISTS _export")
    return int(n)


def _check_output_path(out_path: str | os.PathLike) -> Path:
    """The export target: a .csv/.parquet/.jsonl name in an existing directory (checked before any work)."""
    return check_output_path(out_path, tuple(FORMATS), probe=False)

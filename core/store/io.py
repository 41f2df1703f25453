"""Export runs and import result files (our own exports, and result CSVs of the SetLexSem reference code).

    export_run(db_path, run, out_path) -> (run_id, n_rows)       # .csv | .parquet | .jsonl, via DuckDB COPY
                                  # (sets, truths and parsed answers: JSON text in CSV/Parquet, nested in JSONL)
    export_view(db_path, out_path, run_ids=None, filters=None) -> n_rows   # a filtered view of v_results
    read_results_file(path_or_bytes, filename) -> (DataFrame, meta)   # also used by the dashboard's Compare page
    import_results(db_path, path_or_bytes, filename=None, name=None) -> (run_id, n_rows)

``read_results_file`` never evaluates anything it reads: CSV cells are read as text; set literals of the reference
layout are parsed with ``ast.literal_eval`` on bounded input (never eval), and only sets/lists/tuples of ints and
strings are accepted; cells that look like spreadsheet formulas (``=cmd|' /C calc'!A0``, ``@SUM(...)``) are refused.
Whatever is wrong raises ImportFileError with one line that says what (and where). The returned frame has the layout
of our export (EXPORT_COLUMNS, one row per item); ``meta`` says which layout was found and what the reference
file/folder names told us (members, operation, approach, phrasing, K, N, MA, MB, L, S …).

Import writes runs/items/calls/results in ONE transaction: an unreadable file leaves the DB unchanged. Imported
responses get cache keys ``import:<run_id>:<idx>`` so they never answer a real model call from the cache.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import math
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from core import store
from core.errors import ImportFileError, UserError
from core.files import check_output_path
from core.store.backfill import fill_strict as _fill_strict
from core.store.schema import FACTOR_COLUMNS
from core.tasks.setops import aliases

MAX_IMPORT_BYTES = 200 * 1024 * 1024
MAX_LITERAL_CHARS = 100_000
MAX_ROWS = 2_000_000

EXPORT_COLUMNS = (
    ["run_id", "idx", "config_id", "sample", "seed"] + FACTOR_COLUMNS
    + ["prompt", "truth", "response", "parsed", "followed", "correct", "parsed_strict", "followed_strict",
       "correct_strict", "answer_len_strict", "made_up_strict", "jaccard", "precision", "recall", "truth_len",
       "answer_len", "made_up", "empty_truth", "pred", "correct_gqg", "latency_ms", "tokens_in", "tokens_out",
       "cost_usd", "error", "cached", "attempts", "model", "task", "name", "extra_json"]
)
STRICT_COLUMNS = ("parsed_strict", "followed_strict", "correct_strict", "answer_len_strict", "made_up_strict")
# stored as JSON text; CSV and Parquet keep the text, JSONL nests the value (like `generate`'s JSONL does)
JSON_TEXT_COLUMNS = ("member_hypernyms", "set_a", "set_b", "truth", "parsed", "parsed_strict")
_JSONL_NESTED = 'CASE WHEN json_valid("{c}") THEN CAST("{c}" AS JSON) ELSE to_json("{c}") END AS "{c}"'
REFERENCE_COLUMNS = ("op_name", "prompt", "ground_truth", "result_obj", "llm_vs_gt", "set_A", "set_B")
REFERENCE_OPTIONAL = ("context_length_in", "context_length_out", "log_context")
STUDIO_REQUIRED = ("idx", "prompt", "correct")
FORMATS = {".csv": "csv", ".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}

_FORMULA = re.compile(r"^\s*[=+\-@]\s*[A-Za-z_][A-Za-z0-9_.]*\s*[(|!]")
_INT_COLS = {"idx", "sample", "seed", "size_a", "size_b", "length", "decile", "swap_count", "shots", "total",
             "count_large", "count_small", "count_asked", "truth_len", "answer_len", "made_up", "tokens_in",
             "tokens_out", "attempts", "answer_len_strict", "made_up_strict"}
_FLOAT_COLS = {"overlap", "jaccard", "precision", "recall", "latency_ms", "cost_usd"}
_BOOL_COLS = {"followed", "correct", "empty_truth", "correct_gqg", "cached", "followed_strict", "correct_strict"}
_OPERATIONS = {**{op: op for op in ("union", "intersection", "difference", "symmetric_difference")},
               **aliases.aliases_of("operations"), "symmetricdifference": "symmetric_difference",
               "symmetric-difference": "symmetric_difference"}
_MEMBER_FOLDERS = {"numbers": "numbers", "basicnumbersampler": "numbers", "words": "words",
                   "basicwordsampler": "words", "decile_words": "deciles", "deciles": "deciles",
                   "deceptive_words": "deceptive", "deceptive": "deceptive",
                   "overlapping_basicnumbersampler": "numbers", "overlapping_basicwordsampler": "words"}
# The reference code's prompt types / approaches under this tool's names (core/tasks/setops/prompts/templates.yaml), so an
# imported reference file lines up with our runs (Compare's alignment) and with the published tables.
_REFERENCE_PHRASINGS = aliases.aliases_of("phrasings")   # one table: core/tasks/setops/aliases.py
_REFERENCE_APPROACHES = aliases.aliases_of("approaches")


# ------------------------------------------------------------------------------------------------------------ export


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


def export_view(db_path, out_path: str | os.PathLike, *, run_ids: list[str] | None = None,
                filters: dict[str, list] | None = None) -> int:
    """Export a filtered view of v_results (R4): rows of ``run_ids`` whose column values are in ``filters``
    (``{"operation": ["union"], "size_a": [2, 4]}``; columns must be export columns; values are SQL parameters).
    Returns the number of rows written."""
    out = _check_output_path(out_path)
    fmt = FORMATS[out.suffix.lower()]
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    options = {"csv": "(FORMAT CSV, HEADER TRUE)", "parquet": "(FORMAT PARQUET)", "jsonl": "(FORMAT JSON)"}[fmt]
    cols = ", ".join(_JSONL_NESTED.format(c=c) if fmt == "jsonl" and c in JSON_TEXT_COLUMNS else f'"{c}"'
                     for c in EXPORT_COLUMNS)
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
        return _copy_export(db_path, out, tmp, cols, sql_where, params, options)
    finally:
        tmp.unlink(missing_ok=True)


def _copy_export(db_path, out: Path, tmp: Path, cols: str, sql_where: str, params: list, options: str) -> int:
    with store.connect(db_path) as con:
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


# ------------------------------------------------------------------------------------------------------------ reading


def _load_bytes(path_or_bytes, filename: str | None) -> tuple[bytes, str]:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        name = filename or "upload"
    else:
        p = Path(path_or_bytes)
        name = filename or p.name
        if not p.exists():
            raise ImportFileError(f"{name}: file not found")
        if p.is_dir():
            raise ImportFileError(f"{name}: is a directory, not a file")
        try:
            size = p.stat().st_size
            if size > MAX_IMPORT_BYTES:
                raise ImportFileError(f"{name}: file is too large ({size / 1e6:.0f} MB; the limit is "
                                      f"{MAX_IMPORT_BYTES // 1024 // 1024} MB)")
            with open(p, "rb") as fh:          # bounded: a device or a growing file cannot exhaust memory
                data = fh.read(MAX_IMPORT_BYTES + 1)
        except OSError as exc:
            raise ImportFileError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFileError(f"{name}: file is too large ({len(data) / 1e6:.0f} MB; the limit is "
                              f"{MAX_IMPORT_BYTES // 1024 // 1024} MB)")
    if not data.strip():
        raise ImportFileError(f"{name}: file is empty")
    return data, name


def _text(data: bytes, name: str) -> str:
    if b"\x00" in data[:65536]:
        raise ImportFileError(f"{name}: looks like a binary file, not CSV/JSONL text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{name}: not UTF-8 text (invalid byte at offset {exc.start})") from None


def _frame_from_bytes(data: bytes, name: str) -> pd.DataFrame:
    suffix = PurePosixPath(name).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None:
        if data[:4] == b"PAR1":
            fmt = "parquet"
        else:
            raise ImportFileError(f"{name}: unsupported file type {suffix or '(none)'}; "
                                  "expected .csv, .parquet or .jsonl")
    if fmt == "parquet":
        if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
            raise ImportFileError(f"{name}: not a Parquet file (missing PAR1 magic bytes)")
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(io.BytesIO(data))
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise ImportFileError(f"{name}: unreadable Parquet file ({str(exc).splitlines()[0][:200]})") from None
        df = table.to_pandas()
        df = df.astype(object).where(df.notna(), None)
        return df
    text = _text(data, name)
    if fmt == "jsonl":
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise ImportFileError(f"{name}: line {n} is not valid JSON") from None
            if not isinstance(row, dict):
                raise ImportFileError(f"{name}: line {n} is not a JSON object")
            rows.append(row)
            if len(rows) > MAX_ROWS:
                raise ImportFileError(f"{name}: more than {MAX_ROWS} rows")
        if not rows:
            raise ImportFileError(f"{name}: file holds no rows")
        df = pd.DataFrame(rows)
        return df.astype(object).where(df.notna(), None)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False,
                         on_bad_lines="error", engine="python")
    except pd.errors.EmptyDataError:
        raise ImportFileError(f"{name}: file holds no CSV header") from None
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        raise ImportFileError(f"{name}: not a readable CSV file ({str(exc).splitlines()[0][:200]})") from None
    if len(df) > MAX_ROWS:
        raise ImportFileError(f"{name}: more than {MAX_ROWS} rows")
    return df.astype(object).where(df != "", None)


def _check_formulas(df: pd.DataFrame, name: str) -> None:
    for col in df.columns:
        if _FORMULA.match(str(col)):
            raise ImportFileError(f"{name}: column name {str(col)[:40]!r} looks like a spreadsheet formula; refused")
        for pos, value in enumerate(df[col].tolist()):
            if isinstance(value, str) and _FORMULA.match(value):
                raise ImportFileError(
                    f"{name}: row {pos + 1}, column {col!r} holds a spreadsheet formula ({value[:30]!r}…); "
                    "formulas are never interpreted — refusing the file")


def _literal_set(text: Any, name: str, row: int, col: str) -> list | None:
    """A set literal like ``{1, 2}`` / ``{'a', 'b'}`` / ``set()`` → sorted list; ``{-1}`` → None (did not follow)."""
    if text is None:
        raise ImportFileError(f"{name}: row {row}, column {col!r} is empty; expected a set such as {{1, 2}}")
    if isinstance(text, (list, tuple, set, frozenset)):
        value = text
    else:
        s = str(text).strip()
        if len(s) > MAX_LITERAL_CHARS:
            raise ImportFileError(f"{name}: row {row}, column {col!r} is longer than {MAX_LITERAL_CHARS} characters")
        if s in ("set()", "{}", "frozenset()", "[]", "()"):
            return []
        if s == "-1":
            return None
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise ImportFileError(f"{name}: row {row}, column {col!r} is not a set literal: {s[:40]!r}") from None
    if isinstance(value, dict) and not value:
        return []
    if not isinstance(value, (set, frozenset, list, tuple)):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is a {type(value).__name__}, expected a set")
    members = []
    for m in value:
        if isinstance(m, bool) or not isinstance(m, (int, str)):
            raise ImportFileError(f"{name}: row {row}, column {col!r} has a member of type {type(m).__name__}; "
                                  "only numbers and words are allowed")
        members.append(m.strip().lower() if isinstance(m, str) else m)
    if len(members) == 1 and members[0] == -1:
        return None
    return sorted(set(members), key=lambda m: (isinstance(m, str), m))


def _bool(value, name: str, row: int, col: str) -> bool | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    s = str(value).strip().lower()
    if s in ("true", "1", "yes", "t"):
        return True
    if s in ("false", "0", "no", "f"):
        return False
    raise ImportFileError(f"{name}: row {row}, column {col!r} is {str(value)[:30]!r}; expected true or false")


def _number(value, name: str, row: int, col: str, integer: bool):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is a boolean; expected a number")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is {str(value)[:30]!r}; expected a number") from None
    if not math.isfinite(f):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is not a finite number")
    if integer:
        if not f.is_integer():
            raise ImportFileError(f"{name}: row {row}, column {col!r} is {value!r}; expected a whole number")
        return int(f)
    return f


def reference_path_meta(filename: str) -> dict:
    """Hyperparameters from the reference's naming: ``<members>/<operation>/<approach>/<phrasing>_K-.._S-...csv``."""
    parts = PurePosixPath(str(filename).replace("\\", "/")).parts
    meta: dict[str, Any] = {}
    stem = PurePosixPath(parts[-1]).stem if parts else ""
    for key, value in re.findall(r"(?:^|_)(K|N|MA|MB|M|L|O|Decile|S)-([A-Za-z0-9.]+)", stem):
        meta[key] = None if value == "None" else value
    for phrasing in _REFERENCE_PHRASINGS:
        if stem.startswith(phrasing):
            meta["phrasing"] = phrasing
    if len(parts) >= 4:
        members, operation, approach = parts[-4], parts[-3], parts[-2]
        m = _MEMBER_FOLDERS.get(members.lower())
        if m is not None:
            meta["members"] = m
            meta["members_folder"] = members
            if "noswap" in "/".join(parts).lower():
                meta["condition"] = "not_swapped"
            if operation.lower() in _OPERATIONS:
                meta["operation"] = _OPERATIONS[operation.lower()]
            meta["approach"] = approach
    return meta


def _int_or_none(v) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _float_or_none(v) -> float | None:
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _from_reference(df: pd.DataFrame, name: str, where: str) -> tuple[pd.DataFrame, dict]:
    from core.tasks.base import stable_id
    from core.tasks.setops.scoring import reference_result, set_metrics, strict_from_reference

    meta = reference_path_meta(where)
    rows = []
    for pos, rec in enumerate(df.to_dict("records")):
        r = pos + 1
        op_raw = str(rec.get("op_name") or "").strip().lower()
        operation = _OPERATIONS.get(op_raw)
        if operation is None:
            raise ImportFileError(f"{name}: row {r}, column 'op_name' is {op_raw[:30]!r}; expected union, "
                                  "intersection, difference or symmetric_difference")
        set_a = _literal_set(rec.get("set_A"), name, r, "set_A")
        set_b = _literal_set(rec.get("set_B"), name, r, "set_B")
        truth = _literal_set(rec.get("ground_truth"), name, r, "ground_truth")
        if set_a is None or set_b is None or truth is None:
            raise ImportFileError(f"{name}: row {r} has {{-1}} in set_A, set_B or ground_truth")
        answer = _literal_set(rec.get("result_obj"), name, r, "result_obj")
        llm_vs_gt = _bool(rec.get("llm_vs_gt"), name, r, "llm_vs_gt")
        members = meta.get("members") or ("numbers" if all(isinstance(m, int) for m in set_a + set_b) else "words")
        metrics = set_metrics(truth, answer, set_a, set_b)
        # strict = the reference's own parse and verdict; its made-up count compares with A and B as written
        strict = strict_from_reference(rec.get("result_obj"), llm_vs_gt if llm_vs_gt is not None else
                                       metrics["correct"],
                                       reference_result(rec.get("set_A")) or set_a,
                                       reference_result(rec.get("set_B")) or set_b)
        factors = {
            "operation": operation, "members": members,
            "size_a": _int_or_none(meta.get("MA") or meta.get("M")) or len(set_a),
            "size_b": _int_or_none(meta.get("MB") or meta.get("M")) or len(set_b),
            "length": _int_or_none(meta.get("L")), "decile": _int_or_none(meta.get("Decile")),
            "overlap": _float_or_none(meta.get("O")), "condition": meta.get("condition"),
            "phrasing": _REFERENCE_PHRASINGS.get(meta.get("phrasing"), meta.get("phrasing")),
            "approach": _REFERENCE_APPROACHES.get(meta.get("approach"), meta.get("approach")),
            "shots": _int_or_none(meta.get("K")) or 0,
        }
        extra = {k: rec.get(k) for k in REFERENCE_OPTIONAL if rec.get(k) is not None}
        extra.update({f"reference_{k}": meta[k] for k in ("phrasing", "approach")
                      if meta.get(k) is not None and meta[k] != factors[k]})
        extra["llm_vs_gt"] = llm_vs_gt
        if meta.get("N") is not None:
            extra["number_max"] = meta.get("N")
        rows.append({
            **factors,
            "idx": pos, "sample": pos, "seed": _int_or_none(meta.get("S")),
            "config_id": stable_id({"source": "setlexsem-reference", **factors, "N": meta.get("N")}),
            "prompt": rec.get("prompt") or "", "truth": truth, "set_a": set_a, "set_b": set_b,
            "response": None if rec.get("result_obj") is None else str(rec.get("result_obj")),
            "parsed": json.dumps(answer, ensure_ascii=False) if answer is not None else None,
            "followed": answer is not None,
            **metrics, "correct": bool(metrics["correct"]), **strict,
            "tokens_in": _int_or_none(rec.get("context_length_in")),
            "tokens_out": _int_or_none(rec.get("context_length_out")),
            "extra_json": store.canonical_json(extra),
        })
    out = pd.DataFrame(rows)
    return out, {"kind": "reference", "hyperparameters": meta}


def _json_list(value, name: str, row: int, col: str):
    if value is None or isinstance(value, (list, tuple, dict, bool)):
        return value
    try:
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise ImportFileError(f"{name}: row {row}, column {col!r} is not JSON: {str(value)[:30]!r}") from None


def _from_studio(df: pd.DataFrame, name: str) -> tuple[pd.DataFrame, dict]:
    rows = []
    seen = set()
    for pos, rec in enumerate(df.to_dict("records")):
        r = pos + 1
        row = {}
        for col, value in rec.items():
            if col in _INT_COLS:
                value = _number(value, name, r, col, integer=True)
            elif col in _FLOAT_COLS:
                value = _number(value, name, r, col, integer=False)
            elif col in _BOOL_COLS:
                value = _bool(value, name, r, col)
            elif col in ("truth", "set_a", "set_b", "member_hypernyms"):
                value = _json_list(value, name, r, col)
            elif col in ("parsed", "parsed_strict") and value is not None and not isinstance(value, str):  # JSONL
                value = json.dumps(value, ensure_ascii=False)
            elif value is not None and not isinstance(value, str):
                value = value if isinstance(value, (int, float)) else str(value)
            row[col] = value
        if row.get("idx") is None:
            raise ImportFileError(f"{name}: row {r}, column 'idx' is empty")
        if row["idx"] in seen:
            raise ImportFileError(f"{name}: row {r} repeats idx {row['idx']}")
        seen.add(row["idx"])
        if not isinstance(row.get("prompt"), str):
            raise ImportFileError(f"{name}: row {r}, column 'prompt' is empty")
        _fill_strict(row)
        rows.append(row)
    out = pd.DataFrame(rows)
    models = sorted({str(m) for m in out.get("model", pd.Series(dtype=object)).dropna()})
    tasks = sorted({str(t) for t in out.get("task", pd.Series(dtype=object)).dropna()})
    return out, {"kind": "studio", "models": models, "tasks": tasks}


def read_results_file(path_or_bytes, filename: str | None = None) -> tuple[pd.DataFrame, dict]:
    """Read an uploaded/imported result file into our export layout. Raises ImportFileError with a clear message."""
    data, name = _load_bytes(path_or_bytes, filename)
    # hyperparameters live in the folder names too: use the full path when we have one
    where = filename or (str(path_or_bytes) if not isinstance(path_or_bytes, (bytes, bytearray, memoryview))
                         else name)
    df = _frame_from_bytes(data, name)
    if df.shape[1] == 0 or len(df) == 0:
        raise ImportFileError(f"{name}: file holds no rows")
    df.columns = [str(c).strip() for c in df.columns]
    _check_formulas(df, name)
    cols = set(df.columns)
    if set(REFERENCE_COLUMNS) <= cols:
        out, meta = _from_reference(df, name, where)
    elif set(STUDIO_REQUIRED) <= cols:
        out, meta = _from_studio(df, name)
    else:
        missing_ref = [c for c in REFERENCE_COLUMNS if c not in cols]
        missing_ours = [c for c in STUDIO_REQUIRED if c not in cols]
        shown = ", ".join(sorted(cols)[:8]) + (" …" if len(cols) > 8 else "")
        raise ImportFileError(
            f"{name}: unrecognised columns ({shown}); a SetLexSem reference CSV needs "
            f"{', '.join(missing_ref)}; a SetLexSem Studio export needs {', '.join(missing_ours)}")
    for col in EXPORT_COLUMNS:
        if col not in out.columns:
            out[col] = None
    extra_cols = [c for c in out.columns if c not in EXPORT_COLUMNS]
    out = out[EXPORT_COLUMNS + extra_cols]
    meta.update({"filename": name, "rows": int(len(out)), "sha256": hashlib.sha256(data).hexdigest()})
    return out, meta


# ------------------------------------------------------------------------------------------------------------ import


def content_digest(df: pd.DataFrame) -> str:
    """A fingerprint of a result file's rows that does not depend on the file format: the same results saved as
    CSV, Parquet or JSONL (or re-saved by a spreadsheet) give the same digest. Over what identifies an answer: item
    index, prompt, raw response, correctness and model."""
    def cell(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        return str(v)

    cols = [c for c in ("idx", "prompt", "response", "correct", "model") if c in df.columns]
    rows = sorted(([cell(r[c]) if c != "idx" else int(r[c]) for c in cols] for r in df.to_dict("records")),
                  key=lambda r: r[0])
    return hashlib.sha256(json.dumps([cols, rows], ensure_ascii=False).encode("utf-8")).hexdigest()


def _existing_import(con, run_id: str, meta: dict) -> str | None:
    """The run already holding these results: same run id (same rows), same rows in another format, or the same
    bytes imported before runs were keyed by their rows."""
    row = con.execute(
        "SELECT run_id FROM runs WHERE run_id = ? OR (coalesce(source, '') LIKE 'import%' AND ("
        "json_extract_string(run_json, '$.meta.content_sha256') = ? OR json_extract_string(run_json, '$.meta.sha256') "
        "= ?)) ORDER BY created_at LIMIT 1", [run_id, meta["content_sha256"], meta["sha256"]]).fetchall()
    return row[0][0] if row else None


def import_results(db_path, path_or_bytes, filename: str | None = None, name: str | None = None
                   ) -> tuple[str, int]:
    """Store a result file as a run (source 'import:<file name>'). Returns (run id, rows stored). The same results
    imported again — the same bytes, or the same rows in another format (CSV / Parquet / JSONL) — are not stored
    twice: the run that holds them is returned with 0 rows (``find_import`` tells a page which run that is)."""
    df, meta = read_results_file(path_or_bytes, filename)
    meta["content_sha256"] = content_digest(df)
    run_id = f"import-{meta['content_sha256'][:12]}"
    task = "setops" if meta["kind"] == "reference" else ((meta.get("tasks") or ["setops"])[0])
    model = "reference-csv" if meta["kind"] == "reference" else ((meta.get("models") or ["unknown"])[0])
    records = df.to_dict("records")
    items, calls, results = [], [], []
    at = store.now_utc()
    for rec in records:
        rec = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        idx = int(rec["idx"])
        item = {k: rec.get(k) for k in ["idx", "config_id", "sample", "seed", "prompt", "truth"] + FACTOR_COLUMNS}
        if rec.get("extra_json"):
            try:
                extra = json.loads(rec["extra_json"]) if isinstance(rec["extra_json"], str) else rec["extra_json"]
                if isinstance(extra, dict):
                    item.update({k: v for k, v in extra.items() if k not in item})
            except ValueError:
                pass
        items.append(item)
        key = f"import:{run_id}:{idx}"
        answered = rec.get("error") is None and (rec.get("response") is not None or rec.get("correct") is not None)
        if rec.get("response") is not None:
            calls.append({"cache_key": key, "model": model, "response": rec.get("response"),
                          "latency_ms": rec.get("latency_ms"), "tokens_in": rec.get("tokens_in"),
                          "tokens_out": rec.get("tokens_out"), "cost_usd": rec.get("cost_usd"), "error": None,
                          "attempts": rec.get("attempts"), "at": at, "draw": 0})
        if answered or rec.get("error") is not None:
            results.append({k: rec.get(k) for k in ("parsed", "followed", "correct", "jaccard", "precision", "recall",
                                                     "truth_len", "answer_len", "made_up", "empty_truth", "pred",
                                                     "correct_gqg", "error", "attempts", *STRICT_COLUMNS)}
                           | {"run_id": run_id, "idx": idx, "cache_key": key if rec.get("response") is not None
                              else None, "cached": False, "at": at})
    config = {"task": task, "imported_from": meta["filename"], "kind": meta["kind"],
              "hyperparameters": meta.get("hyperparameters")}
    with store.connect(db_path) as con, store.transaction(con):
        existing = _existing_import(con, run_id, meta)
        if existing is not None:
            return existing, 0
        con.execute(
            """INSERT INTO runs (run_id, run_key, draw, created_at, updated_at, finished_at, task, name, config_json,
               run_json, model, base_url, params_json, status, n_items, n_done, n_failed, n_cached, cost_usd, source,
               schema_version) VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 'imported', ?, 0, 0, 0, 0, ?, ?)""",
            [run_id, run_id, at, at, at, task, name or f"{meta['filename']} ({meta['kind']})",
             store.canonical_json(config), store.canonical_json({**config, "meta": {k: v for k, v in meta.items()
                                                                                     if k != "hyperparameters"}}),
             model, len(items), f"import:{meta['filename']}"[:300], store.SCHEMA_VERSION])
        store.insert_items(con, run_id, items)
        store.write_calls_results(con, calls, results)
        store.refresh_run_counts(con, run_id)
    return run_id, len(items)

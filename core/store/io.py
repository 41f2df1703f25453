"""Import result files (our own exports, and result CSVs of the SetLexSem reference code); the layout of our exports.

    read_results_file(path_or_bytes, filename) -> (DataFrame, meta)   # a file in our export layout, in memory
    import_results(db_path, path_or_bytes, filename=None, name=None) -> (run_id, n_rows)   # streamed into the DB
    EXPORT_COLUMNS, JSON_TEXT_COLUMNS, FORMATS                          # what core/store/exports.py writes
(a reply's reasoning travels apart from its answer: REASONING_EXPORT; answer tokens = tokens_out − reasoning tokens)

Nothing read is ever evaluated: CSV cells are text; set literals of the reference layout are parsed with
``ast.literal_eval`` on bounded input (never eval), and only sets/lists/tuples of ints and strings are accepted;
integers must fit a 64-bit column. In CSV files (the spreadsheet format), cells a spreadsheet would run
(``=cmd|' /C calc'!A0``, ``-2+3+cmd|' /C calc'!A0``, ``@SUM(...)``; core/files.py) are refused — except cells our CSV
export neutralised (``'=…``), which read back as the original text; JSONL and Parquet hold data as written (a CSV
export neutralises it again). Whatever is wrong raises ImportFileError with one line that says what (and where). ``meta`` says
which layout was found and what the reference file/folder names told us (members, operation, approach, phrasing, K,
N, MA, MB, L, S …).

Memory stays bounded by a chunk of rows, whatever the file's size: the file is read as a stream (CSV and JSONL line
by line, Parquet by row group), each chunk is checked, converted and staged in Parquet files beside the database,
and the staged rows enter DuckDB in ONE short transaction at the end — an unreadable file leaves the DB unchanged and
other processes wait for milliseconds, not for the parse. Imported responses get cache keys ``import:<run_id>:<idx>``
so they never answer a real model call from the cache.
"""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

import core.store.aggregates as aggregates
from core import store
from core.errors import ImportFileError
from core.store import rescore
from core.store.backfill import fill_strict as _fill_strict
from core.store.digest import row_digest as _row_digest, stored_run_digest as _stored_run_digest
from core.store.faults import fault
from core.store.readers import CHUNK_ROWS, FORMATS, MAX_IMPORT_BYTES, MAX_ROWS, Source, raw_chunks  # noqa: F401
from core.store.schema import FACTOR_COLUMNS
from core.tasks.setops import aliases
from core.tasks.setops.operations import truth as set_truth

MAX_LITERAL_CHARS = 100_000
INT64 = (-(2 ** 63), 2 ** 63 - 1)
STORE_BATCH_ROWS = 20_000      # imported items per DuckDB transaction
STORE_MEMORY_LIMIT = "256MB"   # DuckDB's memory while it stores them

REASONING_EXPORT = ["reasoning_text", "tokens_reasoning", "tokens_answer", "cost_reasoning_usd", "reasoning_sent"]
EXPORT_COLUMNS = (
    ["run_id", "idx", "config_id", "sample", "seed"] + FACTOR_COLUMNS
    + ["prompt", "truth", "response", "parsed", "followed", "correct", "parsed_strict", "followed_strict",
       "correct_strict", "answer_len_strict", "made_up_strict", "jaccard", "precision", "recall", "truth_len",
       "answer_len", "made_up", "empty_truth", "pred", "correct_gqg", "latency_ms", "tokens_in", "tokens_out",
       "cost_usd", "error", "cached", "attempts", "model", "task", "name", "extra_json", *REASONING_EXPORT]
)
STRICT_COLUMNS = ("parsed_strict", "followed_strict", "correct_strict", "answer_len_strict", "made_up_strict")
# stored as JSON text; CSV and Parquet keep the text, JSONL nests the value (like `generate`'s JSONL does)
JSON_TEXT_COLUMNS = ("member_hypernyms", "set_a", "set_b", "truth", "parsed", "parsed_strict")
REFERENCE_COLUMNS = ("op_name", "prompt", "ground_truth", "result_obj", "llm_vs_gt", "set_A", "set_B")
REFERENCE_OPTIONAL = ("context_length_in", "context_length_out", "log_context")
STUDIO_REQUIRED = ("idx", "prompt", "correct")

_INT_COLS = {"idx", "sample", "seed", "size_a", "size_b", "length", "decile", "swap_count", "shots", "total",
             "count_large", "count_small", "count_asked", "truth_len", "answer_len", "made_up", "tokens_in",
             "tokens_out", "attempts", "answer_len_strict", "made_up_strict", "tokens_reasoning", "tokens_answer"}
_FLOAT_COLS = {"overlap", "jaccard", "precision", "recall", "latency_ms", "cost_usd", "cost_reasoning_usd"}
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


# ------------------------------------------------------------------------------------------------------------ reading


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
    if integer and (isinstance(value, int) or (isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value))):
        if isinstance(value, str) and len(value.strip().lstrip("+-").lstrip("0")) > 19:   # past int64, and past
            raise ImportFileError(f"{name}: row {row}, column {col!r} is a {len(value.strip())}-digit number, "
                                  "outside the range of a 64-bit whole number")          # what int() converts
        v = int(value)   # exact (a float would round 2**63 + 1)
        if not INT64[0] <= v <= INT64[1]:
            raise ImportFileError(f"{name}: row {row}, column {col!r} is {str(value).strip()[:30]}, outside the "
                                  "range of a 64-bit whole number")
        return v
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is {str(value)[:30]!r}; expected a number") from None
    if not math.isfinite(f):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is not a finite number")
    if integer:
        if not f.is_integer():
            raise ImportFileError(f"{name}: row {row}, column {col!r} is {value!r}; expected a whole number")
        if not INT64[0] <= f < 2.0 ** 63:
            raise ImportFileError(f"{name}: row {row}, column {col!r} is {str(value)[:30]}, outside the range of a "
                                  "64-bit whole number")
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
        i = int(v) if v is not None else None
    except (TypeError, ValueError):
        return None
    return i if i is None or INT64[0] <= i <= INT64[1] else None


def _float_or_none(v) -> float | None:
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _reference_row(rec: dict, pos: int, name: str, meta: dict) -> dict:
    from core.tasks.base import stable_id
    from core.tasks.setops.scoring import reference_result, set_metrics, strict_from_reference

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
    file_truth = truth
    try:    # the truth is the operation's result on the operands, whatever the file's ground_truth says
        truth = set_truth(operation, set_a, set_b)
    except TypeError:   # members of mixed types: no order to compute it in; the file's is all there is
        pass
    metrics = set_metrics(truth, answer, set_a, set_b)
    # strict = the reference's own reading of result_obj, judged by us against the recomputed truth (its llm_vs_gt
    # is kept as the file's claim); its made-up count compares with A and B as written
    ref_a, ref_b = reference_result(rec.get("set_A")), reference_result(rec.get("set_B"))
    read = reference_result(rec.get("result_obj"))
    ref_truth = frozenset(set_truth(operation, sorted(ref_a, key=str), sorted(ref_b, key=str))) \
        if ref_a is not None and ref_b is not None and _one_type(ref_a | ref_b) else frozenset(truth)
    strict = strict_from_reference(rec.get("result_obj"), read is not None and read == ref_truth,
                                   ref_a or set_a, ref_b or set_b)
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
    return {
        **factors,
        "idx": pos, "sample": pos, "seed": _int_or_none(meta.get("S")),
        "config_id": stable_id({"source": "setlexsem-reference", **factors, "N": meta.get("N")}),
        "prompt": rec.get("prompt") or "", "truth": truth, "set_a": set_a, "set_b": set_b,
        "response": None if rec.get("result_obj") is None else str(rec.get("result_obj")),
        "parsed": json.dumps(answer, ensure_ascii=False) if answer is not None else None,
        "followed": answer is not None,
        **metrics, "correct": bool(metrics["correct"]), **strict,
        "claimed_correct": llm_vs_gt, "claimed_correct_strict": llm_vs_gt, "_file_truth": file_truth,
        "tokens_in": _int_or_none(rec.get("context_length_in")),
        "tokens_out": _int_or_none(rec.get("context_length_out")),
        "extra_json": store.canonical_json(extra),
    }


def _one_type(members) -> bool:
    return all(isinstance(m, int) for m in members) or all(isinstance(m, str) for m in members)


def _json_list(value, name: str, row: int, col: str):
    if value is None or isinstance(value, (list, tuple, dict, bool)):
        return value
    try:
        return json.loads(value) if isinstance(value, str) else value
    except (ValueError, RecursionError) as exc:   # RecursionError: [[[[…]]]] nested past Python's limit
        why = "is nested too deeply" if isinstance(exc, RecursionError) else f"is not JSON: {str(value)[:30]!r}"
        raise ImportFileError(f"{name}: row {row}, column {col!r} {why}") from None


def _studio_row(rec: dict, pos: int, name: str, seen: set) -> dict:
    r = pos + 1
    row = {}
    for col, value in rec.items():
        if isinstance(value, float) and math.isnan(value):
            value = None
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
            value = value if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
            if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
                value = str(value)
        row[col] = value
    if row.get("idx") is None:
        raise ImportFileError(f"{name}: row {r}, column 'idx' is empty")
    if row["idx"] in seen:
        raise ImportFileError(f"{name}: row {r} repeats idx {row['idx']}")
    seen.add(row["idx"])
    if not isinstance(row.get("prompt"), str):
        raise ImportFileError(f"{name}: row {r}, column 'prompt' is empty")
    _fill_strict(row)
    return row


def _layout(columns: set[str], name: str) -> str:
    if set(REFERENCE_COLUMNS) <= columns:
        return "reference"
    if set(STUDIO_REQUIRED) <= columns:
        return "studio"
    missing_ref = [c for c in REFERENCE_COLUMNS if c not in columns]
    missing_ours = [c for c in STUDIO_REQUIRED if c not in columns]
    shown = ", ".join(sorted(columns)[:8]) + (" …" if len(columns) > 8 else "")
    raise ImportFileError(
        f"{name}: unrecognised columns ({shown}); a SetLexSem reference CSV needs "
        f"{', '.join(missing_ref)}; a SetLexSem Studio export needs {', '.join(missing_ours)}")


def _rows(src: Source) -> tuple[Iterator[list[dict]], dict]:
    """Chunks of rows in our export layout, and the meta dict (filled in as the chunks are read: kind,
    hyperparameters, models, tasks, rows)."""
    meta: dict[str, Any] = {"filename": src.name, "rows": 0}
    chunks = raw_chunks(src)

    def gen() -> Iterator[list[dict]]:
        tally = rescore.Tally()
        source_runs: set = set()
        seen: set = set()
        digest = 0
        kind = None
        models, tasks, names = set(), set(), set()
        for chunk in chunks:
            if kind is None:
                kind = _layout({c for row in chunk for c in row}, src.name)
                meta["kind"] = kind
                if kind == "reference":
                    meta["hyperparameters"] = reference_path_meta(src.where)
            start = meta["rows"]
            if kind == "reference":
                out = [_reference_row(rec, start + i, src.name, meta["hyperparameters"]) for i, rec in enumerate(chunk)]
                for r in out:
                    tally.add(r, r["claimed_correct"], r.pop("_file_truth"))
            else:
                out = [_studio_row(rec, start + i, src.name, seen) for i, rec in enumerate(chunk)]
                for r in out:
                    rescore.row(r, tally)
                source_runs.update(str(r["run_id"]) for r in out if r.get("run_id") is not None)
                meta["source_runs"] = sorted(source_runs)[:2]
                models.update(str(r["model"]) for r in out if r.get("model") is not None)
                tasks.update(str(r["task"]) for r in out if r.get("task") is not None)
                meta["models"], meta["tasks"] = sorted(models), sorted(tasks)
                if len(names) < 2:   # the run's own name (our export's `name` column), when the file has one
                    names.update(str(r["name"]).strip()[:200] for r in out
                                 if isinstance(r.get("name"), str) and r["name"].strip())
                meta["names"] = sorted(names)[:2]
            meta["rescored"] = tally.to_dict()
            meta["rows"] += len(out)
            digest = (digest + sum(_row_digest(r) for r in out)) % (1 << 256)   # order-independent
            yield out
        if kind is None:
            raise ImportFileError(f"{src.name}: file holds no rows")
        meta["sha256"] = src.sha256
        meta["content_sha256"] = f"{digest:064x}"

    return gen(), meta


def read_results_file(path_or_bytes, filename: str | None = None) -> tuple[pd.DataFrame, dict]:
    """Read a result file into our export layout, in memory (tests, small files). Raises ImportFileError."""
    src = Source(path_or_bytes, filename)
    try:
        chunks, meta = _rows(src)
        rows = [row for chunk in chunks for row in chunk]
    finally:
        src.close()
    out = pd.DataFrame(rows)
    for col in EXPORT_COLUMNS:
        if col not in out.columns:
            out[col] = None
    extra_cols = [c for c in out.columns if c not in EXPORT_COLUMNS]
    return out[EXPORT_COLUMNS + extra_cols], meta


# ------------------------------------------------------------------------------------------------------------ import


_RESULT_KEYS = ("parsed", "followed", "correct", "jaccard", "precision", "recall", "truth_len", "answer_len",
                "made_up", "empty_truth", "pred", "correct_gqg", "error", "attempts", *STRICT_COLUMNS,
                "claimed_correct", "claimed_correct_strict")


def _split(rows: list[dict], run_id: str, at, kind: str) -> tuple[list[dict], list[dict], list[dict]]:
    """Rows of the export layout → (items, calls, results) rows of the store."""
    items, calls, results = [], [], []
    for rec in rows:
        idx = int(rec["idx"])
        item = {k: rec.get(k) for k in ["idx", "config_id", "sample", "seed", "prompt", "truth"] + FACTOR_COLUMNS}
        if rec.get("extra_json"):
            try:
                extra = json.loads(rec["extra_json"]) if isinstance(rec["extra_json"], str) else rec["extra_json"]
                if isinstance(extra, dict):
                    item.update({k: v for k, v in extra.items() if k not in item})
            except (ValueError, RecursionError):
                pass
        items.append(item)
        key = f"import:{run_id}:{idx}"
        answered = rec.get("error") is None and (rec.get("response") is not None or rec.get("correct") is not None)
        if rec.get("response") is not None:
            model = "reference-csv" if kind == "reference" else str(rec.get("model") or "unknown")
            calls.append({"cache_key": key, "model": model, "response": rec.get("response"),
                          "latency_ms": rec.get("latency_ms"), "tokens_in": rec.get("tokens_in"),
                          "tokens_out": rec.get("tokens_out"), "cost_usd": rec.get("cost_usd"), "error": None,
                          "attempts": rec.get("attempts"), "at": at, "draw": 0, "reasoning": rec.get("reasoning_text"),
                          **{k: rec.get(k) for k in ("tokens_reasoning", "cost_reasoning_usd", "reasoning_sent")}})
        if answered or rec.get("error") is not None:
            results.append({k: rec.get(k) for k in _RESULT_KEYS}
                           | {"run_id": run_id, "idx": idx, "cache_key": key if rec.get("response") is not None
                              else None, "cached": False, "at": at})
    return items, calls, results


class _Staging:
    """Parquet files in a temporary folder beside the database, appended chunk by chunk, in parts of about
    STORE_BATCH_ROWS items (each part enters DuckDB in its own short transaction)."""

    def __init__(self, db_path, run_id: str):
        from core.store.leftovers import staging_prefix

        self.dir = Path(tempfile.mkdtemp(prefix=staging_prefix(), dir=store.resolve_db_path(db_path).parent))
        (self.dir / "run_id").write_text(run_id)   # a killed import's rows are removed with its folder
        self.writers: dict[str, Any] = {}
        self.parts: list[dict[str, str]] = [{}]
        self.rows_in_part = 0

    def append(self, tables: dict) -> None:
        import pyarrow.parquet as pq

        for table_name, table in tables.items():
            if table.num_rows == 0:
                continue
            writer = self.writers.get(table_name)
            if writer is None:
                path = self.dir / f"{table_name}-{len(self.parts):05d}.parquet"
                writer = self.writers[table_name] = pq.ParquetWriter(path, table.schema)
                self.parts[-1][table_name] = str(path)
            writer.write_table(table)
        self.rows_in_part += tables["items"].num_rows
        if self.rows_in_part >= STORE_BATCH_ROWS:
            self._close_part()

    def _close_part(self) -> None:
        for writer in self.writers.values():
            writer.close()
        self.writers = {}
        self.parts.append({})
        self.rows_in_part = 0

    def finish(self) -> list[dict[str, str]]:
        self._close_part()
        return [p for p in self.parts if p]

    def remove(self) -> None:
        for writer in self.writers.values():
            try:
                writer.close()
            except Exception:   # closing a half-written part we are about to delete
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def import_results(db_path, path_or_bytes, filename: str | None = None, name: str | None = None
                   ) -> tuple[str, int]:
    """Store a result file as a run (source 'import:<file name>'), streamed (see the module docstring).
    Re-importing the same bytes returns its run with 0 new rows."""
    from core.store.rows import item_table, redact_rows, rows_table
    from core.store.schema import CALL_COLUMNS, RESULT_COLUMNS

    src = Source(path_or_bytes, filename)
    try:
        run_id = f"import-{src.sha256[:12]}"
        with store.connect(db_path) as con:
            if con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
                return run_id, 0
        chunks, meta = _rows(src)
        staging = _Staging(db_path, run_id)
        try:
            at = store.now_utc()
            n_items = 0
            for rows in chunks:
                items, calls, results = _split(rows, run_id, at, meta["kind"])
                staging.append({"items": item_table(run_id, items),
                                "calls": rows_table(redact_rows(calls), CALL_COLUMNS),
                                "results": rows_table(redact_rows(results), RESULT_COLUMNS)})
                n_items += len(items)
            stored_as = _store_import(db_path, run_id, meta, name, n_items, at, staging.finish())
            if stored_as != run_id:   # the same results in another format: the run holding them
                return stored_as, 0
        finally:
            staging.remove()
    finally:
        src.close()
    return run_id, n_items


def _existing_import(con, run_id: str, meta: dict) -> str | None:
    """The run already holding these results: same run id (same bytes), the same rows in another format
    (CSV / Parquet / JSONL, detected by their content digest), or — for our own export of one run — that run
    itself, when its stored answers digest the same (re-importing an export never makes a second run)."""
    sources = meta.get("source_runs") or []
    if len(sources) == 1 and con.execute("SELECT count(*) FROM runs WHERE run_id = ?", sources).fetchall()[0][0] \
            and _stored_run_digest(con, sources[0]) == meta["content_sha256"]:
        return sources[0]
    row = con.execute(
        "SELECT run_id FROM runs WHERE run_id = ? OR (coalesce(source, '') LIKE 'import%' AND "
        "json_extract_string(run_json, '$.meta.content_sha256') = ?) ORDER BY created_at LIMIT 1",
        [run_id, meta["content_sha256"]]).fetchall()
    return row[0][0] if row else None


def _import_name(meta: dict) -> str:
    """An imported run's name: the file's own run name (its `name` column, when all rows share one), else the file
    name and layout."""
    names = [n for n in meta.get("names") or []
             if not n.startswith(("setops · ", "quantifiers · "))]   # "task · model" is a made-up name, not the user's
    return names[0] if len(names) == 1 and len(meta.get("names") or []) == 1 else \
        f"{meta['filename']} ({meta['kind']})"


def _store_import(db_path, run_id: str, meta: dict, name: str | None, n_items: int, at, parts: list[dict]) -> str:
    """The staged rows, part by part (a transaction each: DuckDB holds a transaction's new rows in memory), then the
    run's record — only that makes the run visible (v_results joins runs). The whole file was read and checked
    before, so nothing here depends on its content; if writing fails, the rows written so far are removed again
    (a kill -9 in between leaves them invisible, and importing the file again completes them)."""
    from core.store.schema import CALL_COLUMNS, ITEM_COLUMNS, RESULT_COLUMNS

    columns = {"items": ITEM_COLUMNS, "calls": CALL_COLUMNS, "results": RESULT_COLUMNS}
    task = "setops" if meta["kind"] == "reference" else ((meta.get("tasks") or ["setops"])[0])
    model = "reference-csv" if meta["kind"] == "reference" else ((meta.get("models") or ["unknown"])[0])
    config = {"task": task, "imported_from": meta["filename"], "kind": meta["kind"],
              "hyperparameters": meta.get("hyperparameters")}
    with store.connect(db_path) as con:
        existing = _existing_import(con, run_id, meta)
    if existing is not None:
        return existing
    try:
        for files in parts:
            with store.connect(db_path) as con:
                # DuckDB keeps what it wrote cached up to its memory limit (80 % of RAM by default): bounded here
                limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
                con.execute(f"SET memory_limit = '{STORE_MEMORY_LIMIT}'")
                try:
                    with store.transaction(con):
                        for table, path in files.items():
                            names = ", ".join(f'"{n}"' for n, _ in columns[table])
                            con.execute(f"INSERT OR IGNORE INTO {table} ({names}) "
                                        f"SELECT {names} FROM read_parquet(?)", [path])
                finally:
                    con.execute("SET memory_limit = ?", [limit])
            fault("import-part-stored")
        with store.connect(db_path) as con, store.transaction(con):
            if con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
                return run_id    # imported by another process meanwhile
            run_name = name or _import_name(meta)
            if not name and run_name in (meta.get("names") or []) and con.execute(
                    "SELECT count(*) FROM runs WHERE name = ?", [run_name]).fetchall()[0][0]:
                run_name = f"{run_name} ({meta['filename']})"   # an edited copy of a stored run: say which file
            con.execute(
                """INSERT INTO runs (run_id, run_key, draw, created_at, updated_at, finished_at, task, name,
                   config_json, run_json, model, base_url, params_json, status, n_items, n_done, n_failed, n_cached,
                   cost_usd, source, schema_version)
                   VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 'imported', ?, 0, 0, 0, 0, ?, ?)""",
                [run_id, run_id, at, at, at, task, run_name,
                 store.canonical_json(config), store.canonical_json({**config, "meta": {
                     k: v for k, v in meta.items() if k != "hyperparameters"}}),
                 model, n_items, f"import:{meta['filename']}"[:300], store.SCHEMA_VERSION])
            store.refresh_run_counts(con, run_id)
            aggregates.refresh_runs(con, [run_id])
    except BaseException:
        try:
            with store.connect(db_path) as con, store.transaction(con):
                if not con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
                    for table in ("items", "results"):
                        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
                    aggregates.drop_runs(con, [run_id])
                    con.execute("DELETE FROM calls WHERE starts_with(cache_key, ?)", [f"import:{run_id}:"])
        except Exception:   # the first error is the one to report
            pass
        raise
    return run_id

"""Import result files (our own exports, and result CSVs of the SetLexSem reference code); the layout of our exports.

    read_results_file(path_or_bytes, filename) -> (DataFrame, meta)   # a file in our export layout, in memory
    import_file(db_path, path_or_bytes, filename=None, name=None) -> [Imported(run_id, n_rows, model)]
    import_results(db_path, path_or_bytes, filename=None, name=None) -> (run_id, n_rows)   # a one-model file
    EXPORT_COLUMNS, JSON_TEXT_COLUMNS, FORMATS                          # what core/store/exports.py writes
(a reply's reasoning travels apart from its answer: REASONING_EXPORT; answer tokens = tokens_out − reasoning tokens)

Nothing read is ever evaluated: CSV cells are text; the reference layout is read by core/tasks/setops/reference_csv.py
(set literals with ``ast.literal_eval`` on bounded input, never eval); integers must fit a 64-bit column. In CSV
files (the spreadsheet format), cells a spreadsheet would run (``=cmd|' /C calc'!A0``, ``@SUM(...)``; core/files.py)
are refused — except cells our CSV export neutralised (``'=…``), which read back as the original text; JSONL and
Parquet hold data as written. Whatever is wrong with the file as a whole raises ImportFileError with one line that
says what (and where); a row that cannot be checked is kept as the file's claim (core/store/rescore.py). ``meta``
says which layout was found and what the reference file/folder names told us.

Provenance: an import is *uploaded* (``runs.source`` = ``import:<file name>``; core/store/provenance.py). Every row
is re-scored or kept as a claim (core/store/rescore.py), and the store is asked what it knows: this model's own
replies to the same prompts (calls made here) and, when the file names a stored run, that run's responses; the
differences are counted in the run's record and summary.

One run per model: a file whose ``model`` column names several models becomes one run for each. A run's id is
``import-`` + a digest of what the file claims — per row the item index, prompt, response, error, model, task,
operation, operands, truth and both claimed verdicts (core/store/digest.py) — so the same claims make the same run
whatever the format (CSV / Parquet / JSONL), the row order, line endings (LF, CRLF, CR), byte-order marks or a
``run_id`` column, while a file that claims other verdicts is another run. The same claims as a run made here (our
own export of it, with or without its ``run_id`` column) are that run. Imports of the same content racing each
other make one run: the id is fixed by the content, and only the first record of it is written.

Memory stays bounded by a chunk of rows, whatever the file's size: the file is read as a stream (CSV and JSONL line
by line, Parquet by row group), each chunk is checked, converted and staged in Parquet files beside the database,
and the staged rows enter DuckDB at the end in short transactions, the run's record last (until then the rows are
invisible) — an unreadable file leaves the DB unchanged. Imported responses get cache keys ``import:<run_id>:<idx>``
so they never answer a real model call from the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

import core.store.aggregates as aggregates
from core import store
from core.errors import ImportFileError
from core.store import digest as digests, rescore
from core.store.faults import fault
from core.store.provenance import made_here_sql
from core.store.readers import CHUNK_ROWS, FORMATS, MAX_IMPORT_BYTES, MAX_ROWS, Source, raw_chunks  # noqa: F401
from core.store.schema import FACTOR_COLUMNS
from core.store.writers import DatabaseReplaced
from core.tasks import INT64
from core.tasks.setops.reference_csv import (
    REFERENCE_COLUMNS,
    claim_digest_cells,
    read_bool,
    reference_path_meta,
    reference_row,
)
from core.tasks.setops.scoring import STRICT_COLUMNS

log = logging.getLogger(__name__)

STORE_BATCH_ROWS = 20_000      # imported items per DuckDB transaction
STORE_MEMORY_LIMIT = "256MB"   # DuckDB's memory while it stores them
REFERENCE_MODEL = "reference-csv"
MAX_MODELS = 50                # runs one file may become (one per model)

REASONING_EXPORT = ["reasoning_text", "tokens_reasoning", "tokens_answer", "cost_reasoning_usd", "reasoning_sent"]
EXPORT_COLUMNS = (
    ["run_id", "idx", "config_id", "sample", "seed"] + FACTOR_COLUMNS
    + ["prompt", "truth", "response", "parsed", "followed", "correct", "parsed_strict", "followed_strict",
       "correct_strict", "answer_len_strict", "made_up_strict", "jaccard", "precision", "recall", "truth_len",
       "answer_len", "made_up", "empty_truth", "pred", "correct_gqg", "latency_ms", "tokens_in", "tokens_out",
       "cost_usd", "error", "cached", "attempts", "model", "task", "name", "provenance", "extra_json",
       *REASONING_EXPORT]
)
# stored as JSON text; CSV and Parquet keep the text, JSONL nests the value (like `generate`'s JSONL does)
JSON_TEXT_COLUMNS = ("member_hypernyms", "set_a", "set_b", "truth", "parsed", "parsed_strict")
STUDIO_REQUIRED = ("idx", "prompt", "correct")
_NOT_CLAIMS = ("provenance", "claimed_correct", "claimed_correct_strict")   # what a file cannot set about itself

_INT_COLS = {"idx", "sample", "seed", "size_a", "size_b", "length", "decile", "swap_count", "shots", "total",
             "count_large", "count_small", "count_asked", "truth_len", "answer_len", "made_up", "tokens_in",
             "tokens_out", "attempts", "answer_len_strict", "made_up_strict", "tokens_reasoning", "tokens_answer"}
_FLOAT_COLS = {"overlap", "jaccard", "precision", "recall", "latency_ms", "cost_usd", "cost_reasoning_usd"}
_BOOL_COLS = {"followed", "correct", "empty_truth", "correct_gqg", "cached", "followed_strict", "correct_strict"}


# ------------------------------------------------------------------------------------------------------------ reading


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


def _json_list(value, name: str, row: int, col: str):
    if value is None or isinstance(value, (list, tuple, dict, bool)):
        return value
    try:
        return json.loads(value) if isinstance(value, str) else value
    except (ValueError, RecursionError) as exc:   # RecursionError: [[[[…]]]] nested past Python's limit
        why = "is nested too deeply" if isinstance(exc, RecursionError) else f"is not JSON: {str(value)[:30]!r}"
        raise ImportFileError(f"{name}: row {row}, column {col!r} {why}") from None


def _studio_row(rec: dict, pos: int, name: str) -> dict:
    r = pos + 1
    row = {}
    for col, value in rec.items():
        if col in _NOT_CLAIMS:
            continue
        if isinstance(value, float) and math.isnan(value):
            value = None
        if col in _INT_COLS:
            value = _number(value, name, r, col, integer=True)
        elif col in _FLOAT_COLS:
            value = _number(value, name, r, col, integer=False)
        elif col in _BOOL_COLS:
            value = read_bool(value, name, r, col)
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
    if not isinstance(row.get("prompt"), str):
        raise ImportFileError(f"{name}: row {r}, column 'prompt' is empty")
    row["_claimed"] = (row.get("correct"), row.get("correct_strict"))   # what the file says, before we judge
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


@dataclass
class _Group:
    """The rows of one model in a file: they become one run."""
    model: str
    tally: rescore.Tally = field(default_factory=rescore.Tally)
    seen: set = field(default_factory=set)
    digest: int = 0
    rows: int = 0
    source_runs: set = field(default_factory=set)
    tasks: set = field(default_factory=set)
    names: set = field(default_factory=set)
    probe: tuple | None = None     # (idx, prompt) of its first row: finds runs made here that may hold the same

    def meta(self, meta: dict) -> dict:
        """The run record's ``meta`` for this model's run."""
        return {**{k: v for k, v in meta.items() if k not in ("groups", "hyperparameters")},
                "rows": self.rows, "models": [self.model], "tasks": sorted(self.tasks),
                "names": sorted(self.names)[:2], "source_runs": sorted(self.source_runs)[:2],
                "rescored": self.tally.to_dict(), "content_sha256": f"{self.digest:064x}"}

    @property
    def run_id(self) -> str:
        return "import-" + hashlib.sha256(f"{self.digest:064x}".encode()).hexdigest()[:12]


def _rows(src: Source) -> tuple[Iterator[list[dict]], dict]:
    """Chunks of rows in our export layout (each with ``_model``), and the meta dict (filled in as the chunks are
    read: kind, hyperparameters, rows, and per model a ``_Group`` in ``groups``)."""
    meta: dict[str, Any] = {"filename": src.name, "rows": 0, "groups": {}}
    chunks = raw_chunks(src)

    def group(model: str) -> _Group:
        if model not in meta["groups"]:
            if len(meta["groups"]) >= MAX_MODELS:
                raise ImportFileError(f"{src.name}: the model column names more than {MAX_MODELS} models (a run "
                                      "each); split the file")
            meta["groups"][model] = _Group(model)
        return meta["groups"][model]

    def gen() -> Iterator[list[dict]]:
        kind = None
        for chunk in chunks:
            if kind is None:
                kind = _layout({c for row in chunk for c in row}, src.name)
                meta["kind"] = kind
                if kind == "reference":
                    meta["hyperparameters"] = reference_path_meta(src.where)
            start = meta["rows"]
            out = []
            for i, rec in enumerate(chunk):
                if kind == "reference":
                    r = reference_row(rec, start + i, src.name, meta["hyperparameters"])
                    g = group(REFERENCE_MODEL)
                    share = digests.claim_digest([start + i, *claim_digest_cells(rec)])
                    rescore.settle(r, r.pop("_reason"), r.pop("_claimed"), r.pop("_file_truth"), g.tally)
                else:
                    r = _studio_row(rec, start + i, src.name)
                    g = group(str(r.get("model") or "unknown"))
                    if r["idx"] in g.seen:
                        raise ImportFileError(f"{src.name}: row {start + i + 1} repeats idx {r['idx']}")
                    g.seen.add(r["idx"])
                    share = digests.row_claims_digest(r)
                    rescore.row(r, g.tally)
                    if r.get("run_id") is not None:
                        g.source_runs.add(str(r["run_id"]))
                    if r.get("task") is not None:
                        g.tasks.add(str(r["task"]))
                    if len(g.names) < 2 and isinstance(r.get("name"), str) and r["name"].strip():
                        g.names.add(r["name"].strip()[:200])   # the run's own name (our export's `name` column)
                g.digest = (g.digest + share) % (1 << 256)   # order-independent
                g.rows += 1
                if g.probe is None:
                    g.probe = (r["idx"], r["prompt"])
                r["_model"] = g.model
                out.append(r)
            meta["rows"] += len(out)
            yield out
        if kind is None:
            raise ImportFileError(f"{src.name}: file holds no rows")
        meta["sha256"] = src.sha256

    return gen(), meta


def read_results_file(path_or_bytes, filename: str | None = None) -> tuple[pd.DataFrame, dict]:
    """Read a result file into our export layout, in memory (tests, small files). Raises ImportFileError. ``meta``
    holds the models, tasks and the re-scoring counts of all of them (``rescored``)."""
    src = Source(path_or_bytes, filename)
    try:
        chunks, meta = _rows(src)
        rows = [row for chunk in chunks for row in chunk]
    finally:
        src.close()
    groups = meta.pop("groups")
    total = rescore.Tally()
    for g in groups.values():
        total.merge(g.tally)
    meta.update(rescored=total.to_dict(), models=sorted(groups), tasks=sorted({t for g in groups.values()
                                                                               for t in g.tasks}))
    out = pd.DataFrame([{k: v for k, v in r.items() if k != "_model"} for r in rows])
    for col in EXPORT_COLUMNS:
        if col not in out.columns:
            out[col] = None
    extra_cols = [c for c in out.columns if c not in EXPORT_COLUMNS]
    return out[EXPORT_COLUMNS + extra_cols], meta


# ------------------------------------------------------------------------------------------------------------ import


_RESULT_KEYS = ("parsed", "followed", "correct", "jaccard", "precision", "recall", "truth_len", "answer_len",
                "made_up", "empty_truth", "pred", "correct_gqg", "error", "attempts", *STRICT_COLUMNS,
                "claimed_correct", "claimed_correct_strict")


def _split(rows: list[dict], run_id: str, at) -> tuple[list[dict], list[dict], list[dict]]:
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
        if rec.get("response") is not None:
            calls.append({"cache_key": key, "model": rec["_model"], "response": rec.get("response"),
                          "latency_ms": rec.get("latency_ms"), "tokens_in": rec.get("tokens_in"),
                          "tokens_out": rec.get("tokens_out"), "cost_usd": rec.get("cost_usd"), "error": None,
                          "attempts": rec.get("attempts"), "at": at, "draw": 0, "reasoning": rec.get("reasoning_text"),
                          **{k: rec.get(k) for k in ("tokens_reasoning", "cost_reasoning_usd", "reasoning_sent")}})
        if rec.get("response") is not None or rec.get("error") is not None or rec.get("correct") is not None \
                or rec.get("claimed_correct") is not None or rec.get("claimed_correct_strict") is not None:
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

    def mark(self, run_id: str) -> None:
        """The run id the staged rows are stored under (a killed import's rows are removed by it)."""
        (self.dir / "run_id").write_text(run_id)

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
            except Exception as exc:  # noqa: BLE001 — a half-written part we are about to delete
                log.debug("closing a staged part failed (%s)", type(exc).__name__)
        shutil.rmtree(self.dir, ignore_errors=True)


def _import_name(meta: dict) -> str:
    """An imported run's name: the file's own run name (its `name` column, when all rows share one), else the file
    name and layout."""
    names = [n for n in meta.get("names") or []
             if not n.startswith(("setops · ", "quantifiers · "))]   # "task · model" is a made-up name, not the user's
    return names[0] if len(names) == 1 and len(meta.get("names") or []) == 1 else \
        f"{meta['filename']} ({meta['kind']})"


class Imported(NamedTuple):
    run_id: str
    rows: int        # rows stored now; 0 when the store already held these claims (``run_id`` is that run)
    model: str


def import_file(db_path, path_or_bytes, filename: str | None = None, name: str | None = None) -> list[Imported]:
    """Store a result file as one run per model (source 'import:<file name>'), streamed (see the module docstring).
    Importing the same claims again returns the runs holding them with 0 new rows."""
    from core.store.rows import item_table, redact_rows, rows_table
    from core.store.schema import CALL_COLUMNS, RESULT_COLUMNS

    src = Source(path_or_bytes, filename)
    try:
        with store.connect(db_path) as con:   # the very same bytes: the runs they made
            known = con.execute(
                "SELECT run_id, model FROM runs WHERE run_id = ? OR (starts_with(coalesce(source, ''), 'import') "
                "AND json_extract_string(run_json, '$.meta.sha256') = ?) ORDER BY run_id",
                [f"import-{src.sha256[:12]}", src.sha256]).fetchall()
        if known:
            return [Imported(r, 0, m) for r, m in known]
        chunks, meta = _rows(src)
        staged: dict[str, _Staging] = {}
        placeholder = f"staging-{uuid.uuid4().hex[:16]}"   # the run's id is known once every row was read
        try:
            at = store.now_utc()
            for rows in chunks:
                by_model: dict[str, list] = {}
                for r in rows:
                    by_model.setdefault(r["_model"], []).append(r)
                for model, part in by_model.items():
                    items, calls, results = _split(part, placeholder, at)
                    if model not in staged:
                        staged[model] = _Staging(db_path, placeholder)
                    staged[model].append({"items": item_table(placeholder, items),
                                          "calls": rows_table(redact_rows(calls), CALL_COLUMNS),
                                          "results": rows_table(redact_rows(results), RESULT_COLUMNS)})
            groups = meta.pop("groups")
            out = []
            for model, g in groups.items():
                run_meta = g.meta(meta)
                label = name if name is None or len(groups) == 1 else f"{name} · {model}"
                staged[model].mark(g.run_id)
                run_id, created = _store_import(db_path, g, run_meta, label, placeholder, at, staged[model].finish(),
                                                several=len(groups) > 1)
                out.append(Imported(run_id, g.rows if created else 0, model))
        finally:
            for s in staged.values():
                s.remove()
    finally:
        src.close()
    return out


def import_results(db_path, path_or_bytes, filename: str | None = None, name: str | None = None
                   ) -> tuple[str, int]:
    """``import_file`` for a file of one model: (run id, rows stored now). A file of several models makes a run
    each; this returns the first (``import_file`` returns them all)."""
    first = import_file(db_path, path_or_bytes, filename, name)[0]
    return first.run_id, first.rows


def _existing_import(con, g: _Group, run_id: str) -> str | None:
    """The run already holding these claims: the same id (an upload of the same claims), or a run made here whose
    stored results digest the same (our own export of it, with or without its run_id column)."""
    if con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
        return run_id
    candidates = list(g.source_runs)[:2]
    if g.probe is not None:
        candidates += [r[0] for r in con.execute(
            "SELECT DISTINCT i.run_id FROM items i JOIN runs ru ON ru.run_id = i.run_id WHERE i.idx = ? AND "
            f"i.prompt = ? AND ru.model = ? AND {made_here_sql('ru')} LIMIT 20",
            [g.probe[0], g.probe[1], g.model]).fetchall()]
    digest = f"{g.digest:064x}"
    for rid in dict.fromkeys(candidates):
        if digests.stored_run_digest(con, rid) == digest:
            return rid
    return None


def _compare_with_store(con, run_id: str, g: _Group, meta: dict) -> None:
    """What the store knows about these rows (counted into the run's tally): this model's own replies to the same
    prompts (runs made here) and — when the file names a stored run — that run's responses, item by item."""
    t = g.tally
    up = ("SELECT i.idx, i.prompt, c.response, coalesce(r.correct_strict, r.claimed_correct_strict) AS verdict "
          "FROM items i JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx "
          "JOIN calls c ON c.cache_key = r.cache_key WHERE i.run_id = ? AND r.error IS NULL")
    t.own_compared, t.own_differ, t.own_verdict_differ = con.execute(
        f"WITH up AS ({up}), here AS (SELECT prompt, response, correct_strict FROM v_results WHERE model = ? AND "
        f"provenance = 'made here' AND response IS NOT NULL AND error IS NULL) "
        "SELECT count(*), count(*) FILTER (WHERE NOT same_reply), count(*) FILTER (WHERE NOT same_verdict) FROM ("
        "SELECT up.idx, bool_or(h.response = up.response) AS same_reply, "
        "bool_or(h.correct_strict IS NOT DISTINCT FROM up.verdict) AS same_verdict "
        "FROM up JOIN here h ON h.prompt = up.prompt GROUP BY up.idx)", [run_id, g.model]).fetchall()[0]
    sources = [s for s in g.source_runs if s != run_id]
    if len(g.source_runs) == 1 and sources and con.execute(
            "SELECT count(*) FROM runs WHERE run_id = ?", sources).fetchall()[0][0]:
        meta["source_run"] = sources[0]
        t.source_compared, t.source_differ = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE s.response IS DISTINCT FROM c.response) "
            "FROM items i LEFT JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx "
            "LEFT JOIN calls c ON c.cache_key = r.cache_key JOIN v_results s ON s.run_id = ? AND s.idx = i.idx "
            "WHERE i.run_id = ?", [sources[0], run_id]).fetchall()[0]
    meta["rescored"] = t.to_dict()


def _insert(con, table: str, columns, run_id: str, placeholder: str, path: str) -> None:
    """INSERT a staged part, its placeholder run id (and the cache keys made with it) replaced by the run's."""
    names = ", ".join(f'"{n}"' for n, _ in columns)
    exprs, params = [], []
    for n, _ in columns:
        if n == "run_id":
            exprs.append("?::VARCHAR")
            params.append(run_id)
        elif n == "cache_key":
            exprs.append("replace(cache_key, ?, ?)")
            params += [f"import:{placeholder}:", f"import:{run_id}:"]
        else:
            exprs.append(f'"{n}"')
    con.execute(f"INSERT OR IGNORE INTO {table} ({names}) SELECT {', '.join(exprs)} FROM read_parquet(?)",
                [*params, path])


def _store_import(db_path, g: _Group, meta: dict, name: str | None, placeholder: str, at, parts: list[dict], *,
                  several: bool) -> tuple[str, bool]:
    """The staged rows, part by part (a transaction each: DuckDB holds a transaction's new rows in memory), then the
    run's record — only that makes the run visible (v_results joins runs). Returns (run id, created). If writing
    fails, the rows written so far are removed again (a kill -9 in between leaves them invisible, and importing
    the file again completes them)."""
    from core.store.schema import CALL_COLUMNS, ITEM_COLUMNS, RESULT_COLUMNS

    columns = {"items": ITEM_COLUMNS, "calls": CALL_COLUMNS, "results": RESULT_COLUMNS}
    kind = meta["kind"]
    task = "setops" if kind == "reference" else ((meta.get("tasks") or ["setops"])[0])
    config = {"task": task, "imported_from": meta["filename"], "kind": kind,
              "hyperparameters": meta.get("hyperparameters")}
    run_id = g.run_id
    with store.connect(db_path) as con:
        existing = _existing_import(con, g, run_id)
    if existing is not None:
        return existing, False
    try:
        for files in parts:
            with store.connect(db_path) as con:
                # DuckDB keeps what it wrote cached up to its memory limit (80 % of RAM by default): bounded here
                limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
                con.execute(f"SET memory_limit = '{STORE_MEMORY_LIMIT}'")
                try:
                    with store.transaction(con):
                        for table, path in files.items():
                            _insert(con, table, columns[table], run_id, placeholder, path)
                finally:
                    con.execute("SET memory_limit = ?", [limit])
            fault("import-part-stored")
        with store.connect(db_path) as con, store.transaction(con):
            if con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
                return run_id, False    # imported by another process meanwhile
            _compare_with_store(con, run_id, g, meta)
            run_name = name or _import_name(meta) + (f" · {g.model}" if several else "")
            if not name and run_name in (meta.get("names") or []) and con.execute(
                    "SELECT count(*) FROM runs WHERE name = ?", [run_name]).fetchall()[0][0]:
                run_name = f"{run_name} ({meta['filename']})"   # an edited copy of a stored run: say which file
            con.execute(
                """INSERT INTO runs (run_id, run_key, draw, created_at, updated_at, finished_at, task, name,
                   config_json, run_json, model, base_url, params_json, status, n_items, n_done, n_failed, n_cached,
                   cost_usd, source, schema_version)
                   VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 'imported', ?, 0, 0, 0, 0, ?, ?)""",
                [run_id, run_id, at, at, at, task, run_name,
                 store.canonical_json(config), store.canonical_json({**config, "meta": meta}),
                 g.model, g.rows, f"import:{meta['filename']}"[:300], store.SCHEMA_VERSION])
            store.refresh_run_counts(con, run_id)
            aggregates.refresh_runs(con, [run_id])
    except BaseException as failure:
        if isinstance(failure, DatabaseReplaced):   # its rows went with the replaced file
            raise
        try:
            with store.connect(db_path) as con, store.transaction(con):
                if not con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
                    for table in ("items", "results"):
                        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
                    aggregates.drop_runs(con, [run_id])
                    con.execute("DELETE FROM calls WHERE starts_with(cache_key, ?)", [f"import:{run_id}:"])
        except Exception as exc:   # the first error is the one to report
            import logging

            logging.getLogger(__name__).warning("could not remove the rows of a failed import: %s", exc)
        raise
    return run_id, True

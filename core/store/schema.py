"""DDL of the store, its version and the migrations that bring an older file up to date.

Every factor of every task is a real, typed column of ``items`` (union of the setops and quantifier factors), so
DuckDB can group by them. List-valued fields (sets, truth, member_hypernyms) are stored as canonical JSON text;
keys a task adds later without a column land in ``items.extra_json`` until a migration gives them one.

To change the schema: append a ``(version, [statements])`` pair to MIGRATIONS (never edit an applied one) and bump
nothing else — SCHEMA_VERSION is the last migration's number. ``ensure_schema`` applies the missing ones in one
transaction and records each in ``schema_version``; the view is recreated afterwards. A version whose new columns
must be filled for rows already stored names a function in ``backfill.BACKFILLS`` (run right after its statements,
in the same transaction: a failure leaves the file at the previous version).
"""

from __future__ import annotations

import threading

import pyarrow as pa

from core.store.backfill import BACKFILLS
from core.tasks import item_columns

S, I, F, B, TS = pa.string(), pa.int64(), pa.float64(), pa.bool_(), pa.timestamp("us")

RUN_COLUMNS = [
    ("run_id", S), ("run_key", S), ("draw", I), ("created_at", TS), ("updated_at", TS), ("finished_at", TS),
    ("task", S), ("name", S), ("config_json", S), ("run_json", S), ("model", S), ("base_url", S),
    ("params_json", S), ("status", S), ("n_items", I), ("n_done", I), ("n_failed", I), ("n_cached", I),
    ("cost_usd", F), ("source", S), ("schema_version", I),
]

_KINDS = {"str": S, "int": I, "float": F, "bool": B}
# Item factor columns come from the tasks (core/tasks/<task>/factors.py: name, kind, schema version that added it).
FACTOR_SPECS = [(name, _KINDS[kind], since) for name, kind, since in item_columns()]
_ITEM_BASE = [("run_id", S), ("idx", I), ("config_id", S), ("sample", I), ("seed", I), ("prompt", S), ("truth", S)]
ITEM_COLUMNS = _ITEM_BASE + [(name, typ) for name, typ, _ in FACTOR_SPECS] + [("extra_json", S)]   # as of now
_ITEM_COLUMNS_V1 = _ITEM_BASE + [(name, typ) for name, typ, since in FACTOR_SPECS if since == 1] + [("extra_json", S)]
FACTOR_COLUMNS = [name for name, _, _ in FACTOR_SPECS]

CALL_COLUMNS = [
    ("cache_key", S), ("model", S), ("base_url", S), ("params_json", S), ("prompt_sha", S), ("draw", I),
    ("response", S), ("latency_ms", F), ("tokens_in", I), ("tokens_out", I), ("cost_usd", F),
    ("finish_reason", S), ("dropped_params", S), ("error", S), ("attempts", I), ("at", TS),
]
_RESULT_COLUMNS_V1 = [
    ("run_id", S), ("idx", I), ("cache_key", S), ("parsed", S), ("followed", B), ("correct", B), ("jaccard", F),
    ("precision", F), ("recall", F), ("truth_len", I), ("answer_len", I), ("made_up", I), ("empty_truth", B),
    ("pred", S), ("correct_gqg", B), ("error", S), ("attempts", I), ("cached", B), ("at", TS),
]
# version 2: the SetLexSem reference's verdict beside ours (core/tasks/setops/parse_strict.py)
STRICT_RESULT_COLUMNS = [("parsed_strict", S), ("followed_strict", B), ("correct_strict", B),
                         ("answer_len_strict", I), ("made_up_strict", I)]
RESULT_COLUMNS = _RESULT_COLUMNS_V1 + STRICT_RESULT_COLUMNS   # as of now

_SQL_TYPE = {S: "VARCHAR", I: "BIGINT", F: "DOUBLE", B: "BOOLEAN", TS: "TIMESTAMP"}


def _cols(columns) -> str:
    return ",\n  ".join(f'"{n}" {_SQL_TYPE[t]}' for n, t in columns)


V_RESULTS = """
CREATE OR REPLACE VIEW v_results AS
SELECT i.*,
       ru.model, ru.task, ru.name, ru.base_url, ru.status AS run_status, ru.source,
       r.cache_key, r.parsed, r.followed, r.correct, r.jaccard, r."precision", r.recall, r.truth_len,
       r.answer_len, r.made_up, r.empty_truth, r.pred, r.correct_gqg, r.error, r.attempts, r.cached,
       r.parsed_strict, r.followed_strict, r.correct_strict, r.answer_len_strict, r.made_up_strict,
       c.response, c.latency_ms, c.tokens_in, c.tokens_out, c.cost_usd, c.finish_reason
FROM items i
JOIN runs ru ON ru.run_id = i.run_id
LEFT JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx
LEFT JOIN calls c ON c.cache_key = r.cache_key
"""

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        f"CREATE TABLE IF NOT EXISTS runs (\n  {_cols(RUN_COLUMNS)},\n  PRIMARY KEY (run_id))",
        f"CREATE TABLE IF NOT EXISTS items (\n  {_cols(_ITEM_COLUMNS_V1)},\n  PRIMARY KEY (run_id, idx))",
        f"CREATE TABLE IF NOT EXISTS calls (\n  {_cols(CALL_COLUMNS)},\n  PRIMARY KEY (cache_key))",
        f"CREATE TABLE IF NOT EXISTS results (\n  {_cols(_RESULT_COLUMNS_V1)},\n  PRIMARY KEY (run_id, idx))",
        """CREATE TABLE IF NOT EXISTS embedding_cache (
  encoder VARCHAR, text_sha VARCHAR, text VARCHAR, vector FLOAT[], PRIMARY KEY (encoder, text_sha))""",
    ]),
    # 2 (issue 9): strict (reference) scoring stored beside lenient; rows already stored are re-scored from their
    # responses by backfill.BACKFILLS[2] (also: GQG's own answer rule in correct_gqg). items.pos (the part of speech
    # of word and deceptive members; core/tasks/setops/factors.py) is added below.
    (2, [f'ALTER TABLE results ADD COLUMN IF NOT EXISTS "{name}" {_SQL_TYPE[typ]}' for name, typ in
         STRICT_RESULT_COLUMNS]),
]
# A factor a task declares with ``since`` = n > 1 is added by migration n (no hand-written ALTER needed).
for _number, _statements in MIGRATIONS:
    _statements.extend(f'ALTER TABLE items ADD COLUMN IF NOT EXISTS "{name}" {_SQL_TYPE[typ]}'
                       for name, typ, since in FACTOR_SPECS if since == _number > 1)
SCHEMA_VERSION = MIGRATIONS[-1][0]
if any(since > SCHEMA_VERSION for _, _, since in FACTOR_SPECS):
    raise RuntimeError("a task declares an item column for a schema version that has no migration yet")

_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT, applied_at TIMESTAMP DEFAULT now())"


def current_version(con) -> int:
    con.execute(_VERSION_TABLE)
    row = con.execute("SELECT max(version) FROM schema_version").fetchall()[0]
    return int(row[0] or 0)


def ensure_schema(con) -> int:
    """Bring the open database to SCHEMA_VERSION (no-op when current). Returns the version."""
    try:
        version = int(con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] or 0)
    except Exception:
        version = -1
    if version == SCHEMA_VERSION:
        return version
    if version > SCHEMA_VERSION:
        from core.errors import UserError

        raise UserError(f"database schema version {version} is newer than this code ({SCHEMA_VERSION}); update the code")
    with _LOCK:  # threads of one process share the DuckDB instance: migrate once
        return _migrate(con)


_LOCK = threading.Lock()


def _migrate(con) -> int:
    con.execute("BEGIN TRANSACTION")
    try:
        version = current_version(con)
        for number, statements in MIGRATIONS:
            if number <= version:
                continue
            for sql in statements:
                con.execute(sql)
            if number in BACKFILLS:
                BACKFILLS[number](con)
            con.execute("INSERT INTO schema_version (version) VALUES (?)", [number])
        con.execute(V_RESULTS)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION

"""DDL of the store, its version and the migrations that bring an older file up to date.

Every factor of every task is a real, typed column of ``items`` (union of the setops and quantifier factors), so
DuckDB can group by them. List-valued fields (sets, truth, member_hypernyms) are stored as canonical JSON text;
keys a task adds later without a column land in ``items.extra_json`` until a migration gives them one.

To change the schema: append a ``(version, [statements])`` pair to MIGRATIONS (never edit an applied one) and bump
nothing else — SCHEMA_VERSION is the last migration's number. ``ensure_schema`` applies every migration whose number
is not yet recorded in ``schema_version`` (in order, one transaction) and records each; the view is recreated
afterwards. Numbers are owned by issues and may land out of order (a file that has 1 and 3 gets 2 when it arrives),
so every migration must be safe on a file written by any earlier code. A version whose new columns must be filled
for rows already stored names a function in ``backfill.BACKFILLS`` (run right after its statements, in the same
transaction: a failure leaves the file at the previous version).

Before migrating a file that already holds data, a copy of it is exported next to it
(``<db>.backups/before-v<N>-<time>/``, DuckDB ``EXPORT DATABASE``; ``python -m core restore DIR`` brings it back).
"""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb

# a submodule import: never waits on a core.store another thread is initialising
import core.store.aggregates as aggregates  # noqa: PLR0402
import core.store.provenance as provenance  # noqa: PLR0402
from core.tasks import RESULTS_VIEW, item_columns

# column types as DuckDB names (core/store/rows.py maps them to Arrow types: pyarrow is imported at the first write,
# not by every process that opens the store — a run sends its first calls before it writes a row)
S, I, F, B, TS = "VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN", "TIMESTAMP"  # noqa: E741

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

_CALL_COLUMNS_V1 = [
    ("cache_key", S), ("model", S), ("base_url", S), ("params_json", S), ("prompt_sha", S), ("draw", I),
    ("response", S), ("latency_ms", F), ("tokens_in", I), ("tokens_out", I), ("cost_usd", F),
    ("finish_reason", S), ("dropped_params", S), ("error", S), ("attempts", I), ("at", TS),
]
# version 8: a reply's reasoning kept apart from its answer (core/models/reasoning.py): the reasoning text, the
# reasoning tokens (of tokens_out) and their cost (of cost_usd), and what was sent for the reasoning effort (JSON)
REASONING_CALL_COLUMNS = [("reasoning", S), ("tokens_reasoning", I), ("cost_reasoning_usd", F),
                          ("reasoning_sent", S)]
CALL_COLUMNS = _CALL_COLUMNS_V1 + REASONING_CALL_COLUMNS   # as of now
_RESULT_COLUMNS_V1 = [
    ("run_id", S), ("idx", I), ("cache_key", S), ("parsed", S), ("followed", B), ("correct", B), ("jaccard", F),
    ("precision", F), ("recall", F), ("truth_len", I), ("answer_len", I), ("made_up", I), ("empty_truth", B),
    ("pred", S), ("correct_gqg", B), ("error", S), ("attempts", I), ("cached", B), ("at", TS),
]
# version 2: the SetLexSem reference's verdict beside ours (core/tasks/setops/parse_strict.py)
STRICT_RESULT_COLUMNS = [("parsed_strict", S), ("followed_strict", B), ("correct_strict", B),
                         ("answer_len_strict", I), ("made_up_strict", I)]
# version 5: an imported file's own verdicts, kept beside ours (imports are re-scored: core/store/rescore.py)
CLAIMED_RESULT_COLUMNS = [("claimed_correct", B), ("claimed_correct_strict", B)]
RESULT_COLUMNS = _RESULT_COLUMNS_V1 + STRICT_RESULT_COLUMNS + CLAIMED_RESULT_COLUMNS   # as of now

def _cols(columns) -> str:
    return ",\n  ".join(f'"{n}" {t}' for n, t in columns)


# Run-level factors read from the run's parameters (runs stored before a parameter existed get its default).
RUN_PARAM_FACTORS = {
    "answer_format": "coalesce(json_extract_string(ru.params_json, '$.answer_format'), 'free')",
}
# The reasoning effort of an item: its own when the config crosses it, else the run's (``none`` when not stored).
REASONING_EFFECTIVE = "coalesce(i.reasoning, json_extract_string(ru.params_json, '$.reasoning_effort'), 'none')"

V_RESULTS = "CREATE OR REPLACE VIEW " + RESULTS_VIEW + """ AS
SELECT i.* REPLACE (""" + REASONING_EFFECTIVE + """ AS reasoning),
       ru.model, ru.task, ru.name, ru.base_url, ru.status AS run_status, ru.source,
       CASE WHEN """ + provenance.uploaded_sql("ru") + """ THEN 'uploaded' ELSE 'made here' END AS provenance,
       """ + ", ".join(f"{sql} AS {name}" for name, sql in RUN_PARAM_FACTORS.items()) + """,
       r.cache_key, r.parsed, r.followed, r.correct, r.jaccard, r."precision", r.recall, r.truth_len,
       r.answer_len, r.made_up, r.empty_truth, r.pred, r.correct_gqg, r.error, r.attempts, r.cached,
       r.parsed_strict, r.followed_strict, r.correct_strict, r.answer_len_strict, r.made_up_strict,
       r.claimed_correct, r.claimed_correct_strict,
       c.response, c.latency_ms, c.tokens_in, c.tokens_out, c.cost_usd, c.finish_reason,
       c.reasoning AS reasoning_text, c.tokens_reasoning,
       CASE WHEN c.tokens_reasoning IS NOT NULL THEN c.tokens_out - c.tokens_reasoning
            WHEN c.reasoning IS NULL AND c.reasoning_sent IS NULL THEN c.tokens_out END AS tokens_answer,
       c.cost_reasoning_usd, c.reasoning_sent
FROM items i
JOIN runs ru ON ru.run_id = i.run_id
LEFT JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx
LEFT JOIN calls c ON c.cache_key = r.cache_key
"""


# Provider batch jobs (OpenAI Batch, Anthropic Message Batches; schema version 3). A row is written *before* the
# provider is asked to create the batch (phase 'submitting'), so a process killed at any moment leaves a trace:
# the next attach finds the batch at the provider (or learns it was never created) and carries on.
BATCH_COLUMNS = [
    ("batch_id", S), ("provider", S), ("provider_batch_id", S), ("run_id", S), ("model", S), ("base_url", S),
    ("phase", S), ("status", S), ("owner", S), ("n_requests", I), ("n_bytes", I), ("n_succeeded", I),
    ("n_errored", I), ("n_expired", I), ("n_cancelled", I), ("n_processing", I), ("input_file_id", S),
    ("output_file_id", S), ("error_file_id", S), ("dropped_params", S), ("error", S), ("cancel_requested", B),
    ("cost_usd", F), ("created_at", TS), ("submitted_at", TS), ("updated_at", TS), ("ended_at", TS),
    ("collected_at", TS),
]
# One row per item of a batch: custom_id (the cache key) → (run, item, cache key), and the item's outcome.
_BATCH_REQUEST_COLUMNS_V3 = [
    ("batch_id", S), ("custom_id", S), ("run_id", S), ("idx", I), ("cache_key", S), ("outcome", S), ("error", S),
    ("retired", B),
]
# version 10: what each request carried, recorded when it is submitted (an item's own parameters — a reasoning
# effort of the grid, a reply cap — may be sent otherwise than the run's): the parameters dropped or changed
# (JSON list, as ``calls.dropped_params``; NULL on a request submitted before version 10) and what was sent for
# the reasoning effort (``calls.reasoning_sent``)
BATCH_REQUEST_SENT_COLUMNS = [("dropped_params", S), ("reasoning_sent", S)]
BATCH_REQUEST_COLUMNS = _BATCH_REQUEST_COLUMNS_V3 + BATCH_REQUEST_SENT_COLUMNS
# Claims (schema version 4): a run that is about to send a call claims its cache key first, so an identical run in
# another process waits for that answer (from the cache) instead of paying for it again. A claim is kept until the
# answer is merged into DuckDB; it lapses when its owner process is gone or after ``lease_s`` seconds.
CLAIM_COLUMNS = [("cache_key", S), ("owner", S), ("run_id", S), ("claimed_at", TS), ("lease_s", F)]

# Computed Embeddings results (schema version 7): one row per (encoder, samples, settings) digest, the REPORT dict and
# the per-sample rows as JSON text (core/embeddings/results_store.py), so the page shows them again after a reload.
EMBEDDING_RESULT_COLUMNS = [("digest", S), ("encoder", S), ("encoder_label", S), ("data_label", S),
                            ("settings_json", S), ("n_samples", I), ("report_json", S), ("rows_json", S),
                            ("created_at", TS)]

MODEL_INFO_COLUMNS = [("model", S), ("endpoint", S), ("info_json", S), ("source", S), ("asked_at", TS)]

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        f"CREATE TABLE IF NOT EXISTS runs (\n  {_cols(RUN_COLUMNS)},\n  PRIMARY KEY (run_id))",
        f"CREATE TABLE IF NOT EXISTS items (\n  {_cols(_ITEM_COLUMNS_V1)},\n  PRIMARY KEY (run_id, idx))",
        f"CREATE TABLE IF NOT EXISTS calls (\n  {_cols(_CALL_COLUMNS_V1)},\n  PRIMARY KEY (cache_key))",
        f"CREATE TABLE IF NOT EXISTS results (\n  {_cols(_RESULT_COLUMNS_V1)},\n  PRIMARY KEY (run_id, idx))",
        """CREATE TABLE IF NOT EXISTS embedding_cache (
  encoder VARCHAR, text_sha VARCHAR, text VARCHAR, vector FLOAT[], PRIMARY KEY (encoder, text_sha))""",
    ]),
    # 2: strict (reference) scoring stored beside lenient; rows already stored are re-scored from their
    # responses by backfill.BACKFILLS[2] (also: GQG's own answer rule in correct_gqg). items.pos (the part of speech
    # of word and deceptive members; core/tasks/setops/factors.py) is added below.
    (2, [f'ALTER TABLE results ADD COLUMN IF NOT EXISTS "{name}" {typ}' for name, typ in
         STRICT_RESULT_COLUMNS]),
    (3, [   # provider batches (new tables only: safe on any earlier file)
        f"CREATE TABLE IF NOT EXISTS batches (\n  {_cols(BATCH_COLUMNS)},\n  PRIMARY KEY (batch_id))",
        (f"CREATE TABLE IF NOT EXISTS batch_requests (\n  {_cols(_BATCH_REQUEST_COLUMNS_V3)},\n  "
         "PRIMARY KEY (batch_id, run_id, idx))"),
    ]),
    (4, [   # claims of calls in flight (a new table only: safe on any earlier file)
        f"CREATE TABLE IF NOT EXISTS claims (\n  {_cols(CLAIM_COLUMNS)},\n  PRIMARY KEY (cache_key))",
    ]),
    # 5: imports are re-scored from their responses; the file's own verdicts are kept beside ours
    (5, [f'ALTER TABLE results ADD COLUMN IF NOT EXISTS "{name}" {typ}' for name, typ in
         CLAIMED_RESULT_COLUMNS]),
    # 6: counts per (run, configuration) kept by the writers (core/store/aggregates.py); built from the
    # rows already stored by backfill.BACKFILLS[6]
    (6, aggregates.ddl([(name, typ) for name, typ, since in FACTOR_SPECS if since <= 6])),   # later: see below
    (7, [   # computed Embeddings results, shown again after a reload (core/embeddings/results_store.py)
        (f"CREATE TABLE IF NOT EXISTS embedding_results (\n  {_cols(EMBEDDING_RESULT_COLUMNS)},\n  "
         "PRIMARY KEY (digest))"),
    ]),
    # 8: reasoning models — the reply's reasoning apart from its answer (calls), and the reasoning effort as a grid
    # factor (items.reasoning and agg_configs.reasoning: added from core/tasks/setops/factors.py below)
    (8, [f'ALTER TABLE calls ADD COLUMN IF NOT EXISTS "{name}" {typ}' for name, typ in REASONING_CALL_COLUMNS]),
    (9, [   # what providers say about their models, asked once (core/store/model_info.py; a new table only)
        (f"CREATE TABLE IF NOT EXISTS model_capabilities (\n  {_cols(MODEL_INFO_COLUMNS)},\n  "
         "PRIMARY KEY (model, endpoint))"),
    ]),    # 10: what each batch request carried, recorded at submission (BATCH_REQUEST_SENT_COLUMNS)
    (10, [f'ALTER TABLE batch_requests ADD COLUMN IF NOT EXISTS "{name}" {typ}' for name, typ in
          BATCH_REQUEST_SENT_COLUMNS]),
    # 11: agg_counts' strict rows hold the strict precision, recall and Jaccard (of the reference's parse) instead of
    # ours; no new column: backfill.BACKFILLS[11] recounts those rows from the rows already stored
    (11, []),
]
# A factor a task declares with ``since`` = n > 1 is added by migration n (no hand-written ALTER needed).
for _number, _statements in MIGRATIONS:
    _statements.extend(f'ALTER TABLE {table} ADD COLUMN IF NOT EXISTS "{name}" {typ}'
                       for table in ("items", "agg_configs") if table == "items" or _number > 6
                       for name, typ, since in FACTOR_SPECS if since == _number > 1)
SCHEMA_VERSION = MIGRATIONS[-1][0]
if any(since > SCHEMA_VERSION for _, _, since in FACTOR_SPECS):
    raise RuntimeError("a task declares an item column for a schema version that has no migration yet")

_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT, applied_at TIMESTAMP DEFAULT now())"


def current_version(con) -> int:
    con.execute(_VERSION_TABLE)
    row = con.execute("SELECT max(version) FROM schema_version").fetchall()[0]
    return int(row[0] or 0)


def applied_versions(con) -> set[int]:
    con.execute(_VERSION_TABLE)
    return {int(r[0]) for r in con.execute("SELECT DISTINCT version FROM schema_version").fetchall()}


_ALL_VERSIONS = {number for number, _ in MIGRATIONS}


def ensure_schema(con, path=None) -> int:
    """Bring the open database to SCHEMA_VERSION (no-op when current). Returns the version. ``path`` (the file, as
    ``connect`` knows it) lets the check that the results view is this code's run once per file and process."""
    import duckdb

    try:
        version, count = con.execute(
            "SELECT max(version), count(DISTINCT version) FROM schema_version").fetchall()[0]
        version, count = int(version or 0), int(count or 0)
    except duckdb.CatalogException:   # a new file: no version table yet
        version, count = -1, -1
    if version == SCHEMA_VERSION and count >= len(_ALL_VERSIONS):
        if path is not None and str(path) not in _VIEW_CURRENT:
            _refresh_view(con, str(path))
        return version
    if version > SCHEMA_VERSION:
        from core.errors import UserError

        raise UserError(f"database schema version {version} is newer than this code ({SCHEMA_VERSION}); update the code")
    with _LOCK:  # threads of one process share the DuckDB instance: migrate once
        out = _migrate(con)
    if path is not None:
        _VIEW_CURRENT.add(str(path))   # the view was just (re)created by this code
    return out


_LOCK = threading.Lock()
_VIEW_CURRENT: set = set()   # database files whose v_results is known to be this code's (checked once per process)


def _refresh_view(con, where: str) -> None:
    """Recreate v_results when it predates a column this code's view has (a view holds no data: no migration).
    Runs at the first connection to a file in a process (before that process starts runs on it)."""
    with _LOCK:
        if where in _VIEW_CURRENT:
            return
        have = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                          "AND database_name = current_database()", [RESULTS_VIEW]).fetchall()}
        if not set(RUN_PARAM_FACTORS) | {"reasoning_text", "provenance"} <= have:
            con.execute(V_RESULTS)
        _VIEW_CURRENT.add(where)


def _migrate(con) -> int:
    applied = applied_versions(con)
    missing = [number for number, _ in MIGRATIONS if number not in applied]
    if missing and applied:   # a file with data in an older layout: keep a copy of it first
        _refuse_while_live(con, missing[-1])
        backup_before_migration(con, missing[-1])
    con.execute("BEGIN TRANSACTION")
    try:
        applied = applied_versions(con)
        # a new file (no table but the version table): the same statements build the current layout, but there is
        # no stored row for a backfill to re-score (a third of a new store's set-up time)
        new_file = not applied and not con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
            "AND table_name <> 'schema_version'").fetchall()[0][0]
        done = []
        for number, statements in MIGRATIONS:
            if number in applied:
                continue
            for sql in statements:
                con.execute(sql)
            if not new_file:
                from core.store.backfill import BACKFILLS  # (imports the scorers: only for rows stored before)

                if number in BACKFILLS:
                    BACKFILLS[number](con)
            done.append(number)
        if done:
            con.execute("INSERT INTO schema_version (version) VALUES " + ", ".join("(?)" for _ in done), done)
        con.execute(V_RESULTS)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION


def _refuse_while_live(con, to_version: int) -> None:
    """A migration changes the layout under every process using the file: refused while a run of another process
    is live on it (a running run with a live owner, or live claims). The caller holds the inter-process lock."""
    import os

    from core.errors import UserError
    from core.store.liveness import owner_alive, owner_tag

    me = owner_tag()
    owners: list[tuple[str, str]] = []
    for sql in ("SELECT run_id, run_json->>'owner' FROM runs WHERE status = 'running'",
                "SELECT any_value(run_id), owner FROM claims GROUP BY owner"):
        try:
            owners += con.execute(sql).fetchall()
        except duckdb.Error:      # an older layout without that table or column: nothing of it can be live
            pass
    for run_id, owner in owners:
        if owner and owner != me and not owner.endswith(f":{os.getpid()}") and owner_alive(owner):
            raise UserError(f"database {database_file(con)} needs its schema updated to version {to_version}, but "
                            f"run {run_id} ({owner}) is live on it; let it finish (or stop it) first")


def database_file(con) -> Path | None:
    """The file behind an open connection (None in memory)."""
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return Path(row[0][0]) if row and row[0][0] else None


def backups_dir(db_file: Path) -> Path:
    return db_file.with_name(db_file.name + ".backups")


def backup_before_migration(con, to_version: int) -> Path | None:
    """EXPORT DATABASE into ``<db>.backups/before-v<N>-<time>/`` (the caller holds the file: nobody writes to it)."""
    db_file = database_file(con)
    if db_file is None:
        return None
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = backups_dir(db_file) / f"before-v{to_version}-{when}"
    partial = target.with_name(target.name + ".partial")
    try:
        partial.parent.mkdir(parents=True, exist_ok=True)
        con.execute(f"EXPORT DATABASE '{_quote(str(partial))}' (FORMAT PARQUET)")
        partial.rename(target)
    except BaseException as exc:
        shutil.rmtree(partial, ignore_errors=True)   # no half backup that looks like a whole one
        try:
            partial.parent.rmdir()                   # nor an empty backups folder
        except OSError:
            pass
        if isinstance(exc, (OSError, duckdb.IOException, duckdb.PermissionException)):
            from core.errors import UserError

            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0][:200]
            raise UserError(f"database {db_file} needs its schema updated to version {to_version}, and a backup is "
                            f"taken first, but it cannot be written to {target.parent} ({why}); free space there "
                            "and try again — the database was not changed") from None
        raise
    return target


def _quote(text: str) -> str:
    return text.replace("'", "''")

"""The DuckDB store: one file holding runs, items, calls, results (+ the embedding cache), schema-versioned.

Tables (see ``schema.py`` for the DDL and migrations)::

    runs(run_id, run_key, draw, created_at, updated_at, finished_at, task, name, config_json, run_json, model,
         base_url, params_json, status, n_items, n_done, n_failed, n_cached, cost_usd, source, schema_version)
    items(run_id, idx, config_id, sample, seed, prompt, truth, <every setops and quantifier factor>, extra_json)
    calls(cache_key, model, base_url, params_json, prompt_sha, draw, response, latency_ms, tokens_in, tokens_out,
          cost_usd, finish_reason, dropped_params, error, attempts, at)          -- the response cache
    results(run_id, idx, cache_key, parsed, followed, correct, jaccard, precision, recall, truth_len, answer_len,
            made_up, empty_truth, pred, correct_gqg, error, attempts, cached, at,
            parsed_strict, followed_strict, correct_strict, answer_len_strict, made_up_strict)   -- v2: strict scoring
    embedding_cache(encoder, text_sha, text, vector FLOAT[])
    batches(batch_id, provider, provider_batch_id, run_id, model, base_url, phase, status, owner, n_requests, …)
    batch_requests(batch_id, custom_id, run_id, idx, cache_key, outcome, error, retired)   -- see batches.py
    model_capabilities(model, endpoint, info_json, source, asked_at)   -- what providers say of a model (model_info.py)
    VIEW v_results                                                                -- what the analysis queries

Concurrency across processes (the design)
-----------------------------------------
DuckDB lets one process at a time open a file read-write, and while it is open no other process can open it at all.
So **nobody holds a connection open**: every reader and writer (CLI runner, dashboard pages, imports) goes through
``connect()``, a context manager that opens the file, does one short piece of work and closes it again. DuckDB's own
lock does not make such open/commit/close cycles from several processes safe (committed rows can be lost and
files left unreadable), so ``connect()`` holds an OS lock (``flock`` on ``<db>.lock``, ``oslock.py``) from
before the open to after the close: one process at a time has the file open; threads of one process share it.
Waiting for it times out after ``DB_BUSY_TIMEOUT`` seconds with a clear ``DatabaseBusy`` error. A CLI run and an
open dashboard therefore interleave: each holds the file for milliseconds. ``restore`` holds it exclusively.

Durability without holding the lock: the runner appends each finished call (+ the scored results of the items it
answers) to a per-process journal file next to the DB (``<db>.journal/*.jsonl``, see ``journal.py``) and
fsyncs it *before* the call counts as finished (progress, "done"). Every ``MERGE_INTERVAL`` seconds the journal's new
records are merged into DuckDB in one short transaction — that is when the dashboard sees them. A kill -9 therefore
loses no reported call: journals left by dead processes are merged by the next ``recover_journals()`` (called when a
run starts and whenever the run list is read). Merging is idempotent (upserts keyed by cache_key / (run_id, idx)).

Cache key = sha256 of (model spec, base_url, canonical params JSON, prompt, draw index). Only successful calls are
stored in ``calls``; a call that failed for good leaves its reason in ``results.error`` and is retried by the next
run. API keys are never passed to this module.

Identical runs in two processes share their calls: a run claims the cache keys it is about to send (table
``claims``, schema version 4, ``claims.py``) and leaves keys another live run claimed to that run, taking their answers
from the cache once merged. A file that cannot be read is a ``DatabaseDamaged`` error naming it and the way back
(``python -m core restore``, ``backup.py``); migrations back a file with data up first.

Modules: ``db`` (file, connections, transactions, damaged files) · ``oslock`` (the inter-process lock) · ``faults`` (fault injection for the tests of disk-full and kills) · ``schema`` (DDL, migrations, factor columns) ·
``cache`` (cache keys, cached calls) · ``rows`` (writing items, calls, results, run counters; redacted) · ``journal``
(per-process fsynced journals, their recovery, quarantine of bad lines) · ``retry`` (a transaction done again after a
write conflict) · ``writers`` (leases of imports and
batch collection, which restore waits for; a swapped file detected) · ``claims`` (claims on calls in flight) ·
``runs`` (run list and records) · ``analysis_cache`` (results of slow analyses kept for the next process) · ``aggregates`` (counts per run and configuration, kept by the writers: what the views read) · ``digest`` (content digests of a file's claims) · ``rescore`` (imports judged by us) · ``leftovers`` (clean-up after killed processes) · ``liveness`` (is a process alive) · ``batches`` (provider batches, written before the provider creates them) · ``embedding_tables`` (writes of the embedding cache and the Embeddings results) · ``model_info`` (how a model takes thinking, asked once) · ``io``
(import of result files; the export layout) · ``readers`` (result files as streams of row chunks) · ``exports`` (CSV /
Parquet / JSONL export) · ``backup`` (backup and restore) · ``backfill`` (re-scoring stored rows from their responses
when a migration adds derived columns).
"""

from core.store.cache import cache_key, canonical_json, lookup_calls, sha256
from core.store.db import (
                           DB_BUSY_TIMEOUT,
                           MERGE_INTERVAL,
                           STORE_ERRORS,
                           DatabaseBusy,
                           DatabaseDamaged,
                           connect,
                           default_db_path,
                           journal_dir,
                           now_utc,
                           query_df,
                           resolve_db_path,
                           transaction,
                           writing,
)
from core.store.retry import aretry_conflicts, retry_conflicts
from core.store.rows import (
                           JSON_ITEM_KEYS,
                           insert_items,
                           item_table,
                           refresh_run_counts,
                           rows_table,
                           write_calls_results,
)
from core.store.runs import (
                           delete_run,
                           get_run,
                           insert_run,
                           list_runs,
                           recover_journals,
                           resolve_run_id,
                           results_df,
                           run_columns,
                           run_record,
                           set_run_status,
                           update_run,
)
from core.store.schema import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION", "DB_BUSY_TIMEOUT", "MERGE_INTERVAL", "DatabaseBusy", "DatabaseDamaged", "STORE_ERRORS", "default_db_path", "resolve_db_path",
    "journal_dir", "connect", "transaction", "writing", "query_df", "cache_key", "canonical_json", "sha256", "insert_items",
    "write_calls_results", "lookup_calls", "refresh_run_counts", "set_run_status", "insert_run", "update_run", "list_runs", "get_run",
    "run_record", "run_columns", "resolve_run_id", "delete_run", "results_df", "recover_journals", "item_table",
    "rows_table", "JSON_ITEM_KEYS", "now_utc", "retry_conflicts", "aretry_conflicts",
]

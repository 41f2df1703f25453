"""Batch runner: config + model → calls (cached, concurrent, retried, rate-limited) → scored results in the store.

Public API::

    start_run(config, model, *, params=None, base_url=None, api_key=None, db_path=None, concurrency=None,
              fresh=False, name=None, limit=None, rpm=None, tpm=None, max_attempts=6, call_timeout=120.0,
              source="app", on_progress=None, batch=False, wait=True, poll_interval=None,
              batch_limits=None) -> RunHandle                      # background thread with its own event loop
    run(config, model, ..., on_progress=callback) -> Progress       # blocking (the CLI); Ctrl-C cancels cleanly
    resume_run(run_id, *, api_key=None, db_path=None) -> RunHandle  # continue a stored run exactly (Runs page)
    estimate(config, model, *, params=None, base_url=None, db_path=None, fresh=False, limit=None) -> Estimate
    get_handle(run_id) -> RunHandle | None ; active_runs() -> list[RunHandle]   # survive Streamlit reruns
    start_ray_run(config, model, base_url, *, address=None, params=None, api_key=None, db_path=None, name=None,
                  limit=None, ...) -> RunHandle          # openai-compatible/ through Ray Data, on a thread
    check_ray_address(text) -> str | None               # local | auto | host:port (GCS), else UserError

A *run* is (task config, model spec, sampling params, base_url[, limit]); its ``run_key`` is a stable hash of those.
Running the same thing again resumes the newest run with that key (finished items are skipped, failed ones retried)
instead of starting over; ``fresh=True`` starts a new run with a new *draw index*, which is part of every cache key,
so every call is made anew. ``run_id = "<task>-<run_key[:10]>-d<draw>"``.

How one call goes: cache lookup (bulk: the first ``claim_block`` prompts' at start, the later ones' while the first
calls are at the model; identical (model, params, prompt, draw) already stored → scored from the stored response, no
call) → wait for a concurrency slot (``concurrency`` workers; default
``model.default_concurrency``) → rate limits (requests/tokens per minute) → ``model.complete`` under a per-call timeout
→ on ``RetryableError`` / timeout: exponential back-off with full jitter, at least the server's Retry-After (which also
pauses every worker), up to ``max_attempts``; ``ModelError`` fails at once → the finished call and the scored results
of all items sharing its prompt are appended to the run's journal and fsynced (group commit) → only then the call
counts as finished (progress, callbacks). A slot pipelines: its next call goes out while the previous record is
being fsynced, but is not reported before it. So at most 2 × ``concurrency`` calls are ever "in flight" = sent but
not durable (at most ``concurrency`` at the model); after a kill -9 only those can be sent again. The journal is
merged into DuckDB every ``store.MERGE_INTERVAL`` seconds in a short transaction (see ``core/store/__init__.py`` for why
the file is never held open).
A failed call is recorded with its reason in ``results.error``; re-running the run retries it.

Throughput (``bench/runner_throughput.py``): everything before the first call is kept short — the model's one-off
costs (``model.prepare()``, e.g. importing aiohttp) run in a thread from ``start_run`` on; journal recovery, the done
rows and the first prompts' cache lookup share one DB transaction (the later prompts are keyed and looked up while
the first calls fly: ``later_items.split_head`` keeps a prompt's items on one side); a new run's item rows are inserted
(and the scorer warmed up) while the first wave of calls is at the model. Answers are journalled and reported
meanwhile, but not merged before the items are in (the DB never holds results of items it lacks; a dead process's
journal is recovered with only the results of stored items, its calls going to the cache). The last records and
the final status go in one transaction, after an extra merge made as soon as the last calls are sent. During the
calls: claims of four keys per slot per DB visit (opening DuckDB costs ~15 ms of CPU), merges that hand rows to Arrow
in one go, and Python's garbage collector paced while runs are live (``gc_pacing``: the plan frozen, young
collections every 20,000 allocations — the default cost ~10 % of the CPU at 256 in flight).

Cancel stops new calls at once, abandons calls in flight, keeps every finished one.

Provider batches (``start_run(..., batch=True, wait=True|False)``, openai/ and anthropic/): the same run (same key,
cache, tables) executed through OpenAI Batch or Anthropic Message Batches at half the list price instead of live
calls — kill-safe: every batch is in the store before the provider creates it, and the same call re-attaches (see
``batch.py``). A live run leaves prompts that sit in a provider batch alone; a run waiting on batches has status
'waiting'. ``estimate(..., batch=True)`` prices at the batch discount.

Modules: ``plan`` (run key, items, estimate, progress record) · ``progress`` (the recorder executors report to) ·
``handle`` (start/resume/run, the handle registry) ·
``executor`` (calls, retries, journal, merges) · ``gc_pacing`` (the collector during runs) · ``ratelimit`` (requests and tokens per minute) · ``batch``
(provider batch runs) · ``batch_collect`` (collecting a batch; list, refresh, cancel) · ``batch_files``
(export-batch / import-batch: the OpenAI batch file format for vLLM) · ``ray_engine`` (``run --engine ray``: request
lines through a Ray Data stage — an HTTP actor pool, or the vLLM processor for ``vllm/`` models — imported per
block) with ``ray_run`` (a Ray run as the live runner's run: run id, cache keys, claims), ``ray_connect`` (bounded
join, the local Ray's folder, the cluster watch), ``ray_workers`` (what runs on Ray's workers; they retry under
``core.models.retry_policy``, the live runner's policy) and ``ray_mapping`` (pure line ↔ row mappings).
"""

from core.runner.handle import RunHandle, active_runs, get_handle, resume_run, run, start_run
from core.runner.plan import Estimate, Progress, estimate
from core.runner.ray_engine import check_ray_address, start_ray_run

__all__ = ["Estimate", "Progress", "RunHandle", "active_runs", "check_ray_address", "estimate", "get_handle",
           "resume_run", "run", "start_ray_run", "start_run"]

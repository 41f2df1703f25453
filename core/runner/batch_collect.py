"""Collecting an ended provider batch into the store — the same ``calls`` and ``results`` rows a live call writes —
and the operations on stored batches that the CLI (``python -m core batches``) and the Runs page offer.

Collection is one transaction: the calls, the scored results of every item the batch answered (of whichever run
sent it), each request's outcome and the batch's phase 'collected' land together or not at all, so a process killed
while collecting simply collects again next time (the rows are upserts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from core import store
from core.errors import UserError
from core.models.batch.common import BatchState, Outcome
from core.models.pricing import estimate_cost
from core.runner.plan import failure_rows, result_rows
from core.store import batches as batch_store

MISSING = ("missing", "the batch ended without a result line for this request")


@dataclass
class RunItems:
    """What scoring a run's answers needs: its task, the identity of its calls, and its items by index."""

    run_id: str
    task: object
    model: str
    base_url: str | None
    params_json: str
    draw: int
    item: Callable[[int], dict]

    @classmethod
    def from_record(cls, row: dict) -> "RunItems":
        """Rebuilt from a stored run: item i is a pure function of (config, seed, i), so nothing else is needed."""
        from core.config import run_spec

        spec = run_spec(json.loads(row["config_json"]))
        task, cfg = spec.task_module, spec.config
        return cls(row["run_id"], task, row["model"], row.get("base_url"), row["params_json"], int(row["draw"] or 0),
                   lambda idx: task.item(cfg, int(idx)))


def reasoning_fields(ctx: RunItems, item: dict, out, req: dict | None = None) -> dict:
    """The reasoning columns of a batch call: its reasoning text and tokens as the outcome reports them, their cost
    at the batch price, and what the request carried for the item's reasoning effort — as recorded with the request
    at submission (``req``); rebuilt from the table only for a request submitted before that was recorded."""
    from core.models.params import SamplingParams
    from core.models.reasoning import reasoning_cost, sent_for

    if req is not None and req.get("dropped_params") is not None:
        sent = req.get("reasoning_sent")
    else:
        effort = item.get("reasoning") or json.loads(ctx.params_json).get("reasoning_effort") or "none"
        sent = sent_for(ctx.model, SamplingParams(reasoning_effort=effort), ctx.base_url)
    return {"reasoning": out.reasoning, "tokens_reasoning": out.tokens_reasoning,
            "cost_reasoning_usd": reasoning_cost(ctx.model, out.tokens_reasoning, batch=True),
            "reasoning_sent": sent}


def _run_rows(con, run_ids) -> dict[str, dict]:
    out = {}
    for run_id in run_ids:
        cur = con.execute("SELECT * FROM runs WHERE run_id = ?", [run_id])
        rows = cur.fetchall()
        if rows:
            out[run_id] = dict(zip([d[0] for d in cur.description], rows[0]))
    return out


def collect(db_path, backend, batch: dict, state: BatchState, known: dict[str, RunItems] | None = None
            ) -> list[Outcome]:
    """Read an ended batch's outcomes from the provider and store them. Returns the outcomes (the caller may learn
    from refused parameters). Raises what the provider raises; then nothing is written."""
    outcomes = {o.custom_id: o for o in backend.outcomes(state)}   # network first, outside the DB
    # a lease: restore waits for the collection, and a swap under it stops it (core/store/writers.py)
    with store.writing(db_path, f"the collection of batch {batch['batch_id']}"):
        return _collect(db_path, batch, state, outcomes, dict(known or {}))


def _collect(db_path, batch: dict, state: BatchState, outcomes: dict[str, Outcome], known: dict[str, RunItems]
             ) -> list[Outcome]:
    with store.connect(db_path) as con:
        requests = batch_store.requests_of(con, batch["batch_id"])
        runs = {r["run_id"] for r in requests}
        records = _run_rows(con, runs - set(known))
        attempts = {run_id: batch_store.failed_attempts(con, run_id) for run_id in runs}
    for run_id, row in records.items():
        known[run_id] = RunItems.from_record(row)
    run_wide = batch.get("dropped_params") or "[]"   # for requests submitted before each carried its own record
    calls, results, cost = [], [], 0.0
    called: set[str] = set()
    at = store.now_utc()
    for req in requests:
        ctx = known.get(req["run_id"])
        out = outcomes.get(req["custom_id"])
        if ctx is None or out is None or out.kind != "succeeded":
            continue   # a deleted run, or no success: the outcome below says so
        item = ctx.item(req["idx"])
        n = attempts[req["run_id"]].get(req["cache_key"], (0, None))[0] + 1
        if req["cache_key"] not in called:
            called.add(req["cache_key"])
            price = estimate_cost(ctx.model, out.tokens_in, out.tokens_out, batch=True)
            cost += price or 0.0
            calls.append({
                "cache_key": req["cache_key"], "model": ctx.model, "base_url": ctx.base_url,
                "params_json": ctx.params_json, "prompt_sha": store.sha256(item["prompt"]), "draw": ctx.draw,
                "response": out.text, "latency_ms": None, "tokens_in": out.tokens_in, "tokens_out": out.tokens_out,
                "cost_usd": price, "finish_reason": out.finish_reason,
                "dropped_params": req["dropped_params"] if req.get("dropped_params") is not None else run_wide,
                "error": None, "attempts": n, "at": at, **reasoning_fields(ctx, item, out, req)})
        results += result_rows(ctx.task, req["run_id"], [item], req["cache_key"], out.text, n, False)
    default = ("failed", f"the batch failed: {state.error or state.status}") if state.status == "failed" else MISSING
    counts = _final_counts(outcomes, requests, default[0])
    with store.connect(db_path) as con, store.transaction(con):
        store.write_calls_results(con, calls, results)
        batch_store.set_outcomes(con, batch["batch_id"],
                                 {cid: (o.kind, o.error) for cid, o in outcomes.items()}, default)
        batch_store.update(con, batch["batch_id"], phase="collected", status=state.status, collected_at=at,
                           ended_at=batch.get("ended_at") or at, cost_usd=cost, n_processing=0, **counts)
        for run_id in runs:
            if run_id in known:
                store.refresh_run_counts(con, run_id)
    return list(outcomes.values())


def _final_counts(outcomes: dict[str, Outcome], requests: list[dict], default_kind: str) -> dict:
    sent = {r["custom_id"] for r in requests}
    kinds = [outcomes[c].kind if c in outcomes else default_kind for c in sent]
    return {"n_succeeded": kinds.count("succeeded"), "n_expired": kinds.count("expired"),
            "n_cancelled": kinds.count("cancelled"),
            "n_errored": len(kinds) - kinds.count("succeeded") - kinds.count("expired") - kinds.count("cancelled")}


def give_up(db_path, run_id: str, items_by_key: dict[str, list[dict]], reasons: dict[str, str],
            attempts: dict[str, int]) -> None:
    """Record items whose prompt failed in batches ``max_attempts`` times as failed (results.error), and retire
    those attempts so that running the run again gives them a fresh allowance (as a live run retries failures)."""
    rows = []
    for key, items in items_by_key.items():
        rows += failure_rows(run_id, items, f"batch: {reasons.get(key) or 'failed'} "
                                            f"(after {attempts.get(key, 0)} batch attempt(s))", attempts.get(key, 0))
    with store.connect(db_path) as con, store.transaction(con):
        store.write_calls_results(con, [], rows)
        batch_store.retire(con, run_id, items_by_key)
        store.refresh_run_counts(con, run_id)


# ------------------------------------------------------------------------------------------ stored batches (CLI, UI)


def list_batches(db_path=None, run_id: str | None = None):
    """Batches (newest first) as a DataFrame, with an ``age`` column (time since creation)."""
    with store.connect(db_path) as con:
        df = batch_store.list_df(con, run_id)
    if not df.empty:
        df.insert(df.columns.get_loc("created_at"), "age", store.now_utc() - df["created_at"])
    return df


def batch_overview(db_path, run_id: str) -> tuple[int, dict]:
    """(this run's items in batches not yet collected, provider status — or our phase — → number of batches)."""
    with store.connect(db_path) as con:
        waiting = batch_store.summary(con, run_id)["waiting_items"]
        states = dict(con.execute(
            """SELECT CASE WHEN phase = 'open' THEN coalesce(status, 'open') ELSE phase END AS s, count(*)
               FROM batches WHERE run_id = ? GROUP BY s""", [run_id]).fetchall())
    return waiting, {k: int(v) for k, v in states.items()}


def _backend_for(batch: dict, api_key: str | None):
    from core.models import get_model
    from core.models.batch import batch_backend

    return batch_backend(get_model(batch["model"], base_url=batch.get("base_url"), api_key=api_key))


def _find_batch(con, batch_id: str) -> dict:
    row = batch_store.get(con, batch_id)
    if row is None:
        raise UserError(f"no batch {batch_id!r} in the database (see: python -m core batches)")
    return row


def cancel_batch(db_path, batch_id: str, *, api_key: str | None = None) -> dict:
    """Ask the provider to cancel a batch (ours or the provider's id). Requests it already ran are kept and
    collected as usual; the rest come back cancelled. A process following the run stops submitting after it."""
    with store.connect(db_path) as con:
        batch = _find_batch(con, batch_id)
    if batch["phase"] != "open" or not batch.get("provider_batch_id"):
        raise UserError(f"batch {batch['batch_id']} is {batch['phase']}: only an open batch can be cancelled")
    backend = _backend_for(batch, api_key)
    try:
        state = backend.cancel(batch["provider_batch_id"])
    finally:
        backend.close()
    with store.connect(db_path) as con, store.transaction(con):
        batch_store.update(con, batch["batch_id"], status=state.status, cancel_requested=True)
        return batch_store.get(con, batch["batch_id"])


def refresh_batches(db_path, run_id: str, *, api_key: str | None = None) -> list[dict]:
    """Ask the provider how each open batch of a run stands and store the answer (no results are read)."""
    with store.connect(db_path) as con:
        batches = [b for b in batch_store.open_for(con, run_id) if b["phase"] == "open"]
    backends: dict = {}
    try:
        for b in batches:
            key = (b["model"], b.get("base_url"))
            if key not in backends:
                backends[key] = _backend_for(b, api_key)
            state = backends[key].retrieve(b["provider_batch_id"])
            with store.connect(db_path) as con, store.transaction(con):
                store_state(con, b["batch_id"], state)
    finally:
        for backend in backends.values():
            backend.close()
    with store.connect(db_path) as con:
        return [batch_store.get(con, b["batch_id"]) for b in batches]


def store_state(con, batch_id: str, state: BatchState) -> None:
    """A polled state into the batch row (counts while it runs; the final ones come from collect)."""
    c = state.counts
    fields = {"status": state.status, "n_succeeded": c.get("succeeded"), "n_errored": c.get("errored"),
              "n_expired": c.get("expired"), "n_cancelled": c.get("cancelled"), "n_processing": c.get("processing")}
    if state.output_file_id or state.error_file_id:
        fields.update(output_file_id=state.output_file_id, error_file_id=state.error_file_id)
    if state.error:
        fields["error"] = state.error[:1000]
    if state.ended:
        fields["ended_at"] = store.now_utc()
    batch_store.update(con, batch_id, **fields)

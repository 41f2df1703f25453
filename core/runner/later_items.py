"""A big run's first calls go out before all of its items are keyed: ``split_head`` takes the items of the first
prompts (one claim block's worth), which the run's setup keys, looks up and claims; ``feed`` keys and looks up the
others while those first calls are at the model, hands the keys still to answer to the workers (``SharedWork.add``)
and scores the cached ones from the cache, so keying and looking up a big run's items never delays its first call."""

from __future__ import annotations

import asyncio

from core import store
from core.runner import gc_pacing
from core.runner.plan import call_key
from core.store import batches as batch_store

FIRST_WAVE_HEAD_START = 0.02   # seconds the workers get to send the first calls before setup leftovers run


def split_head(items: list[dict], prompts: int) -> tuple[list[dict], list[dict]]:
    """(head, rest): the items of the first ``prompts`` distinct prompts, in order, and the others. A prompt's items
    are all on one side (its cache key is too), so the two sides never share a call."""
    first: set[str] = set()
    for it in items:
        if len(first) == prompts and it["prompt"] not in first:
            break
        first.add(it["prompt"])
    if len(first) < prompts:
        return items, []
    head, rest = [], []
    for it in items:
        (head if it["prompt"] in first else rest).append(it)
    return head, rest


def cached_and_waiting(con, keys: list[str]) -> tuple[dict[str, dict], set[str]]:
    """Of ``keys``: the cached calls (key -> row), and the uncached keys sitting in a provider batch (this run's or
    another's: not called live, they are paid for already and arrive when the batch is collected)."""
    cached = store.lookup_calls(con, keys)
    return cached, batch_store.in_flight(con, set(keys) - set(cached))


async def feed(ex, rest: list[dict], done: set[int]) -> None:
    """The run's later items (after ``split_head``'s first prompts), while the first calls are at the model: their
    keys, which are cached, which sit in a provider batch; the others go to the workers at once
    (``SharedWork.add``), the cached ones are scored (in a thread) and stored once the run's items are in the DB.
    A cancelled run stops looking. ``ex``: the run's core.runner.executor.Executor."""
    await asyncio.sleep(FIRST_WAVE_HEAD_START)   # the workers send the first calls first
    rest = [it for it in rest if it["idx"] not in done]
    if not rest or ex.handle.cancelled:
        return
    plan, draw = ex.plan, ex.draw
    keys = await asyncio.to_thread(lambda: {it["idx"]: call_key(plan, it, draw) for it in rest})
    if ex.handle.cancelled:
        return

    def look():
        with store.connect(ex.db_path) as con:
            return cached_and_waiting(con, list(dict.fromkeys(keys[it["idx"]] for it in rest)))

    cached, waiting_keys = await asyncio.to_thread(look)
    ex.work.add(ex.to_answer(rest, keys, set(), cached, waiting_keys))
    gc_pacing.freeze_plan()   # the rest of the plan too (and what is in flight now: bounded, kept to the end)
    if not ex.has_cached:
        return
    await asyncio.shield(ex.items_ready)
    rows = await asyncio.to_thread(ex.cached_rows, cached)   # scored off the event loop

    def write_cached() -> None:
        with ex.db_lock, store.connect(ex.db_path) as con, store.transaction(con):
            store.write_calls_results(con, [], rows)
            store.refresh_run_counts(con, ex.run_id)

    await store.aretry_conflicts(write_cached)   # a merge of this run by another thread meanwhile: done again
    ex.count_cached(rows)

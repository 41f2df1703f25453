"""Claims on calls in flight, so two identical runs started together share their calls instead of paying twice.

Before a run sends a call it claims the call's cache key (table ``claims``, schema version 4). A key claimed by a
live run of another process (or another run of this one) is not sent again: that run waits and takes the answer from
the cache once the owner has merged it. A claim is released when its answer (or its final failure) is merged into
DuckDB — in the same transaction, so there is no moment when a key is neither claimed nor cached — and all of a run's
claims go when it ends. A claim lapses when its owner process is gone (kill -9; the same liveness test as the
journals') or after its lease (a live owner that is stuck).

    claim(con, keys, owner, run_id, lease_s) -> Claimed(mine, others, cached)
    release(con, keys, owner, run_id)          release_run(con, owner, run_id)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Iterable

from core.store.db import now_utc
from core.store.journal import owner_alive


@dataclass
class Claimed:
    mine: set[str] = field(default_factory=set)      # claimed by this run now (or already): send them
    others: set[str] = field(default_factory=set)    # claimed by another live run: wait for its answer
    cached: set[str] = field(default_factory=set)    # answered meanwhile: take the answer from the cache
    orphaned: set[str] = field(default_factory=set)  # taken over from a process that died (its journal may hold
                                                     # answers not merged yet: recover it, then claim again)


def _keys_table(keys: Iterable[str]):
    import pyarrow as pa  # (not before a run's first call: see ``claim``)

    return pa.table({"cache_key": pa.array(sorted(set(keys)), type=pa.string())})


def claim(con, keys: Iterable[str], owner: str, run_id: str, lease_s: float) -> Claimed:
    """Claim ``keys`` for (``owner``, ``run_id``) inside the caller's transaction. The keys travel as list
    parameters, not Arrow tables: a live run claims its first block before its first request, and pyarrow's first
    array imports pandas (~0.2 s; see cache.lookup_calls)."""
    out = Claimed()
    keys = sorted(set(keys))
    if not keys:
        return out
    out.cached = {r[0] for r in con.execute(
        "SELECT c.cache_key FROM calls c WHERE c.error IS NULL AND c.cache_key IN "
        "(SELECT unnest(CAST(? AS VARCHAR[])))", [keys]).fetchall()}
    held = con.execute("SELECT c.cache_key, c.owner, c.run_id, c.claimed_at, c.lease_s FROM claims c "
                       "WHERE c.cache_key IN (SELECT unnest(CAST(? AS VARCHAR[])))", [keys]).fetchall()
    now = now_utc()
    lapsed = []
    for key, who, run, at, lease in held:
        if key in out.cached:
            lapsed.append(key)   # answered: whoever claimed it has nothing left to do for it
            continue
        if who == owner and run == run_id:
            out.mine.add(key)
        elif not owner_alive(who):
            lapsed.append(key)
            out.orphaned.add(key)
        elif at is not None and at + timedelta(seconds=float(lease or 0)) > now:
            out.others.add(key)
        else:
            lapsed.append(key)
    if lapsed:
        con.execute("DELETE FROM claims WHERE cache_key IN (SELECT unnest(CAST(? AS VARCHAR[])))",
                    [sorted(set(lapsed))])
    free = [k for k in keys if k not in out.cached and k not in out.others and k not in out.mine]
    if free:
        con.execute("INSERT INTO claims SELECT unnest(CAST(? AS VARCHAR[])), CAST(? AS VARCHAR), CAST(? AS VARCHAR), "
                    "CAST(? AS TIMESTAMP), CAST(? AS DOUBLE)", [free, owner, run_id, now, float(lease_s)])
        out.mine.update(free)
    return out


def release(con, keys: Iterable[str], owner: str, run_id: str) -> None:
    """Drop this run's claims on ``keys`` (inside the caller's transaction, e.g. the merge of their answers)."""
    table = _keys_table(k for k in keys if k)
    if table.num_rows == 0:
        return
    con.register("_release_keys", table)
    try:
        con.execute("DELETE FROM claims WHERE owner = ? AND run_id = ? AND cache_key IN "
                    "(SELECT cache_key FROM _release_keys)", [owner, run_id])
    finally:
        con.unregister("_release_keys")


def release_run(con, owner: str, run_id: str) -> None:
    """Drop every claim of a run (it ended, was cancelled or failed), and those of processes that are gone."""
    con.execute("DELETE FROM claims WHERE owner = ? AND run_id = ?", [owner, run_id])
    for (who,) in con.execute("SELECT DISTINCT owner FROM claims").fetchall():
        if not owner_alive(who):
            con.execute("DELETE FROM claims WHERE owner = ?", [who])

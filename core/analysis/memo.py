"""In-process memo of analysis results: a repeated ``report`` call (or any caller that asks again) on a database
nobody wrote to meanwhile is answered without SQL over the results.

The key is the database file, a fingerprint of core's sources, every run's aggregate version (core/store/
aggregates.py: grows with each write of items or results through the store, never given twice in a store), whether
the aggregate path is on, the function and its arguments. ``persist`` keeps a result in the store's analysis_cache
too, for the next process (the newest KEEP_STORED per function). Results are
copied in and out, so a caller that changes what it got back does not change the memo. Stores without aggregates
(older layouts opened read-only, flat tables) are never memoised.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
from collections import OrderedDict
from typing import Any, Callable

log = logging.getLogger(__name__)

MAX_ENTRIES = 64
# key -> result, least recently used first. Hand-made rather than an lru_cache: the key is computed from the
# database's state (not the call's arguments), and results are deep-copied in and out
_CACHE: "OrderedDict[str, Any]" = OrderedDict()
_LOCK = threading.Lock()


def key(con, name: str, args: tuple, kwargs: dict) -> str | None:
    """The memo's key of ``name(*args, **kwargs)`` on ``con``'s store, or None where nothing is memoised."""
    import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
    from core.analysis import aggregated
    from core.store.schema import database_file

    path = database_file(con)
    if path is None or not aggregated.enabled() or not aggregates.present(con):
        return None
    try:
        spec = json.dumps([name, args, kwargs], sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None
    return json.dumps([str(path), code_fingerprint(), aggregates.versions(con), spec])


_FINGERPRINT: list[str] = []   # the digest, once computed (a list the tests replace to stand for other code)


def code_fingerprint() -> str:
    """A digest of core's source files: part of every key, so a result kept in the store by an earlier version of
    the code (another algorithm, another output layout) is never read by this one — a finished run's versions never
    change again, so they alone would keep it forever. Computed once per process (~200 small files)."""
    if not _FINGERPRINT:
        import hashlib
        from pathlib import Path

        root = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode("utf-8") + b"\0" + path.read_bytes())
        _FINGERPRINT.append(digest.hexdigest()[:16])
    return _FINGERPRINT[0]


def call(con, name: str, fn: Callable, *args, persist: bool = False, **kwargs):
    """``fn(con, *args, **kwargs)``, memoised (see the module docstring). ``persist``: also kept in the store's
    ``analysis_cache`` table (JSON; not while a run of the store is live), so another process — a page after a
    restart, the next CLI call — reads it instead of computing it again; for results that are plain JSON (the
    findings report)."""
    k = key(con, name, args, kwargs)
    if k is None:
        return fn(con, *args, **kwargs)
    with _LOCK:
        if k in _CACHE:
            _CACHE.move_to_end(k)
            return copy.deepcopy(_CACHE[k])
    out = _stored(con, name, k) if persist else None
    if out is None:
        out = fn(con, *args, **kwargs)
        if persist and not _store_live(con):
            _store(con, name, k, out)
    with _LOCK:
        _CACHE[k] = copy.deepcopy(out)
        while len(_CACHE) > MAX_ENTRIES:
            _CACHE.popitem(last=False)
    return out


def frame_json(frame) -> dict:
    """A DataFrame as plain JSON for ``call(persist=True)``: columns, rows (missing values null; numpy arrays in a
    cell as lists) and dtypes, so ``json_frame`` gives back the same frame."""
    import numpy as np

    cells = frame.astype(object).where(frame.notna(), None)
    rows = [[v.tolist() if isinstance(v, np.ndarray) else v.item() if isinstance(v, np.generic) else v
             for v in row] for row in cells.to_numpy().tolist()]
    return {"columns": [str(c) for c in frame.columns], "rows": rows,
            "dtypes": {str(c): str(t) for c, t in frame.dtypes.items()}}


def json_frame(got: dict):
    """The DataFrame ``frame_json`` wrote: each column back to its dtype where it can be (NaN for a float column's
    nulls); object columns as they came."""
    import pandas as pd

    frame = pd.DataFrame(got["rows"], columns=got["columns"])
    for col, dtype in (got.get("dtypes") or {}).items():
        if dtype != "object" and col in frame.columns:
            try:
                frame[col] = frame[col].astype(dtype)
            except (TypeError, ValueError) as exc:   # left as it came
                log.debug("column %s stays %s, not %s (%s)", col, frame[col].dtype, dtype, type(exc).__name__)
    return frame


KEEP_STORED = 200   # analysis_cache rows kept per function (the newest): browsing never evicts the findings

# A result is not kept while a run of the store is live: the versions change with every merge and a result kept
# then would never be read again (each click of a page watching the run would write a row).


def _store_live(con) -> bool:
    import core.store.analysis_cache as analysis_cache  # a submodule import, as in ``key``

    return analysis_cache.any_run_live(con)


def _stored(con, name: str, key: str):
    import core.store.analysis_cache as analysis_cache

    text = analysis_cache.get(con, _digest(name, key))
    return json.loads(text) if text is not None else None


def _store(con, name: str, key: str, value) -> None:
    """Keep ``value`` (JSON) under ``key``; a store that cannot take it (read-only, busy) just does not keep it."""
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError) as exc:
        log.debug("%s: result is not JSON, not kept in the store (%s)", name, type(exc).__name__)
        return
    import core.store.analysis_cache as analysis_cache

    analysis_cache.put(con, _digest(name, key), text, group=f"{name}:", keep=KEEP_STORED)


def _digest(name: str, key: str) -> str:
    """The stored key: the function's name (rows are pruned per function) and a digest of the whole key."""
    import hashlib

    return f"{name}:{hashlib.sha256(key.encode('utf-8')).hexdigest()}"


def clear() -> None:
    with _LOCK:
        _CACHE.clear()

"""In-process memo of analysis results: a repeated ``report`` call (or any caller that asks again) on a database
nobody wrote to meanwhile is answered without SQL over the results.

The key is the database file, every run's aggregate version (core/store/aggregates.py: grows with each write of
items or results through the store), whether the aggregate path is on, the function and its arguments. Results are
copied in and out, so a caller that changes what it got back does not change the memo. Stores without aggregates
(older layouts opened read-only, flat tables) are never memoised.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from typing import Any, Callable

MAX_ENTRIES = 64
_CACHE: "OrderedDict[str, Any]" = OrderedDict()
_LOCK = threading.Lock()


def _key(con, name: str, args: tuple, kwargs: dict) -> str | None:
    from core.analysis import aggregated
    from core.store import aggregates
    from core.store.schema import database_file

    path = database_file(con)
    if path is None or not aggregated.enabled() or not aggregates.present(con):
        return None
    try:
        spec = json.dumps([name, args, kwargs], sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None
    return json.dumps([str(path), aggregates.versions(con), spec])


def call(con, name: str, fn: Callable, *args, **kwargs):
    """``fn(con, *args, **kwargs)``, memoised (see the module docstring)."""
    key = _key(con, name, args, kwargs)
    if key is None:
        return fn(con, *args, **kwargs)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return copy.deepcopy(_CACHE[key])
    out = fn(con, *args, **kwargs)
    with _LOCK:
        _CACHE[key] = copy.deepcopy(out)
        while len(_CACHE) > MAX_ENTRIES:
            _CACHE.popitem(last=False)
    return out


def clear() -> None:
    with _LOCK:
        _CACHE.clear()

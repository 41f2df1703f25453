"""Analysis results computed once and shared: by every caller of the process (every browser session of a server,
every call of a CLI command) and, for the slow ones, by the next process through the store.

**Keys: what a result reads, not the database file.** A result is filed under a *slot* — the store (its path and
the file's identity: a restore puts another file at the path), the function, its arguments and the runs it reads —
and the *state* of those runs: each one's ``core.store.aggregates.states`` entry (the aggregate version, which
grows with every write of the run's items or results, and a digest of its ``runs`` row: status, counts, name …),
a fingerprint of core's sources and whether the aggregate path is on. A write to run X changes the state of every
slot that reads X and of no other; a view over every run (``run_ids`` None) reads the set of stored runs too. Which
runs a call reads: ``reads=`` when given, else its first argument when that is a list of run ids (None: every
run), else every run. One state is kept per slot (a run's versions only grow: an older state is never asked again),
and at most ``MAX_ENTRIES`` slots, least recently used first out.

**One computation per key at a time.** A caller that asks for a key another thread is computing waits for that
result instead of computing it too (``shared``); so eight sessions opening the same page at the same moment cost
one computation and one copy in memory. What a caller gets back is its own cheap copy: containers (dicts, lists)
copied, DataFrames as shallow copies — pandas' copy-on-write copies the data before either side writes —, numpy
arrays made read-only; the kept original is never handed out.

**Kept in the store.** ``call(persist=True)`` also keeps a (JSON) result in the store's ``analysis_cache`` table
for the next process, under a digest of the state and the call (not the path: the table travels with the file),
the newest ``KEEP_STORED`` per function — unless a run it reads is live (its state changes with every merge: a row
kept then would never be read again). A finished run's results are kept while other runs are live.

Pages reach the same memo through ``view`` without opening the store while nothing was written: the states of the
store's runs are read again only when the file or its write-ahead log changed (size, time, identity).
Stores without aggregates (older layouts opened read-only, flat tables) are never memoised by ``call``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

log = logging.getLogger(__name__)

MAX_ENTRIES = 128    # slots kept in the process (each with the result of one state of its runs)

# slot -> (state, result), least recently used first. Hand-made rather than an lru_cache: the state is read from
# the store (not the call's arguments), one state per slot, and several threads wait for one computation
_CACHE: "OrderedDict[str, tuple[str, Any]]" = OrderedDict()
_FLIGHTS: dict[tuple[str, str], "_Flight"] = {}   # (slot, state) being computed -> where its waiters wait
_LOCK = threading.Lock()
_COUNTS = {"computed": 0, "shared": 0, "waited": 0}   # what ``shared`` did (``stats``: benches, tests)

ALL = object()   # ``reads=ALL``: the call reads every run of the store


@dataclass
class _Flight:
    done: threading.Event = field(default_factory=threading.Event)
    value: Any = None
    error: BaseException | None = None


def shared(slot: str, state: str, compute: Callable[[], Any]):
    """``compute()``'s result for (``slot``, ``state``), computed once however many threads ask at the same time:
    the first computes, the others wait for its result (or its exception). Each caller gets its own copy (see the
    module docstring); the result is kept as the slot's only state."""
    with _LOCK:
        hit = _CACHE.get(slot)
        if hit is not None and hit[0] == state:
            _CACHE.move_to_end(slot)
            _COUNTS["shared"] += 1
            return _copy(hit[1])
        flight = _FLIGHTS.get((slot, state))
        leader = flight is None
        if leader:
            flight = _FLIGHTS[(slot, state)] = _Flight()
        else:
            _COUNTS["waited"] += 1
    if not leader:
        flight.done.wait()
        if flight.error is not None:
            raise flight.error
        return _copy(flight.value)
    try:
        value = _freeze(compute())
    except BaseException as exc:
        flight.error = exc
        raise
    else:
        flight.value = value
        with _LOCK:
            _COUNTS["computed"] += 1
            _CACHE[slot] = (state, value)
            _CACHE.move_to_end(slot)
            while len(_CACHE) > MAX_ENTRIES:
                _CACHE.popitem(last=False)
        return _copy(value)
    finally:
        with _LOCK:
            _FLIGHTS.pop((slot, state), None)
        flight.done.set()


def stats() -> dict:
    """How many results ``shared`` computed, served from the memo, and served to a caller that waited."""
    with _LOCK:
        return dict(_COUNTS)


def _freeze(value):
    """The kept original: numpy arrays in it (also those in a DataFrame's object cells) made read-only."""
    import numpy as np
    import pandas as pd

    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, dict):
        for v in value.values():
            _freeze(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _freeze(v)
    elif isinstance(value, pd.DataFrame):
        for col in value.select_dtypes(include="object").columns:
            cells = value[col]
            first = cells.first_valid_index()
            if first is not None and isinstance(cells.at[first], np.ndarray):
                for v in cells:
                    if isinstance(v, np.ndarray):
                        v.setflags(write=False)
    return value


def _copy(value):
    """A caller's own copy of a kept result: containers copied, DataFrames / Series shallow (copy-on-write), numpy
    arrays and immutable values shared (the arrays are read-only)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    if isinstance(value, (str, int, float, bool, type(None), bytes)):
        return value
    import numpy as np
    import pandas as pd

    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.copy(deep=False)
    if isinstance(value, (np.ndarray, np.generic)):
        return value
    import copy

    return copy.deepcopy(value)


# ------------------------------------------------------------------------------------------------------ keys


def _identity(path) -> str:
    """The database file at ``path`` (its device and inode: a restored backup is another file at the same path)."""
    try:
        st = os.stat(path)
        return f"{path}|{st.st_dev}:{st.st_ino}"
    except OSError:
        return f"{path}|-"


def _reads(args: tuple, reads) -> list[str] | None:
    """The run ids a call reads (None: every run)."""
    if reads is ALL:
        return None
    if reads is not None:
        return sorted(set(reads))
    first = args[0] if args else ALL
    if isinstance(first, (list, tuple)) and all(isinstance(r, str) for r in first):
        return sorted(set(first))
    return None


def _spec(name: str, args: tuple, kwargs: dict) -> str | None:
    try:
        return json.dumps([name, args, kwargs], sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Key:
    slot: str        # the store, the call and the runs it reads
    state: str       # their state, the code, the aggregate switch
    stored: str      # the key in the store's analysis_cache (no path: the table travels with its file)
    live: bool       # a run it reads is being written

    def __str__(self) -> str:
        return json.dumps([self.slot, self.state])


def key_of(con, name: str, args: tuple, kwargs: dict, reads=None) -> Key | None:
    """The memo's key of ``name(*args, **kwargs)`` on ``con``'s store, or None where nothing is memoised."""
    import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
    from core.analysis import aggregated
    from core.store.schema import database_file

    path = database_file(con)
    if path is None or not aggregated.enabled() or not aggregates.present(con):
        return None
    spec = _spec(name, args, kwargs)
    if spec is None:
        return None
    runs = _reads(args, reads)
    states = aggregates.states(con, runs)
    return _key(_identity(path), spec, runs, states)


def _key(identity: str, spec: str, runs: list[str] | None, states: tuple) -> Key:
    state = json.dumps([code_fingerprint(), [list(s) for s in states]])
    slot = json.dumps([identity, spec, runs])
    live = any(s[2] in _live_statuses() for s in states)
    return Key(slot, state, json.dumps([state, spec, runs]), live)


def _live_statuses() -> tuple:
    import core.store.aggregates as aggregates

    return aggregates.LIVE


def key(con, name: str, args: tuple, kwargs: dict, reads=None) -> str | None:
    """``key_of`` as one string (a key for a caller's own memo of something ``name`` computes)."""
    k = key_of(con, name, args, kwargs, reads)
    return None if k is None else str(k)


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


# ------------------------------------------------------------------------------------------------------ calls


def call(con, name: str, fn: Callable, *args, persist: bool = False, reads=None, **kwargs):
    """``fn(con, *args, **kwargs)``, memoised and shared (see the module docstring). ``reads``: the run ids it reads
    (``ALL``: every run), when its first argument does not say. ``persist``: also kept in the store's
    ``analysis_cache`` table (JSON; not while a run it reads is live), so another process — a page after a restart,
    the next CLI call — reads it instead of computing it again; for results that are plain JSON (the findings
    report)."""
    k = key_of(con, name, args, kwargs, reads)
    if k is None:
        return fn(con, *args, **kwargs)

    def compute():
        out = _stored(con, name, k.stored) if persist and not k.live else None
        if out is None:
            out = fn(con, *args, **kwargs)
            if persist and not k.live:
                _store(con, name, k.stored, out)
        return out

    return shared(k.slot, k.state, compute)


def view(db_path, name: str, fn: Callable, run_ids: Sequence[str] | None, **kwargs):
    """``fn(con, run_ids, **kwargs)`` on a short-lived connection to the store at ``db_path``, memoised and shared
    like ``call`` (reading ``run_ids``; every run for None) — keyed without opening the store while nothing was
    written to it (``store_states``): a page's repeated question costs no connection."""
    from core import store

    run_ids = list(run_ids) if run_ids is not None else None

    def compute():
        with store.connect(db_path) as con:
            return fn(con, run_ids, **kwargs)

    path = str(store.resolve_db_path(db_path))
    spec = _spec(name, (), kwargs)
    identity, states = store_states(path)
    if spec is None:
        return compute()
    runs = sorted(set(run_ids)) if run_ids is not None else None
    if states is None:   # no aggregates (an older layout): keyed on the file's change token
        return shared(json.dumps(["view", identity, spec, runs]), file_token(path), compute)
    k = _key(identity, spec, runs, _of(states, runs))
    return shared("view|" + k.slot, k.state, compute)


def _of(states: tuple, runs: list[str] | None) -> tuple:
    """The states of ``runs`` (all for None) among every run's (absent runs as in ``aggregates.states``)."""
    if runs is None:
        return states
    known = {s[0]: s for s in states}
    return tuple(known.get(r, (r, None, None, None)) for r in runs)


def runs_token(db_path, run_ids: Sequence[str] | None) -> str:
    """A short token of the state of these runs (every run for None) in the store at ``db_path``: it changes with
    every write to them (and, in a store without aggregates, with every write)."""
    import hashlib

    from core import store

    path = str(store.resolve_db_path(db_path))
    identity, states = store_states(path)
    runs = sorted(set(run_ids)) if run_ids is not None else None
    got = [identity, file_token(path)] if states is None else [identity, [list(s) for s in _of(states, runs)]]
    return hashlib.sha256(json.dumps(got).encode("utf-8")).hexdigest()[:24]


# the states of every run of a store, by path: (file change token, identity, states or None without aggregates)
_SNAPSHOTS: dict[str, tuple[str, str, tuple | None]] = {}
_SNAPSHOT_LOCK = threading.Lock()


def file_token(path) -> str:
    """Changes whenever the database file or its write-ahead log is written (size, modification time, identity):
    a key for what reads the whole store."""
    parts = []
    for f in (str(path), f"{path}.wal"):
        try:
            s = os.stat(f)
            parts.append(f"{s.st_dev}:{s.st_ino}:{s.st_size}:{s.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return "|".join(parts)


def store_states(db_path) -> tuple[str, tuple | None]:
    """(identity of the file, ``aggregates.states`` of every run — None for a store without aggregates or with the
    aggregate path off), read from the store only when its file changed since the last reading in this process."""
    import core.store.aggregates as aggregates
    from core import store
    from core.analysis import aggregated

    path = str(store.resolve_db_path(db_path))
    on = aggregated.enabled()
    with _SNAPSHOT_LOCK:   # one reader at a time: sessions asking together share one reading
        token = file_token(path)   # before the reading: a write after it changes the token again
        got = _SNAPSHOTS.get(path)
        if got is not None and got[0] == token:
            return got[1], (got[2] if on else None)
        with store.connect(path) as con:
            states = aggregates.states(con) if aggregates.present(con) else None
        _SNAPSHOTS[path] = (token, _identity(path), states)
        return _identity(path), (states if on else None)


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


def _stored(con, name: str, key: str):
    import core.store.analysis_cache as analysis_cache  # a submodule import, as in ``key_of``

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
    with _SNAPSHOT_LOCK:
        _SNAPSHOTS.clear()

"""The aggregate path of the views: the same numbers as the row path, read from the store's per-configuration counts
(core/store/aggregates.py) instead of every result row — a view over 10 million results reads a few hundred
thousand rows of counts.

``relation(con, run_ids, columns, scoring)`` gives the FROM-clause relation, one row per (run, configuration):
its factor columns (item factors from ``agg_configs``, run-level ones from ``runs``) and the counts of ``scoring``;
or None when the aggregate path cannot answer exactly — then the caller reads rows as before. It cannot when:
the relation is not the store's ``v_results`` (an uploaded frame, a flat table); the store predates the aggregate
tables; a grouping or filter column is not a configuration-level column, or varies inside a configuration of
these runs (``agg_inside``: a deceptive sample's hypernyms, parts of speech); or the path is switched off
(``STUDIO_AGGREGATES=0``, or ``rows_only()`` — the tests compare both paths on random stores).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
from core.analysis.sql import VIEW  # noqa: F401  (the store's results view: the only relation with aggregates)
from core.store.schema import FACTOR_COLUMNS, REASONING_EFFECTIVE, RUN_PARAM_FACTORS

RUN_LEVEL = ("run_id", "config_id", "model", "task", "name", *RUN_PARAM_FACTORS)
CONFIG_LEVEL = frozenset((*RUN_LEVEL, *FACTOR_COLUMNS))

_local = threading.local()


def enabled() -> bool:
    if getattr(_local, "rows_only", False):
        return False
    return os.environ.get("STUDIO_AGGREGATES", "1").strip().lower() not in ("0", "off", "false", "no")


@contextmanager
def rows_only() -> Iterator[None]:
    """Within this block (this thread), every view reads rows (the reference the aggregate path is tested against)."""
    before = getattr(_local, "rows_only", False)
    _local.rows_only = True
    try:
        yield
    finally:
        _local.rows_only = before


def inside_columns(con, run_ids: Sequence[str] | None) -> dict[str, set[str]]:
    """{kind: columns} of the factor columns that vary inside a configuration ('varies') or are NULL for only part
    of one ('partial_null') in these runs."""
    if run_ids is None:
        rows = con.execute('SELECT DISTINCT kind, "column" FROM agg_inside').fetchall()
    else:
        ids = sorted(set(run_ids))
        if not ids:
            return {"varies": set(), "partial_null": set()}
        rows = con.execute(f'SELECT DISTINCT kind, "column" FROM agg_inside WHERE run_id IN '
                           f'({", ".join("?" * len(ids))})', ids).fetchall()
    out: dict[str, set[str]] = {"varies": set(), "partial_null": set()}
    for kind, column in rows:
        out.setdefault(kind, set()).add(column)
    return out


def usable(con, view: str, run_ids: Sequence[str] | None, columns: Iterable[str]) -> bool:
    """Whether grouping / filtering ``columns`` of these runs can be answered from the aggregates exactly."""
    if view != VIEW or not enabled() or not aggregates.present(con):
        return False
    columns = set(columns)
    if not columns <= CONFIG_LEVEL:
        return False
    inside = inside_columns(con, run_ids)
    return not (columns & (inside["varies"] | inside["partial_null"]))


def relation(con, scoring: str) -> str:
    """One row per (run, configuration) of the store: factor columns and the counts of ``scoring`` (NULL counts for a
    configuration with no result yet)."""
    if scoring not in aggregates.SCORINGS:
        from core.errors import UserError

        raise UserError(f"unknown scoring {scoring!r}; expected one of: {', '.join(aggregates.SCORINGS)}")
    factors, params = _factors(), ", ".join(f"{sql} AS {name}" for name, sql in RUN_PARAM_FACTORS.items())
    counts = ", ".join(f'k."{c}"' for c, _ in aggregates.COUNTS)
    return (f"(SELECT a.run_id, a.config_id, {factors}, a.n_items, ru.model, ru.task, ru.name, {params}, {counts} "
            "FROM agg_configs a JOIN runs ru ON ru.run_id = a.run_id "
            "LEFT JOIN agg_counts k ON k.run_id = a.run_id AND k.config_id = a.config_id "
            f"AND k.scoring = '{scoring}') AS agg")


def configs(con) -> str:
    """One row per (run, configuration) of the store with its factor columns and no counts: the rows of
    ``relation`` without the join to the counts, for questions about levels (which values a factor takes), not
    numbers — a tenth of the time at 10 million results."""
    factors, params = _factors(), ", ".join(f"{sql} AS {name}" for name, sql in RUN_PARAM_FACTORS.items())
    return (f"(SELECT a.run_id, a.config_id, {factors}, a.n_items, ru.model, ru.task, ru.name, {params} "
            "FROM agg_configs a JOIN runs ru ON ru.run_id = a.run_id) AS agg")


def _factors() -> str:
    """The factor columns of agg_configs; ``reasoning`` is the configuration's effort, else the run's."""
    return ", ".join(REASONING_EFFECTIVE.replace("i.", "a.") + " AS reasoning" if c == "reasoning" else f'a."{c}"'
                     for c in FACTOR_COLUMNS)


def lengths(scoring: str) -> str:
    """agg_lengths of ``scoring`` (joined to ``relation`` on run_id, config_id for the group columns)."""
    return f"(SELECT * FROM agg_lengths WHERE scoring = '{scoring}') AS l"

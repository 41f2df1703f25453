"""What a view reads: the store's per-configuration counts (core/store/aggregates.py) where they answer its question
exactly, else the rows — decided here, once, so that every view writes its query once.

``source(con, run_ids, by, filters, counts=…, scoring=…)`` gives a FROM-clause relation with the same columns
either way: the ``by`` columns and the ``counts`` of ``aggregates.COUNTS`` (n, n_correct, made_up_sum, …) under
``scoring``. On the aggregates it has one row per (run, configuration) of the slice (NULL counts for one with no
result yet); on the rows one per ``by`` group, counted by DuckDB from the rows with the very definitions the store
counts with. Either way ``sum(n)``, ``sum(n_correct)`` … grouped by ``by`` (or by fewer columns) give the view's
numbers, and a view that wants only answered groups says ``WHERE n > 0``. Without ``counts`` it is the slice's
configurations (aggregates) or items (rows), for questions about levels; with ``lengths=True`` the answered items'
(correct, truth length, answer length) counts ``k`` — the error table's "G vs. L" lists. ``column_facts`` says which
values factor columns take and whether they change inside a configuration.

The aggregates cannot answer exactly when: the relation is not the store's ``v_results`` (an uploaded frame, a flat
table); the store predates the aggregate tables; a grouping or filter column is not a configuration-level column,
or varies inside a configuration of these runs (``agg_inside``: a deceptive sample's hypernyms, parts of speech);
or the path is switched off (``STUDIO_AGGREGATES=0``, or ``rows_only()`` — the tests compare both paths on random
stores). ``_answers`` decides; ``source`` and ``column_facts`` are the only ones that ask it.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
from core.analysis.sql import VIEW, check_scoring, quote, relation, scored, view_columns, where_clause
from core.store.schema import FACTOR_COLUMNS, REASONING_EFFECTIVE, RUN_PARAM_FACTORS

RUN_LEVEL = ("run_id", "config_id", "model", "task", "name", *RUN_PARAM_FACTORS)
CONFIG_LEVEL = frozenset((*RUN_LEVEL, *FACTOR_COLUMNS))
# what ``source`` counts: the items of a configuration (``agg_configs``) and the store's counts (``agg_counts``)
COUNTS = ("n_items", *(name for name, _ in aggregates.COUNTS))
# counts of every item of a configuration, answered or not (the others count answered items only)
_ALL_ITEMS = frozenset(("n_items", "n_rows", "n_failed", "cost_usd"))

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
    of one ('partial_null') in these runs, as the store records them (``agg_inside``)."""
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


def _answers(con, view: str, run_ids: Sequence[str] | None, columns: Iterable[str]) -> bool:
    """The decision: whether grouping / filtering ``columns`` of these runs can be answered from the aggregates
    exactly (no columns: whether the store's aggregates serve ``view`` at all)."""
    if view != VIEW or not enabled() or not aggregates.present(con):
        return False
    columns = set(columns)
    if columns <= set(RUN_LEVEL):   # a run's own columns never change inside one of its configurations
        return True
    if not columns <= CONFIG_LEVEL:
        return False
    inside = inside_columns(con, run_ids)
    return not (columns & (inside["varies"] | inside["partial_null"]))


class Source(NamedTuple):
    """A FROM-clause relation (``sql``, with its ``params``) and whether it reads the store's aggregates
    (``aggregated``: then a question over every run, or over both scorings, costs little)."""
    sql: str
    params: list
    aggregated: bool


def source(con, run_ids: Sequence[str] | None, by: Sequence[str] = (),
           filters: Mapping[str, Sequence[Any]] | None = None, *, counts: Sequence[str] = (),
           scoring: str = "lenient", carry: Sequence[str] = (), lengths: bool = False, view: str = VIEW) -> Source:
    """What a view of these runs, restricted to ``filters``, reads (see the module docstring): the ``by`` columns
    with the ``counts`` (names of ``COUNTS``) of ``scoring`` — per (run, configuration) from the aggregates, per
    ``by`` group from the rows; ``carry``: columns a view shows beside ``by`` without grouping by them (their value
    in the group: the configuration's on the aggregates, any of the group's on the rows). ``lengths``: per group
    the answered items' ``correct``, ``truth_len``, ``answer_len`` and their number ``k``. Neither: the slice's
    configurations (aggregates) or items (rows) with every column, for questions about levels."""
    check_scoring(scoring)
    by = list(dict.fromkeys(c for c in by if c))
    carry = [c for c in dict.fromkeys(carry) if c and c not in by]
    unknown = [c for c in counts if c not in COUNTS]
    if unknown:
        raise ValueError(f"unknown counts: {', '.join(unknown)}")
    filters = {k: v for k, v in (filters or {}).items()}
    if _answers(con, view, run_ids, [*by, *carry, *filters]):
        where, params = where_clause(con, run_ids, filters, answered=False, view=VIEW)
        if lengths:
            keys = ", ".join(f"g.{quote(c)}" for c in by)
            return Source(
                f"(SELECT {keys + ', ' if by else ''}l.correct, l.truth_len, l.answer_len, l.k "
                f"FROM agg_lengths l JOIN (SELECT * FROM {_configs()} {where}) AS g "
                f"ON g.run_id = l.run_id AND g.config_id = l.config_id WHERE l.scoring = ?) AS src",
                [*params, scoring], True)
        if not counts:
            return Source(f"(SELECT * FROM {_configs()} {where}) AS src", params, True)
        cols = ", ".join([*(quote(c) for c in dict.fromkeys(("run_id", "config_id", *by, *carry))),
                          *(quote(c) for c in counts)])
        return Source(f"(SELECT {cols} FROM {_counted(scoring)} {where}) AS src", params, True)
    if not counts and not lengths:
        where, params = where_clause(con, run_ids, filters, answered=False, view=view)
        return Source(f"(SELECT * FROM {relation(con, view)} {where}) AS src", params, False)
    have = set(view_columns(con, view))
    every = lengths is False and bool(set(counts) & _ALL_ITEMS)
    where, params = where_clause(con, run_ids, filters, answered=not every, view=view)
    # the call columns (cost) are only in the view itself, not in the lighter relation of the item and result rows
    rel = scored(con, view, scoring, view) if "cost_usd" in counts else relation(con, view, scoring)
    # strict precision, recall and Jaccard: of the reference's parse, from its parts computed once per row
    parts = (scoring == "strict" and not lengths and bool(set(counts) & _METRIC_COUNTS)
             and {"truth", "parsed_strict"} <= have)
    if parts:
        rel = aggregates.with_strict_parts(rel, "truth", "parsed_strict")
    keys = [quote(c) for c in by]
    if lengths:
        keys += ["correct", "truth_len", "answer_len"]
        sel = [*keys, "count(*) AS k"]
    else:
        sel = [*keys, *(f"any_value({quote(c)}) AS {quote(c)}" for c in carry),
               *(f"{_row_count(c, have, scoring if parts else 'lenient')} AS {quote(c)}" for c in counts)]
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    return Source(f"(SELECT {', '.join(sel)} FROM {rel} {where}{group}) AS src", params, False)


# the columns of the store's count definitions (core/store/aggregates.py, over its own row names) in the view
_VIEW_NAMES = {"s_correct": "correct", "s_followed": "followed", "s_answer_len": "answer_len",
               "s_made_up": "made_up", "r_error": "error", "r_empty": "empty_truth", "r_precision": "precision",
               "r_recall": "recall", "r_jaccard": "jaccard", "c.cost_usd": "cost_usd"}
_NAME = re.compile(r"\b(?:c\.cost_usd|[sr]_[a-z_]+)\b")
# the counts made of the per-item metrics (precision_sum, precision_n …)
_METRIC_COUNTS = frozenset(c for c, expr in aggregates.COUNTS if any(f"r_{m}" in expr for m in aggregates.METRICS))


def _row_count(name: str, have: set[str], scoring: str) -> str:
    """SQL of the count ``name`` over rows of the view: the store's own definition (``aggregates.COUNTS``) with its
    row names replaced by the view's columns (NULL for a column this relation does not have) — the per-item metrics
    (precision …) of ``scoring`` as the store counts them (``aggregates.metric_sql``; strict: over a relation with
    the columns of ``aggregates.with_strict_parts``)."""
    expr = dict(aggregates.COUNTS, n_items="count(*)")[name]

    def column(m: re.Match) -> str:
        got = _VIEW_NAMES.get(m.group(0))
        if got is None:
            raise ValueError(f"the count {name} is not counted from rows")
        if got not in have:
            return "NULL"
        if got in aggregates.METRICS:
            setops = "coalesce(task, 'setops') = 'setops'" if "task" in have else "TRUE"
            return aggregates.metric_sql(got, scoring, stored=quote(got), setops=setops)
        return quote(got)

    sql = _NAME.sub(column, expr)
    # the store keeps whole numbers as BIGINT (a sum of integers is HUGEINT in DuckDB)
    return sql if any(k in expr for k in ("r_precision", "r_recall", "r_jaccard", "cost_usd")) \
        else f"CAST({sql} AS BIGINT)"


class Facts(NamedTuple):
    """What a factor column does in a slice: some item has a value (``non_null``), two distinct values occur
    (``two_values``), some item has none (``has_null``), two values inside one configuration (``varies``), a value
    and NULL inside one (``partial_null``)."""
    non_null: bool | None
    two_values: bool | None
    has_null: bool | None
    varies: bool
    partial_null: bool


def column_facts(con, run_ids: Sequence[str] | None, columns: Sequence[str],
                 filters: Mapping[str, Sequence[Any]] | None = None, view: str = VIEW, values: bool = True
                 ) -> dict[str, Facts]:
    """{column: Facts} of ``columns`` in these runs (all their items, answered or not) within ``filters``. From the
    aggregates where they answer (a configuration's value of a column, ``agg_inside`` for what changes inside one;
    inside a slice, a column that changes inside a configuration of these runs needs the rows), else from one scan
    of the rows grouped by configuration. ``values=False``: only what changes inside a configuration (``varies``,
    ``partial_null``; the other fields None), which the aggregates answer without reading the configurations."""
    columns = list(dict.fromkeys(columns))
    filters = dict(filters or {})
    out: dict[str, Facts] = {}
    if columns and _answers(con, view, run_ids, filters):
        inside = inside_columns(con, run_ids)
        named = inside["varies"] | inside["partial_null"]
        fast = [c for c in columns if c in CONFIG_LEVEL and not (filters and c in named)]
        if fast and not values:
            out.update((c, Facts(None, None, None, c in inside["varies"], c in inside["partial_null"])) for c in fast)
        elif fast:
            row = _config_stats(con, run_ids, fast, filters)
            for i, c in enumerate(fast):
                non_null, differs, null_configs = row[3 * i: 3 * i + 3]
                varies, partial = c in inside["varies"], c in inside["partial_null"]
                out[c] = Facts(bool(non_null), bool(differs) or varies, bool(null_configs) or partial, varies,
                               partial)
    rest = [c for c in columns if c not in out]
    if rest:
        out.update(_row_facts(con, run_ids, rest, filters, view))
    return {c: out[c] for c in columns}


def _config_stats(con, run_ids, columns, filters) -> tuple:
    """Per column: its non-null configurations, whether they take two values, its NULL configurations."""
    where, params = where_clause(con, run_ids, filters, answered=False, view=VIEW)
    parts = ", ".join(f"count({q}), min({q}) IS DISTINCT FROM max({q}), count(*) - count({q})"
                      for q in map(quote, columns))
    return tuple(con.execute(f"SELECT {parts} FROM {_configs()} {where}", params).fetchone())


def _row_facts(con, run_ids, columns, filters, view) -> dict[str, Facts]:
    where, params = where_clause(con, run_ids, filters, answered=False, view=view)
    # min/max/count are much cheaper than count(DISTINCT …) on a million rows
    inner = ", ".join(f"count({q}) AS n{i}, min({q}) AS lo{i}, max({q}) AS hi{i}"
                      for i, q in enumerate(map(quote, columns)))
    outer = ", ".join(f"coalesce(sum(n{i}), 0), min(lo{i}) IS DISTINCT FROM max(hi{i}), "
                      f"bool_or(lo{i} IS DISTINCT FROM hi{i}), bool_or(n{i} > 0 AND n{i} < total)"
                      for i in range(len(columns)))
    row = con.execute(f"SELECT coalesce(sum(total), 0), {outer} FROM (SELECT count(*) AS total, {inner} "
                      f"FROM {relation(con, view)} {where} GROUP BY run_id, config_id)", params).fetchone()
    total, out = row[0], {}
    for i, c in enumerate(columns):
        non_null, differs, varies, partial = row[1 + 4 * i: 5 + 4 * i]
        out[c] = Facts(non_null > 0, bool(differs), non_null < total, bool(varies), bool(partial))
    return out


def change_token(con, view: str = VIEW) -> str | None:
    """The stored runs' versions as a fingerprint of what every view reads (no scan of the rows), when the
    aggregates serve ``view``; else None."""
    if not source(con, None, view=view).aggregated:
        return None
    return "v" + ",".join(f"{r}:{v}" for r, v in aggregates.versions(con))


def _counted(scoring: str) -> str:
    """One row per (run, configuration) of the store: factor columns and the counts of ``scoring`` (NULL counts for
    a configuration with no result yet)."""
    factors, params = _factors(), ", ".join(f"{sql} AS {name}" for name, sql in RUN_PARAM_FACTORS.items())
    counts = ", ".join(f'k."{c}"' for c, _ in aggregates.COUNTS)
    return (f"(SELECT a.run_id, a.config_id, {factors}, a.n_items, ru.model, ru.task, ru.name, {params}, {counts} "
            "FROM agg_configs a JOIN runs ru ON ru.run_id = a.run_id "
            "LEFT JOIN agg_counts k ON k.run_id = a.run_id AND k.config_id = a.config_id "
            f"AND k.scoring = '{scoring}') AS agg")


def _configs() -> str:
    """One row per (run, configuration) of the store with its factor columns and no counts: the rows of
    ``_counted`` without the join to the counts, for questions about levels (which values a factor takes), not
    numbers — a tenth of the time at 10 million results."""
    factors, params = _factors(), ", ".join(f"{sql} AS {name}" for name, sql in RUN_PARAM_FACTORS.items())
    return (f"(SELECT a.run_id, a.config_id, {factors}, a.n_items, ru.model, ru.task, ru.name, {params} "
            "FROM agg_configs a JOIN runs ru ON ru.run_id = a.run_id) AS agg")


def _factors() -> str:
    """The factor columns of agg_configs; ``reasoning`` is the configuration's effort, else the run's."""
    return ", ".join(REASONING_EFFECTIVE.replace("i.", "a.") + " AS reasoning" if c == "reasoning" else f'a."{c}"'
                     for c in FACTOR_COLUMNS)

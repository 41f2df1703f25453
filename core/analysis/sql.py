"""The SQL vocabulary every analysis module builds on: the results view, its columns, the verdict columns of each
scoring, the relation aggregations read, quoted identifiers (only from the view's own column list) and WHERE clauses
whose values are always parameters."""

from __future__ import annotations

import math
import weakref
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

import core.store.provenance as provenance  # noqa: PLR0402
from core.errors import UserError
from core.store.schema import REASONING_EFFECTIVE, RUN_PARAM_FACTORS
from core.tasks import RESULTS_VIEW

VIEW = RESULTS_VIEW   # the store's results view

# Which verdict a view shows: "strict" = the SetLexSem reference's rule (core/tasks/setops/parse_strict.py), "lenient"
# = our parser. Only set-operation rows have a strict verdict; other tasks' rows keep theirs under either choice.
SCORINGS = ("strict", "lenient")
# the result columns each scoring has its own copy of (<name>_strict for strict)
SCORED_COLUMNS = ("parsed", "followed", "correct", "answer_len", "made_up")


def quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


# connection -> {table: its columns}; an entry goes with its connection
_COLUMNS: "weakref.WeakKeyDictionary[Any, dict[str, tuple[str, ...]]]" = weakref.WeakKeyDictionary()


def columns_of(con, table: str) -> tuple[str, ...]:
    """Column names of a table / view, asked of the catalogue once per connection (a connection that cannot be
    weakly referenced is asked every time)."""
    try:
        known = _COLUMNS.setdefault(con, {})
    except TypeError:
        known = {}
    cols = known.get(table)
    if cols is None:
        rows = con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main' "
            "ORDER BY ordinal_position", [table]).fetchall()
        cols = known[table] = tuple(r[0] for r in rows)
    return cols


def view_columns(con, view: str = VIEW) -> tuple[str, ...]:
    return columns_of(con, view)


CALL_ONLY = {"response", "latency_ms", "tokens_in", "tokens_out", "cost_usd", "finish_reason", "reasoning_text",
              "tokens_reasoning", "tokens_answer", "cost_reasoning_usd", "reasoning_sent"}


# an uploaded run's series: "<model> (claims of upload <run id>)"
UPLOAD_MARK = " (claims of upload "


def series_sql(con) -> str:
    """SQL of a row's *series* (over any relation with ``model`` and ``run_id``: the results view, the aggregates):
    its model for runs made here; for an uploaded run the model, the run and the word "claims" — an upload is a
    file's claims, never pooled with the runs made here nor with another upload (their replies to the same prompts
    may disagree). Without a ``runs`` table (a flat table, an uploaded frame) every row's series is its model."""
    if "source" not in columns_of(con, "runs"):
        return "model"
    return (f"CASE WHEN run_id IN (SELECT run_id FROM runs WHERE {provenance.UPLOADED_SQL}) "
            f"THEN model || '{UPLOAD_MARK}' || run_id || ')' ELSE model END")


def series_label(model: str, run_id: str, uploaded: bool) -> str:
    """``series_sql`` for one run, in Python."""
    return f"{model}{UPLOAD_MARK}{run_id})" if uploaded else str(model)


def check_scoring(scoring: str) -> str:
    if scoring not in SCORINGS:
        raise UserError(f"unknown scoring {scoring!r}; expected one of: {', '.join(SCORINGS)}")
    return scoring


def scored_expr(con, column: str, scoring: str, view: str = VIEW) -> str:
    """SQL for ``column`` (one of SCORED_COLUMNS) under ``scoring``, over a relation with the view's columns."""
    check_scoring(scoring)
    have = view_columns(con, view)
    if scoring == "lenient" or (strict := f"{column}_strict") not in have:
        return quote(column)
    if "task" not in have:
        return quote(strict)
    return f"CASE WHEN coalesce(task, 'setops') = 'setops' THEN {quote(strict)} ELSE {quote(column)} END"


def scored(con, relation: str, scoring: str, view: str = VIEW) -> str:
    """``relation`` with the verdict columns (correct, followed, parsed, answer_len, made_up) of ``scoring``."""
    check_scoring(scoring)
    have = view_columns(con, view)
    swaps = [f"{scored_expr(con, c, scoring, view)} AS {quote(c)}" for c in SCORED_COLUMNS
             if c in have and f"{c}_strict" in have]
    if scoring == "lenient" or not swaps:
        return relation
    if "truth_len" in have and "truth" in have:   # strict G: the stored truth's own size (ours lower-cases members)
        setops = "coalesce(task, 'setops') = 'setops' AND " if "task" in have else ""
        swaps.append(f"CASE WHEN {setops}json_valid(truth) AND json_type(truth) = 'ARRAY' "
                     "THEN CAST(json_array_length(truth) AS BIGINT) ELSE truth_len END AS truth_len")
    return f"(SELECT * REPLACE ({', '.join(swaps)}) FROM {relation}) AS scored"


def relation(con, view: str = VIEW, scoring: str = "lenient") -> str:
    """FROM-clause relation for aggregations (verdict columns of ``scoring``): ``v_results`` without the call columns
    and their LEFT JOIN on the call cache, over the store; the view itself for anything else."""
    return scored(con, base_src(con, view), scoring, view)


def base_src(con, view: str = VIEW) -> str:
    if view != VIEW:
        return view
    items, results, runs = (columns_of(con, t) for t in ("items", "results", "runs"))
    if not items or not results or not runs:
        return view
    sel = []
    for c in view_columns(con, view):
        q = quote(c)
        if c == "reasoning":   # the item's effort, else the run's
            sel.append(f"{REASONING_EFFECTIVE} AS reasoning")
        elif c in items:
            sel.append(f"i.{q}")
        elif c in CALL_ONLY:
            continue
        elif c in results:
            sel.append(f"r.{q}")
        elif c in ("model", "task", "name", "base_url", "source"):
            sel.append(f"ru.{q}")
        elif c == "run_status":
            sel.append("ru.status AS run_status")
        elif c == "provenance":
            sel.append(f"CASE WHEN {provenance.uploaded_sql('ru')} THEN 'uploaded' ELSE 'made here' END AS provenance")
        elif c in RUN_PARAM_FACTORS:
            sel.append(f"{RUN_PARAM_FACTORS[c]} AS {q}")
        else:
            return view  # a column we cannot place: use the view as it is
    return (f"(SELECT {', '.join(sel)} FROM items i JOIN runs ru ON ru.run_id = i.run_id "
            "LEFT JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx) AS v")


PER_RUN_JOIN = 8   # up to this many runs, ``setops_answers`` joins each run's items to its results apart


def setops_answers(con, item_exprs: Mapping[str, str], scoring: str, run_ids: Sequence[str] | None,
                   view: str = VIEW) -> tuple[str, list] | None:
    """SELECT of the answered set-operation items of ``run_ids`` (all runs: None) as ``item_exprs`` (name → SQL over
    the ``items`` table's own columns) and ``correct`` (the verdict under ``scoring``) — the rows ``relation`` and
    ``where_clause`` select with ``{"task": ["setops"]}``, with each expression computed on the items *before* they
    are joined to their results (at 10 million items, hashing the sets after the join cost three times as much).
    None when the view is not the store's (``base_src``). Up to ``PER_RUN_JOIN`` runs, each run's items join its
    results on ``idx`` alone (one integer key: at 10 million items, about half the CPU of the join on run and
    index); more runs, one join on both."""
    check_scoring(scoring)
    if base_src(con, view) == view:
        return None
    strict = scoring == "strict" and "correct_strict" in columns_of(con, "results")
    verdict = "correct_strict" if strict else "correct"
    sel = ", ".join(f"{expr} AS {quote(name)}" for name, expr in item_exprs.items())
    names = ", ".join(f"i.{quote(name)}" for name in item_exprs)
    if run_ids is not None and len(set(run_ids)) <= PER_RUN_JOIN:
        runs = [r for (r,) in con.execute("SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?)) AND "
                                          "CAST(task AS VARCHAR) = 'setops' ORDER BY run_id", [list(run_ids)]).fetchall()]
        if not runs:
            return f"SELECT {names}, NULL AS correct FROM (SELECT {sel} FROM items) AS i WHERE FALSE", []
        one = (f"SELECT {names}, r.{verdict} AS correct FROM (SELECT idx, {sel} FROM items WHERE run_id = ?) AS i "
               f"JOIN (SELECT idx, {verdict} FROM results WHERE run_id = ? AND {verdict} IS NOT NULL) AS r "
               "ON r.idx = i.idx")
        return " UNION ALL ".join([one] * len(runs)), [v for r in runs for v in (r, r)]
    where, params = ("WHERE run_id IN (SELECT unnest(?))", [list(run_ids)]) if run_ids is not None else ("", [])
    return (f"SELECT {names}, r.{verdict} AS correct FROM (SELECT run_id, idx, {sel} FROM items {where}) AS i "
            "JOIN runs ru ON ru.run_id = i.run_id JOIN results r ON r.run_id = i.run_id AND r.idx = i.idx "
            f"WHERE CAST(ru.task AS VARCHAR) = 'setops' AND r.{verdict} IS NOT NULL"), params


def check_column(con, column: str, view: str = VIEW) -> str:
    """``column`` quoted, for grouping or selecting over ``src``; UserError when the view has no such column, or
    when it is a measurement of each call (reply, latency, tokens, cost) that ``src`` leaves out."""
    if column not in view_columns(con, view):
        raise UserError(f"unknown column {column!r}")
    if column in CALL_ONLY and base_src(con, view) != view:
        raise UserError(f"cannot group by {column!r}: it is a measurement of each call (its reply, latency, tokens "
                        "or cost), not a factor of the items; group by a factor such as operation or members")
    return quote(column)


def where_clause(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence[Any]] | None,
                 answered: bool = True, view: str = VIEW) -> tuple[str, list]:
    """WHERE clause selecting runs, filters (column IN values; None matches NULL) and answered rows."""
    parts: list[str] = []
    params: list = []
    if run_ids is not None:
        run_ids = list(run_ids)
        if not run_ids:
            return "WHERE FALSE", []
        parts.append(f"run_id IN ({', '.join('?' * len(run_ids))})")
        params.extend(run_ids)
    cols = set(view_columns(con, view))
    for col, values in (filters or {}).items():
        if col not in cols:
            raise UserError(f"unknown filter column {col!r}")
        values = list(values) if isinstance(values, (list, tuple, set)) else [values]
        if not values:
            continue
        non_null = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        sub = []
        if non_null:
            # compare as text so "4" from a URL matches the integer 4
            sub.append(f"CAST({quote(col)} AS VARCHAR) IN ({', '.join('?' * len(non_null))})")
            params.extend(str(v) for v in non_null)
        if len(non_null) < len(values):
            sub.append(f"{quote(col)} IS NULL")
        parts.append("(" + " OR ".join(sub) + ")")
    if answered:
        parts.append("correct IS NOT NULL")
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def is_missing(v) -> bool:
    try:
        return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)) or v is pd.NA
    except TypeError:
        return False


def plain_value(v):
    if is_missing(v):
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)) and float(v).is_integer():
        return int(v)
    return v

"""The results view and plain queries over it: which factor columns exist, their levels, filters, drill-down
rows and the run overview. Every other analysis module builds its SQL on these helpers."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from core.analysis.labels import LABELS, label  # noqa: F401  (the labels' home is core.analysis.labels)
from core.analysis.sql import (  # noqa: F401  (public SQL names other modules have always reached through queries)
    CALL_ONLY,
    SCORED_COLUMNS,
    SCORINGS,
    VIEW,
    base_src,
    check_column,
    check_scoring,
    columns_of,
    is_missing,
    plain_value,
    quote,
    relation,
    scored,
    scored_expr,
    view_columns,
    where_clause,
)
from core.tasks import group_by

# Factor columns we know how to group by, in display order (declared by each task in core/tasks/<task>/factors.py).
# Only those present in the view are used.
SETOPS_FACTORS = group_by()["setops"]
QUANTIFIER_FACTORS = group_by()["quantifiers"]
RUN_FACTORS = ("model", "answer_format", "task", "name", "run_id")
ALL_FACTORS = tuple(dict.fromkeys(RUN_FACTORS + SETOPS_FACTORS + QUANTIFIER_FACTORS))   # a factor both tasks have once


# Columns a drill-down may show (beyond factors).
DETAIL_COLUMNS = (
    "run_id", "idx", "config_id", "sample", "prompt", "truth", "response", "parsed", "followed", "correct",
    "parsed_strict", "followed_strict", "correct_strict", "jaccard", "precision", "recall", "truth_len", "answer_len",
    "made_up", "empty_truth", "pred", "error",
    "latency_ms", "tokens_in", "tokens_out", "cost_usd", "set_a", "set_b", "reasoning_text", "tokens_reasoning",
)
_CALL_NAMES = {"reasoning_text": "reasoning"}   # v_results name -> calls column

def change_token(con, view: str = VIEW) -> str:
    """Fingerprint of the stored results (row counts); changes when rows are added, answered or deleted. On the
    store: the runs' aggregate versions (no scan of the rows)."""
    import core.store.aggregates as aggregates  # a submodule import: never waits on a core.store another thread is initialising
    from core.analysis import aggregated

    if aggregated.usable(con, view, None, ()):
        return "v" + ",".join(f"{r}:{v}" for r, v in aggregates.versions(con))
    row = con.execute(f"SELECT count(*), count(correct), count(DISTINCT run_id) FROM {view}").fetchone()
    return "-".join(str(x) for x in row)


# --------------------------------------------------------------------------------------------------------------------
# factors

def factor_columns(con, run_ids: Sequence[str] | None = None, view: str = VIEW, varying: bool = False,
                   per_sample: bool = False) -> list[str]:
    """Known factor columns with at least one non-null value (``varying``: at least two distinct values).

    Design factors only: a column whose value changes *inside* a configuration (the hypernyms of a deceptive item,
    the parts of speech of its members) describes a sample, not the design, and grouping configurations by it would
    test nothing the design controls; ``per_sample=True`` keeps such columns (filters, drill-down)."""
    present = [c for c in ALL_FACTORS if c in view_columns(con, view)]
    if not present:
        return []
    from core.analysis import aggregated

    if aggregated.usable(con, view, run_ids, ()) and set(present) <= aggregated.CONFIG_LEVEL:
        return _factor_columns_aggregated(con, run_ids, present, varying, per_sample)
    where, params = where_clause(con, run_ids, None, answered=False, view=view)
    # min/max/count are much cheaper than count(DISTINCT …) on a million rows
    inner = ", ".join(f"count({quote(c)}) AS n{i}, min({quote(c)}) AS lo{i}, max({quote(c)}) AS hi{i}"
                      for i, c in enumerate(present))
    outer = ", ".join(f"sum(n{i}), min(lo{i}) IS DISTINCT FROM max(hi{i}), bool_or(lo{i} IS DISTINCT FROM hi{i})"
                      for i in range(len(present)))
    row = con.execute(f"SELECT sum(total), {outer} FROM (SELECT count(*) AS total, {inner} FROM {relation(con, view)} "
                      f"{where} GROUP BY run_id, config_id)", params).fetchone()
    total, out = row[0] or 0, []
    for i, c in enumerate(present):
        n_non_null, differs, inside = row[1 + 3 * i], row[2 + 3 * i], row[3 + 3 * i]
        if not n_non_null:
            continue
        if inside and not per_sample and c not in RUN_FACTORS:
            continue
        if varying and not (differs or n_non_null < total):
            continue
        out.append(c)
    return out


def _factor_columns_aggregated(con, run_ids, present, varying, per_sample) -> list[str]:
    """``factor_columns`` from the store's per-configuration table: a configuration holds a column's value (its
    minimum when it varies inside), agg_inside says which columns vary inside one or are NULL for part of one."""

    from core.analysis import memo

    # memoised: a page asks for the factors and for the varying ones, the same scan
    inside, row = memo.call(con, "factor_stats", _factor_stats_aggregated, run_ids, list(present))
    out = []
    for i, c in enumerate(present):
        n_non_null, differs, n_null = row[1 + 3 * i], row[2 + 3 * i], row[3 + 3 * i]
        if not n_non_null:
            continue
        if c in inside["varies"] and not per_sample and c not in RUN_FACTORS:
            continue
        if varying and not (differs or c in inside["varies"] or n_null or c in inside["partial_null"]):
            continue
        out.append(c)
    return out


def _factor_stats_aggregated(con, run_ids, present) -> tuple[dict, tuple]:
    """Which columns vary inside a configuration (aggregated.inside_columns) and, per column of ``present``, its
    non-null configurations, whether it takes two values and its NULL configurations (after the total)."""
    from core.analysis import aggregated

    where, params = where_clause(con, run_ids, None, answered=False, view=VIEW)
    inside = aggregated.inside_columns(con, run_ids)
    parts = ", ".join(f"count({quote(c)}), min({quote(c)}) IS DISTINCT FROM max({quote(c)}), "
                      f"count(*) - count({quote(c)})" for c in present)
    row = con.execute(f"SELECT count(*), {parts} FROM {aggregated.configs(con)} {where}", params).fetchone()
    return inside, row


def varies_inside(con, run_ids: Sequence[str] | None, columns: Iterable[str],
                  filters: Mapping[str, Sequence[Any]] | None = None, view: str = VIEW) -> list[str]:
    """The ``columns`` whose value changes inside a configuration of this slice (two values, or a value and NULL):
    grouping configurations by one of them would split configurations into pieces (a deceptive item's parts of
    speech and hypernyms are drawn per sample). Run-level columns never vary inside one. Answered from the store's
    aggregates where they can answer it (``aggregated.inside_columns``), else by a GROUP BY over the rows."""
    cols = [c for c in dict.fromkeys(columns) if c and c not in RUN_FACTORS and c != "config_id"]
    if not cols:
        return []
    qs = [check_column(con, c, view) for c in cols]
    from core.analysis import aggregated

    if aggregated.usable(con, view, run_ids, ()):
        # the store's per-run record of the columns that vary (or are partly NULL) inside a configuration: a column
        # it does not name varies inside no configuration of these runs, whatever the slice; without a slice, one
        # it names does. Only a named column inside a slice needs the rows.
        inside = aggregated.inside_columns(con, run_ids)
        named = [c for c in cols if c in inside["varies"] | inside["partial_null"]]
        if not named or not filters:
            return named
        cols, qs = named, [check_column(con, c, view) for c in named]
    where, params = where_clause(con, run_ids, filters, answered=False, view=view)
    inner = ", ".join(f"min({q}) IS DISTINCT FROM max({q}) OR count({q}) NOT IN (0, count(*)) AS d{i}"
                      for i, q in enumerate(qs))
    outer = ", ".join(f"coalesce(bool_or(d{i}), FALSE)" for i in range(len(qs)))
    row = con.execute(f"SELECT {outer} FROM (SELECT {inner} FROM {relation(con, view)} {where} "
                      "GROUP BY run_id, config_id)", params).fetchone()
    return [c for c, inside in zip(cols, row) if inside]


def sizes_equal_in_runs(con, run_ids: Sequence[str] | None, view: str = VIEW) -> bool:
    """Whether |A| and |B| are equal in every item of these runs (then they are one factor, "|A| = |B|", and
    grouping by |A| alone makes the same groups)."""
    have = view_columns(con, view)
    if "size_a" not in have or "size_b" not in have:
        return False
    from core.analysis import aggregated

    where, params = where_clause(con, run_ids, None, answered=False, view=view)
    cond = f"{where} AND" if where else "WHERE"
    src = aggregated.configs(con) if aggregated.usable(con, view, run_ids, ("size_a", "size_b")) else relation(con, view)
    row = con.execute(f"SELECT count(*), count(*) FILTER (WHERE size_a IS DISTINCT FROM size_b) FROM {src} "
                      f"{cond} size_a IS NOT NULL", params).fetchone()
    return bool(row[0]) and not row[1]


def factor_levels(con, run_ids: Sequence[str] | None, column: str, view: str = VIEW) -> list:
    """The distinct values of ``column`` in these runs (NULL last), items not yet answered included."""
    col = check_column(con, column, view)
    from core.analysis import aggregated

    where, params = where_clause(con, run_ids, None, answered=False, view=view)
    src = aggregated.configs(con) if aggregated.usable(con, view, run_ids, [column]) else relation(con, view)
    rows = con.execute(f"SELECT DISTINCT {col} AS lv FROM {src} {where} ORDER BY lv NULLS LAST", params).fetchall()
    return [r[0] for r in rows]


def factor_levels_of(con, run_ids: Sequence[str] | None, columns: Sequence[str], view: str = VIEW
                     ) -> dict[str, list]:
    """{column: factor_levels(con, run_ids, column)} for several columns on one connection (a page's slice
    filters: one cached call instead of one per factor); the columns the aggregates answer in one scan."""
    from core.analysis import aggregated

    columns = list(dict.fromkeys(columns))
    fast = [c for c in columns if aggregated.usable(con, view, run_ids, [c])]
    out: dict[str, list] = {}
    if fast:
        where, params = where_clause(con, run_ids, None, answered=False, view=view)
        lists = ", ".join(f"list(DISTINCT {q} ORDER BY {q} NULLS LAST)"
                          for q in (check_column(con, c, view) for c in fast))
        out.update(zip(fast, (list(v) for v in con.execute(f"SELECT {lists} FROM {aggregated.configs(con)} {where}",
                                                               params).fetchone())))
    return {c: out[c] if c in out else factor_levels(con, run_ids, c, view=view) for c in columns}


# --------------------------------------------------------------------------------------------------------------------
# drill-down (A5)

def drilldown(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence] | None = None,
              correct: bool | None = None, config_id: str | None = None, limit: int = 200, offset: int = 0,
              view: str = VIEW, scoring: str = "lenient") -> pd.DataFrame:
    """Individual items of a slice with prompt, raw response, parsed answer and score (both verdicts: ``correct``
    and ``correct_strict``); ``correct`` = True/False keeps the items right/wrong under ``scoring``."""
    f = dict(filters or {})
    if config_id:
        f["config_id"] = [config_id]
    where, params = where_clause(con, run_ids, f, answered=False, view=view)
    extra = []
    if correct is not None:
        extra.append(f"{scored_expr(con, 'correct', scoring, view)} = ?")
        params.append(bool(correct))
    if extra:
        where = (where + " AND " if where else "WHERE ") + " AND ".join(extra)
    have = view_columns(con, view)
    facs = [c for c in ALL_FACTORS if c in have and c not in ("run_id", "task", "name")]
    cols = list(dict.fromkeys([*(c for c in DETAIL_COLUMNS if c in have),
                               *facs]))
    src = relation(con, view)
    calls = columns_of(con, "calls")
    if src != view and "cache_key" in have and calls:
        # pick the page of items first, then fetch only their calls (not a join over every call)
        call_cols = [c for c in cols if c in CALL_ONLY and _CALL_NAMES.get(c, c) in calls]
        item_cols = [c for c in cols if c not in CALL_ONLY]
        sel_p = ", ".join(f"p.{quote(c)}" for c in item_cols)
        sel_c = "".join(f", c.{quote(_CALL_NAMES.get(c, c))} AS {quote(c)}" for c in call_cols)
        keys = _page_keys(con, src, where, params, run_ids, int(limit), int(offset))
        if not keys:
            return pd.DataFrame(columns=cols)
        # the page's rows by key: each run's rows within the page's idx range (row groups outside it are skipped)
        ranges = " OR ".join("(run_id = ? AND idx BETWEEN ? AND ?)" for _ in keys)
        kparams = [x for run, idxs in keys.items() for x in (run, min(idxs), max(idxs))]
        wanted = [(run, i) for run, idxs in keys.items() for i in idxs]
        sql = (f"WITH p AS (SELECT {', '.join(quote(c) for c in dict.fromkeys([*item_cols, 'cache_key']))} "
               f"FROM {src} WHERE ({ranges}) AND (run_id, idx) IN (SELECT unnest(?::VARCHAR[]), "
               "unnest(?::BIGINT[]))) "
               f"SELECT {sel_p}{sel_c} FROM p LEFT JOIN calls c ON c.cache_key = p.cache_key ORDER BY p.run_id, p.idx")
        out = con.execute(sql, kparams + [[r for r, _ in wanted], [int(i) for _, i in wanted]]).df()
        return out[[c for c in cols if c in out.columns]]
    sel = ", ".join(quote(c) for c in cols)
    sql = f"SELECT {sel} FROM {view} {where} ORDER BY run_id, idx LIMIT ? OFFSET ?"
    return con.execute(sql, params + [int(limit), int(offset)]).df()


_FIRST_WINDOW = 1 << 16


def _page_keys(con, src: str, where: str, params: list, run_ids, limit: int, offset: int) -> dict[str, list[int]]:
    """{run_id: [idx, …]} of the items ``offset`` … ``offset + limit`` of a slice in (run_id, idx) order, found
    without sorting the whole slice: run by run, in windows of idx that grow fourfold (a window's row groups are
    read, the rest skipped by DuckDB's min/max of each row group), counting what an offset skips."""
    cond = where + " AND " if where else "WHERE "
    if run_ids is None:
        spans = con.execute("SELECT run_id, min(idx), max(idx) FROM items GROUP BY run_id ORDER BY run_id").fetchall()
    else:
        ids = sorted(set(run_ids))
        spans = con.execute(f"SELECT run_id, min(idx), max(idx) FROM items WHERE run_id IN "
                            f"({', '.join('?' * len(ids))}) GROUP BY run_id ORDER BY run_id", ids).fetchall()
    out: dict[str, list[int]] = {}
    need, skip = limit, offset
    for run, lo, hi in spans:
        if need <= 0:
            break
        start, width = int(lo), _FIRST_WINDOW
        while start <= int(hi) and need > 0:
            window = f"{cond}run_id = ? AND idx >= ? AND idx < ?"
            wparams = [*params, run, start, start + width]
            if skip:
                n = con.execute(f"SELECT count(*) FROM {src} {window}", wparams).fetchone()[0]
                if n <= skip:
                    skip -= n
                    start, width = start + width, width * 4
                    continue
            got = [r[0] for r in con.execute(f"SELECT idx FROM {src} {window} ORDER BY idx LIMIT ? OFFSET ?",
                                             [*wparams, need, skip]).fetchall()]
            skip = 0
            if got:
                out.setdefault(run, []).extend(int(i) for i in got)
                need -= len(got)
            start, width = start + width, width * 4
    return out


def item_detail(row: Mapping[str, Any]) -> dict[str, Any]:
    """One drill-down row (a dict or a DataFrame row) as display text for the prompt / response / answer panel.

    Missing values (None, NaN, pd.NA — what a DataFrame row holds for NULL columns, and NaN is truthy) are never
    shown as "nan": a failed call says so with its error, an answer with no set says the instruction was not
    followed, and an unanswered item is "not scored"."""
    def get(key):
        v = row.get(key) if hasattr(row, "get") else None
        return None if is_missing(v) else v

    error, response = get("error"), get("response")
    if response is not None:
        response_text = str(response)
    elif error is not None:
        response_text = f"(no response: the call failed — {error})"
    else:
        response_text = "(no response yet)"

    def verdict(suffix: str) -> tuple[str, str]:
        parsed, correct, followed = get("parsed" + suffix), get("correct" + suffix), get("followed" + suffix)
        if parsed is not None:
            parsed_text = str(parsed)
        elif response is not None and followed is not None and not bool(followed):
            parsed_text = "(no answer found: did not follow the instruction)"
        else:
            parsed_text = "(none)"
        if correct is None:
            correct_text = "not scored (the call failed)" if error is not None else (
                "not scored (not answered yet)" if response is None or not suffix else "not scored")
        else:
            correct_text = "yes" if bool(correct) else "no"
        return parsed_text, correct_text

    parsed_text, correct_text = verdict("")
    out = {"parsed": parsed_text, "correct": correct_text}
    if get("correct_strict") is not None or get("parsed_strict") is not None:
        out["parsed_strict"], out["correct_strict"] = verdict("_strict")
    idx = get("idx")
    thought, t_reason = get("reasoning_text"), get("tokens_reasoning")
    return {"run_id": get("run_id"), "idx": None if idx is None else int(idx), "prompt": str(get("prompt") or ""),
            "response": response_text, "truth": "(none)" if get("truth") is None else str(get("truth")),
            "error": None if error is None else str(error), **out,
            # the reply's reasoning, kept apart from its answer (None: the reply had none)
            "reasoning": None if thought is None else str(thought),
            "tokens_reasoning": None if t_reason is None else int(t_reason)}


def run_overview(con, run_ids: Sequence[str] | None = None, view: str = VIEW, scoring: str = "lenient"
                 ) -> pd.DataFrame:
    """Per run: model, items, answered, failed (calls that ended in an error: not in the accuracy), correct,
    accuracy (over the answered items), cost — the headline numbers; verdicts of ``scoring``."""
    from core.analysis import aggregated

    if aggregated.usable(con, view, run_ids, ()):
        import core.store.aggregates as aggregates

        if scoring not in aggregates.SCORINGS:
            aggregated.relation(con, scoring)   # says which scorings there are
        from core.analysis import memo

        # both scorings in one statement, memoised: a page shows the strict overview and the lenient one beside it
        # (answers without a strict verdict), and the second then costs no query
        both = memo.call(con, "run_overview_scorings", _run_overview_aggregated, run_ids)
        return both[both["scoring"] == scoring].drop(columns="scoring").reset_index(drop=True)
    where, params = where_clause(con, run_ids, None, answered=False, view=view)
    failed = "count(*) FILTER (WHERE correct IS NULL AND error IS NOT NULL)" if "error" in view_columns(con, view) \
        else "0"
    sql = (f"SELECT run_id, any_value(model) AS model, any_value(task) AS task, count(*) AS items, "
           f"count(correct) AS answered, {failed} AS failed, sum(CAST(correct AS INTEGER)) AS n_correct, "
           f"100.0 * avg(CAST(correct AS INTEGER)) AS accuracy, count(DISTINCT config_id) AS configs, "
           f"sum(cost_usd) AS cost_usd FROM {scored(con, view, scoring, view)} {where} GROUP BY run_id "
           "ORDER BY run_id")
    return con.execute(sql, params).df()


def run_overview_among(con, run_ids: Sequence[str], view: str = VIEW, scoring: str = "lenient") -> pd.DataFrame:
    """run_overview of ``run_ids``, read from every run's overview when the aggregates serve it (that statement is
    memoised with both scorings: a page that lists every run, then shows one, asks the store once); else their own
    scan of the rows, never every run's."""
    from core.analysis import aggregated

    if aggregated.usable(con, view, None, ()):
        every = run_overview(con, None, view, scoring)
        return every[every["run_id"].isin(list(run_ids))].reset_index(drop=True)
    return run_overview(con, run_ids, view, scoring)


def _run_overview_aggregated(con, run_ids: Sequence[str] | None) -> pd.DataFrame:
    """run_overview from the store's aggregates, for every scoring (column ``scoring``) in one statement."""
    import core.store.aggregates as aggregates
    from core.analysis import aggregated

    where, params = where_clause(con, run_ids, None, answered=False, view=VIEW)
    parts = [f"SELECT '{sc}' AS scoring, run_id, any_value(model) AS model, any_value(task) AS task, "
             f"CAST(sum(n_items) AS BIGINT) AS items, CAST(coalesce(sum(n), 0) AS BIGINT) AS answered, "
             f"CAST(coalesce(sum(n_failed), 0) AS BIGINT) AS failed, CAST(sum(n_correct) AS HUGEINT) AS n_correct, "
             f"100.0 * (sum(n_correct) / sum(n)) AS accuracy, count(*) AS configs, sum(cost_usd) AS cost_usd "
             f"FROM {aggregated.relation(con, sc)} {where} GROUP BY run_id" for sc in aggregates.SCORINGS]
    return con.execute(" UNION ALL ".join(f"({p})" for p in parts) + " ORDER BY scoring, run_id",
                       params * len(parts)).df()


_ALIAS_KINDS = {"operation": "operations", "phrasing": "phrasings", "approach": "approaches", "members": "members"}


def filters_from_pairs(pairs: Iterable[str]) -> dict[str, list[str]]:
    """Parse ["col=v1,v2", …] (URL / CLI form) into a filters dict; ignores malformed entries. The SetLexSem
    reference's value names (``approach=chain_of_thought``, ``phrasing=formal_language`` …) are read as ours."""
    from core.tasks.setops import aliases

    out: dict[str, list[str]] = {}
    for p in pairs:
        if "=" not in p:
            continue
        k, v = p.split("=", 1)
        k = k.strip()
        if k and v:
            values = [x for x in v.split(",") if x != ""]
            if k in _ALIAS_KINDS:
                values = [aliases.canonical(_ALIAS_KINDS[k], x) for x in values]
            out.setdefault(k, []).extend(values)
    return out


def answers_feed(con, run_ids: Sequence[str], limit: int = 30, view: str = VIEW) -> pd.DataFrame:
    """The answers of some runs, newest first (for a live view): item, its sets and their members' hypernyms, the
    truth, the raw response, the parsed answer and whether it is correct; unanswered items are left out."""
    have = view_columns(con, view)
    want = [c for c in ("run_id", "idx", "condition", "operation", "sample", "set_a", "set_b", "member_hypernyms",
                        "hypernym_a", "hypernym_b", "truth", "response", "parsed", "correct", "at") if c in have
            or c == "at"]
    if not run_ids:
        return pd.DataFrame(columns=want)
    ph = ", ".join("?" * len(run_ids))
    sel = ", ".join(f"v.{quote(c)}" if c != "at" else "r.at" for c in want)
    sql = (f"SELECT {sel} FROM {view} v JOIN results r ON r.run_id = v.run_id AND r.idx = v.idx "
           f"WHERE v.run_id IN ({ph}) AND v.correct IS NOT NULL ORDER BY r.at DESC, v.idx DESC LIMIT ?")
    return con.execute(sql, [*run_ids, int(limit)]).df()

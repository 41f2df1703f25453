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
    from core.analysis import aggregated

    token = aggregated.change_token(con, view)
    if token is not None:
        return token
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
    from core.analysis import aggregated, memo

    # memoised on the store's view: a page asks for the factors and for the varying ones, the same scan
    facts = memo.call(con, "column_facts", aggregated.column_facts, run_ids, present) if view == VIEW else \
        aggregated.column_facts(con, run_ids, present, view=view)
    out = []
    for c in present:
        f = aggregated.Facts(*facts[c])   # the memo hands back a copy of plain tuples
        if not f.non_null:
            continue
        if f.varies and not per_sample and c not in RUN_FACTORS:
            continue
        if varying and not (f.two_values or f.has_null):
            continue
        out.append(c)
    return out


def varies_inside(con, run_ids: Sequence[str] | None, columns: Iterable[str],
                  filters: Mapping[str, Sequence[Any]] | None = None, view: str = VIEW) -> list[str]:
    """The ``columns`` whose value changes inside a configuration of this slice (two values, or a value and NULL):
    grouping configurations by one of them would split configurations into pieces (a deceptive item's parts of
    speech and hypernyms are drawn per sample). Run-level columns never vary inside one. Answered from the store's
    aggregates where they can answer it (``aggregated.inside_columns``), else by a GROUP BY over the rows."""
    cols = [c for c in dict.fromkeys(columns) if c and c not in RUN_FACTORS and c != "config_id"]
    if not cols:
        return []
    for c in cols:
        check_column(con, c, view)
    from core.analysis import aggregated

    facts = aggregated.column_facts(con, run_ids, cols, filters, view, values=False)
    return [c for c in cols if facts[c].varies or facts[c].partial_null]


def sizes_equal_in_runs(con, run_ids: Sequence[str] | None, view: str = VIEW) -> bool:
    """Whether |A| and |B| are equal in every item of these runs (then they are one factor, "|A| = |B|", and
    grouping by |A| alone makes the same groups)."""
    have = view_columns(con, view)
    if "size_a" not in have or "size_b" not in have:
        return False
    from core.analysis import aggregated

    src = aggregated.source(con, run_ids, ["size_a", "size_b"], view=view)
    row = con.execute(f"SELECT count(*), count(*) FILTER (WHERE size_a IS DISTINCT FROM size_b) FROM {src.sql} "
                      "WHERE size_a IS NOT NULL", src.params).fetchone()
    return bool(row[0]) and not row[1]


def factor_levels(con, run_ids: Sequence[str] | None, column: str, view: str = VIEW) -> list:
    """The distinct values of ``column`` in these runs (NULL last), items not yet answered included."""
    return factor_levels_of(con, run_ids, [column], view)[column]


def factor_levels_of(con, run_ids: Sequence[str] | None, columns: Sequence[str], view: str = VIEW
                     ) -> dict[str, list]:
    """{column: factor_levels(con, run_ids, column)} for several columns on one connection (a page's slice
    filters: one cached call instead of one per factor): one scan of what answers them (the configurations for the
    columns the aggregates answer, the rows for the others)."""
    from core.analysis import aggregated

    columns = list(dict.fromkeys(columns))
    reads: dict[tuple, list[str]] = {}
    for c in columns:
        check_column(con, c, view)
        src = aggregated.source(con, run_ids, [c], view=view)
        reads.setdefault((src.sql, tuple(src.params)), []).append(c)
    out: dict[str, list] = {}
    for (sql, params), cols in reads.items():
        lists = ", ".join(f"list(DISTINCT {q} ORDER BY {q} NULLS LAST)" for q in map(quote, cols))
        out.update(zip(cols, (list(v) for v in con.execute(f"SELECT {lists} FROM {sql}", list(params)).fetchone())))
    return {c: out[c] for c in columns}


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

    check_scoring(scoring)
    if aggregated.source(con, run_ids, view=view).aggregated:
        from core.analysis import memo

        # both scorings in one statement, memoised: a page shows the strict overview and the lenient one beside it
        # (answers without a strict verdict), and the second then costs no query
        both = memo.call(con, "run_overview_scorings", _run_overview, run_ids, view, SCORINGS)
    else:
        both = _run_overview(con, run_ids, view, (scoring,))
    return both[both["scoring"] == scoring].drop(columns="scoring").reset_index(drop=True)


def run_overview_among(con, run_ids: Sequence[str], view: str = VIEW, scoring: str = "lenient") -> pd.DataFrame:
    """run_overview of ``run_ids``, read from every run's overview when the aggregates serve it (that statement is
    memoised with both scorings: a page that lists every run, then shows one, asks the store once); else their own
    scan of the rows, never every run's."""
    from core.analysis import aggregated

    if aggregated.source(con, None, view=view).aggregated:
        every = run_overview(con, None, view, scoring)
        return every[every["run_id"].isin(list(run_ids))].reset_index(drop=True)
    return run_overview(con, run_ids, view, scoring)


def _run_overview(con, run_ids: Sequence[str] | None, view: str, scorings: Sequence[str]) -> pd.DataFrame:
    """run_overview of every scoring of ``scorings`` (column ``scoring``) in one statement."""
    from core.analysis import aggregated

    parts, params = [], []
    for sc in scorings:
        src = aggregated.source(con, run_ids, ["run_id", "config_id"], scoring=sc, view=view, carry=("model", "task"),
                                counts=("n_items", "n", "n_failed", "n_correct", "cost_usd"))
        parts.append(f"SELECT '{sc}' AS scoring, run_id, any_value(model) AS model, any_value(task) AS task, "
                     "CAST(sum(n_items) AS BIGINT) AS items, CAST(coalesce(sum(n), 0) AS BIGINT) AS answered, "
                     "CAST(coalesce(sum(n_failed), 0) AS BIGINT) AS failed, CAST(sum(n_correct) AS HUGEINT) AS n_correct, "
                     "100.0 * (sum(n_correct) / sum(n)) AS accuracy, count(*) AS configs, sum(cost_usd) AS cost_usd "
                     f"FROM {src.sql} GROUP BY run_id")
        params += src.params
    return con.execute(" UNION ALL ".join(f"({p})" for p in parts) + " ORDER BY scoring, run_id", params).df()


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

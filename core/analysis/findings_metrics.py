"""Precision, recall and Jaccard of the answers per model × operation × token type, under either scoring.

Lenient scoring reads the stored per-item metrics (our parser's answer; the store's per-configuration sums when the
aggregates answer). Strict scoring computes them in DuckDB from the reference's parse (``parsed_strict``: the members
it read, or none when the reply did not follow its rule), the same answer its strict verdict judges: a strict verdict
and lenient partial credit would describe two different answers. ``strict_scores`` is the same per-item definition in
Python (the tests' reference for the SQL).
"""

from __future__ import annotations

import json
import math
from typing import Mapping, Sequence

from core.analysis import aggregated
from core.analysis.sql import quote, relation, series_sql, view_columns, where_clause

TABLE_BY = ("operation", "members")


def _plain(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else v


def _members(text) -> set | None:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    try:
        got = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return None
    return set(got) if isinstance(got, list) else None


def _members_sql(column: str) -> str:
    """The members of a JSON list column as a list of JSON values (NULL when the text is not a JSON list): what
    ``_members`` reads, in SQL — each member compared by its JSON text ("4" the string and 4 the number differ,
    as they do in Python)."""
    col = quote(column)
    return (f"CASE WHEN json_valid({col}) AND json_type({col}) = 'ARRAY' "
            f"THEN CAST(json_extract({col}, '$[*]') AS VARCHAR[]) END")


def strict_scores(truth, parsed) -> tuple[float, float, float]:
    """(precision, recall, jaccard) of the strict parse ``parsed`` (JSON list or None) against ``truth`` (JSON list):
    members compared as the strict verdict compares them; an answer that did not follow the rule scores 0; an
    empty answer to an empty truth scores 1."""
    t, a = _members(truth) or set(), _members(parsed)
    if a is None:
        return 0.0, 0.0, 0.0
    if not t and not a:
        return 1.0, 1.0, 1.0
    inter = len(t & a)
    return (inter / len(a) if a else 0.0, inter / len(t) if t else 0.0, inter / len(t | a))


def metrics_table(con, run_ids: Sequence[str] | None, filters: Mapping[str, Sequence], scoring: str,
                  view: str) -> list[dict] | None:
    """Rows of model × operation × token type: n, precision, recall, jaccard (percent), accuracy; None when the
    store has no metric columns."""
    have = set(view_columns(con, view))
    if not {"precision", "recall", "jaccard"} <= have:
        return None
    by = [c for c in ("model", *TABLE_BY) if c in have]
    # the model column is the series (core/analysis/sql.py, series_sql): an upload is never pooled with a run made here
    sel = ", ".join(f"{series_sql(con)} AS model" if c == "model" else quote(c) for c in by)
    keys = ", ".join(str(i + 1) for i in range(len(by)))
    if scoring == "strict" and {"parsed_strict", "truth"} <= have:
        where, params = where_clause(con, run_ids, filters, view=view)
        cond = f"{where} AND task = 'setops'" if where else "WHERE task = 'setops'"
        df = con.execute(f"""
            WITH m AS (
                SELECT {sel}, CAST(correct AS INTEGER) AS correct,
                       list_distinct(coalesce({_members_sql("truth")}, [])) AS t,
                       list_distinct({_members_sql("parsed_strict")}) AS a
                FROM {relation(con, view, scoring)} {cond}),
            s AS (
                SELECT *, len(list_intersect(t, a)) AS k, len(a) AS na, len(t) AS nt FROM m)
            SELECT {", ".join(quote(c) for c in by)}, count(*) AS n,
                100 * avg(CASE WHEN a IS NULL THEN 0 WHEN nt = 0 AND na = 0 THEN 1 WHEN na = 0 THEN 0
                               ELSE k / na END) AS precision,
                100 * avg(CASE WHEN a IS NULL THEN 0 WHEN nt = 0 AND na = 0 THEN 1 WHEN nt = 0 THEN 0
                               ELSE k / nt END) AS recall,
                100 * avg(CASE WHEN a IS NULL THEN 0 WHEN nt = 0 AND na = 0 THEN 1
                               ELSE k / (nt + na - k) END) AS jaccard,
                100.0 * avg(correct) AS accuracy
            FROM s GROUP BY {keys} ORDER BY {keys}""", params).df()
        return [{k: _plain(v) for k, v in r.items()} for r in df.to_dict("records")]
    # grouped by run (the model beside it): an upload's series (series_sql) is told by its run
    src = aggregated.source(con, run_ids, ["run_id", *(c for c in by if c != "model")],
                            {"task": ["setops"], **(filters or {})}, scoring=scoring, view=view,
                            carry=[c for c in ("model", "task") if c in have],
                            counts=("n", "n_correct", "precision_sum", "precision_n", "recall_sum", "recall_n",
                                    "jaccard_sum", "jaccard_n"))
    df = con.execute(
        f"SELECT {sel}, CAST(sum(n) AS BIGINT) AS n, 100 * (sum(precision_sum) / sum(precision_n)) AS precision, "
        f"100 * (sum(recall_sum) / sum(recall_n)) AS recall, 100 * (sum(jaccard_sum) / sum(jaccard_n)) AS jaccard, "
        f"100.0 * (sum(n_correct) / sum(n)) AS accuracy FROM {src.sql} WHERE task = 'setops' AND n > 0 "
        f"GROUP BY {keys} ORDER BY {keys}", src.params).df()
    return [{k: _plain(v) for k, v in r.items()} for r in df.to_dict("records")]

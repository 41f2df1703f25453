"""Precision, recall and Jaccard of the answers per model × operation × token type, under either scoring.

Lenient scoring reads the stored per-item metrics (our parser's answer). Strict scoring computes them from the
reference's parse (``parsed_strict``: the members it read, or none when the reply did not follow its rule), the same
answer its strict verdict judges: a strict verdict and lenient partial credit would describe two different answers.
"""

from __future__ import annotations

import json
import math
from typing import Mapping, Sequence

import pandas as pd

from core.analysis import aggregated
from core.analysis.sql import quote, relation, view_columns, where_clause

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
    sel = ", ".join(quote(c) for c in by)
    if scoring == "strict" and {"parsed_strict", "truth"} <= have:
        where, params = where_clause(con, run_ids, filters, view=view)
        cond = f"{where} AND task = 'setops'" if where else "WHERE task = 'setops'"
        df = con.execute(f"SELECT {sel}, truth, parsed_strict, CAST(correct AS INTEGER) AS correct "
                         f"FROM {relation(con, view, scoring)} {cond}", params).df()
        if df.empty:
            return []
        scores = [strict_scores(t, p) for t, p in zip(df["truth"], df["parsed_strict"])]
        df[["precision", "recall", "jaccard"]] = pd.DataFrame(scores, index=df.index) * 100
        df["accuracy"] = df["correct"] * 100.0
        out = (df.groupby(by, dropna=False, sort=True)
               .agg(n=("accuracy", "size"), precision=("precision", "mean"), recall=("recall", "mean"),
                    jaccard=("jaccard", "mean"), accuracy=("accuracy", "mean")).reset_index())
        return [{k: _plain(v) for k, v in r.items()} for r in out.to_dict("records")]
    if aggregated.usable(con, view, run_ids, [*by, "task", *filters]):
        where, params = where_clause(con, run_ids, filters, answered=False, view=view)
        cond = f"{where} AND task = 'setops' AND n > 0" if where else "WHERE task = 'setops' AND n > 0"
        df = con.execute(
            f"SELECT {sel}, CAST(sum(n) AS BIGINT) AS n, 100 * (sum(precision_sum) / sum(precision_n)) AS precision, "
            f"100 * (sum(recall_sum) / sum(recall_n)) AS recall, 100 * (sum(jaccard_sum) / sum(jaccard_n)) AS jaccard, "
            f"100.0 * (sum(n_correct) / sum(n)) AS accuracy FROM {aggregated.relation(con, scoring)} {cond} "
            f"GROUP BY {sel} ORDER BY {sel}", params).df()
        return [{k: _plain(v) for k, v in r.items()} for r in df.to_dict("records")]
    where, params = where_clause(con, run_ids, filters, view=view)
    cond = f"{where} AND task = 'setops'" if where else "WHERE task = 'setops'"
    df = con.execute(
        f"SELECT {sel}, count(*) AS n, 100 * avg(precision) AS precision, 100 * avg(recall) AS recall, "
        f"100 * avg(jaccard) AS jaccard, 100.0 * avg(CAST(correct AS INTEGER)) AS accuracy "
        f"FROM {relation(con, view, scoring)} {cond} GROUP BY {sel} ORDER BY {sel}", params).df()
    return [{k: _plain(v) for k, v in r.items()} for r in df.to_dict("records")]

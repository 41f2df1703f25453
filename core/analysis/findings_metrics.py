"""Precision, recall and Jaccard of the answers per model × operation × token type, under either scoring.

Both scorings read the per-item metrics of the answer their verdict judges: lenient our parser's (stored with each
result), strict those of the reference's parse (``parsed_strict``: the members it read, none when the reply did not
follow its rule; ``core.store.aggregates.strict_metric_sql``) — a strict verdict and lenient partial credit would
describe two different answers. Either is summed per configuration by the store (core/store/aggregates.py) and
counted from the rows with the same definition where those sums cannot answer (``aggregated.source`` decides).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from core.analysis import aggregated
from core.analysis.sql import quote, series_sql, view_columns

TABLE_BY = ("operation", "members")


def _plain(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else v


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

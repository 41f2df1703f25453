"""Quantifier metrics: accuracy, precision, recall, F1 per quantifier / noun group / predicate / count …

All aggregation is one DuckDB SQL statement, run either over the store's ``v_results`` view (``quantifier_metrics``)
or over any DataFrame holding the same columns (``metrics_from_frame`` — used for tests and ad-hoc data).

Answer rule (``rule``, core/tasks/quantifiers/parse.ANSWER_RULES): "ours" (default) reads the first whole word
true/false and keeps an answer with neither as *unparsed*; "gqg" is the GQG paper's evaluation script, stored per
result in ``correct_gqg`` — under it every answer is true or false (nothing unparsed) and the metrics below use its
prediction. The chosen rule is returned in the ``rule`` column.

Definitions, over the *answered* items of a group (``correct`` not NULL):
  accuracy       share of answers the rule reads as the label; an unparseable answer (rule "ours") is wrong
  accuracy_gqg   the GQG paper's scoring (its own answer rule), whatever ``rule`` is
  precision, recall, f1   for the positive class "true", with unparseable answers counted as "false" (as in GQG)
  unparsed       answers with neither "true" nor "false" (their own category), and their share
  pred_true      share of answers that said "true" — plotted against the count to see where a model flips
  label_true     share of answered items whose gold label is "true" (the base rate; the gold step function over
                 counts) — over the same items as pred_true, so failed calls never skew the comparison
Precision / recall / F1 are NULL when undefined (no predicted / no actual positives). (GQG's script files a wrong
answer on a "true" item under fp and one on a "false" item under fn, so its printed precision is our recall and vice
versa; accuracy and F1 are the same either way.)
"""

from __future__ import annotations

from typing import Iterable, Sequence

import duckdb
import pandas as pd

from core.errors import UserError
from core.tasks.base import RESULTS_VIEW
from core.tasks.quantifiers.parse import ANSWER_RULES

# Columns a caller may group by (whitelist: they are interpolated into SQL as identifiers).
GROUPABLE: tuple[str, ...] = (
    "quantifier", "noun_group", "predicate", "object", "total", "template", "count_asked", "count_large",
    "count_small", "label", "config_id", "model", "run_id", "name", "other_predicate",
)
METRIC_COLUMNS: tuple[str, ...] = (
    "rule", "n", "answered", "unparsed", "unparsed_share", "accuracy", "accuracy_gqg", "precision", "recall", "f1",
    "pred_true", "label_true", "tp", "fp", "fn", "tn",
)
# Noun groups in frequency order (the x axis of the paper's Figure 1), then the rest.
NOUN_GROUP_ORDER: tuple[str, ...] = (
    "common", "less_common", "rare", "rarer", "rarest", "made_up",
    "pilot_common", "pilot_less_common", "pilot_rare", "pilot_rarer", "pilot_rarest", "pilot_made_up",
    "gqg", "custom",
)

# Published figures of the GQG paper (Wang & Steinert-Threlkeld 2023), for display beside a user's results.
GQG_PUBLISHED = {
    "dataset": {"prompts": 18360, "true": 8592, "false": 9768, "true_share": 0.468, "tokens_per_prompt": 31.9},
    # Table 5: Pythia models on vanilla GQG (constrained decoding, beam search 4, temperature 1.0)
    "pythia": [
        {"model": "Pythia 410M", "accuracy": 0.464, "f1": 0.418},
        {"model": "Pythia 1B", "accuracy": 0.503, "f1": 0.289},
        {"model": "Pythia 1.4B", "accuracy": 0.519, "f1": 0.355},
        {"model": "Pythia 2.8B", "accuracy": 0.515, "f1": 0.626},
        {"model": "Pythia 6.9B", "accuracy": 0.484, "f1": 0.639},
    ],
    # Figure 1 (Mistral-7B, q = at least half, counts 0…50, 10 nouns per group): accuracy falls from common to
    # rarest nouns; the paper gives the shape, not the numbers.
}

# v_results has every quantifier factor as a column (count_asked and other_predicate included).
_V_RESULTS_SOURCE = f"SELECT * FROM {RESULTS_VIEW} WHERE task = 'quantifiers'"

_METRICS = """
WITH src AS ({source}),
g AS (
  SELECT {keys}
         count(*) AS n,
         count(correct) AS answered,
         count(*) FILTER (WHERE correct IS NOT NULL AND pred IS NULL) AS unparsed,
         count(*) FILTER (WHERE correct) AS n_correct,
         count(*) FILTER (WHERE correct IS NOT NULL AND correct_gqg) AS n_correct_gqg,
         count(*) FILTER (WHERE correct IS NOT NULL AND label = 'true' AND pred = 'true') AS tp,
         count(*) FILTER (WHERE correct IS NOT NULL AND label = 'false' AND pred = 'true') AS fp,
         count(*) FILTER (WHERE correct IS NOT NULL AND label = 'true' AND coalesce(pred, 'false') = 'false') AS fn,
         count(*) FILTER (WHERE correct IS NOT NULL AND label = 'false' AND coalesce(pred, 'false') = 'false') AS tn,
         count(*) FILTER (WHERE correct IS NOT NULL AND label = 'true') AS n_label_true
  FROM src
  {where}
  {group}
)
SELECT {keys}
       '{rule}' AS rule, n, answered, unparsed,
       CASE WHEN answered > 0 THEN unparsed / answered END AS unparsed_share,
       CASE WHEN answered > 0 THEN n_correct / answered END AS accuracy,
       CASE WHEN answered > 0 THEN n_correct_gqg / answered END AS accuracy_gqg,
       CASE WHEN tp + fp > 0 THEN tp / (tp + fp) END AS "precision",
       CASE WHEN tp + fn > 0 THEN tp / (tp + fn) END AS recall,
       CASE WHEN 2 * tp + fp + fn > 0 AND tp + fn > 0 THEN 2 * tp / (2 * tp + fp + fn) END AS f1,
       CASE WHEN answered > 0 THEN (tp + fp) / answered END AS pred_true,
       CASE WHEN answered > 0 THEN n_label_true / answered END AS label_true,
       tp, fp, fn, tn
FROM g
{order}
"""


def _check_by(by: Sequence[str] | str | None) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        by = [by]
    out = []
    for col in by:
        if col not in GROUPABLE:
            raise UserError(f"cannot group quantifier metrics by {col!r}; choose from: {', '.join(GROUPABLE)}")
        if col not in out:
            out.append(col)
    return out


# Under GQG's rule the prediction is the label when GQG's verdict is right and the other label when it is wrong.
_GQG_SOURCE = """SELECT * REPLACE (
    correct_gqg AS correct,
    CASE WHEN correct IS NULL OR correct_gqg IS NULL THEN NULL
         WHEN correct_gqg THEN label
         WHEN label = 'true' THEN 'false' ELSE 'true' END AS pred)
  FROM ({source})"""


def check_rule(rule: str) -> str:
    if rule not in ANSWER_RULES:
        raise UserError(f"unknown answer rule {rule!r}; expected one of: {', '.join(ANSWER_RULES)}")
    return rule


def metrics_sql(by: Sequence[str] | str | None, source: str, where: str = "", rule: str = "ours") -> str:
    """The metrics statement over ``source`` (a SELECT yielding label, pred, correct, correct_gqg and the by-columns),
    scoring answers by ``rule``."""
    cols = _check_by(by)
    quoted = [f'"{c}"' for c in cols]
    if check_rule(rule) == "gqg":
        source = _GQG_SOURCE.format(source=source)
    return _METRICS.format(
        rule=rule,
        source=source,
        keys="".join(q + ", " for q in quoted),
        where=f"WHERE {where}" if where else "",
        group=("GROUP BY " + ", ".join(quoted)) if cols else "",
        order=("ORDER BY " + ", ".join(quoted)) if cols else "",
    )


def _finish(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    for c in ("unparsed_share", "accuracy", "accuracy_gqg", "precision", "recall", "f1", "pred_true", "label_true"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    if "noun_group" in cols and len(df):
        rank = {g: i for i, g in enumerate(NOUN_GROUP_ORDER)}
        df = df.assign(_r=df["noun_group"].map(lambda g: rank.get(g, len(rank))))
        df = df.sort_values(["_r", *[c for c in cols if c != "noun_group"]], kind="stable").drop(columns="_r")
        df = df.reset_index(drop=True)
    return df


def quantifier_metrics(con: duckdb.DuckDBPyConnection, run_ids: Iterable[str],
                       by: Sequence[str] | str | None = ("quantifier",),
                       filters: dict[str, Sequence] | None = None, *, rule: str = "ours", _bin: int = 1
                       ) -> pd.DataFrame:
    """Metrics per group over the given quantifier runs, from ``v_results`` (answered items only count).

    ``filters`` = {column: [values…]} with columns from GROUPABLE; ``rule`` = "ours" | "gqg" (ANSWER_RULES)."""
    cols = _check_by(by)
    check_rule(rule)
    run_ids = list(run_ids)
    if not run_ids:
        return pd.DataFrame(columns=[*cols, *METRIC_COLUMNS])
    conds = [f"run_id IN ({', '.join('?' for _ in run_ids)})"]
    params: list = list(run_ids)
    for col, values in (filters or {}).items():
        _check_by([col])
        values = list(values)
        if not values:
            continue
        conds.append(f'"{col}" IN ({", ".join("?" for _ in values)})')
        params += values
    source = _V_RESULTS_SOURCE
    if _bin > 1:  # an int checked by the caller: safe to inline
        source = (f"SELECT * REPLACE ((count_asked // {int(_bin)}) * {int(_bin)} AS count_asked) "
                  f"FROM {RESULTS_VIEW} WHERE task = 'quantifiers'")
    sql = metrics_sql(cols, source, " AND ".join(conds), rule)
    return _finish(con.execute(sql, params).df(), cols)


def metrics_from_frame(df: pd.DataFrame, by: Sequence[str] | str | None = ("quantifier",), rule: str = "ours"
                       ) -> pd.DataFrame:
    """Same metrics over a DataFrame with columns label, pred, correct, correct_gqg (+ the by-columns)."""
    cols = _check_by(by)
    missing = [c for c in ("label", "pred", "correct", "correct_gqg", *cols) if c not in df.columns]
    if missing:
        raise UserError(f"results table lacks column(s): {', '.join(missing)}")
    con = duckdb.connect()
    try:
        con.register("frame", df)
        return _finish(con.execute(metrics_sql(cols, "SELECT * FROM frame", rule=rule)).df(), cols)
    finally:
        con.close()


def accuracy_by_count(con: duckdb.DuckDBPyConnection, run_ids: Iterable[str],
                      by: Sequence[str] | str = ("quantifier",),
                      filters: dict[str, Sequence] | None = None, bin_width: int = 1, rule: str = "ours"
                      ) -> pd.DataFrame:
    """Metrics per (by…, count_asked): accuracy and the share answered "true" along 0…n (where the model flips).

    ``bin_width`` > 1 pools counts into bins [k·w, k·w + w − 1] labelled by their lower end (smoother curves when
    only a few counts were sampled per cell)."""
    cols = [c for c in _check_by(by) if c != "count_asked"]
    if isinstance(bin_width, bool) or not isinstance(bin_width, int) or not 1 <= bin_width <= 1000:
        raise UserError(f"bin width must be a whole number between 1 and 1000, got {bin_width!r}")
    return quantifier_metrics(con, run_ids, [*cols, "count_asked"], filters, rule=rule, _bin=bin_width)


def quantifier_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The quantifier runs in the store, newest first (run_id, name, model, status, n_items, created_at)."""
    return con.execute(
        "SELECT run_id, name, model, status, n_items, n_done, created_at FROM runs WHERE task = 'quantifiers' "
        "ORDER BY created_at DESC, run_id").df()

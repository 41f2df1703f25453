"""The error-analysis table of the SetLexSem paper (SPEC A4): accuracy, empty-set rows, made-up members,
did-not-follow counts and the top "G vs. L" length confusions per group, computed in DuckDB."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis.queries import VIEW, _check_column, _isnan, _norm, _src, _where, view_columns

# --------------------------------------------------------------------------------------------------------------------
# error analysis (SPEC A4; the paper's Tables 15–18)

ERROR_ROWS = (
    ("accuracy", "Accuracy"),
    ("accuracy_non_empty", "Accuracy Non Empty"),
    ("accuracy_on_non_empty_truths", "Accuracy On Non-Empty Truths"),
    ("pct_nullset_correct", "Pct Nullset Correct"),
    ("pct_nullset_wrong", "Pct Nullset Wrong"),
    ("pct_made_up_vals", "Pct With Made Up Vals"),
    ("pct_answers_made_up", "Pct Answers With Made Up Members"),
    ("n", "N Comparisons"),
    ("n_correct", "N Correct"),
    ("n_wrong", "N Wrong"),
    ("empty_equal", "Empty Set Equal Count"),
    ("empty_mismatch", "Empty Set Mismatch Count"),
    ("made_up_sum", "Made Up Vals Sum"),
    ("did_not_follow", "Did Not Follow Instruction"),
    ("top1_mistake", "Top1 Mistake"), ("top2_mistake", "Top2 Mistake"), ("top3_mistake", "Top3 Mistake"),
    ("top1_correct", "Top1 Correct"), ("top2_correct", "Top2 Correct"), ("top3_correct", "Top3 Correct"),
)
ERROR_TABLE_HELP = """Row definitions (all percentages are of N Comparisons unless said otherwise), as in the paper:
Accuracy = N Correct / N; Accuracy Non Empty = correct answers whose truth is non-empty / N (so Accuracy =
Accuracy Non Empty + Pct Nullset Correct); Accuracy On Non-Empty Truths = correct / items with a non-empty truth;
Pct Nullset Correct / Wrong = items with an empty truth answered right / wrong, over N; Pct With Made Up Vals =
Made Up Vals Sum / N (the paper's definition: members, not answers); Pct Answers With Made Up Members = answers
containing at least one member outside A∪B / N; TopK Mistake / Correct = the K-th most frequent ("G<truth length>
vs. L<answer length>") pair among wrong / correct answers, with its share of the wrong / correct answers in percent
(L? = no set found in the answer)."""


ERROR_TABLE_TASK = "setops"


def error_table(con, run_ids: Sequence[str] | None, by: Sequence[str] = ("members", "operation"),
                filters: Mapping[str, Sequence] | None = None, view: str = VIEW) -> pd.DataFrame:
    """One row per group of ``by`` with the columns of ERROR_ROWS (keys), ordered by the group columns.

    Set-operation items only: its rows (empty-set answers, made-up members, "G vs L" set lengths) mean nothing for
    a quantifier's true/false answer, so items of other tasks are left out (see quantifier_metrics for those)."""
    by = [c for c in dict.fromkeys(by) if c]
    cols = [_check_column(con, c, view) for c in by]
    if "task" in view_columns(con, view):
        filters = {**(filters or {}), "task": [ERROR_TABLE_TASK]}
    where, params = _where(con, run_ids, filters, view=view)
    sel = ", ".join(cols)
    grp = f"GROUP BY {sel} ORDER BY {sel}" if by else ""
    head = f"{sel}, " if by else ""
    c = "CAST(correct AS INTEGER)"
    e = "CAST(coalesce(empty_truth, FALSE) AS INTEGER)"
    base_sql = f"""
        SELECT {head}
            count(*) AS n,
            sum({c}) AS n_correct,
            count(*) - sum({c}) AS n_wrong,
            sum({c} * {e}) AS empty_equal,
            sum((1 - {c}) * {e}) AS empty_mismatch,
            sum({c} * (1 - {e})) AS correct_non_empty,
            count(*) - sum({e}) AS n_non_empty,
            coalesce(sum(made_up), 0) AS made_up_sum,
            count(*) FILTER (WHERE coalesce(made_up, 0) > 0) AS answers_made_up,
            count(*) FILTER (WHERE NOT coalesce(followed, FALSE)) AS did_not_follow
        FROM {_src(con, view)} {where} {grp}"""
    base = con.execute(base_sql, params).df()
    if base.empty:
        return pd.DataFrame(columns=[*by, *(k for k, _ in ERROR_ROWS)])
    n = base["n"].astype(float)
    base["accuracy"] = 100 * base["n_correct"] / n
    base["accuracy_non_empty"] = 100 * base["correct_non_empty"] / n
    base["accuracy_on_non_empty_truths"] = np.where(
        base["n_non_empty"] > 0, 100 * base["correct_non_empty"] / base["n_non_empty"].clip(lower=1), np.nan)
    base["pct_nullset_correct"] = 100 * base["empty_equal"] / n
    base["pct_nullset_wrong"] = 100 * base["empty_mismatch"] / n
    base["pct_made_up_vals"] = 100 * base["made_up_sum"] / n
    base["pct_answers_made_up"] = 100 * base["answers_made_up"] / n

    # top-3 (G vs L) pairs among wrong and among correct answers, per group — ranked in SQL
    part = f"PARTITION BY {sel}, correct" if by else "PARTITION BY correct"
    pairs_sql = f"""
        WITH p AS (
            SELECT {head} correct, truth_len, answer_len, count(*) AS k
            FROM {_src(con, view)} {where} GROUP BY ALL),
        r AS (
            SELECT *, 100.0 * k / sum(k) OVER ({part}) AS share,
                   row_number() OVER ({part} ORDER BY k DESC, truth_len, answer_len NULLS LAST) AS rk
            FROM p)
        SELECT * FROM r WHERE rk <= 3"""
    pairs = con.execute(pairs_sql, params).df()
    for kind, flag in (("mistake", False), ("correct", True)):
        for rank in (1, 2, 3):
            base[f"top{rank}_{kind}"] = None
    key_cols = by
    index = {tuple(_norm(v) for v in row): i for i, row in enumerate(base[key_cols].itertuples(index=False))} \
        if by else {(): 0}
    for row in pairs.itertuples(index=False):
        d = row._asdict()
        key = tuple(_norm(d[k]) for k in key_cols) if by else ()
        i = index.get(key)
        if i is None:
            continue
        g = "?" if d["truth_len"] is None or _isnan(d["truth_len"]) else int(d["truth_len"])
        l_ = "?" if d["answer_len"] is None or _isnan(d["answer_len"]) else int(d["answer_len"])
        kind = "correct" if bool(d["correct"]) else "mistake"
        base.at[i, f"top{int(d['rk'])}_{kind}"] = f"G{g} vs. L{l_} ({d['share']:.2f}%)"
    keep = [*by, *(k for k, _ in ERROR_ROWS)]
    return base[keep]


def error_table_paper_layout(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The paper's orientation: one column per group, one row per metric (readable row names)."""
    by = [c for c in dict.fromkeys(by) if c]
    if table.empty:
        return pd.DataFrame()
    names = [" · ".join(str(v) for v in row) if by else "all" for row in table[by].itertuples(index=False)] \
        if by else ["all"] * len(table)
    out = {}
    for name, (_, row) in zip(names, table.iterrows()):
        col = []
        for key, _title in ERROR_ROWS:
            v = row[key]
            if isinstance(v, (float, np.floating)):
                v = "" if _isnan(v) else (f"{v:.2f}" if not float(v).is_integer() or key.startswith(("pct", "acc"))
                                          else f"{int(v)}")
            elif v is None:
                v = ""
            col.append(str(v))
        out[name] = col
    return pd.DataFrame(out, index=[t for _, t in ERROR_ROWS])

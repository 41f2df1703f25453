"""The error-analysis table of the SetLexSem paper: accuracy, empty-set rows, made-up members,
did-not-follow counts and the top "G vs. L" length confusions per group, counted in DuckDB.

Two choices shape it:
- ``scoring``: whose verdict — "strict" (the reference's answer rule) or "lenient" (our parser).
- ``unparsed``: how an answer that did not follow the instructions counts. "reference" = as the reference's
  error analysis (setlexsem/analyze/error_analysis.py) counts its sentinel answer ``{-1}``: one member, so "L1",
  and that member is made up (−1 is never in A or B). "ours" = no set was found: "L?", nothing made up.
  With "reference" the top-3 lists are also ranked as the reference ranks them (most frequent first, ties in the
  order of the label text; the labels seen anywhere in the group fill the list with share 0.0 when fewer labels
  occur among the wrong (or right) answers; with no such answer at all the shares are nan, and ``error_table``
  leaves those cells empty: a group with nothing correct has no "Top-1 correct"). With "ours" ties break by G, then
  L (L? last) and only labels that occur are listed.

``error_table`` gives our column names (the dashboard's table); ``reference_error_table`` gives the reference's
column names and values computed with its formulas, e.g. ``accuracy = round(n_correct / n * 100, 2)``,
``pct_with_made_up_vals`` unrounded, mistakes as ``('G0 vs. L1', 57.07)`` — for ``python -m core report errors``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis import aggregated
from core.analysis.sql import VIEW, check_column, check_scoring, is_missing, plain_value, view_columns
from core.errors import UserError

ERROR_ROWS = (
    ("accuracy", "Accuracy"),
    ("accuracy_non_empty", "Accuracy Non Empty"),
    ("accuracy_on_non_empty_truths", "Accuracy On Non-Empty Truths"),
    ("pct_nullset_correct", "Pct Nullset Correct"),
    ("pct_nullset_wrong", "Pct Nullset Wrong"),
    ("pct_made_up_vals", "Pct With Made Up Vals (made-up members per 100 answers; can exceed 100)"),
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
# The reference's column names (create_error_analysis_table), in its order.
REFERENCE_ERROR_COLUMNS = (
    "accuracy", "accuracy_non_empty", "pct_nullset_correct", "pct_nullset_wrong", "pct_with_made_up_vals",
    "n_comparisons", "n_correct", "n_wrong", "empty_set_equal_count", "empty_set_mismatch_count", "made_up_vals_sum",
    "did_not_follow_instruction", "top1_mistake", "top2_mistake", "top3_mistake", "top1_correct", "top2_correct",
    "top3_correct",
)
UNPARSED = {
    "reference": "as the reference counts its {-1} answer: L1, one made-up member",
    "ours": "no set found: L?, nothing made up",
}
ERROR_TABLE_HELP = """Row definitions (all percentages are of N Comparisons unless said otherwise), as in the paper:
Accuracy = N Correct / N; Accuracy Non Empty = correct answers whose truth is non-empty / N (so Accuracy =
Accuracy Non Empty + Pct Nullset Correct); Accuracy On Non-Empty Truths = correct / items with a non-empty truth;
Pct Nullset Correct / Wrong = items with an empty truth answered right / wrong, over N; Pct With Made Up Vals =
Made Up Vals Sum / N (the paper's definition: members, not answers); Pct Answers With Made Up Members = answers
containing at least one member outside A∪B / N; TopK Mistake / Correct = the K-th most frequent ("G<truth length>
vs. L<answer length>") pair among wrong / correct answers, with its share of the wrong / correct answers in percent.
Answers that did not follow the instructions count, by the reference's definition, as one made-up member and
"L1" (its sentinel answer {-1}); by ours as "L?" with nothing made up. With the reference's definition the top-3
lists are also ranked as the reference does (ties by label text; labels of the group fill short lists with 0.0)."""


ERROR_TABLE_TASK = "setops"


def _check_unparsed(unparsed: str) -> str:
    if unparsed not in UNPARSED:
        raise UserError(f"unknown definition of unparsed answers {unparsed!r}; expected one of: {', '.join(UNPARSED)}")
    return unparsed


def split_by_run(con, run_ids, by: list[str], view: str = VIEW) -> list[str]:
    """Never pool several runs' mistakes into one row: with more than one run selected and nothing in ``by`` that
    keeps them apart, the table is split by model — or by run, when two of them share a model (views.run_split)."""
    from core.analysis.views import run_rows, run_split

    if run_ids is not None and len(set(run_ids)) < 2:
        return by
    split = run_split(run_rows(con, run_ids), by)
    return [split, *by] if split else by


def _counts(con, run_ids, by, filters, view, scoring, unparsed):
    """(group counts, (group, label, correct) counts, by) — the numbers every formula below is made of."""
    check_scoring(scoring)
    ref = _check_unparsed(unparsed) == "reference"
    by = split_by_run(con, run_ids, [c for c in dict.fromkeys(by) if c], view)
    cols = [check_column(con, c, view) for c in by]
    if "task" in view_columns(con, view):
        filters = {**(filters or {}), "task": [ERROR_TABLE_TASK]}
    counts = ("n", "n_correct", "n_followed", "n_empty", "empty_equal", "made_up_sum", "n_unparsed",
              "answers_made_up_ref" if ref else "answers_made_up")
    src = aggregated.source(con, run_ids, by, filters, counts=counts, scoring=scoring, view=view)
    head = "".join(f"{c}, " for c in cols)
    grp = f"GROUP BY {', '.join(cols)} ORDER BY {', '.join(cols)}" if by else ""
    # an answer that did not follow the instructions: one made-up member by the reference's definition
    made_up = "made_up_sum + n_unparsed" if ref else "made_up_sum"
    base = con.execute(f"""
        SELECT {head}
            CAST(coalesce(sum(n), 0) AS BIGINT) AS n,
            CAST(sum(n_correct) AS HUGEINT) AS n_correct,
            CAST(sum(n) - sum(n_correct) AS HUGEINT) AS n_wrong,
            CAST(sum(empty_equal) AS HUGEINT) AS empty_equal,
            CAST(sum(n_empty) - sum(empty_equal) AS HUGEINT) AS empty_mismatch,
            CAST(sum(n_correct) - sum(empty_equal) AS HUGEINT) AS correct_non_empty,
            CAST(sum(n) - sum(n_empty) AS HUGEINT) AS n_non_empty,
            CAST(sum({made_up}) AS HUGEINT) AS made_up_sum,
            CAST(coalesce(sum({counts[-1]}), 0) AS BIGINT) AS answers_made_up,
            CAST(coalesce(sum(n) - sum(n_followed), 0) AS BIGINT) AS did_not_follow
        FROM {src.sql} WHERE n > 0 {grp}""", src.params).df()
    lengths = aggregated.source(con, run_ids, by, filters, scoring=scoring, lengths=True, view=view)
    length = f"coalesce(CAST(CAST(answer_len AS BIGINT) AS VARCHAR), '{'1' if ref else '?'}')"
    pairs = con.execute(f"""
        SELECT {head} correct, truth_len, answer_len,
               'G' || coalesce(CAST(CAST(truth_len AS BIGINT) AS VARCHAR), '?') || ' vs. L' || {length} AS label,
               CAST(sum(k) AS BIGINT) AS k
        FROM {lengths.sql} GROUP BY ALL""", lengths.params).df()
    return base, pairs, by


def _key(row, by) -> tuple:
    return tuple(plain_value(row[k]) for k in by)


def _ranked(pairs: pd.DataFrame, by, reference: bool) -> dict:
    """{(group key, correct?): [(label, share %), …]} ranked by frequency (see the module docstring for ties)."""
    out: dict = {}
    if pairs.empty:
        return out
    groups: dict = {}
    for row in pairs.to_dict("records"):
        groups.setdefault(_key(row, by), []).append(row)
    for key, rows in groups.items():
        labels = sorted({r["label"] for r in rows})
        for flag in (False, True):
            sub = [r for r in rows if bool(r["correct"]) is flag]
            total = sum(int(r["k"]) for r in sub)
            if reference:   # every label of the group, counts descending, ties by label text (pandas value_counts)
                counts = {lb: 0 for lb in labels}
                for r in sub:
                    counts[r["label"]] += int(r["k"])
                ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                out[(key, flag)] = [(lb, float(np.round(100 * (k / total), 2)) if total else float("nan"))
                                    for lb, k in ranked]
            else:
                def order(r):
                    g, l_ = r["truth_len"], r["answer_len"]
                    return (-int(r["k"]), plain_value(g) if not is_missing(g) else -1, is_missing(l_), 0 if is_missing(l_) else l_)
                out[(key, flag)] = [(r["label"], 100.0 * int(r["k"]) / total) for r in sorted(sub, key=order)]
    return out


def error_table(con, run_ids: Sequence[str] | None, by: Sequence[str] = ("members", "operation"),
                filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "lenient",
                unparsed: str = "ours") -> pd.DataFrame:
    """One row per group of ``by`` with the columns of ERROR_ROWS (keys), ordered by the group columns.

    Set-operation items only: its rows (empty-set answers, made-up members, "G vs L" set lengths) mean nothing for
    a quantifier's true/false answer, so items of other tasks are left out (see quantifier_metrics for those)."""
    base, pairs, by = _counts(con, run_ids, by, filters, view, scoring, unparsed)
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
    ranked = _ranked(pairs, by, unparsed == "reference")
    for kind in ("mistake", "correct"):
        for rank in (1, 2, 3):
            base[f"top{rank}_{kind}"] = pd.Series([None] * len(base), index=base.index, dtype=object)
    for i, row in enumerate(base.to_dict("records")):
        for kind, flag in (("mistake", False), ("correct", True)):
            top = ranked.get((_key(row, by), flag), [])
            for rank in (1, 2, 3):
                if rank <= len(top):
                    label, share = top[rank - 1]
                    # no share (no such answer in the group: nothing correct, or nothing wrong): the cell stays
                    # empty — a label there would name a confusion no answer made
                    if not is_missing(share):
                        base.at[i, f"top{rank}_{kind}"] = f"{label} ({share:.2f}%)"
    return base[[*by, *(k for k, _ in ERROR_ROWS)]]


def _pct(x, n: int) -> float:
    """The reference's percentage: round(x / n * 100, 2) on numpy floats."""
    return float(np.round((int(x) / n) * 100, 2))


def reference_error_table(con, run_ids: Sequence[str] | None, by: Sequence[str] = ("members", "operation"),
                          filters: Mapping[str, Sequence] | None = None, view: str = VIEW, scoring: str = "strict",
                          unparsed: str = "reference", cells: str = "tuple") -> pd.DataFrame:
    """The error table with the reference's column names and formulas: one row per group of ``by`` (the group
    columns first, like the reference's filter values), then REFERENCE_ERROR_COLUMNS. ``cells`` = "tuple": a top-k
    cell as the reference writes it, ``('G0 vs. L1', 57.07)``; "plain": the label in that column and its share
    (percent) in a ``<column>_pct`` column right after it (a file for a spreadsheet or a script)."""
    base, pairs, by = _counts(con, run_ids, by, filters, view, scoring, unparsed)
    if base.empty:
        return pd.DataFrame(columns=[*by, *REFERENCE_ERROR_COLUMNS])
    ranked = _ranked(pairs, by, unparsed == "reference")
    rows = []
    for row in base.to_dict("records"):
        n = int(row["n"])
        n_correct = int(row["n_correct"])
        out = {k: plain_value(row[k]) for k in by}
        out.update({
            "accuracy": _pct(n_correct, n),
            "accuracy_non_empty": _pct(row["correct_non_empty"], n),
            "pct_nullset_correct": _pct(row["empty_equal"], n),
            "pct_nullset_wrong": _pct(row["empty_mismatch"], n),
            "pct_with_made_up_vals": (int(row["made_up_sum"]) / n) * 100,
            "n_comparisons": n, "n_correct": n_correct, "n_wrong": n - n_correct,
            "empty_set_equal_count": int(row["empty_equal"]), "empty_set_mismatch_count": int(row["empty_mismatch"]),
            "made_up_vals_sum": int(row["made_up_sum"]), "did_not_follow_instruction": int(row["did_not_follow"]),
        })
        for kind, flag in (("mistake", False), ("correct", True)):
            top = ranked.get((_key(row, by), flag), [])
            for rank in (1, 2, 3):
                cell = top[rank - 1] if rank <= len(top) else None
                if cells == "plain":
                    out[f"top{rank}_{kind}"] = cell[0] if cell else None
                    out[f"top{rank}_{kind}_pct"] = None if cell is None or is_missing(cell[1]) else cell[1]
                else:
                    out[f"top{rank}_{kind}"] = str(cell) if cell else None
        rows.append(out)
    columns = [c for name in REFERENCE_ERROR_COLUMNS
               for c in ((name, f"{name}_pct") if cells == "plain" and name.startswith("top") else (name,))]
    return pd.DataFrame(rows, columns=[*by, *columns])


def error_table_paper_layout(table: pd.DataFrame, by: Sequence[str] = (),
                             run_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The paper's orientation: one column per group, one row per metric (readable row names). The groups are
    those of the table: ``by`` and the run-level column error_table added to keep several runs apart (model or
    run_id, first), so two runs' groups are two columns, never one. ``run_names``: run_id -> the run's label (a
    run's column is named by it, never by its hash)."""
    by = [c for c in dict.fromkeys(by) if c]
    if table.empty:
        return pd.DataFrame()
    from core.analysis.views import readable_level  # levels as the plots write them ("symmetric difference")

    by = [c for c in ("model", "run_id") if c in table.columns and c not in by] + by

    def level(f, v):
        return str((run_names or {}).get(v, v)) if f == "run_id" else readable_level(f, v)

    names = [" · ".join(level(f, v) for f, v in zip(by, row)) for row in table[by].itertuples(index=False)] \
        if by else ["all"] * len(table)
    out = {}
    for name, (_, row) in zip(names, table.iterrows()):
        col = []
        for key, _title in ERROR_ROWS:
            v = row[key]
            if isinstance(v, (float, np.floating)):
                v = "" if is_missing(v) else (f"{v:.2f}" if not float(v).is_integer() or key.startswith(("pct", "acc"))
                                          else f"{int(v)}")
            elif v is None:
                v = ""
            col.append(str(v))
        out[name] = col
    return pd.DataFrame(out, index=[t for _, t in ERROR_ROWS])

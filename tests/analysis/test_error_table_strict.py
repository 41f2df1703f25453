"""The strict error table equals the reference's formulas item by item, and every analysis follows the scoring switch.

The reference's error analysis (setlexsem/analyze/error_analysis.py) is re-stated below in plain Python from its
documented formulas: per row R = the parsed set or the sentinel {-1}; G/L = lengths of truth and R; made-up =
|A ∪ B ∪ R| − |A ∪ B|; per group: percentages rounded to 2 decimals (numpy rounding) over all rows,
pct_with_made_up_vals unrounded, top-3 "G vs. L" shares within the wrong (right) rows, every label of the group
listed (share 0.0), ties in label order, nan when there is no wrong (right) row. The run is the parse corpus, stored
through the real store and scored by the real scorer.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from core import analysis, store
from core.errors import UserError
from core.tasks.setops.parse_strict import parse_strict
from tests.support.corpus_run import write_corpus_run


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("strict") / "s.duckdb"
    items = write_corpus_run(db)
    return db, items


def _restated_rows(items):
    rows = []
    for it in items:
        got = parse_strict(it["response"])
        r = set(got.members) if got.members is not None else {-1}
        truth, a, b = set(it["truth"]), set(it["set_a"]), set(it["set_b"])
        ok = got.members is not None and got.members == truth
        rows.append({"members": it["members"], "operation": it["operation"], "ok": ok, "truth": truth, "R": r,
                     "made_up": len(a | b | r) - len(a | b), "dnf": int(r == {-1}),
                     "label": f"G{len(truth)} vs. L{len(r)}"})
    return rows


def _top(rows, labels):
    counts = Counter(r["label"] for r in rows)
    total = len(rows)
    ranked = sorted(((lb, counts.get(lb, 0)) for lb in labels), key=lambda kv: (-kv[1], kv[0]))
    return [str((lb, float(np.round(100 * (k / total), 2)) if total else float("nan"))) for lb, k in ranked]


def _restated_table(items):
    groups: dict = {}
    for r in _restated_rows(items):
        groups.setdefault((r["members"], r["operation"]), []).append(r)
    out = {}
    for key, rows in sorted(groups.items()):
        n = len(rows)
        n_correct = sum(r["ok"] for r in rows)
        empty_eq = sum(1 for r in rows if not r["truth"] and r["R"] == set())
        empty_mm = sum(1 for r in rows if not r["truth"] and r["R"] != set())
        labels = sorted({r["label"] for r in rows})
        wrong, right = _top([r for r in rows if not r["ok"]], labels), _top([r for r in rows if r["ok"]], labels)
        made_up = sum(r["made_up"] for r in rows)
        out[key] = {
            "accuracy": float(np.round((n_correct / n) * 100, 2)),
            "accuracy_non_empty": float(np.round((sum(r["ok"] for r in rows if r["truth"]) / n) * 100, 2)),
            "pct_nullset_correct": float(np.round((empty_eq / n) * 100, 2)),
            "pct_nullset_wrong": float(np.round((empty_mm / n) * 100, 2)),
            "pct_with_made_up_vals": (made_up / n) * 100,
            "n_comparisons": n, "n_correct": n_correct, "n_wrong": n - n_correct,
            "empty_set_equal_count": empty_eq, "empty_set_mismatch_count": empty_mm, "made_up_vals_sum": made_up,
            "did_not_follow_instruction": sum(r["dnf"] for r in rows),
            **{f"top{i + 1}_mistake": wrong[i] if i < len(wrong) else None for i in range(3)},
            **{f"top{i + 1}_correct": right[i] if i < len(right) else None for i in range(3)},
        }
    return out


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_strict_error_table_equals_the_reference_formulas(corpus_db):
    db, items = corpus_db
    expected = _restated_table(items)
    with store.connect(db) as con:
        got = analysis.reference_error_table(con, ["corpus"], by=["members", "operation"], scoring="strict",
                                             unparsed="reference")
    assert list(got.columns) == ["members", "operation", *analysis.REFERENCE_ERROR_COLUMNS]
    assert len(got) == len(expected) == 8
    for row in got.to_dict("records"):
        want = expected[(row["members"], row["operation"])]
        for col, value in want.items():
            assert _same(row[col], value), (row["members"], row["operation"], col, row[col], value)
    # the corpus really exercises the interesting rows
    assert got["did_not_follow_instruction"].sum() > 20 and got["made_up_vals_sum"].sum() > 20
    assert got["empty_set_equal_count"].sum() > 0 and got["empty_set_mismatch_count"].sum() > 0
    tops = [str(v) for c in analysis.REFERENCE_ERROR_COLUMNS if c.startswith("top") for v in got[c]]
    assert any(v.endswith(", 0.0)") for v in tops)   # a label of the group filling a short list, as pandas does


def test_unparsed_definitions_differ_only_where_they_should(corpus_db):
    db, _ = corpus_db
    with store.connect(db) as con:
        ref = analysis.error_table(con, ["corpus"], by=["members"], scoring="strict", unparsed="reference")
        ours = analysis.error_table(con, ["corpus"], by=["members"], scoring="strict", unparsed="ours")
    same = ["n", "n_correct", "accuracy", "empty_equal", "empty_mismatch", "did_not_follow"]
    assert ref[same].equals(ours[same])
    # the reference counts each did-not-follow answer as one made-up member; ours counts none
    assert (ref["made_up_sum"] - ours["made_up_sum"]).tolist() == ref["did_not_follow"].tolist()
    assert any("L?" in str(v) for v in ours["top1_mistake"].tolist() + ours["top2_mistake"].tolist())
    assert not any("L?" in str(v) for c in ("top1_mistake", "top2_mistake", "top3_mistake") for v in ref[c])


def test_every_analysis_follows_the_scoring_switch(corpus_db):
    db, items = corpus_db
    from core.tasks.setops.scoring import score_set_response

    scores = [score_set_response(it, it["response"]) for it in items]
    n_strict, n_lenient = sum(s["correct_strict"] for s in scores), sum(s["correct"] for s in scores)
    assert n_strict != n_lenient
    with store.connect(db) as con:
        for scoring, n_right in (("strict", n_strict), ("lenient", n_lenient)):
            ov = analysis.run_overview(con, ["corpus"], scoring=scoring)
            assert int(ov["n_correct"].iloc[0]) == n_right
            pts = analysis.config_accuracy(con, ["corpus"], scoring=scoring)
            assert int(pts["n_correct"].sum()) == n_right
            table = analysis.error_table(con, ["corpus"], by=[], scoring=scoring)
            assert int(table["n_correct"].iloc[0]) == n_right
            ci = analysis.config_interval(con, "corpus", "cfg0", scoring=scoring)
            assert ci["n_correct"] == sum(s[("correct_strict" if scoring == "strict" else "correct")]
                                          for s, it in zip(scores, items) if it["config_id"] == "cfg0")
            right = analysis.drilldown(con, ["corpus"], correct=True, limit=1000, scoring=scoring)
            assert len(right) == n_right
            points, _ = analysis.compare_runs(con, [analysis.Series("c", ("corpus",))], x="operation",
                                              scoring=scoring)
            assert int(points["n_correct"].sum()) == n_right
            _, per_model = analysis.robustness(con, ["corpus"], factors=["operation"], scoring=scoring)
            assert per_model["configs"].iloc[0] == 8
        both = analysis.drilldown(con, ["corpus"], limit=5)
        assert {"correct", "correct_strict", "parsed", "parsed_strict"} <= set(both.columns)
        with pytest.raises(UserError, match="scoring"):
            analysis.config_accuracy(con, ["corpus"], scoring="loose")
        with pytest.raises(UserError, match="unparsed"):
            analysis.error_table(con, ["corpus"], unparsed="mine")

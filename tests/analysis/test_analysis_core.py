"""core.analysis on hand-made results with known answers (flat v_results table) and on the real store."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import analysis as A
from core.errors import UserError

COLUMNS = ["run_id", "idx", "config_id", "sample", "model", "task", "name", "operation", "size_a", "members",
           "length", "condition", "prompt", "truth", "response", "parsed", "correct", "followed", "truth_len",
           "answer_len", "made_up", "empty_truth", "cost_usd"]


def _row(run, idx, cfg, sample, op, size, members, correct, truth_len, answer_len, made_up=0, followed=True,
         model="m/a", length=None, condition=None):
    return dict(run_id=run, idx=idx, config_id=cfg, sample=sample, model=model, task="setops", name="t",
                operation=op, size_a=size, members=members, length=length, condition=condition,
                prompt=f"{cfg}-{sample}", truth="[]", response="r", parsed="[]" if followed else None,
                correct=correct, followed=followed, truth_len=truth_len, answer_len=answer_len,
                made_up=made_up, empty_truth=truth_len == 0, cost_usd=0.0)


@pytest.fixture()
def con():
    rows = []
    # run r1: config u4 (union, size 4): 3/4 correct; config i2 (intersection, size 2): empty truths
    rows += [_row("r1", 0, "u4", 0, "union", 4, "numbers", True, 8, 8),
             _row("r1", 1, "u4", 1, "union", 4, "numbers", True, 7, 7),
             _row("r1", 2, "u4", 2, "union", 4, "numbers", False, 8, 7, made_up=2),
             _row("r1", 3, "u4", 3, "union", 4, "numbers", True, 8, 8)]
    rows += [_row("r1", 4, "i2", 0, "intersection", 2, "numbers", True, 0, 0),
             _row("r1", 5, "i2", 1, "intersection", 2, "numbers", False, 0, 1),
             _row("r1", 6, "i2", 2, "intersection", 2, "numbers", False, 0, 1),
             _row("r1", 7, "i2", 3, "intersection", 2, "numbers", False, 1, None, followed=False),
             _row("r1", 8, "i2", 4, "intersection", 2, "numbers", None, 1, None)]  # not answered yet
    # run r2: same items, different model; words config
    rows += [_row("r2", i, r["config_id"], r["sample"], r["operation"], r["size_a"], "numbers", c, r["truth_len"],
                  r["truth_len"] if c else (r["truth_len"] or 0) + 1, model="m/b")
             for i, (r, c) in enumerate(zip(rows[:8], [True, True, True, True, True, True, False, True]))]
    df = pd.DataFrame(rows, columns=COLUMNS)
    c = duckdb.connect()
    c.register("df", df)
    c.execute("CREATE TABLE v_results AS SELECT * FROM df")
    yield c
    c.close()


def test_config_accuracy_counts_answered_items_only(con):
    pts = A.config_accuracy(con, ["r1"], ["operation"])
    got = {r.config_id: (r.n, r.n_correct, r.accuracy) for r in pts.itertuples()}
    assert got["u4"] == (4, 3, 75.0)
    assert got["i2"][0] == 4 and got["i2"][1] == 1 and got["i2"][2] == pytest.approx(25.0)


def test_violin_summary_matches_pandas(con):
    pts, summ = A.violin_data(con, ["r1", "r2"], x="operation", color="model")
    assert set(summ.columns) >= {"mean", "std", "min", "max", "N"}
    for (op, model), g in pts.groupby(["operation", "model"]):
        s = summ[(summ["operation"] == op) & (summ["model"] == model)].iloc[0]
        assert s["mean"] == pytest.approx(g["accuracy"].mean())
        assert s["N"] == len(g)
        assert s["min"] == g["accuracy"].min() and s["max"] == g["accuracy"].max()


def test_filters_are_parameterised_and_match_url_text(con):
    pts = A.config_accuracy(con, None, ["size_a"], {"size_a": ["4"]})  # text from a URL matches the integer 4
    assert pts["size_a"].unique().tolist() == [4]
    none = A.config_accuracy(con, None, [], {"length": [None]})  # None matches NULL
    assert len(none) == 4
    evil = A.config_accuracy(con, None, [], {"operation": ["union' OR '1'='1"]})
    assert evil.empty
    with pytest.raises(UserError):
        A.config_accuracy(con, None, [], {"operation; DROP TABLE v_results": ["x"]})
    with pytest.raises(UserError):
        A.config_accuracy(con, None, ["no_such_column"])


def test_wilson_interval_matches_scipy():
    for k, n in [(0, 10), (3, 4), (45, 50), (50, 50), (1, 1)]:
        lo, hi = A.wilson_interval(k, n)
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert lo == pytest.approx(100 * ci.low, abs=1e-9)
        assert hi == pytest.approx(100 * ci.high, abs=1e-9)
    assert all(math.isnan(v) for v in A.wilson_interval(0, 0))


def test_config_interval(con):
    ci = A.config_interval(con, "r1", "u4")
    assert (ci["n"], ci["n_correct"], ci["accuracy"]) == (4, 3, 75.0)
    assert ci["low"] < 75 < ci["high"]


def test_error_table_rows_follow_the_paper_definitions(con):
    t = A.error_table(con, ["r1"], by=["operation"]).set_index("operation")
    i = t.loc["intersection"]
    assert i["n"] == 4 and i["n_correct"] == 1 and i["n_wrong"] == 3
    assert i["accuracy"] == pytest.approx(25.0)
    assert i["empty_equal"] == 1 and i["empty_mismatch"] == 2
    assert i["pct_nullset_correct"] == pytest.approx(25.0) and i["pct_nullset_wrong"] == pytest.approx(50.0)
    # paper: Accuracy = Accuracy Non Empty + Pct Nullset Correct
    assert i["accuracy_non_empty"] + i["pct_nullset_correct"] == pytest.approx(i["accuracy"])
    assert i["accuracy_on_non_empty_truths"] == pytest.approx(0.0)
    assert i["did_not_follow"] == 1
    assert i["top1_mistake"] == "G0 vs. L1 (66.67%)"
    assert i["top2_mistake"] == "G1 vs. L? (33.33%)"
    assert i["top1_correct"] == "G0 vs. L0 (100.00%)"
    u = t.loc["union"]
    assert u["made_up_sum"] == 2 and u["pct_made_up_vals"] == pytest.approx(50.0)  # members / N (paper)
    assert u["pct_answers_made_up"] == pytest.approx(25.0)
    assert u["top1_correct"] == "G8 vs. L8 (66.67%)" and u["top2_correct"] == "G7 vs. L7 (33.33%)"
    assert u["top1_mistake"] == "G8 vs. L7 (100.00%)" and u["top2_mistake"] is None
    paper = A.error_table_paper_layout(t.reset_index(), ["operation"])
    assert list(paper.columns) == ["intersection", "union"] and "Top1 Mistake" in paper.index


def test_robustness_eta_squared_matches_anova(con):
    rob, per_model = A.robustness(con, ["r1", "r2"], factors=["operation", "size_a", "members"])
    pts = A.config_accuracy(con, ["r1", "r2"], ["model", "operation"])
    for model, g in pts.groupby("model"):
        groups = [x["accuracy"].to_numpy() for _, x in g.groupby("operation")]
        grand = g["accuracy"].mean()
        ssb = sum(len(x) * (x.mean() - grand) ** 2 for x in groups)
        sst = ((g["accuracy"] - grand) ** 2).sum()
        r = rob[(rob["model"] == model) & (rob["factor"] == "operation")].iloc[0]
        assert r["eta_squared"] == pytest.approx(ssb / sst)
        assert r["spread"] == pytest.approx(max(x.mean() for x in groups) - min(x.mean() for x in groups))
        score = per_model.set_index("model").loc[model, "score"]
        assert score == pytest.approx(g["accuracy"].std(ddof=1))
    assert "members" not in set(rob["factor"])  # a single level explains nothing and is left out


def test_robustness_p_value_matches_f_oneway():
    rng = np.random.default_rng(1)
    rows = []
    idx = 0
    for op_i, op in enumerate(["union", "intersection", "difference"]):
        for c in range(6):
            p = 0.9 - 0.2 * op_i
            for s in range(10):
                rows.append(_row("r", idx, f"{op}{c}", s, op, 4, "numbers", bool(rng.random() < p), 4, 4))
                idx += 1
    con = duckdb.connect()
    con.register("df", pd.DataFrame(rows, columns=COLUMNS))
    con.execute("CREATE TABLE v_results AS SELECT * FROM df")
    rob, _ = A.robustness(con, ["r"], factors=["operation"])
    pts = A.config_accuracy(con, ["r"], ["operation"])
    f = stats.f_oneway(*[g["accuracy"].to_numpy() for _, g in pts.groupby("operation")])
    assert rob.iloc[0]["p_value"] == pytest.approx(f.pvalue, rel=1e-6)


def test_difference_of_means_and_tests():
    rng = np.random.default_rng(0)
    a = rng.normal(60, 10, 80)
    b = rng.normal(70, 10, 80)
    res = A.difference_of_means(a, b)
    assert res["difference"] == pytest.approx(b.mean() - a.mean())
    assert res["ci_low"] < res["difference"] < res["ci_high"]
    assert res["ci_low"] > 0  # a 10-point shift with n = 80 is clearly detected
    assert res["welch_p"] == pytest.approx(stats.ttest_ind(b, a, equal_var=False).pvalue)
    assert res["mannwhitney_p"] < 0.001
    assert res["notes"] == []


def test_degenerate_differences_come_with_a_caveat_not_a_number():
    """Constant series (e.g. 0 % against 100 % everywhere) give no "Welch p = 0" and no interval [d, d]: the
    statistic is NaN and a note says why; so do series with a single configuration or none."""
    for a, b in (([50.0] * 5, [50.0] * 5), ([0.0] * 4, [100.0] * 6)):
        res = A.difference_of_means(a, b)
        assert res["difference"] == pytest.approx(np.mean(b) - np.mean(a))
        assert math.isnan(res["welch_p"]) and math.isnan(res["ci_low"]) and math.isnan(res["ci_high"])
        assert any("same accuracy" in n for n in res["notes"])
    one = A.difference_of_means([40.0], [60.0, 70.0])
    assert one["difference"] == pytest.approx(25.0) and math.isnan(one["ci_low"])
    assert any("two or more configurations" in n for n in one["notes"])
    none = A.difference_of_means([], [1.0])
    assert math.isnan(none["difference"]) and none["notes"]
    half = A.difference_of_means([30.0] * 5, [20.0, 40.0, 60.0, 80.0])
    assert not math.isnan(half["welch_p"]) and any("B" in n or "A" in n for n in half["notes"])


def test_paired_items_and_mcnemar(con):
    paired = A.paired_items(con, "r1", "r2")
    assert len(paired) == 8  # item 8 of r1 is unanswered
    mc = A.mcnemar(paired)
    a, b = paired["correct_a"].astype(bool), paired["correct_b"].astype(bool)
    assert mc["only_a"] == int((a & ~b).sum()) and mc["only_b"] == int((~a & b).sum())
    assert mc["p_value"] == pytest.approx(stats.binomtest(mc["only_a"], mc["only_a"] + mc["only_b"]).pvalue)
    agree = A.agreement_map(paired)
    assert set(agree["category"]) <= set(A.AGREEMENT_LEVELS) and len(agree) == 8


def test_compare_runs_aligns_on_shared_factor_levels(con):
    # r1 has sizes 4 and 2; restrict r2 to size 4 by a filter-free different run: add a run with only size 4
    con.execute("INSERT INTO v_results SELECT * REPLACE ('r3' AS run_id, 'm/c' AS model) FROM v_results "
                "WHERE run_id = 'r1' AND size_a = 4")
    pts, shared = A.compare_runs(con, [A.Series("one", ("r1",)), A.Series("three", ("r3",))], x="operation")
    assert "size_a" in shared
    assert set(pts["size_a"]) == {4} and set(pts["series"]) == {"one", "three"}
    # a factor that is NULL for some configurations (e.g. the deceptive condition) aligns too
    con.execute("CREATE OR REPLACE TABLE v_results AS SELECT * REPLACE "
                "(CAST(CASE WHEN config_id = 'u4' THEN 'swapped' END AS VARCHAR) AS condition) FROM v_results")
    pts2, shared2 = A.compare_runs(con, [A.Series("one", ("r1",)), A.Series("three", ("r3",))], x="operation")
    assert "condition" in shared2 and set(pts2["series"]) == {"one", "three"}
    unaligned, _ = A.compare_runs(con, [A.Series("one", ("r1",)), A.Series("three", ("r3",))], x="operation",
                                  align=False)
    assert set(unaligned["size_a"]) == {2, 4}


def test_drilldown_and_factor_columns(con):
    wrong = A.drilldown(con, ["r1"], correct=False)
    assert set(wrong["idx"]) == {2, 5, 6, 7}
    assert {"prompt", "response", "parsed", "truth"} <= set(wrong.columns)
    assert "operation" in A.factor_columns(con, ["r1"], varying=True)
    assert "members" not in A.factor_columns(con, ["r1"], varying=True)
    assert A.factor_levels(con, ["r1"], "operation") == ["intersection", "union"]


def test_reference_tables_load():
    ids = [t["id"] for t in A.reference_tables()]
    assert "setlexsem_by_operation" in ids
    df = A.reference_table("setlexsem_by_operation")
    assert df.set_index("operation").loc["union", "mean"] == pytest.approx(88.88)
    assert A.reference_for("size_a")[0]["id"] == "setlexsem_by_size"
    with pytest.raises(UserError):
        A.reference_table("nope")


def test_gqg_pythia_figure_is_the_average_of_table_5():
    """GQG Table 5: Pythia 410M, 1B, 1.4B, 2.8B, 6.9B reach 0.464, 0.503, 0.519, 0.515, 0.484 accuracy."""
    table5 = [46.4, 50.3, 51.9, 51.5, 48.4]
    row = A.reference_table("gqg_pythia").iloc[0]
    assert row["mean"] == pytest.approx(sum(table5) / len(table5)) == pytest.approx(49.7)
    assert (row["min"], row["max"]) == (min(table5), max(table5))


def test_url_filters_read_the_reference_value_names_as_ours():
    f = A.filters_from_pairs(["approach=chain_of_thought,baseline", "phrasing=formal_language",
                              "operation=symmetric difference", "members=decile_words", "size_a=2"])
    assert f == {"approach": ["cot", "baseline"], "phrasing": ["formal"], "operation": ["symmetric_difference"],
                 "members": ["deciles"], "size_a": ["2"]}

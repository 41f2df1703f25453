"""Issue 22: names where a person reads (pickers, drill-down columns, heatmap axes, file names, imported runs) and
plots that show what their captions promise (quartile box and mean line in a colour of their own, N on every violin
and bar, intervals on quantifier bars, whole-number count ticks, warnings on thin data)."""

from __future__ import annotations

import pandas as pd
import pytest

from core import analysis
from core.analysis import figures, quantifier_figures as QF


def _points(n_items=20, per_x=6):
    rows = []
    for op in ("union", "symmetric_difference"):
        for i in range(per_x):
            rows.append({"operation": op, "accuracy": 10.0 * i, "config_id": f"c{op}{i}", "n": n_items,
                         "model": "m1" if i % 2 else "m2"})
    return pd.DataFrame(rows)


def test_violin_box_and_mean_line_are_visible_and_every_violin_has_its_n():
    fig = figures.violin(_points(), "operation")
    tr = fig.data[0]
    assert tr.box.visible and tr.meanline.visible
    assert tr.box.line.color != tr.fillcolor and tr.meanline.color != tr.fillcolor
    dashed = [s for s in fig.layout.shapes if s.line.dash == "dash"]
    assert len(dashed) == 2 and sorted(round(s.y0, 1) for s in dashed) == [25.0, 25.0]
    assert list(fig.layout.xaxis.ticktext) == ["Union<br>N=6", "Symmetric difference<br>N=6"]
    grouped = figures.violin(_points(), "operation", color="model")
    assert list(grouped.layout.xaxis.ticktext) == ["Union<br>N=3 · 3", "Symmetric difference<br>N=3 · 3"]


def test_violin_warnings_on_few_items_or_few_configurations():
    assert figures.violin_warnings(_points(), "operation") == []
    few_items = figures.violin_warnings(_points(n_items=4), "operation")
    assert len(few_items) == 1 and "only 4 item(s)" in few_items[0] and "0, 25, 50, 75, 100" in few_items[0]
    few_configs = figures.violin_warnings(_points(per_x=4), "operation")
    assert len(few_configs) == 1 and "Union: N=4" in few_configs[0]


def test_level_texts_are_level_text_of_every_value():
    """The per-distinct-value labels the violins group by equal level_text applied value by value (NULL and NaN
    both "none", whole floats as integers, the index kept)."""
    import numpy as np

    cases = {"operation": pd.Series(["union", None, "symmetric_difference", "union"], index=[7, 3, 5, 1]),
             "size_a": pd.Series([2.0, np.nan, 4.0, 2.0]), "members": pd.Series([None, np.nan, "words"], dtype=object),
             "shots": pd.Series([], dtype=float)}
    for column, values in cases.items():
        got = figures.level_texts(values, column)
        pd.testing.assert_series_equal(got, values.map(lambda v: figures.level_text(column, v)).astype(object))


def test_quantifier_bars_have_wilson_intervals_and_n():
    m = pd.DataFrame({"quantifier": ["all", "none"], "answered": [1, 400], "unparsed": [0, 0],
                      "accuracy": [1.0, 0.5], "f1": [1.0, 0.5]})
    fig = QF.fig_metrics_by(m, "quantifier")
    acc = next(t for t in fig.data if t.name == "accuracy")
    assert list(acc.text) == ["N=1", "N=400"]
    low_one_item = acc.y[0] - acc.error_y.arrayminus[0]
    assert low_one_item < 0.3                           # one right answer is no proof of 1.0
    assert acc.error_y.arrayminus[1] < 0.06             # 400 answers: a narrow interval
    f1 = next(t for t in fig.data if t.name == "F1")
    assert f1.error_y.array is None                     # F1 is not a share of items: no Wilson interval


def test_count_axis_ticks_are_whole_numbers():
    assert QF.count_ticks(0, 50)["dtick"] == 5 and QF.count_ticks(0, 7)["dtick"] == 1
    by = pd.DataFrame({"quantifier": ["all"] * 3, "count_asked": [0, 41, 50], "answered": [2, 2, 2],
                       "pred_true": [0.0, 0.5, 1.0], "label_true": [0.0, 0.0, 1.0], "accuracy": [1.0, 0.5, 1.0]})
    fig = QF.fig_by_count(by)
    assert fig.layout.xaxis.dtick == 5 and fig.layout.xaxis.tickformat == "d"
    assert any(t.name == "truth" and t.line.dash == "dash" for t in fig.data)


def test_agreement_heatmap_names_configurations_not_hashes():
    agree = pd.DataFrame({"config_id": ["9f3a", "9f3a", "77bc", "1d2e"], "sample": [0, 1, 0, 0],
                          "operation": ["union", "union", "intersection", "intersection"],
                          "size_a": [4, 4, 4, 8], "code": [0, 1, 2, 3]})
    fig = figures.agreement_heatmap(agree, "smollm2", "solver")
    ys = list(fig.data[0].y)
    assert ys == ["union · |A|=4", "intersection · |A|=4", "intersection · |A|=8"]
    assert not any(h in " ".join(ys) for h in ("9f3a", "77bc", "1d2e"))
    assert "only smollm2 right" in list(fig.data[0].colorbar.ticktext)


def test_run_pickers_and_file_names_use_names():
    runs = pd.DataFrame([
        {"run_id": "setops-324eba31e4-d0", "name": "smollm2 24", "task": "setops", "model": "local/smollm2",
         "n_items": 24, "created_at": pd.Timestamp("2026-11-20 10:00"), "status": "done"},
        {"run_id": "setops-aaaa-d0", "name": "setops · reference/solver", "task": "setops",
         "model": "reference/solver", "n_items": 24, "created_at": pd.Timestamp("2026-11-21 10:00"),
         "status": "running"}])
    labels = analysis.run_choice_labels(runs)
    assert labels["setops-324eba31e4-d0"].startswith("smollm2 24 · local/smollm2 · 24 items")
    assert labels["setops-aaaa-d0"].startswith("reference/solver · 24 items")
    assert not any(rid in text or "running" in text or "done" in text for rid in runs["run_id"]
                   for text in labels.values())
    assert analysis.file_stem("smollm2 24 / ü: run") == "smollm2-24-run"
    assert analysis.file_stem("../..", "setops-aaaa-d0") == "setops-aaaa-d0"


def test_drilldown_columns_put_names_first_and_hashes_last():
    items = pd.DataFrame({"run_id": ["setops-324eba31e4-d0"], "config_id": ["abc123"], "idx": [0],
                          "operation": ["symmetric_difference"], "condition": ["not_swapped"], "prompt": ["p"]})
    out = analysis.readable_items(items, {"setops-324eba31e4-d0": "smollm2 24"})
    assert list(out.columns) == ["run", "idx", "operation", "condition", "prompt", "run_id", "config_id"]
    assert out.iloc[0]["run"] == "smollm2 24"
    assert out.iloc[0]["operation"] == "symmetric difference" and out.iloc[0]["condition"] == "not swapped"


@pytest.mark.slow
def test_an_import_takes_the_files_run_name(tmp_path):
    from core import runner, store
    from core.store.exports import export_run
    from core.store.io import import_results

    db = tmp_path / "s.duckdb"
    cfg = {"task": "setops", "seed": 0, "samples": 2, "operations": ["union"], "sizes": [2], "members": ["numbers"],
           "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
    named = runner.run(cfg, "reference/solver", db_path=db, name="smollm2 24").run_id
    unnamed = runner.run({**cfg, "seed": 1}, "reference/solver", db_path=db).run_id
    elsewhere = tmp_path / "other.duckdb"     # another machine's store: the name is new there
    for rid, file, into, want in ((named, "a.csv", elsewhere, "smollm2 24"),
                                  (named, "a2.csv", db, "smollm2 24 (a2.csv)"),    # beside the run it copies
                                  (unnamed, "b.csv", elsewhere, "b.csv (studio)")):   # "task · model": made up
        out = tmp_path / file
        export_run(db, rid, out)
        df = pd.read_csv(out)
        df["response"] = "<answer>{1}</answer>"     # edited: not our own export any more, a run of its own
        df.to_csv(out, index=False)
        imported = import_results(into, str(out))[0]
        assert store.run_record(into, imported)["name"] == want



def test_labels_in_tables_are_readable_and_never_na():
    pts = pd.DataFrame({"operation": ["symmetric_difference", "union"], "size_a": [4, 8], "size_b": [4, 8],
                        "swap_count": pd.array([pd.NA, pd.NA], dtype="Int64"), "condition": ["not_swapped", "swapped"]})
    names = analysis.config_labels(pts, ["operation", "size_a", "size_b", "swap_count", "condition"])
    assert names.tolist() == ["symmetric difference · |A|=|B|=4 · not swapped", "union · |A|=|B|=8 · swapped"]
    assert not any("<NA>" in n or "s=" in n for n in names)
    only_a = pts.drop(columns="size_b")      # the caller left |B| out, knowing it equals |A|
    assert analysis.config_labels(only_a, ["size_a"], sizes_same=True).tolist() == ["|A|=|B|=4", "|A|=|B|=8"]
    apart = pts.assign(size_b=[4, 2])
    assert analysis.config_labels(apart, ["size_a", "size_b"]).tolist() == ["|A|=4 · |B|=4", "|A|=8 · |B|=2"]
    shown = analysis.for_display(pts.rename(columns={"condition": analysis.label("condition")}))
    assert shown["operation"].tolist() == ["symmetric difference", "union"]
    assert shown[analysis.label("condition")].tolist() == ["not swapped", "swapped"]
    assert analysis.readable_level("length", None) == "none" and analysis.readable_level("size_a", 4.0) == "4"
    assert analysis.merge_sizes(["operation", "size_a", "size_b"], True) == ["operation", "size_a"]
    assert analysis.factor_label("size_a", True) == "|A| = |B|"


def test_sizes_always_equal_reads_the_store(tmp_path):
    from core import runner, store

    db = tmp_path / "s.duckdb"
    cfg = {"task": "setops", "seed": 0, "samples": 1, "operations": ["union"], "sizes": [2, 3], "members": ["numbers"],
           "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
    same = runner.run(cfg, "reference/solver", db_path=db).run_id
    cross = {k: v for k, v in cfg.items() if k != "sizes"} | {"sizes_a": [2], "sizes_b": [3]}
    apart = runner.run(cross, "reference/solver", db_path=db).run_id
    with store.connect(db) as con:
        assert analysis.sizes_always_equal(con, [same]) is True
        assert analysis.sizes_always_equal(con, [same, apart]) is False
        assert analysis.sizes_always_equal(con, []) is False


def test_embeddings_paper_rows_show_no_none():
    from core.embeddings import tables

    rows = tables.criteria_table({"mini": {"C4_cosine_grid": 0.5, "data": {"counts": {"difference": 12}}}}, "C4",
                                 "ned", "grid", True)
    assert any(r["samples"] is None for r in rows)            # the paper's rows have no sample count …
    df = tables.display_frame(rows)
    text = df.astype(str).to_numpy().ravel().tolist()
    assert not any(t in ("None", "nan", "<NA>") for t in text)  # … and show "—"
    assert df["samples"].iloc[0] == "12" and "—" in text

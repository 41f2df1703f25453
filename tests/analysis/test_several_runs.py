"""Views over several runs never lose or pool them silently: the error table, `report errors|table|html` and the
violins split by model — or by run when two runs share a model — unless the user groups otherwise, and say so; a
configuration is never split into pieces by a column that changes inside it (`report table --by pos`).

The runs are real: the solver (always right) and a loopback OpenAI-compatible endpoint that always answers {1}
(wrong on these grids), over the same grid; a second solver run of another seed (two runs of one model); a
deceptive run (parts of speech drawn per sample)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import analysis, runner, store
from core.analysis import figures, svg, violin_svg
from tests.support.loopback import LoopbackServer

GRID = {"task": "setops", "seed": 4, "samples": 4, "operations": ["union", "intersection"], "sizes": [2, 4],
        "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
DECEPTIVE = {"task": "setops", "seed": 3, "samples": 4, "operations": ["union", "intersection"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}
RIGHT, WRONG = "reference/solver", "openai-compatible/wrong"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    db = tmp_path_factory.mktemp("several") / "s.duckdb"
    right = runner.run(GRID, RIGHT, db_path=db).run_id
    srv = LoopbackServer(0.001, answer="<answer>{1}</answer>").start()
    try:
        wrong = runner.run(GRID, WRONG, db_path=db, base_url=srv.base_url).run_id
    finally:
        srv.stop()
    again = runner.run({**GRID, "seed": 5}, RIGHT, db_path=db).run_id
    deceptive = runner.run(DECEPTIVE, RIGHT, db_path=db).run_id
    with store.connect(db) as con:
        answered = dict(con.execute("SELECT run_id, count(correct) FROM v_results GROUP BY run_id").fetchall())
        wrong_right = con.execute("SELECT count(*) FILTER (WHERE correct_strict) FROM v_results WHERE run_id = ?",
                                  [wrong]).fetchone()[0]
    assert wrong_right == 0 and answered[right] == answered[wrong] > 0   # the premise: one right, one wrong model
    return {"db": db, "right": right, "wrong": wrong, "again": again, "deceptive": deceptive, "answered": answered}


# ------------------------------------------------------------------------------------------------ the rule

def test_run_split_rule():
    two_models = pd.DataFrame({"run_id": ["a", "b"], "model": ["m1", "m2"]})
    one_model = pd.DataFrame({"run_id": ["a", "b", "c"], "model": ["m1", "m1", "m2"]})
    assert analysis.run_split(two_models.iloc[:1], ["operation"]) is None
    assert analysis.run_split(two_models, ["operation", "members"]) == "model"
    assert analysis.run_split(one_model, ["operation"]) == "run_id"
    # the user's own grouping: by run keeps them apart; by model pools a model's runs, and the note names them
    assert analysis.run_split(one_model, ["run_id"]) is None
    assert analysis.run_split(one_model, ["model", "operation"]) is None
    note = analysis.split_note(one_model, ["model", "operation"], None, {"a": "first", "b": "second", "c": "third"})
    assert "pooled" in note and "first, second" in note and "third" not in note
    assert "Split by run" in analysis.split_note(one_model, ["operation"], "run_id")
    assert analysis.split_note(two_models.iloc[:1], ["operation"], None) is None


def test_view_defaults_never_pool_runs_of_one_model():
    one_model = pd.DataFrame({"run_id": ["a", "b", "c"], "model": ["m1", "m1", "m2"], "task": ["setops"] * 3})
    view = analysis.view_defaults(one_model, ["operation"], ["operation"])
    assert view["color"] is None and analysis.run_split(one_model, [view["x"], view["color"]]) == "run_id"


# ------------------------------------------------------------------------------------------------ error table

def test_error_table_keeps_both_runs_and_the_paper_layout_shows_both(runs):
    ids = [runs["right"], runs["wrong"]]
    with store.connect(runs["db"]) as con:
        table = analysis.error_table(con, ids, by=["members", "operation"], scoring="strict")
    assert set(table["model"]) == {RIGHT, WRONG} and len(table) == 8
    assert int(table["n"].sum()) == runs["answered"][runs["right"]] + runs["answered"][runs["wrong"]]
    # the page's orientation: a column per model and group — 8, not 4 with one run's numbers in them
    paper = analysis.error_table_paper_layout(table, ["members", "operation"])
    assert paper.shape[1] == 8 and paper.columns.is_unique
    n = paper.loc["N Comparisons"].astype(int)
    assert n.sum() == table["n"].sum()
    acc = paper.loc["Accuracy"].astype(float)
    assert {acc[c] for c in paper.columns if c.startswith(RIGHT)} == {100.0}
    assert {acc[c] for c in paper.columns if c.startswith(WRONG)} == {0.0}


def test_error_table_of_two_runs_of_one_model_splits_by_run(runs):
    ids = [runs["right"], runs["again"]]
    with store.connect(runs["db"]) as con:
        table = analysis.error_table(con, ids, by=["operation"], scoring="strict")
        labels = analysis.run_labels(analysis.run_rows(con, ids))
    assert set(table["run_id"]) == set(ids) and len(table) == 4
    paper = analysis.error_table_paper_layout(table, ["operation"], run_names=labels)
    assert paper.shape[1] == 4 and paper.columns.is_unique
    assert not any(rid in c for c in paper.columns for rid in ids)    # named by the run's label, not its hash
    assert all(any(c.startswith(labels[r]) for c in paper.columns) for r in ids)


# ------------------------------------------------------------------------------------------------ CLI

def test_report_errors_over_a_right_and_a_wrong_model_keeps_both(runs, tmp_path, cli):
    out = tmp_path / "errors.csv"
    res = cli("report", "errors", "--db", runs["db"], "--run", runs["right"], "--run", runs["wrong"],
              "--by", "operation", "--out", out)
    assert res.returncode == 0, res.stderr
    table = pd.read_csv(out)
    assert list(table.columns[:2]) == ["model", "operation"]
    per_model = table.groupby("model")["n_comparisons"].sum().to_dict()
    assert per_model == {RIGHT: runs["answered"][runs["right"]], WRONG: runs["answered"][runs["wrong"]]}
    assert set(table.loc[table["model"] == RIGHT, "accuracy"]) == {100.0}
    assert set(table.loc[table["model"] == WRONG, "accuracy"]) == {0.0}
    assert "Split by model" in res.stdout
    # ids joined by a comma say the same
    res = cli("report", "errors", "--db", runs["db"], "--run", f"{runs['right']},{runs['wrong']}", "--by",
              "operation", "--out", out)
    assert res.returncode == 0 and pd.read_csv(out)["model"].nunique() == 2


def test_report_table_splits_models_and_names_pooled_runs(runs, tmp_path, cli):
    out = tmp_path / "table.json"
    res = cli("report", "table", "--db", runs["db"], "--run", runs["right"], "--run", runs["wrong"], "--by",
              "operation,members", "--out", out)
    assert res.returncode == 0, res.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert {r["model"] for r in rows} == {RIGHT, WRONG} and len(rows) == 8
    assert {r["mean"] for r in rows if r["model"] == RIGHT} == {100.0}
    assert {r["mean"] for r in rows if r["model"] == WRONG} == {0.0}     # never 50: two models in one group
    assert "Split by model" in res.stdout
    # grouped by model, as chosen, over two runs of one model: pooled, and the output says which runs
    res = cli("report", "table", "--db", runs["db"], "--run", runs["right"], "--run", runs["again"], "--by",
              "model,operation", "--out", out)
    assert res.returncode == 0, res.stderr
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 2 and "pooled" in res.stdout


def test_report_table_by_pos_never_splits_a_configuration(runs, tmp_path, cli):
    out = tmp_path / "pos.csv"
    res = cli("report", "table", "--db", runs["db"], "--run", runs["deceptive"], "--by", "pos", "--out", out)
    assert res.returncode != 0 and not out.exists()
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "pos" in lines[0], res.stderr
    # where the part of speech is a design factor (a words run's filter), every configuration stays whole
    res = cli("report", "table", "--db", runs["db"], "--run", runs["right"], "--by", "pos", "--filter",
              "members=words", "--out", out)
    assert res.returncode == 0, res.stderr
    with store.connect(runs["db"]) as con:
        configs = con.execute("SELECT count(DISTINCT config_id) FROM v_results WHERE run_id = ? AND "
                              "members = 'words'", [runs["right"]]).fetchone()[0]
    assert int(pd.read_csv(out)["N"].sum()) == configs


def test_report_html_splits_models(runs, tmp_path, cli):
    out = tmp_path / "r.html"
    res = cli("report", "html", "--db", runs["db"], "--run", runs["right"], "--run", runs["wrong"], "--out", out)
    assert res.returncode == 0, res.stderr
    text = out.read_text(encoding="utf-8")
    assert text.count("Split by model") >= 2          # the violins and the error table say so
    errors = text[text.index("Error analysis"):text.index("Robustness")]
    assert RIGHT in errors and WRONG in errors        # a column per model in the paper's table


# ------------------------------------------------------------------------------------------------ violins

def test_violins_coloured_by_a_factor_are_split_by_model(runs):
    ids = [runs["right"], runs["wrong"]]
    with store.connect(runs["db"]) as con:
        rows = analysis.run_rows(con, ids)
        panel = analysis.run_split(rows, ["operation", "members"])
        points, summary = analysis.violin_view(con, ids, "operation", "members", panel=panel)
        _, sketched = analysis.violin_view(con, ids, "operation", "members", panel=panel, max_points=0)
    assert panel == "model"
    for frame in (summary, sketched):
        assert set(frame["model"]) == {RIGHT, WRONG} and len(frame) == 8
        assert set(frame.loc[frame["model"] == RIGHT, "mean"]) == {100.0}
        assert set(frame.loc[frame["model"] == WRONG, "mean"]) == {0.0}    # never 0/100 pooled to 50
    assert set(points["model"]) == {RIGHT, WRONG}
    fig = figures.violin(points, "operation", "members", summary, panel=panel)
    assert {t.xaxis for t in fig.data} == {"x", "x2"}                   # a panel per model
    assert [t.showlegend for t in fig.data] == [True, True, False, False]
    titles = [a.text for a in fig.layout.annotations if a.text and "Model:" in a.text]
    assert sorted(titles) == sorted(f"Model: {m}" for m in (RIGHT, WRONG))
    axis = {m: "x" if i == 0 else f"x{i + 1}" for i, m in enumerate(sorted((RIGHT, WRONG)))}   # panels in order
    for t in fig.data:     # each panel's violins hold only its model's configurations
        assert set(t.y) == ({100.0} if t.xaxis == axis[RIGHT] else {0.0})
    drawn = violin_svg.violin_svg(sketched, "operation", "members", panel=panel)
    assert drawn.startswith("<div>") and drawn.count("<svg") == 2 and RIGHT in drawn and WRONG in drawn


def test_violins_of_two_runs_of_one_model_are_split_by_run(runs):
    ids = [runs["right"], runs["again"]]
    with store.connect(runs["db"]) as con:
        rows = analysis.run_rows(con, ids)
        panel = analysis.run_split(rows, ["operation", "members"])
        _, summary = analysis.violin_view(con, ids, "operation", "members", panel=panel)
    assert panel == "run_id" and set(summary["run_id"]) == set(ids)
    n_configs = summary.groupby("run_id")["N"].sum().to_dict()
    with store.connect(runs["db"]) as con:
        want = dict(con.execute("SELECT run_id, count(DISTINCT config_id) FROM v_results WHERE run_id IN (?, ?) "
                                "GROUP BY run_id", ids).fetchall())
    assert n_configs == want
    labels = analysis.run_labels(rows)
    drawn = violin_svg.violin_svg(summary, "operation", "members", panel=panel, panel_names=labels)
    assert all(svg.escape(labels[r]) in drawn for r in ids) and not any(r in drawn for r in ids)

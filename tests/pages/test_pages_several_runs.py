"""The Results page over two runs on one grid (AppTest): Error analysis grouped by token type × operation shows both
runs' columns (not one run's, N halved), the violins coloured by a factor are split by model, and the page says
what it split or pooled. Real runs: the solver (always right) and a loopback endpoint answering {1} (always wrong
here), plus a second solver run (two runs of one model)."""

from __future__ import annotations

import pytest
import streamlit as st

from core import runner, store
from tests.support.loopback import LoopbackServer

GRID = {"task": "setops", "seed": 4, "samples": 4, "operations": ["union", "intersection"], "sizes": [2, 4],
        "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
RIGHT, WRONG = "reference/solver", "openai-compatible/wrong"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("tworuns") / "studio.duckdb")
    right = runner.run(GRID, RIGHT, db_path=db).run_id
    srv = LoopbackServer(0.001, answer="<answer>{1}</answer>").start()
    try:
        wrong = runner.run(GRID, WRONG, db_path=db, base_url=srv.base_url).run_id
    finally:
        srv.stop()
    # named: two runs of one model with the same number of items, started within one second, are told apart by
    # nothing but their ids (views.run_labels' last resort), which this file checks the page never shows
    again = runner.run({**GRID, "seed": 5}, RIGHT, db_path=db, name="solver, seed 5").run_id
    with store.connect(db) as con:
        answered = con.execute("SELECT count(correct) FROM v_results WHERE run_id = ?", [right]).fetchone()[0]
    return {"db": db, "right": right, "wrong": wrong, "again": again, "answered": answered}


@pytest.fixture()
def runs(two_runs, monkeypatch):
    monkeypatch.setenv("STUDIO_DB", two_runs["db"])
    st.cache_data.clear()
    yield two_runs
    st.cache_data.clear()


def _paper(at):
    return next(d.value for d in at.dataframe if "N Comparisons" in d.value.index)


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption)


@pytest.mark.slow
def test_error_analysis_of_two_models_shows_both_runs(runs, open_page):
    at = open_page("pages/results.py", {"runs": f"{runs['right']},{runs['wrong']}", "view": "errors",
                                        "by": "members,operation"})
    paper = _paper(at)
    assert paper.shape[1] == 8 and paper.columns.is_unique         # 2 models × 2 token types × 2 operations
    assert paper.loc["N Comparisons"].astype(int).sum() == 2 * runs["answered"]     # N of both runs
    acc = paper.loc["Accuracy"].astype(float)
    assert {acc[c] for c in paper.columns if c.startswith(RIGHT)} == {100.0}
    assert {acc[c] for c in paper.columns if c.startswith(WRONG)} == {0.0}
    assert "Split by model" in _captions(at)


@pytest.mark.slow
def test_error_analysis_of_two_runs_of_one_model_splits_by_run(runs, open_page):
    at = open_page("pages/results.py", {"runs": f"{runs['right']},{runs['again']}", "view": "errors",
                                        "by": "operation"})
    paper = _paper(at)
    assert paper.shape[1] == 4 and paper.columns.is_unique
    assert not any(r in c for c in paper.columns for r in (runs["right"], runs["again"]))   # names, not hashes
    assert "Split by run" in _captions(at)
    # grouped by model, as chosen: the two runs are one column per operation, and the page says they are pooled
    at.multiselect(key="res_by").set_value(["model", "operation"]).run()
    assert not at.exception
    paper = _paper(at)
    assert paper.shape[1] == 2 and "pooled" in _captions(at)


@pytest.mark.slow
def test_violins_coloured_by_a_factor_are_split_by_model(runs, open_page):
    at = open_page("pages/results.py", {"runs": f"{runs['right']},{runs['wrong']}", "x": "operation",
                                        "color": "members"})
    assert at.selectbox(key="res_color").value == "members"
    summary = next(d.value for d in at.dataframe if "Mean %" in d.value.columns)
    assert set(summary["Model"]) == {RIGHT, WRONG} and len(summary) == 8
    assert set(summary.loc[summary["Model"] == RIGHT, "Mean %"]) == {100.0}
    assert set(summary.loc[summary["Model"] == WRONG, "Mean %"]) == {0.0}   # never one violin of mean 50
    assert "Split by model" in _captions(at)

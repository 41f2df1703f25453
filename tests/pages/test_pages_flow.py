"""The researcher's first ten minutes under AppTest (issue 11): a preset then an edit keeps the preset's grid; after
a quantifier run its results are the ones shown; Results opens two models coloured by model and deceptive runs
split by condition, one task at a time; the Runs table shows accuracy and one status; report downloads."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from tests.support import ROOT  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core import runner, store  # noqa: E402
from core.store.exports import export_run  # noqa: E402
from core.store.io import import_results  # noqa: E402
from core.tasks import setops

DECEPTIVE = {"task": "setops", "seed": 0, "samples": 2, "operations": ["intersection", "union"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}
QUANT = {"task": "quantifiers", "quantifiers": ["at least half", "none"], "noun_groups": ["gqg"], "samples": 2,
         "nouns_per_group": 2, "seed": 1}


@pytest.fixture()
def db(tmp_path, monkeypatch):
    import streamlit as st

    path = tmp_path / "studio.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def open_page(page: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at, label):
    return {m.label: m.value for m in at.metric}[label]


@pytest.mark.slow
def test_a_preset_then_an_edit_keeps_the_presets_grid(db):
    at = open_page("pages/set_operations.py")
    at.selectbox(key="so_preset").set_value("paper-deceptive").run()
    preset = setops.PRESETS["paper-deceptive"]
    n = len(setops.plan(setops.preset_config("paper-deceptive")).cells)   # 768 (the reference's deceptive study)
    assert metric(at, "Configurations") == f"{n:,}"
    at.number_input(key="so_samples").set_value(2).run()
    assert metric(at, "Configurations") == f"{n:,}" and metric(at, "Items") == f"{2 * n:,}"
    assert at.button_group(key="so_members").value == ["deceptive"]
    assert at.button_group(key="so_approaches").value == preset["approaches"]
    assert at.selectbox(key="so_preset").value == "paper-deceptive"
    assert any("Started from **paper-deceptive**" in c.value and "edited: samples 50 → 2" in c.value
               for c in at.caption)
    at.button_group(key="so_ops").set_value(["intersection", "difference", "symmetric_difference"]).run()
    assert metric(at, "Configurations") == f"{n * 3 // 4:,}"
    assert any("operations −union" in c.value for c in at.caption)
    # the limit spreads over the grid and the estimate honours it
    at.number_input(key="so_limit").set_value(12).run()
    assert metric(at, "Items") == "12" and metric(at, "Calls to make") == "12"


@pytest.mark.slow
def test_after_a_quantifier_run_its_results_are_the_ones_shown(db):
    older = runner.run(dict(QUANT, seed=2), "reference/solver", db_path=db).run_id
    at = open_page("pages/quantifiers.py")
    assert at.multiselect(key="_pick_qruns").value == [older]
    at.selectbox(key="quant_m_model").set_value("reference/solver").run()
    at.button(key="quant_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    new = at.session_state["quant_run_id"]
    assert new != older and at.multiselect(key="_pick_qruns").value == [new]
    assert at.query_params["qruns"] == new
    runner.get_handle(new).wait(120)
    assert store.get_run(db, new)["status"] == "done"   # the final merge comes before the handle finishes
    # a rerun asked for by a browser that had not yet seen the new selection (a progress timer firing while the
    # page drew) carries the picker's old value: the run just made stays selected
    at.multiselect(key="_pick_qruns").set_value([older]).run()
    assert at.multiselect(key="_pick_qruns").value == [new] and at.query_params["qruns"] == new
    at.multiselect(key="_pick_qruns").set_value([older]).run()    # from now on a choice is the user's
    assert at.multiselect(key="_pick_qruns").value == [older] and at.query_params["qruns"] == older
    at.multiselect(key="_pick_qruns").set_value([]).run()
    assert at.multiselect(key="_pick_qruns").value == [] and "qruns" not in at.query_params


@pytest.mark.slow
def test_a_run_picked_and_then_cleared_stays_cleared(db):
    """Run pressed while the picker showed a run, then the user clears it: the selection is not forced back."""
    runner.run(dict(QUANT, seed=2), "reference/solver", db_path=db)
    at = open_page("pages/quantifiers.py")
    at.selectbox(key="quant_m_model").set_value("reference/solver").run()
    at.button(key="quant_start").click().run()
    new = at.session_state["quant_run_id"]
    runner.get_handle(new).wait(120)
    at.multiselect(key="_pick_qruns").set_value([]).run()
    assert at.multiselect(key="_pick_qruns").value == []
    at.run()
    assert at.multiselect(key="_pick_qruns").value == []


def _second_model(db, run_id, name="other.csv", model="other/model"):
    out = db.with_name(name)
    export_run(db, run_id, out)
    df = pd.read_csv(out)
    df.loc[df.index % 3 == 0, "correct"] = False
    df["model"] = model
    df.to_csv(out, index=False)
    return import_results(db, out.read_bytes(), name)[0]


@pytest.mark.slow
def test_results_defaults_follow_the_selection_and_tasks_are_never_pooled(db):
    solver = runner.run(DECEPTIVE, "reference/solver", db_path=db).run_id
    other = _second_model(db, solver)
    quant = runner.run(QUANT, "reference/solver", db_path=db).run_id
    at = open_page("pages/results.py", {"runs": solver})
    assert at.selectbox(key="res_x").value == "condition"      # deceptive → split by condition
    assert at.selectbox(key="res_color").value == "(none)"
    at.multiselect(key="_pick_runs").set_value([solver, other]).run()
    assert at.selectbox(key="res_x").value == "condition"
    assert at.selectbox(key="res_color").value == "model"      # two models → coloured by model
    labels = at.dataframe[0].value["Label"].tolist()
    assert sorted(labels) == ["other.csv (studio)", "reference/solver"]
    at.multiselect(key="_pick_runs").set_value([solver, other, quant]).run()   # "select all"
    assert not at.exception
    assert at.radio(key="res_task").value == "setops"
    violin_runs = set(at.dataframe[0].value["Run"])
    assert quant not in violin_runs                             # never a quantifier violin with operation "none"
    at.radio(key="res_task").set_value("quantifiers").run()
    assert at.selectbox(key="res_x").value == "quantifier" and set(at.dataframe[0].value["Run"]) == {quant}


@pytest.mark.slow
def test_runs_table_has_accuracy_and_the_report_downloads(db):
    solver = runner.run(DECEPTIVE, "reference/solver", db_path=db).run_id
    at = open_page("pages/runs.py")
    table = at.dataframe[0].value
    assert {"accuracy", "status", "label"} <= set(table.columns)
    assert table.loc[table["run_id"] == solver, "accuracy"].iloc[0] == 100.0
    assert "None" not in table.astype(str).to_string()
    res = open_page("pages/results.py", {"runs": solver})
    res.button(key="res_report_build").click().run()
    assert not res.exception, [e.value for e in res.exception]
    assert res.session_state["res_report"][1].startswith(b"<!DOCTYPE html>")

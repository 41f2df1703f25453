"""The Quantifiers page (AppTest): the vanilla preview on an empty DB, config errors as one line, results of a stored
reference/solver run at 100 %, and a live solver run started from the page."""

from __future__ import annotations

import sys
import time

import pytest

from tests.support import ROOT  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core import runner  # noqa: E402

SMALL = {"task": "quantifiers", "quantifiers": ["at least half", "none"], "noun_groups": ["rare", "made_up"],
         "nouns_per_group": 2, "samples": 4, "seed": 5}


@pytest.fixture()
def db(tmp_path, monkeypatch):
    import streamlit as st

    path = tmp_path / "studio.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def open_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/quantifiers.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


@pytest.mark.slow
def test_vanilla_preview_on_empty_db(db):
    at = open_page()
    assert at.selectbox(key="quant_preset").value == "gqg-small"    # the default: a small grid (issue 22)
    at.selectbox(key="quant_preset").set_value("gqg-vanilla").run()
    m = metrics(at)
    assert m["Prompts"] == "18,360" and m["True"] == "8,592 (46.8%)" and m["False"] == "9,768 (53.2%)"
    assert m["Configurations"] == "360"
    preview = at.dataframe[0].value
    assert len(preview) == 24 and preview["idx"].is_monotonic_increasing
    assert all(p.startswith("There are 50 ") and p.endswith("? Answer with only one word, true or false.")
               for p in preview["prompt"])
    assert set(preview["label"]) <= {"true", "false"}
    assert any("No quantifier runs yet" in i.value for i in at.info)


@pytest.mark.slow
def test_bad_quantifier_is_one_clear_error(db):
    at = open_page()
    at.text_input(key="quant_gqg-small_extra").input("most of them").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any(e.startswith("unknown quantifier 'most of them'") for e in errors), errors
    assert "Prompts" not in metrics(at)  # no preview of an invalid config


@pytest.mark.slow
def test_stored_solver_run_shows_100_percent(db):
    progress = runner.run(SMALL, "reference/solver", db_path=db, name="solver probe")
    assert progress.done == 2 * 4 * 2 * 4
    at = open_page()
    tables = [d.value for d in at.dataframe]
    overall = next(t for t in tables if "accuracy_gqg" in t.columns and "quantifier" not in t.columns)
    assert overall["accuracy"].iloc[0] == 1.0 and overall["f1"].iloc[0] == 1.0 and overall["n"].iloc[0] == 64
    by_q = next(t for t in tables if "quantifier" in t.columns and "accuracy" in t.columns)
    assert set(by_q["quantifier"]) == {"at least half", "none"} and (by_q["accuracy"] == 1.0).all()
    by_g = next(t for t in tables if "noun_group" in t.columns and "accuracy" in t.columns)
    assert list(by_g["noun_group"]) == ["rare", "made_up"]
    assert len(at.get("plotly_chart")) == 3


@pytest.mark.slow
def test_live_solver_run_from_the_page(db):
    at = open_page()
    at.selectbox(key="quant_preset").set_value("frequency-bands-sampled").run()
    at.number_input(key="quant_frequency-bands-sampled_per_group").set_value(1).run()
    assert metrics(at)["Prompts"] == "216"  # 3 quantifiers × 6 groups × 1 noun × 2 predicates × 6 counts
    at.selectbox(key="quant_m_model").set_value("reference/solver").run()
    at.button(key="quant_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state["quant_run_id"]
    handle = runner.get_handle(run_id)
    assert handle is not None
    handle.wait(120)
    assert handle.progress().done == 216
    deadline = time.time() + 30
    while time.time() < deadline:  # the journal is merged into DuckDB shortly after the run ends
        at.run()
        tables = [d.value for d in at.dataframe]
        overall = [t for t in tables if "accuracy_gqg" in t.columns and "quantifier" not in t.columns]
        if overall and overall[0]["answered"].iloc[0] == 216:
            break
        time.sleep(0.5)
    assert overall[0]["accuracy"].iloc[0] == 1.0
    assert not at.exception


@pytest.mark.slow
def test_config_sent_by_the_runs_page_fills_the_widgets(db):
    at = open_page()
    loaded = {**SMALL, "objects": ["lanterns"], "count_range": [10, 40], "template": "statement", "total": 50}
    at.session_state["quantifiers_loaded_config"] = loaded
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="quant_preset").value == "(loaded config)"
    from core.tasks import quantifiers as Q

    expected = Q.count(Q.load_config(loaded))
    assert metrics(at)["Prompts"] == f"{expected:,}"
    assert at.text_input(key="quant_(loaded config)_objects").value == "lanterns"
    assert at.selectbox(key="quant_(loaded config)_tpl").value == "statement"

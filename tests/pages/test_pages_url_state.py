"""Every setting in the URL (issue 22): a page opened again from the URL it wrote — a reload, or a link shared with
someone whose browser has no session — shows the same settings and numbers. AppTest: the second AppTest is a new
session that only has the first one's query parameters."""

from __future__ import annotations

import sys

import pytest

from tests.pages.test_pages_deceptive import groups_file  # noqa: F401  (fixture)
from tests.support import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest

from core import runner, urlstate


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


def reload(at: AppTest, page: str) -> AppTest:
    """A fresh browser session opening the URL ``at`` shows."""
    return open_page(page, {k: v for k, v in at.query_params.items()})


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_urlstate_round_trip_and_hostile_values():
    defaults = {"samples": 5, "sizes": [2, 4], "lengths": [None], "fixed": True, "freq": "wordfreq", "over": [0.5]}
    values = {"samples": 3, "sizes": [2, 4, 8], "lengths": [None], "fixed": False, "freq": "wordfreq", "over": [1.0]}
    enc = urlstate.encode(values, defaults)
    assert enc == {"samples": "3", "sizes": "[2,4,8]", "lengths": None, "fixed": "false", "freq": None,
                   "over": "[1.0]"}
    url = {k: v for k, v in enc.items() if v is not None}
    assert {**defaults, **urlstate.decode(url, defaults)} == values
    # a mistyped or hostile link changes nothing it cannot honour
    bad = {"samples": "[1]", "sizes": "{x", "fixed": "3", "over": "\"a\"", "other": "1"}
    assert urlstate.decode(bad, defaults) == {}
    assert urlstate.decode({"samples": "3.0"}, defaults) == {"samples": 3}
    assert urlstate.decode({"samples": "null"}, {"samples": 6}, nullable=True) == {"samples": None}


def test_deceptive_settings_of_a_run_config():
    cfg = {"seed": 7, "samples": 3, "sizes": [5], "operations": ["union"], "approaches": ["composite"],
           "hypernym_pairs": [["tree.n.01", "eat.v.01"]], "pos": [None]}
    assert urlstate.deceptive_settings(cfg) == {"a": "tree.n.01", "b": "eat.v.01", "seed": 7, "size": 5, "samples": 3,
                                                "ops": ["union"], "approach": "composite", "pos": "any",
                                                "hyp": "fixed"}   # the config fixes the hypernym pair


@pytest.mark.slow
def test_set_operations_an_edited_preset_comes_back_after_a_reload(db):
    page = "pages/set_operations.py"
    at = open_page(page, {"preset": "demo-small"})
    assert metrics(at)["Items"] == "80"
    at.number_input(key="so_samples").set_value(3).run()
    sizes = at.button_group(key="so_sizes").value
    at.button_group(key="so_sizes").set_value([*sizes, 8]).run()
    at.number_input(key="so_seed").set_value(11).run()
    at.number_input(key="so_limit").set_value(20).run()
    at.text_input(key="so_name").input("my grid").run()
    want = metrics(at)
    caption = next(c.value for c in at.caption if "Started from" in c.value)
    assert "samples 5 → 3" in caption and at.query_params["samples"] == "3"

    again = reload(at, page)
    assert metrics(again) == want
    assert again.selectbox(key="so_preset").value == "demo-small"
    assert next(c.value for c in again.caption if "Started from" in c.value) == caption
    assert again.button_group(key="so_sizes").value == [*sizes, 8]
    assert again.number_input(key="so_seed").value == 11 and again.number_input(key="so_limit").value == 20
    assert again.text_input(key="so_name").value == "my grid"

    # back to the preset's value: the setting leaves the URL
    again.number_input(key="so_samples").set_value(5).run()
    assert "samples" not in again.query_params


@pytest.mark.slow
def test_set_operations_custom_values_and_templates_come_back(db):
    page = "pages/set_operations.py"
    at = open_page(page)
    at.button_group(key="so_ops").set_value(["union"]).run()
    at.toggle(key="so_asym").set_value(True).run()
    at.button_group(key="so_sizes_a").set_value([3]).run()
    at.button_group(key="so_sizes_b").set_value([5, 6]).run()
    text = at.text_area(key="so_templates").value
    edited = text.replace("Here is what you are asked to do:", "Your task:")
    assert edited != text
    at.text_area(key="so_templates").input(edited).run()
    assert "construction" in at.query_params["templates"]     # the override, not the whole YAML
    want = metrics(at)
    again = reload(at, page)
    assert metrics(again) == want
    assert "Your task:" in again.text_area(key="so_templates").value
    assert any("Edited parts: construction" in i.value for i in again.info)
    assert again.toggle(key="so_asym").value is True
    assert again.button_group(key="so_sizes_b").value == [5, 6]
    assert again.button_group(key="so_ops").value == ["union"]


@pytest.mark.slow
def test_deceptive_seed_and_a_shared_run_link(groups_file):  # noqa: F811
    page = "pages/deceptive_sets.py"
    at = open_page(page, {"a": "grandparent.n.01", "b": "appearance.n.03"})
    at.number_input(key="dec_seed").set_value(7).run()
    at.number_input(key="dec_samples").set_value(3).run()
    chips = [m.value for m in at.markdown if m.value.startswith(("A = ", "B = "))]
    again = reload(at, page)
    assert again.number_input(key="dec_seed").value == 7 and again.number_input(key="dec_samples").value == 3
    assert [m.value for m in again.markdown if m.value.startswith(("A = ", "B = "))] == chips

    # a run made with another pair and seed: a link naming only the run previews that run's pair and seed
    cfg = {"task": "setops", "seed": 5, "samples": 2, "operations": ["union"], "sizes": [3], "members": ["deceptive"],
           "conditions": ["not_swapped", "swapped", "random"], "hypernym_pairs": [["tree.n.01", "eat.v.01"]],
           "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0], "pos": [None]}
    run_id = runner.run(cfg, "reference/solver", db_path=groups_file.parent / "studio.duckdb").run_id
    shared = open_page(page, {"run": run_id})
    assert shared.selectbox(key="dec_a").value == "tree.n.01" and shared.selectbox(key="dec_b").value == "eat.v.01"
    assert shared.number_input(key="dec_seed").value == 5 and shared.selectbox(key="dec_size").value == 3
    assert shared.multiselect(key="dec_ops").value == ["union"]
    from core.tasks import setops

    first = {it["condition"]: it for it in setops.items(setops.Config.from_dict(cfg)) if it["sample"] == 0}
    shown = [m.value for m in shared.markdown if m.value.startswith("A = ")]
    for cond, chip in zip(("not_swapped", "swapped", "random"), shown):
        assert all(f">{w}</span>" in chip for w in first[cond]["set_a"]), cond
    # the recipient changes the seed: it is kept against the run's own settings
    shared.number_input(key="dec_seed").set_value(9).run()
    assert reload(shared, page).number_input(key="dec_seed").value == 9


@pytest.mark.slow
def test_quantifiers_default_is_small_and_edits_come_back(db):
    page = "pages/quantifiers.py"
    at = open_page(page)
    assert at.selectbox(key="quant_preset").value == "gqg-small"
    assert int(metrics(at)["Prompts"].replace(",", "")) <= 300
    assert not at.button(key="quant_start").disabled
    at.number_input(key="quant_gqg-small_seed").set_value(4).run()
    at.number_input(key="quant_gqg-small_samples").set_value(3).run()
    at.text_input(key="quant_gqg-small_extra").input("at least 7").run()
    want = metrics(at)
    again = reload(at, page)
    assert metrics(again) == want
    assert again.number_input(key="quant_gqg-small_seed").value == 4
    assert "at least 7" in again.multiselect(key="quant_gqg-small_quants").value
    # another preset, edited
    at.selectbox(key="quant_preset").set_value("frequency-bands-sampled").run()
    at.number_input(key="quant_frequency-bands-sampled_per_group").set_value(1).run()
    assert at.query_params["preset"] == "frequency-bands-sampled"
    again = reload(at, page)
    assert again.selectbox(key="quant_preset").value == "frequency-bands-sampled"
    assert metrics(again)["Prompts"] == "216"


@pytest.mark.slow
def test_results_view_and_its_settings_come_back(db):
    cfg = {"task": "setops", "seed": 0, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
           "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
    run_id = runner.run(cfg, "reference/solver", db_path=db).run_id
    page = "pages/results.py"
    at = open_page(page, {"runs": run_id})
    assert at.radio(key="res_view").value == "violins"
    at.selectbox(key="res_x").set_value("size_a").run()
    at.radio(key="res_view").set_value("drilldown").run()
    at.radio(key="res_which").set_value("wrong only").run()
    assert at.query_params["view"] == "drilldown" and at.query_params["items"] == "wrong"
    again = reload(at, page)
    assert again.radio(key="res_view").value == "drilldown"
    assert again.radio(key="res_which").value == "wrong only"
    again.radio(key="res_view").set_value("violins").run()
    assert again.selectbox(key="res_x").value == "size_a"   # the URL's split, kept while another view was shown
    again.radio(key="res_view").set_value("errors").run()
    assert not again.exception and again.query_params["view"] == "errors"

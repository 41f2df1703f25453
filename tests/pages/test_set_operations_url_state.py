"""Set operations in the URL (issue 22; from the issue-22 branch): a page opened again from the URL it wrote — a reload,
or a link shared with someone whose browser has no session — shows the same settings and numbers. AppTest: the second AppTest is a new
session that only has the first one's query parameters."""

from __future__ import annotations

import sys

import pytest

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

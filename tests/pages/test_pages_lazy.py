"""Expanders of heavy, optional content (ui/lazy.py) are built only while open: closed, their body is neither
computed nor sent; opened, it shows what it always showed (Findings, Runs, Quantifiers, Set operations)."""

from __future__ import annotations

import pytest

from tests.support import SMALL_GRID as GRID


@pytest.fixture()
def db(page_db):
    return page_db


def _expander(at, start: str):
    found = [e for e in at.expander if e.label.startswith(start)]
    assert found, [e.label for e in at.expander]
    return found


def _open(at, key: str):
    at.session_state[key] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_findings_tables_are_built_when_their_expander_opens(db, open_page):
    from core import runner

    run_id = runner.run(GRID, "reference/solver", db_path=db).run_id
    at = open_page("pages/findings.py", {"runs": run_id})
    closed = _expander(at, "Violins, the reference's table")
    assert len(closed) >= 2 and all(len(e.children) == 0 for e in closed)
    assert len(at.dataframe) == 0 and not [t for t in at.toggle if t.label.startswith("Draw the violins")]
    forests = [m.value for m in at.markdown if m.value.startswith("<svg") and "forest plot" in m.value]
    assert len(forests) >= 2                      # the forest plots stay on the page, closed expanders or not
    assert not at.get("plotly_chart")             # static SVG: no Plotly chart until the violins are asked for

    _open(at, "find_more_operation_types")
    opened = [e for e in _expander(at, "Violins, the reference's table") if len(e.children)]
    assert len(opened) == 1                       # only the one opened
    assert [t for t in at.toggle if t.label.startswith("Draw the violins")]
    table = at.dataframe[0].value                 # the reference's get_stats table of this finding
    assert {"operation", "members"} <= set(table.columns) and len(table) == 4
    assert len([m for m in at.markdown if m.value.startswith("<svg") and "forest plot" in m.value]) == len(forests)


def test_runs_items_are_read_when_their_expander_opens(db, open_page):
    from core import runner

    run_id = runner.run(GRID, "reference/solver", db_path=db).run_id
    at = open_page("pages/runs.py", {"run": run_id})
    (items,) = _expander(at, "Items of this run")
    assert len(items.children) == 0
    n_before = len(at.dataframe)
    _open(at, "runs_items")
    (items,) = _expander(at, "Items of this run")
    assert len(at.dataframe) == n_before + 1
    shown = at.dataframe[-1].value
    assert len(shown) == 2 * 2 * 2 * 3 and "prompt" in " ".join(map(str, shown.columns)).lower()


def test_runs_export_is_written_on_click_not_on_visit(db, open_page, monkeypatch):
    """The export download's file is made when the button is clicked (a callable), never while the page loads;
    the callable gives the run's export."""
    import streamlit as st

    from core import runner
    from core.store import exports

    run_id = runner.run(GRID, "reference/solver", db_path=db).run_id
    calls: list = []
    real = exports.export_run
    monkeypatch.setattr(exports, "export_run", lambda *a, **k: calls.append(a) or real(*a, **k))
    given: dict = {}
    real_button = st.download_button

    def spy(label, data, *args, **kwargs):
        given[kwargs.get("key")] = data
        return real_button(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    at = open_page("pages/runs.py", {"run": run_id})
    assert len(at.get("download_button")) == 2 and calls == []
    data = given["runs_download"]
    assert callable(data) and calls == []
    import io

    import pandas as pd

    frame = pd.read_csv(io.BytesIO(data()))      # what a click downloads: the CSV of the run, every item
    assert len(calls) == 1 and len(frame) == 2 * 2 * 2 * 3 and set(frame["run_id"]) == {run_id}


def test_quantifier_and_setops_extras_are_built_when_opened(db, open_page):
    at = open_page("pages/quantifiers.py")
    assert all(len(e.children) == 0 for e in _expander(at, "Config as YAML") + _expander(at, "Quantifier meanings"))
    assert len(at.code) == 0
    _open(at, "q_yaml")
    assert len(at.code) == 1 and "quantifiers" in at.code[0].value
    _open(at, "q_meanings")
    assert len(_expander(at, "Quantifier meanings")[0].children) == 1

    at = open_page("pages/set_operations.py")
    (preview,) = _expander(at, "Preview: a few generated prompts")
    assert len(preview.children) == 0 and len(at.code) == 0
    _open(at, "so_preview")
    assert len(at.code) == 3 and all(c.value.strip() for c in at.code)   # three prompts, with their truths
    assert len([m for m in at.markdown if m.value.startswith("Truth: ")]) == 3

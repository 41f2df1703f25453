"""Work a page does for every visitor is done once per state of the store and shared by sessions: the Results
page's violin figure is built once for two visits of the same view, and again after the store changed."""

from __future__ import annotations

import pytest

from tests.support import SMALL_GRID as GRID


@pytest.fixture()
def db(page_db):
    return page_db


def test_results_violin_figure_is_built_once_per_store_state(db, open_page, monkeypatch):
    from core import runner
    from core.analysis import figures

    built: list = []
    real = figures.violin
    monkeypatch.setattr(figures, "violin", lambda *a, **k: built.append(a[1:3]) or real(*a, **k))
    run_id = runner.run(GRID, "reference/solver", db_path=db).run_id
    first = open_page("pages/results.py", {"runs": run_id})
    second = open_page("pages/results.py", {"runs": run_id})            # another session, same view
    assert len(built) == 1
    import json

    shown = [json.loads(c.proto.spec) for c in (first.get("plotly_chart")[0], second.get("plotly_chart")[0])]
    for spec in shown:   # a figure fresh from the builder carries an empty title; its cached copy none
        if not spec["layout"].get("title"):
            spec["layout"].pop("title", None)
    assert shown[0] == shown[1] and shown[0]["data"][0]["type"] == "violin"
    second.selectbox(key="res_x").set_value("members").run()           # another view: built for it
    assert len(built) == 2 and built[-1][0] == "members"
    runner.run({**GRID, "seed": 1}, "reference/solver", db_path=db)     # the store changed: built again
    open_page("pages/results.py", {"runs": run_id})
    assert len(built) == 3

"""Work a page does for every visitor is done once per state of the runs it shows and shared by sessions: the
Results page's violin figure is built once for two visits of the same view, kept when another run is written, and
built again after its own run changed; the Findings report likewise."""

from __future__ import annotations

import pytest

from tests.support import SMALL_GRID as GRID


@pytest.fixture()
def db(page_db):
    return page_db


def test_results_violin_figure_is_built_once_per_state_of_its_runs(db, open_page, monkeypatch):
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
    runner.run({**GRID, "seed": 1}, "reference/solver", db_path=db)     # another run stored: kept
    open_page("pages/results.py", {"runs": run_id})
    assert len(built) == 2
    from core import store

    store.set_run_status(db, run_id, "interrupted")                     # its own run changed: built again
    open_page("pages/results.py", {"runs": run_id})
    assert len(built) == 3


def test_findings_report_is_computed_once_per_state_of_its_runs(db, open_page, monkeypatch):
    from core import runner, store
    from core.analysis import findings, memo
    from core.store import aggregates

    memo.clear()
    made: list = []
    real = findings.report
    monkeypatch.setattr(findings, "report", lambda con, run_ids, **k: made.append(run_ids) or real(con, run_ids, **k))
    run_id = runner.run(GRID, "reference/solver", db_path=db).run_id
    first = open_page("pages/findings.py", {"runs": run_id})
    open_page("pages/findings.py", {"runs": run_id})                    # another session
    assert made == [[run_id]]
    other = runner.run({**GRID, "seed": 1}, "reference/solver", db_path=db).run_id
    store.set_run_status(db, other, "running")                          # another run stored, live
    again = open_page("pages/findings.py", {"runs": run_id})
    assert made == [[run_id]]
    assert [m.value for m in again.markdown] == [m.value for m in first.markdown]
    memo.clear()                                                        # a restarted server: the store kept it
    open_page("pages/findings.py", {"runs": run_id})
    assert made == [[run_id]]
    with store.connect(db) as con, store.transaction(con):             # its own results re-scored
        con.execute("UPDATE results SET correct_strict = NOT coalesce(correct_strict, FALSE) WHERE run_id = ?",
                    [run_id])
        aggregates.refresh_runs(con, [run_id])
    open_page("pages/findings.py", {"runs": run_id})
    assert len(made) == 2
    memo.clear()

"""Provenance is part of a result: a run made here and an upload of its edited export are told apart on every page
that names runs (Runs, Results, Compare, Findings: one badge line each), in the run pickers, in exports and in the
HTML report; "Only runs made here" leaves the upload out (page control and core API)."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import runner, store
from tests.support import ROOT

CFG = {"task": "setops", "seed": 4, "samples": 3, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
HERE, UPLOADED = "made here", "uploaded · a file's claims"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    from core.store.exports import export_run
    from core.store.io import import_results

    tmp = tmp_path_factory.mktemp("provenance")
    db = str(tmp / "studio.duckdb")
    made = runner.run(CFG, "reference/solver", db_path=db, name="solver here").run_id
    export_run(db, made, tmp / "export.csv")
    df = pd.read_csv(tmp / "export.csv", dtype=str, keep_default_na=False)
    df["response"] = "<answer>{1}</answer>"
    df["name"] = "forged upload"
    df.to_csv(tmp / "forged.csv", index=False)
    uploaded = import_results(db, tmp / "forged.csv")[0]
    return {"db": db, "made": made, "uploaded": uploaded, "tmp": tmp}


def _open(db, monkeypatch, page: str, query: dict) -> AppTest:
    monkeypatch.setenv("STUDIO_DB", db)
    import streamlit as st

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _badge_line(at) -> str:
    lines = [c.value for c in at.caption if c.value.startswith("Provenance:")]
    assert len(lines) == 1, [c.value for c in at.caption]
    return lines[0]


def test_the_core_api_tells_them_apart(two_runs):
    runs = store.list_runs(two_runs["db"])
    kinds = dict(zip(runs["run_id"], runs["provenance"]))
    assert kinds == {two_runs["made"]: "made here", two_runs["uploaded"]: "uploaded"}
    assert store.list_runs(two_runs["db"], made_here_only=True)["run_id"].tolist() == [two_runs["made"]]
    assert store.run_record(two_runs["db"], two_runs["uploaded"])["provenance"] == "uploaded"


@pytest.mark.parametrize("page", ["pages/results.py", "pages/compare.py", "pages/findings.py"])
def test_every_page_that_names_runs_shows_their_badges(two_runs, monkeypatch, page):
    at = _open(two_runs["db"], monkeypatch, page, {"runs": f"{two_runs['made']},{two_runs['uploaded']}"})
    line = _badge_line(at)
    assert f"[{HERE}] solver here" in line and f"[{UPLOADED}] forged upload" in line, line
    assert "its re-scoring flags 6 row(s) or more" in line
    picker = at.multiselect(key="_pick_runs")
    assert any(o.endswith("· uploaded") for o in picker.options) and \
        not all(o.endswith("· uploaded") for o in picker.options)


def test_only_runs_made_here_leaves_the_upload_out_of_the_picker(two_runs, monkeypatch):
    at = _open(two_runs["db"], monkeypatch, "pages/results.py", {"runs": two_runs["made"], "runs_here": "1"})
    assert at.checkbox(key="_only_here_runs_here").value is True
    assert len(at.multiselect(key="_pick_runs").options) == 1
    assert f"[{UPLOADED}]" not in _badge_line(at)


def test_the_runs_page_shows_the_badge_and_filters(two_runs, monkeypatch):
    at = _open(two_runs["db"], monkeypatch, "pages/runs.py", {"run": two_runs["uploaded"]})
    assert f"[{UPLOADED}]" in _badge_line(at)
    table = at.dataframe[0].value
    assert set(table["provenance"]) == {"made here", "uploaded"}
    at = _open(two_runs["db"], monkeypatch, "pages/runs.py", {"here": "1"})
    assert at.dataframe[0].value["provenance"].tolist() == ["made here"]
    assert f"[{HERE}] solver here" in _badge_line(at)


def test_exports_and_the_html_report_name_the_provenance(two_runs):
    from core.analysis.report import html_report
    from core.store.exports import export_view

    out = two_runs["tmp"] / "both.csv"
    export_view(two_runs["db"], out, run_ids=[two_runs["made"], two_runs["uploaded"]])
    df = pd.read_csv(out)
    assert dict(df.groupby("run_id")["provenance"].first()) == {two_runs["made"]: "made here",
                                                                  two_runs["uploaded"]: "uploaded"}
    with store.connect(two_runs["db"]) as con:
        page = html_report(con, [two_runs["made"], two_runs["uploaded"]])
    assert "<th>provenance</th>" in page and "<td>uploaded</td>" in page and "<td>made here</td>" in page

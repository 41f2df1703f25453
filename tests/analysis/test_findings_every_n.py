"""Every n: runs too small to test give estimates and "too few draws to test", never a traceback, an interval from
one draw, a p from nothing or a spread test from two configurations — through ``python -m core report findings``
and the Findings page; and provenance: an upload is its own series, never pooled with the run made here."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import runner, store
from core.analysis import findings, stats
from core.cli import main as cli
from tests.support import ROOT
from tests.support.loopback import LoopbackServer, set_hash_responder

# one sample: one drawn (A, B), asked as a union and an intersection
ONE = {"task": "setops", "seed": 5, "samples": 1, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "lengths": [2], "phrasings": ["formal"], "approaches": ["baseline_allow_empty"],
       "shots": [0]}
# twelve items: three draws, each asked in four operations
TWELVE = {"task": "setops", "seed": 6, "samples": 3,
          "operations": ["union", "intersection", "difference", "symmetric_difference"], "sizes": [2],
          "members": ["numbers"], "lengths": [2], "phrasings": ["formal"], "approaches": ["baseline_allow_empty"],
          "shots": [0]}
WRONG = "<answer>{zzwrong}</answer>"


def _right_and_wrong(db, cfg) -> list[str]:
    """An always-right model (the solver) and an always-wrong one (a loopback endpoint), on the same items."""
    srv = LoopbackServer(0.0005, answer=WRONG).start()
    try:
        right = runner.run(cfg, "reference/solver", db_path=db).run_id
        wrong = runner.run(cfg, "openai-compatible/always-wrong", db_path=db, base_url=srv.base_url).run_id
    finally:
        srv.stop()
    return [right, wrong]


@pytest.fixture(scope="module", params=["one pair", "two pairs"])
def small(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("every-n")
    db = str(tmp / "s.duckdb")
    return db, _right_and_wrong(db, ONE if request.param == "one pair" else TWELVE), tmp


def _contrasts(rep: dict) -> list[dict]:
    return [c for f in rep["findings"] for c in f.get("contrasts", [])]


def _check_honest(rep: dict, text: str) -> None:
    cs = _contrasts(rep)
    assert cs, "the model comparison at least has an estimate"
    for c in cs:
        assert c["n"] < stats.MIN_UNITS and c["testable"] is False, c
        assert c["p"] is None and c["ci_low"] is None and c["ci_high"] is None and not c["significant"], c
        assert c["caveat"].startswith(stats.TOO_FEW), c
        assert (c["spread"] or {}).get("p") is None, c                     # never a spread test from 1-3 configs
        if c["estimate"]:   # words follow the sign
            word = "beats" if c["estimate"] > 0 else "trails"
            assert any(word in v for f in rep["findings"] for v in f["verdicts"])
    for bad in ("p = 1.000", "Brown–Forsythe p", "[100.0, 100.0]", "[50.0, 50.0]", "[-100.0, -100.0]"):
        assert bad not in text, bad
    assert stats.TOO_FEW in text


def test_report_findings_on_tiny_runs_says_too_few_draws(small):
    db, ids, tmp = small
    out_json, out_md = tmp / "f.json", tmp / "f.md"
    assert cli(["report", "findings", "--db", db, "--run", ",".join(ids), "--out", str(out_json)]) == 0
    assert cli(["report", "findings", "--db", db, "--run", ",".join(ids), "--out", str(out_md)]) == 0
    rep = json.loads(out_json.read_text())
    _check_honest(rep, out_json.read_text(encoding="utf-8") + out_md.read_text(encoding="utf-8"))
    models = next(f for f in rep["findings"] if f["id"] == "llm_comparison")
    c = models["contrasts"][0]
    assert c["design"] == "paired by draw" and abs(c["estimate"]) == 100.0     # right vs wrong on the same draws


def test_findings_page_on_tiny_runs_says_too_few_draws(small, monkeypatch):
    db, ids, _ = small
    monkeypatch.setenv("STUDIO_DB", db)
    import streamlit as st

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/findings.py")
    at.query_params["runs"] = ",".join(ids)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "text")
                      for e in getattr(at, kind))
    assert stats.TOO_FEW in shown
    for bad in ("p = 1.000", "Brown–Forsythe p", "[100.0, 100.0]", "[50.0, 50.0]"):
        assert bad not in shown, bad


# ----------------------------------------------------------------------------------------------------- provenance

HALF = {"task": "setops", "seed": 8, "samples": 8, "operations": ["union", "intersection"], "sizes": [2, 4],
        "members": ["numbers"], "lengths": [2], "phrasings": ["formal"], "approaches": ["baseline_allow_empty"],
        "shots": [0]}


@pytest.fixture(scope="module")
def edited_upload(tmp_path_factory):
    """A run made here by a model right about half the time, and an upload of its export with three wrong
    responses edited to the truth (the upload contradicts the replies stored here)."""
    from core.store.exports import export_run
    from core.store.io import import_results
    from core.tasks.setops.scoring import solve
    from tests.analysis.test_findings_null import _items

    tmp = tmp_path_factory.mktemp("edited-upload")
    db = str(tmp / "s.duckdb")
    items = _items(HALF)
    srv = LoopbackServer(0.0005, responder=set_hash_responder(items, p_right=0.5)).start()
    try:
        made = runner.run(HALF, "openai-compatible/half", db_path=db, base_url=srv.base_url, concurrency=8).run_id
    finally:
        srv.stop()
    export_run(db, made, tmp / "export.csv")
    df = pd.read_csv(tmp / "export.csv", dtype=str, keep_default_na=False)
    wrong = df.index[df["response"] == WRONG][:3]
    assert len(wrong) == 3
    for i in wrong:
        df.loc[i, "response"] = solve(items[df.loc[i, "prompt"]])
    df["name"] = "edited upload"
    df.to_csv(tmp / "edited.csv", index=False)
    uploaded = import_results(db, tmp / "edited.csv")[0]
    return db, made, uploaded, tmp


def test_an_edited_upload_is_never_pooled_with_the_run_made_here(edited_upload):
    db, made, uploaded, tmp = edited_upload
    with store.connect(db) as con:
        rep = findings.report(con, [made, uploaded])
        points = findings.points(con, [made, uploaded], findings.BY_ID["operation_types"])
    series = {s["series"]: s for s in rep["series"]}
    assert set(points["model"]) == set(series)                 # the page's violins draw the series apart, too
    assert len(series) == 2, series
    here = next(s for s in series.values() if s["runs"] == [made])
    claim = next(s for s in series.values() if s["runs"] == [uploaded])
    assert here["provenance"] == "made here" and not here["claim"]
    assert claim["provenance"] == "uploaded" and claim["claim"] and "claims of upload" in claim["series"]
    assert claim["series"] != here["series"] and claim["model"] == here["model"] == "openai-compatible/half"
    for c in _contrasts(rep):
        assert not c.get("pooled"), c                                   # nothing pooled, anywhere
        assert len(c["runs"]) == 1 or c["design"] == "paired by draw", c   # only the model comparison sees both
    text = json.dumps(rep)
    assert "pooled" not in " ".join(v for f in rep["findings"] for v in f["verdicts"])
    assert claim["series"] in text
    # the model comparison pairs the two series on their shared draws: the upload's three edits are its difference
    models = next(f for f in rep["findings"] if f["id"] == "llm_comparison")
    assert models["contrasts"] and all(c["design"] == "paired by draw" for c in models["contrasts"])
    # and through the CLI's Markdown
    out = tmp / "f.md"
    assert cli(["report", "findings", "--db", db, "--run", f"{made},{uploaded}", "--out", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert "claims of upload" in md and "pooled:" not in md
    metrics = next(f for f in rep["findings"] if f["id"] == "precision_recall_jaccard")["table"]
    assert {r["model"] for r in metrics} == set(series)                  # partial credit per series, too


def test_the_findings_page_shows_the_upload_as_its_own_series(edited_upload, monkeypatch):
    db, made, uploaded, _ = edited_upload
    monkeypatch.setenv("STUDIO_DB", db)
    import streamlit as st

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/findings.py")
    at.query_params["runs"] = f"{made},{uploaded}"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "text", "subheader")
                      for e in getattr(at, kind))
    assert f"claims of upload {uploaded}" in shown
    assert "pooled:" not in shown

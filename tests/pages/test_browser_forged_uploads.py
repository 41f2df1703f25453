"""Forged uploads are judged by their responses, seen in a real browser (headless Chromium, issue 22): a CSV export of
a solver run whose every response was changed to ``<answer>{1}</answer>`` (its verdict columns left saying 100 %
correct), and a CSV in the SetLexSem reference's layout with edited answers, are uploaded through the Compare page's
file uploader; the page shows the accuracy from the responses (not 100 %), what the file claims beside it and the
count of rows whose claimed verdict the responses contradict; the Runs page shows the same for the stored run. Also
one AppTest of the same upload (no browser needed). Screenshots go to $STUDIO_SHOTS when it is set."""

from __future__ import annotations

import csv
import json
import re

import pandas as pd
import pytest

from tests.pages.test_browser_presenter import _shot
from tests.pages.test_browser_smoke import _need_browser, served, wait_rendered
from tests.support import ROOT

CFG = {"task": "setops", "seed": 4, "samples": 5, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
REF_HEADER = ["op_name", "prompt", "ground_truth", "result_obj", "llm_vs_gt", "set_A", "set_B",
              "context_length_in", "context_length_out", "log_context"]
REF_NAME = "formal_language_K-0_N-None_MA-2_MB-2_L-2_S-1.csv"    # the reference's file naming


def _literal(members) -> str:
    return "{" + ", ".join(str(m) for m in members) + "}"


def forged_files(tmp_path) -> tuple[dict, dict]:
    """A solver run (in its own DB), its CSV export with every response forged, and the same items written in the
    reference layout with every ``result_obj`` forged; verdict columns untouched (they say: all correct). Returns
    ({name: path}, {name: rows whose truth is not {1}, i.e. how many claims the responses contradict})."""
    from core import runner
    from core.store.exports import export_run

    db = tmp_path / "source.duckdb"
    run_id = runner.run(CFG, "reference/solver", db_path=db, name="solver seed 4").run_id
    export = tmp_path / "export.csv"
    export_run(db, run_id, export)
    df = pd.read_csv(export)
    assert df["correct"].all() and df["correct_strict"].all()
    wrong = int(sum(json.loads(t) != [1] for t in df["truth"]))
    df["response"] = "<answer>{1}</answer>"                 # every answer changed; the verdict columns left alone
    forged = tmp_path / "forged.csv"
    df.to_csv(forged, index=False)
    ref = tmp_path / REF_NAME
    with open(ref, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(REF_HEADER)
        for r in df.itertuples():
            w.writerow([r.operation, r.prompt, _literal(json.loads(r.truth)), "{1}", True,
                        _literal(json.loads(r.set_a)), _literal(json.loads(r.set_b)), 1, 1, ""])
    return {"forged.csv": forged, REF_NAME: ref}, {"forged.csv": wrong, REF_NAME: wrong, "rows": len(df)}


def test_the_compare_page_says_what_the_responses_say(tmp_path, monkeypatch):
    """AppTest: the upload's accuracy from its responses, the file's claim and the disagreement count."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    files, wrong = forged_files(tmp_path)
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/compare.py")
    at.run()
    at.file_uploader(key="cmp_upload").set_value([(n, p.read_bytes(), "text/csv") for n, p in files.items()])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [w.value for w in at.warning if "Accuracy from its responses" in w.value]
    assert len(notes) == 2, [w.value for w in at.warning]            # one per upload, shown as a warning
    n, right = wrong["rows"], 100.0 * (wrong["rows"] - wrong["forged.csv"]) / wrong["rows"]
    for name in files:
        assert any(s.value.startswith(f"{name}: imported as run") for s in at.success), name
    for text in notes:
        assert f"Accuracy from its responses: {right:.1f} % strict" in text and "claim 100.0 %" in text, text
        assert f"{wrong['forged.csv']} row(s) claim correct, the response says otherwise" in text, text
        assert f"re-scored {n} of {n} rows" in text.lower(), text
    st.cache_data.clear()


@pytest.fixture()
def app(tmp_path):
    _need_browser()
    files, wrong = forged_files(tmp_path)
    db = tmp_path / "studio.duckdb"
    with served(db) as base:
        yield base, files, wrong


def _open(page, url: str) -> None:
    page.goto(url, wait_until="load", timeout=90_000)
    wait_rendered(page)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_forged_uploads_in_chromium(app, chromium):
    base, files, wrong = app
    n = wrong["rows"]
    right = 100.0 * (n - wrong["forged.csv"]) / n
    assert right < 100.0                                     # the forgery is one the page must see through
    browser = chromium
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        imported = {}
        for name, path in files.items():                 # each through the uploader of a freshly opened page
            _open(page, f"{base}/compare")
            page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(path))
            page.wait_for_function("document.body.innerText.includes('imported as run')", timeout=120_000)
            wait_rendered(page)
            _no_exception(page)
            ok = page.locator('[data-testid="stAlertContentSuccess"]').filter(has_text=name).first.inner_text()
            imported[name] = re.search(r"id (import-[0-9a-f]+)", ok).group(1)
            note = page.locator('[data-testid="stAlertContentWarning"]').filter(
                has_text="Accuracy from its responses").first.inner_text()
            assert f"{right:.1f} % strict, {right:.1f} % lenient" in note, note     # not the file's 100 %
            assert "the file's own verdicts claim 100.0 %" in note, note
            assert f"{wrong[name]} row(s) claim correct, the response says otherwise" in note, note

        # the Runs page shows the stored run's accuracy from its responses and the disagreement count
        for name, run_id in imported.items():
            _open(page, f"{base}/runs?run={run_id}")
            _no_exception(page)
            body = page.locator('[data-testid="stMain"]').inner_text()
            assert f"Accuracy (strict) {right:.1f} % ({n - wrong[name]} of {n})" in body, (name, body[:2000])
            assert f"{wrong[name]} row(s) claim correct, the response says otherwise" in body, name
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()


# ------------------------------------------------------------------ a self-consistent forgery of stored prompts


@pytest.fixture()
def stored_and_forged(tmp_path):
    """A store holding a real run of a model that answers ``{1}`` (mostly wrong), and a CSV export of it in which
    every response was replaced by the right answer and every verdict claims correct (prompts unchanged) — a
    self-consistent forgery of prompts the store holds this model's replies to."""
    from core import runner
    from core.store.exports import export_run
    from core.tasks.setops.scoring import solve
    from tests.support.loopback import LoopbackServer

    _need_browser()
    db = tmp_path / "studio.duckdb"
    srv = LoopbackServer(0.001, answer="<answer>{1}</answer>").start()
    try:
        run_id = runner.run(CFG, "openai-compatible/answers-one", db_path=db, base_url=srv.base_url,
                            name="answers-one here").run_id
    finally:
        srv.stop()
    export_run(db, run_id, tmp_path / "export.csv")
    df = pd.read_csv(tmp_path / "export.csv", dtype=str, keep_default_na=False)
    df["response"] = [solve({"truth": json.loads(t), "members": m}) for t, m in zip(df["truth"], df["members"])]
    df["correct"] = df["correct_strict"] = "true"
    df["name"] = "forged copy"
    forged = tmp_path / "consistent.csv"
    df.drop(columns=["run_id"]).to_csv(forged, index=False)
    with served(db) as base:
        yield base, run_id, forged, len(df)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_consistent_forgery_is_marked_on_compare_in_chromium(stored_and_forged, chromium):
    base, run_id, forged, n = stored_and_forged
    browser = chromium
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        _open(page, f"{base}/compare?runs={run_id}")
        page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(forged))
        page.wait_for_function("document.body.innerText.includes('imported as run')", timeout=120_000)
        wait_rendered(page)
        _no_exception(page)
        note = page.locator('[data-testid="stAlertContentWarning"]').filter(
            has_text="Accuracy from its responses").first.inner_text()
        assert "100.0 % strict" in note, note                            # re-scored: the answers are right …
        assert f"{n} of {n} row(s) differ from this model's own replies stored here" in note, note   # … but not its
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "Provenance:" in body and "made here" in body and "uploaded · a file's claims" in body, body[:3000]
        _shot(page, "compare-consistent-forgery")
        _open(page, f"{base}/runs?here=1")
        _no_exception(page)
        _shot(page, "runs-made-here-only")
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()

"""Pages that rest: once a run has finished, no fragment polls (run_every is None), so an idle tab reruns 0 times."""

from __future__ import annotations

import pytest
import streamlit as st

from tests.support import ROOT  # noqa: F401


@pytest.fixture()
def db(tmp_path, monkeypatch):
    path = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", path)
    return path


def test_finished_run_page_schedules_no_reruns(db, cli, open_page, monkeypatch, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: setops\nseed: 2\nsamples: 2\noperations: [union]\nsizes: [2]\nmembers: [numbers]\n"
                   "phrasings: [plain]\napproaches: [baseline]\nshots: [0]\n")
    res = cli("run", "--config", cfg, "--model", "reference/solver")
    assert res.returncode == 0, res.stderr
    from core import store
    with store.connect(db) as con:
        run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]

    from ui.progress import run_is_live
    assert run_is_live(run_id) is False

    every: list = []
    real = st.fragment

    def spy(func=None, *, run_every=None):
        every.append(run_every)
        return real(func, run_every=run_every) if func is not None else real(run_every=run_every)

    monkeypatch.setattr(st, "fragment", spy)
    open_page("pages/runs.py", {"run": run_id})
    open_page("pages/deceptive_sets.py", {"run": run_id})
    assert every, "the pages should still draw their progress fragments"
    assert all(e is None for e in every), every

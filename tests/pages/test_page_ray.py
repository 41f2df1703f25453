"""The run pages' "Run on a Ray cluster" field (issue 21): offered for openai-compatible/ models only; a malformed
address is said at once, in core's words; with an address (here ``local``: a Ray started in the app's process) the
run goes through Ray Data against the loopback endpoint on a thread core owns, and the page's progress display
shows it done — after a run at an address nobody answers has failed in one line without taking the app's process
down with it. Also: the page's "Submit as batch" choice reaches the runner."""

from __future__ import annotations

import socket

import pytest

from core import runner, store
from tests.support.loopback import LoopbackServer

FIELD = "Run on a Ray cluster"


@pytest.fixture()
def db(tmp_path, monkeypatch):
    import streamlit as st

    path = tmp_path / "studio.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def _oc(at, base_url: str = "http://127.0.0.1:9/v1"):
    at.selectbox(key="so_m_model").set_value("openai-compatible/…").run()
    at.text_input(key="so_m_oc_name").set_value("loop")
    at.text_input(key="so_m_oc_url").set_value(base_url)
    return at


def test_the_field_is_offered_for_openai_compatible_models_and_checks_the_address(db, open_page):
    at = open_page("pages/set_operations.py", {"model": "reference/solver"})
    assert not [e for e in at.expander if e.label == FIELD]
    _oc(at).run()
    assert [e for e in at.expander if e.label == FIELD]
    at.text_input(key="so_m_ray").set_value("head-node").run()
    assert not at.exception
    assert [e.value for e in at.error if "the Ray address must be local, auto" in e.value]
    at.text_input(key="so_m_ray").set_value("ray://head:10001").run()      # Ray Client: the way round instead
    assert [e.value for e in at.error if "Ray Data does not run through Ray Client" in e.value]
    at.text_input(key="so_m_ray").set_value("head:6379").run()
    assert not at.error and any("Runs through Ray at head:6379" in c.value for c in at.caption)
    at.toggle(key="so_fresh").set_value(True).run()      # fresh samples and Ray: refused, nothing starts
    at.button(key="so_run").click().run()
    assert not at.exception and "so_run_id" not in at.session_state
    assert any("Fresh samples" in e.value for e in at.error)
    at.toggle(key="so_fresh").set_value(False)
    at.text_input(key="so_m_ray").set_value("nowhere").run()      # a malformed address: refused, nothing starts
    at.button(key="so_run").click().run()
    assert not at.exception and "so_run_id" not in at.session_state
    assert any("Ray address must be" in e.value for e in at.error)
    assert not runner.active_runs()


@pytest.mark.slow
def test_a_run_sent_to_a_local_ray_completes_and_the_page_shows_it_done(no_ray, db, open_page):
    ray = pytest.importorskip("ray")
    srv = LoopbackServer(0.01).start()
    try:
        at = _oc(open_page("pages/set_operations.py"), srv.base_url)
        at.button_group(key="so_ops").set_value(["union", "intersection"])
        at.button_group(key="so_sizes").set_value([2, 4])
        at.button_group(key="so_members").set_value(["numbers"])
        at.number_input(key="so_samples").set_value(3)
        # first a cluster address nobody answers: that run fails in one line, and the app's process stays free
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            dead = f"127.0.0.1:{s.getsockname()[1]}"
        at.text_input(key="so_m_ray").set_value(dead).run()
        at.button(key="so_run").click().run()
        assert not at.exception, [e.value for e in at.exception]
        failed = runner.get_handle(at.session_state["so_run_id"]).wait(60)
        assert failed.status == "error" and f"cannot join the Ray at {dead}" in failed.error
        assert not ray.is_initialized()
        at.text_input(key="so_m_ray").set_value("local")
        at.run()
        assert {m.label: m.value for m in at.metric}["Items"] == "12"
        at.button(key="so_run").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert not at.error, [e.value for e in at.error]
        run_id = at.session_state["so_run_id"]
        handle = runner.get_handle(run_id)
        assert handle is not None
        p = handle.wait(300)
        assert (p.status, p.total, p.done, p.failed) == ("done", 12, 12, 0), p.error
        at.run()
        assert not at.exception
        (bar,) = [e for e in at.get("progress") if run_id in e.text or "done" in e.text]
        assert bar.value == 100 and "done: 12 of 12 items" in bar.text
        assert {m.label: m.value for m in at.metric}["Done"] == "12"
        assert srv.stats()["total_answered"] == 12                         # sent through the Ray actors, once
        row = store.get_run(db, run_id)
        assert (row["status"], row["n_done"]) == ("done", 12)
    finally:
        srv.stop()           # the app's local Ray stays for the session's other Ray tests (``no_ray``)


def test_submit_as_batch_reaches_the_runner(db, monkeypatch):
    """The page wrapper passes the "Submit as batch" choice on (it had been dropped: the toggle changed only the
    estimate), and the Ray address to the Ray runner."""
    from ui.model_picker import ModelChoice
    from ui.progress import start_run

    seen = {}
    monkeypatch.setattr(runner, "start_run", lambda *a, **k: seen.setdefault("live", k))
    monkeypatch.setattr(runner, "start_ray_run", lambda *a, **k: seen.setdefault("ray", (a, k)))
    start_run({"task": "setops"}, ModelChoice(spec="openai/gpt-4o-mini", batch=True))
    assert seen["live"]["batch"] is True
    start_run({"task": "setops"}, ModelChoice(spec="openai-compatible/m", base_url="http://h:1/v1",
                                              ray_address="auto"))
    args, kwargs = seen["ray"]
    assert args[1:] == ("openai-compatible/m", "http://h:1/v1") and kwargs["address"] == "auto"

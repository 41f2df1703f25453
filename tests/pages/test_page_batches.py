"""Provider batches on the pages: the "Submit as batch" choice on the run pages (only for providers with a batch
interface), and on the Runs page a run waiting on its batches — shown as waiting, not failed — with its batches,
refresh, cancel and "collect now" against the loopback stand-in of the batch APIs."""

from __future__ import annotations

import time

import pytest

from core import runner
from tests.support.batch_standin import BatchStandIn

SMALL = {"task": "setops", "samples": 5, "sizes": [2], "members": ["numbers"], "seed": 8}   # 20 items
TOGGLE = "Submit as batch (½ price, results within 24 h)"


@pytest.fixture()
def db(tmp_path, monkeypatch):
    path = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin-openai-0000")
    return path


def test_batch_choice_only_for_batch_providers(db, open_page):
    at = open_page("pages/set_operations.py", {"model": "openai/gpt-4o-mini"})
    assert [t.label for t in at.toggle if t.label == TOGGLE]
    at.toggle(key="so_m_batch").set_value(True).run()
    assert not at.exception
    assert any(m.label == "Cost (est., batch price)" for m in at.metric)
    local = open_page("pages/set_operations.py", {"model": "local/smollm2"})
    assert not [t for t in local.toggle if t.label == TOGGLE]
    quant = open_page("pages/quantifiers.py", {"model": "anthropic/claude-haiku-4-5"})
    assert [t for t in quant.toggle if t.label == TOGGLE]


@pytest.mark.slow
def test_runs_page_shows_a_waiting_run_its_batches_and_collects(db, open_page):
    srv = BatchStandIn().start()
    try:
        srv.hold()
        p = runner.run(SMALL, "openai/gpt-4o-mini", base_url=srv.openai_url, db_path=db, batch=True, wait=False)
        assert p.status == "waiting"
        at = open_page("pages/runs.py", {"run": p.run_id})
        text = " ".join(m.value for m in at.markdown) + " ".join(i.value for i in at.info)
        assert "**Status** waiting" in text and "Provider batches" in text and "not failed" in text
        (table,) = [d for d in at.dataframe if "provider_batch_id" in d.value.columns]
        assert list(table.value["phase"]) == ["open"] and list(table.value["status"]) == ["validating"]
        srv.release()
        at.button(key="runs_batch_refresh").click().run()          # asks the provider: validating → in progress
        assert not at.exception, [e.value for e in at.exception]
        (table,) = [d for d in at.dataframe if "provider_batch_id" in d.value.columns]
        assert list(table.value["status"]) == ["in_progress"]
        at.button(key="runs_batch_cancel").click().run()           # cancel: half ran, the rest comes back cancelled
        assert not at.exception, [e.value for e in at.exception]
        at.button(key="runs_batch_collect").click().run()
        assert not at.exception, [e.value for e in at.exception]
        done = runner.get_handle(p.run_id).wait(60)
        assert done.done == 10 and done.status in ("cancelled", "waiting")
        assert sum(srv.stats()["openai"].values()) == 20 and srv.stats()["plain_calls"] == 0
    finally:
        srv.stop()


@pytest.mark.slow
def test_reattach_button_follows_the_same_batches(db, open_page):
    srv = BatchStandIn().start()
    try:
        srv.hold()
        p = runner.run(SMALL, "openai/gpt-4o-mini", base_url=srv.openai_url, db_path=db, batch=True, wait=False,
                       limit=10)
        at = open_page("pages/runs.py", {"run": p.run_id})
        button = at.button(key="runs_resume")
        assert button.label == "Re-attach to its batches"
        srv.release()
        button.click().run()
        assert not at.exception, [e.value for e in at.exception]
        handle = runner.get_handle(p.run_id)
        deadline = time.monotonic() + 60
        while "in_progress" not in handle.progress().batches and time.monotonic() < deadline:
            time.sleep(0.05)   # the first pass polled the stored batch (the app then polls once a minute)
        prog = handle.progress()
        handle.cancel()        # stop following: the batch stays at the provider, the run waits on it
        final = handle.wait(30)
        assert prog.total == 10 and prog.batches == {"in_progress": 1}   # the stored run (its limit), not a new one
        assert sum(srv.stats()["openai"].values()) == 10                 # re-attached: nothing submitted again
        assert final.status == "waiting"
    finally:
        srv.stop()

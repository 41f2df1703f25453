"""The live demo's presenter panel through AppTest, with a stand-in model (a loopback OpenAI-compatible server): the
re-ask asks the recorded items of failed draws and says so with the recorded rate; a seed already run reopens its
stored run, labelled STORED with its time and never LIVE; the first screen holds the tally and the failure cards, the
bars and progress are folded below it; the progress box shows no pooled accuracy."""

from __future__ import annotations

import sys

import pytest

from tests.pages.test_browser_demo_first_screen import _standin
from tests.support import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core import runner  # noqa: E402


@pytest.fixture()
def standin(tmp_path, monkeypatch, remembered_blocklist, curated_pool):
    # (the page's re-ask and the demo grid's curated pool check every word against the blocklist: each verdict once)
    from tests.support.loopback import LoopbackServer

    srv = LoopbackServer(0.01, responder=_standin).start()
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    monkeypatch.setenv("STUDIO_DEMO_MODEL", "openai-compatible/standin")
    monkeypatch.setenv("STUDIO_DEMO_BASE_URL", srv.base_url)
    monkeypatch.setenv("STUDIO_DEMO_SEED", "11")
    monkeypatch.setenv("STUDIO_PRELOAD_MODEL", "0")
    yield srv
    srv.stop()


def _page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/deceptive_sets.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _click_and_finish(at: AppTest, key: str) -> str:
    at.button(key=key).click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state["dec_run_id"]
    handle = runner.get_handle(run_id)
    if handle is not None:
        assert handle.wait(120).status == "done"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return run_id


def _texts(at: AppTest) -> list[str]:
    return [m.value for m in (*at.markdown, *at.error, *at.warning, *at.info, *at.caption)]


@pytest.mark.slow
def test_reask_then_fresh_pairs_then_the_stored_rehearsal(standin):
    from core.analysis import presenter as P
    from core.config import read_run_spec

    at = _page()
    reask = _click_and_finish(at, "dec_reask")
    assert at.toggle(key="dec_presenter").value        # a demo started on the page is presented
    rec = P.recording_summary(P.recording_path())
    fails, total = len(rec["failed_samples"]), rec["tally"]["n"]
    texts = _texts(at)
    header = [t for t in [*at.warning, *at.error] if "chosen from the recording's failures" in t.value]
    assert header and f"**{fails} of {total} pairs**" in header[0].value
    assert any(t.startswith("**Evidence (recording, not live):**") and "worse when swapped" in t
               and "intersections: 91 % as sampled → 50 % swapped" in t for t in texts)
    assert any(t.startswith("**Why ∅ is the right answer:**") for t in texts)
    tally = [t for t in texts if "Right as sampled, wrong when swapped</div>" in t]
    assert len(tally) == 1 and "12 complete pairs" in tally[0]
    # the re-ask asked the recorded items of failed draws, never from the cache
    from core import store

    record = store.run_record(None, reask)
    chosen = record["config"]["only_samples"]
    assert len(chosen) == P.REASK_PAIRS and set(chosen) <= set(rec["failed_samples"])
    assert {k: v for k, v in record["config"].items() if k != "only_samples"} == \
        read_run_spec(P.recording_grid_path()).config_dict()
    with store.connect() as con:
        assert con.execute("SELECT count(*) FROM results WHERE run_id = ? AND cached", [reask]).fetchone()[0] == 0
        wrong = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND NOT correct_strict",
                            [reask]).fetchone()[0]
    cards = [t for t in texts if t.startswith("<div>Draw ") and "(a draw the recording saw fail)" in t]
    assert wrong and len(cards) >= 1        # every pair with a wrong answer has its card
    # the bars, the recording's card and the progress are folded below; no pooled accuracy there
    assert any(e.label.startswith("Bars per condition") for e in at.expander)
    assert "Accuracy" not in {m.label for m in at.metric}

    # fresh pairs: the rehearsal seed's first run is live…
    first = _click_and_finish(at, "dec_demo")
    assert first != reask
    # …and the same seed again reopens it: STORED with its time, never LIVE
    at.button(key="dec_demo").click().run()
    assert at.session_state["dec_run_id"] == first
    at.run()
    assert not any("LIVE" in e.value for e in at.error)
    stored = [w.value for w in at.warning if w.value.startswith("**STORED — not live.**")]
    assert stored and "24 answers were read back from the store (answered 20" in stored[0]

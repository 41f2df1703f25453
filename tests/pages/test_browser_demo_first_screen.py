"""The live demo's first screen in a real browser (headless Chromium at 1400×900, presenter view), with a fast
stand-in model (a loopback OpenAI-compatible server that names a member of A for about half the prompts, else answers
∅): after the click on "Re-ask recorded failures" the header says where its pairs come from, and the running tally and
a failure card are inside the first viewport; a demo seed already run (STUDIO_DEMO_SEED, the rehearsal) reopens its
stored run, which never shows LIVE. Screenshots go to $STUDIO_SHOTS when it is set."""

from __future__ import annotations

import hashlib
import re

import pytest

from tests.pages.test_browser_presenter import _no_exception, _shot_view
from tests.pages.test_browser_smoke import _need_browser, served, wait_rendered

VIEW = {"width": 1400, "height": 900}


def _standin(prompt: str, model: str) -> str:
    """A member of A for about half the prompts (a wrong answer to an intersection of disjoint sets), else ∅."""
    m = re.search(r"Set A is \(([^)]*)\)", prompt)
    words = [w.strip() for w in m.group(1).split(",")] if m else []
    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    return f"<answer>{{{words[h % len(words)]}}}</answer>" if words and h % 2 == 0 else "<answer>{}</answer>"


@pytest.fixture()
def app(tmp_path, monkeypatch):
    _need_browser()
    from tests.support.loopback import LoopbackServer

    srv = LoopbackServer(0.05, responder=_standin).start()
    monkeypatch.setenv("STUDIO_DEMO_MODEL", "openai-compatible/standin")
    monkeypatch.setenv("STUDIO_DEMO_BASE_URL", srv.base_url)
    monkeypatch.setenv("STUDIO_DEMO_SEED", "11")
    monkeypatch.setenv("STUDIO_PRELOAD_MODEL", "0")
    try:
        with served(tmp_path / "studio.duckdb") as base:
            yield base
    finally:
        srv.stop()


# from now on, whether the page shows or has shown "● LIVE" (every change of the page's DOM is looked at)
_WATCH_LIVE = """() => {
    window.__liveShown = document.body.textContent.includes("● LIVE");
    new MutationObserver(() => {
        if (document.body.textContent.includes("● LIVE")) window.__liveShown = true;
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def _inside(locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEW["height"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_reask_shows_tally_and_failure_above_the_fold_and_a_stored_run_never_says_live(app, chromium):
    from playwright.sync_api import expect

    browser = chromium
    try:
        page = browser.new_page(viewport=VIEW)
        page.goto(f"{app}/deceptive_sets", wait_until="load", timeout=120_000)
        wait_rendered(page)
        page.get_by_role("button", name=re.compile("Re-ask recorded failures")).click()

        # where the pairs come from, with the recorded rate beside it
        expect(page.get_by_text(re.compile(r"pairs chosen from the recording's failures")).first
               ).to_be_visible(timeout=300_000)
        expect(page.get_by_text(re.compile(r"\d+ of \d+ pairs")).first).to_be_visible()
        expect(page.get_by_text(re.compile(r"Evidence \(recording, not live\)")).first).to_be_visible()
        # a failure card, and the tally, inside the first screen
        wrong = page.get_by_text("✗ wrong:").first
        expect(wrong).to_be_visible(timeout=300_000)
        tally = page.get_by_text("Both wrong", exact=True).first
        expect(tally).to_be_visible()
        assert _inside(tally) and _inside(wrong)
        assert _inside(page.get_by_text(re.compile(r"^Draw \d+")).first)
        _shot_view(page, "demo-reask-first-screen")
        _no_exception(page)

        # fresh pairs, one click away: the rehearsal seed's first run is live…
        page.get_by_role("button", name=re.compile("Live demo: fresh pairs")).click()
        expect(page.get_by_text(re.compile(r"12 complete pairs")).first).to_be_visible(timeout=300_000)
        wait_rendered(page, 300_000)
        # …and the same seed again reopens its stored run: STORED with its time, never LIVE — not at any moment
        # from STORED on until the page has settled (a stored run starts no refresh that could change it later)
        page.get_by_role("button", name=re.compile("Live demo: fresh pairs")).click()
        expect(page.get_by_text(re.compile(r"STORED — not live")).first).to_be_visible(timeout=300_000)
        page.evaluate(_WATCH_LIVE)
        wait_rendered(page, 300_000)
        assert page.get_by_text(re.compile("● LIVE")).count() == 0
        assert page.evaluate("window.__liveShown") is False
        expect(page.get_by_text(re.compile(r"read back from the store \(answered \d{4}-\d\d-\d\d")).first
               ).to_be_visible()
        _shot_view(page, "demo-rehearsal-stored")
        _no_exception(page)
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()

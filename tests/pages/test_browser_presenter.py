"""The presenter's flow in a real browser (headless Chromium): Home → "Start the live demo" → the Deceptive sets
page following the new run live with the embedded default model: the LIVE header with its seed, the recording's
evidence in one line, then the first pairs side by side (a swapped member marked with its hypernym), the running
paired tally, and — unfolded — the shipped recording beside the live bars, labelled a recording. No exception on any
step. Screenshots go to $STUDIO_SHOTS when it is set (to look at them).

The demo's seed is fixed (STUDIO_DEMO_SEED) to the recording's."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.pages.test_browser_smoke import _need_browser, served, wait_rendered

PAIR_DONE = re.compile(r"right as sampled, wrong when swapped|wrong as sampled, right when swapped|both right|"
                       r"both wrong")


@pytest.fixture()
def app(tmp_path, monkeypatch):
    _need_browser()
    from core.analysis import presenter as P
    from core.config import read_run_spec

    seed = read_run_spec(P.recording_path().with_suffix(".yaml")).config_dict()["seed"]
    monkeypatch.setenv("STUDIO_DEMO_SEED", str(seed))
    monkeypatch.setenv("STUDIO_PRELOAD_MODEL", "1")      # the model loads while Home renders, as for a presenter
    with served(tmp_path / "studio.duckdb") as base:
        yield base, seed


def _shot(page, name: str) -> None:
    where = os.environ.get("STUDIO_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def _shot_view(page, name: str) -> None:
    """The visible part only (the app scrolls inside its own container, so a full-page shot ends at the fold)."""
    where = os.environ.get("STUDIO_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"))


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_live_demo_shows_pairs_tally_and_recording_in_chromium(app, chromium):
    from playwright.sync_api import expect

    base, seed = app
    browser = chromium
    try:
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        page.goto(base, wait_until="load", timeout=90_000)
        wait_rendered(page)
        page.get_by_role("button", name=re.compile("Start the live demo")).click()

        # the Deceptive sets page follows the new run: live, with its seed, the recording's evidence in one line
        page.wait_for_url(re.compile(r"deceptive_sets.*run="), timeout=120_000)
        expect(page.get_by_text(re.compile(rf"LIVE.*seed {seed}")).first).to_be_visible(timeout=120_000)
        expect(page.get_by_text(re.compile(r"Evidence \(recording, not live\)")).first).to_be_visible(timeout=60_000)
        expect(page.get_by_text(re.compile(r"on \d+ pairs answered")).first).to_be_visible()

        # the first pair: both answers in, the swapped members marked with their hypernym
        expect(page.get_by_text(PAIR_DONE).first).to_be_visible(timeout=900_000)
        # (the page refreshes its live parts every 1.5 s while the run goes on: no waiting for it to rest)
        expect(page.get_by_text(re.compile(r"now in the set of")).first).to_be_visible()
        # the running paired tally
        expect(page.get_by_text("Right as sampled, wrong when swapped", exact=True).first).to_be_visible()
        expect(page.get_by_text(re.compile(r"\d+ complete pairs?")).first).to_be_visible()
        # folded below: the bars with the recording beside them, labelled a recording
        page.get_by_text(re.compile("Bars per condition, the recording in full")).first.click()
        expect(page.get_by_text(re.compile(r"RECORDING — not live")).first).to_be_visible(timeout=60_000)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        expect(chart).to_be_visible(timeout=60_000)
        assert chart.get_by_text("recording, not live", exact=False).count() >= 1
        _shot(page, "presenter-first-pair")
        page.get_by_text(PAIR_DONE).first.scroll_into_view_if_needed()
        _shot_view(page, "presenter-pairs")
        _no_exception(page)
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()

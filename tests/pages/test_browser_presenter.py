"""The presenter's flow in a real browser (headless Chromium, issue 19): Home → "Start the live demo" → the Deceptive
sets page with the embedded default model answering live (the warming-up state, then bars with N and the paper's
Claude Haiku bars beside them) → the run ends and the tab rests (no reruns) → replay of another stored run, labelled
as a replay. No exception on any step. Screenshots go to $STUDIO_SHOTS when it is set (to look at them)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.pages.test_browser_smoke import CHROMIUM, FLAGS, _need_browser, served, wait_rendered
from tests.support import ROOT

DEMO_GRID = ROOT / "data" / "configs" / "deceptive_demo.yaml"


@pytest.fixture()
def app(tmp_path):
    _need_browser()
    from core import runner
    from core.config import run_spec
    from core.files import read_yaml_file

    db = tmp_path / "studio.duckdb"
    cfg = run_spec(read_yaml_file(DEMO_GRID)).config_dict()
    runner.run(cfg, "reference/solver", db_path=db, name="earlier solver run", limit=12)   # something to replay
    with served(db) as base:
        yield base


def _shot(page, name: str) -> None:
    where = os.environ.get("STUDIO_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def _choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox ``label``; the list is opened again when a click meets a selectbox that was
    being re-rendered (the options never showed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    wanted = page.locator('[role="option"]').filter(has_text=option).first
    for _ in range(6):
        box.locator("input").click()
        try:
            wanted.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    wanted.click()
    wait_rendered(page)


def _reruns(page, seconds: float) -> int:
    """How many times the running icon appears on the open tab within ``seconds``."""
    runs, was_busy, end = 0, False, time.monotonic() + seconds
    while time.monotonic() < end:
        busy = page.locator('[data-testid="stStatusWidgetRunningIcon"]').count() > 0
        runs += busy and not was_busy
        was_busy = busy
        page.wait_for_timeout(50)
    return runs


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_live_demo_and_a_replay_in_chromium(app):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(app, wait_until="networkidle", timeout=90_000)
            wait_rendered(page)
            page.get_by_role("button", name=re.compile("Start the live demo")).click()

            # the Deceptive sets page, following the new run: warming up, then the first answers as bars with N
            page.wait_for_url(re.compile(r"deceptive_sets.*run="), timeout=120_000)
            expect(page.get_by_text(re.compile(r"warming up|answers?; \d+ did not follow")).first).to_be_visible(
                timeout=300_000)
            expect(page.get_by_text(re.compile(r"\d+ answers?; \d+ did not follow")).first).to_be_visible(
                timeout=600_000)
            _shot(page, "presenter-live")
            _no_exception(page)

            # the run ends (24 items of the embedded default) and the tab rests
            expect(page.get_by_text(re.compile(r"live demo · deceptive sets\** — done: 24 of 24")).first
                   ).to_be_visible(timeout=1_200_000)
            wait_rendered(page)
            assert page.get_by_text("24 answers;", exact=False).count() >= 1
            chart = page.locator('[data-testid="stPlotlyChart"]').first
            assert chart.get_by_text("N = ", exact=False).count() >= 1          # N written on the bars
            assert chart.get_by_text("paper: Claude Haiku", exact=False).count() >= 1   # the paper beside them
            _shot(page, "presenter-done")
            _no_exception(page)
            assert _reruns(page, 6.0) == 0

            # replay of another stored run, item by item, labelled as a replay
            _choose(page, "Stored run to replay", "earlier solver run")
            page.get_by_role("button", name=re.compile("Replay")).click()
            expect(page.get_by_text(re.compile("REPLAY — not live")).first).to_be_visible(timeout=60_000)
            assert page.get_by_text("earlier solver run", exact=False).count() >= 1
            expect(page.get_by_text(re.compile(r"shown 12 of 12")).first).to_be_visible(timeout=60_000)
            _shot(page, "presenter-replay")
            _no_exception(page)
        finally:
            browser.close()

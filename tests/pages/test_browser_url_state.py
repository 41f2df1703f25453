"""State that survives a reload and a shared link, in a real browser (headless Chromium, issue 22): an edited preset
comes back after a reload (not only preset=), the Deceptive sets seed comes back, the Results view is in the URL,
and the URL opened in a fresh browser context (no cookies, no session) shows the same run and settings."""

from __future__ import annotations

import pytest

from tests.pages.test_browser_flow import fill, metric, selected
from tests.pages.test_browser_smoke import wait_rendered


@pytest.fixture()
def app(solver_grid_app):
    """The solver run "solver grid" served (tests/conftest.py; shared with the smoke test, which only reads it too)."""
    return solver_grid_app


def _open(page, url: str) -> None:
    page.goto(url, wait_until="load", timeout=90_000)
    wait_rendered(page)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_reload_and_shared_links_keep_the_settings(app, chromium):
    base, run_id = app
    browser = chromium
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})

        # 1. Set operations: demo-small, samples 5 → 3 and one more size; a reload shows the same grid
        _open(page, f"{base}/set_operations?preset=demo-small")
        assert metric(page, "Items") == "80"
        fill(page, "Samples per configuration", 3)
        page.locator('[data-testid="stButtonGroup"]').filter(has_text="Operand sizes").first.get_by_role(
            "button", name="8", exact=True).click()
        wait_rendered(page)
        edited = (metric(page, "Items"), metric(page, "Configurations"))
        assert edited[0] != "80" and "samples=3" in page.url
        page.reload(wait_until="load")
        wait_rendered(page)
        assert (metric(page, "Items"), metric(page, "Configurations")) == edited
        assert "demo-small" in selected(page, "Start from a preset")
        assert "samples 5 → 3" in page.locator('[data-testid="stCaptionContainer"]').filter(
            has_text="Started from").first.inner_text()
        shared_grid = page.url
        _no_exception(page)

        # 2. Deceptive sets: seed 7 survives a reload (it fell back to 0)
        _open(page, f"{base}/deceptive_sets")
        fill(page, "Seed", 7)
        assert "seed=7" in page.url
        page.reload(wait_until="load")
        wait_rendered(page)
        seed = page.locator('[data-testid="stNumberInput"]').filter(has_text="Seed").first.locator("input")
        assert seed.input_value() == "7"
        _no_exception(page)

        # 3. Results: the chosen view is in the URL and comes back
        _open(page, f"{base}/results?runs={run_id}")
        page.locator('[data-testid="stRadio"]').filter(has_text="Drill-down").first.get_by_text(
            "Drill-down", exact=True).click()
        wait_rendered(page)
        assert "view=drilldown" in page.url
        page.reload(wait_until="load")
        wait_rendered(page)
        assert page.get_by_text("wrong only", exact=True).count() >= 1    # the drill-down's own radio
        shared_results = page.url
        _no_exception(page)

        # 4. the two URLs opened in a fresh browser context (another person's browser): the same
        other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        _open(other, shared_grid)
        assert (metric(other, "Items"), metric(other, "Configurations")) == edited
        _open(other, shared_results)
        assert other.get_by_text("wrong only", exact=True).count() >= 1
        ms = other.locator('[data-testid="stMultiSelect"]').filter(has_text="Runs").first.inner_text()
        assert "solver grid" in ms and run_id not in ms
        _no_exception(other)
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()

"""The researcher's flow in a real browser (headless Chromium, as the smoke test): what only a browser shows — the
browser keeps its own copy of every widget's value, so bugs of the kind "edit one widget, another falls back" live
there. Preset → edit keeps the preset's grid; two models → coloured by model; deceptive → split by condition;
after a quantifier run its results are the ones shown."""

from __future__ import annotations

import pandas as pd
import pytest

from core.tasks import setops
from tests.pages.test_browser_smoke import _need_browser, served, wait_rendered

DECEPTIVE = {"task": "setops", "seed": 0, "samples": 2, "operations": ["intersection", "union"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}
QUANT = {"task": "quantifiers", "quantifiers": ["at least half", "none"], "noun_groups": ["gqg"], "samples": 2,
         "nouns_per_group": 2, "seed": 1}


@pytest.fixture()
def app(tmp_path):
    _need_browser()
    from core import runner
    from core.store.exports import export_run
    from core.store.io import import_results

    db = tmp_path / "studio.duckdb"
    solver = runner.run(DECEPTIVE, "reference/solver", db_path=db).run_id
    out = tmp_path / "other.csv"
    export_run(db, solver, out)
    df = pd.read_csv(out)
    df.loc[df.index % 3 == 0, "correct"] = False
    df["model"] = "other/model"
    df.to_csv(out, index=False)
    other = import_results(db, out.read_bytes(), "other.csv")[0]
    older_q = runner.run(QUANT, "reference/solver", db_path=db).run_id
    with served(db) as base:
        yield base, {"solver": solver, "other": other, "older_q": older_q}


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def select(page, label: str, option: str) -> None:
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.click()
    page.locator('[role="option"]').filter(has_text=option).first.click()
    wait_rendered(page)


def selected(page, label: str) -> str:
    """The value shown in a selectbox (its combobox input)."""
    return page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.locator("input").input_value()


def fill(page, label: str, value) -> None:
    box = page.locator('[data-testid="stNumberInput"]').filter(has_text=label).first.locator("input")
    box.fill(str(value))
    box.press("Enter")
    wait_rendered(page)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_researchers_flow_in_chromium(app, chromium):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    base, ids = app
    browser = chromium
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})

        # 1. a preset, then an edit: the preset's grid stays (it fell back to the default grid: 48 → 32)
        n = len(setops.plan(setops.preset_config("paper-deceptive")).cells)
        page.goto(f"{base}/set_operations", wait_until="load", timeout=90_000)
        wait_rendered(page)
        select(page, "Start from a preset", "paper-deceptive")
        assert metric(page, "Configurations") == f"{n:,}"
        fill(page, "Samples per configuration", 2)
        assert metric(page, "Configurations") == f"{n:,}" and metric(page, "Items") == f"{2 * n:,}"
        assert "paper-deceptive" in selected(page, "Start from a preset")
        page.locator('[data-testid="stButtonGroup"]').filter(has_text="Operations").first.get_by_role(
            "button", name="union", exact=True).click()
        wait_rendered(page)
        assert metric(page, "Configurations") == f"{n * 3 // 4:,}"   # one operation fewer, still the deceptive grid

        # 2. Results: a deceptive run opens split by condition; adding a second model colours by model
        page.goto(f"{base}/results?runs={ids['solver']}", wait_until="load", timeout=90_000)
        wait_rendered(page)
        assert "Deceptive condition" in selected(page, "Split by")
        ms = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Runs").first
        ms.locator("input").click()
        page.locator('[role="option"]').filter(has_text="other.csv").first.click()   # by its file's name
        page.keyboard.press("Escape")
        wait_rendered(page)
        assert "Model" in selected(page, "Colour by")
        assert "Deceptive condition" in selected(page, "Split by")
        assert page.locator('[data-testid="stException"]').count() == 0

        # 3. after a quantifier run, its results are the ones shown (an older run stayed selected)
        page.goto(f"{base}/quantifiers", wait_until="load", timeout=90_000)
        wait_rendered(page)
        fill(page, "Only N prompts", 24)
        select(page, "Model", "reference/solver")
        page.get_by_role("button", name="Run", exact=True).first.click()
        page.wait_for_function("document.body.innerText.includes('— done:')", timeout=120_000)
        # the finished run is shown by the page's next full rerun (the progress fragment reports "done" first)
        try:
            page.wait_for_function("(old) => location.search.includes('qruns=quantifiers-') && "
                                   "!location.search.includes(old)", arg=ids["older_q"], timeout=60_000)
        except PlaywrightTimeout:
            pass                                             # the assertion below says what the URL holds
        wait_rendered(page)
        picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Runs").first.inner_text()
        assert "reference/solver" in picker and "quantifiers-" not in picker   # a name, not a run id
        shown = page.url.split("qruns=")[1].split("&")[0]
        assert shown.startswith("quantifiers-") and ids["older_q"] not in shown
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()

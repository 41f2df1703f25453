"""Several tabs opened at once right after the server starts, straight to pages (Streamlit's pages-directory mode,
before app.py's navigation has run once): each page reruns itself through app.py (ui/streamlit_compat.py), nothing
reruns during an import, and no tab shows an exception. Fresh servers, six tabs opened together."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.pages.test_browser_smoke import _need_browser, free_port, wait_http, wait_rendered
from tests.support import ROOT

PATHS = ["", "results", "runs", "set_operations", "compare", "quantifiers"]


@pytest.mark.slow
@pytest.mark.parametrize("attempt", [1, 2])
def test_six_tabs_opened_at_once_on_a_fresh_server_import_cleanly(attempt, tmp_path, chromium):
    _need_browser()

    port = free_port()
    env = dict(os.environ, STUDIO_DB=str(tmp_path / "studio.duckdb"), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/_stcore/health")
        browser = chromium
        try:
            context = browser.new_context()
            tabs = [context.new_page() for _ in PATHS]
            for tab, path in zip(tabs, PATHS):       # all requested before any has rendered
                tab.goto(f"http://127.0.0.1:{port}/{path}", wait_until="commit", timeout=90_000)
            shown = []
            for tab, path in zip(tabs, PATHS):
                wait_rendered(tab)
                boxes = tab.locator('[data-testid="stException"]')
                shown += [(path, boxes.nth(i).inner_text()[:200]) for i in range(boxes.count())]
            assert shown == [], shown
        finally:
            for context in browser.contexts:     # what this test opened; the browser stays
                context.close()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()

"""One headless-Chromium smoke test of the live app (Playwright from PyPI + Debian's /usr/bin/chromium, no browser
download): `streamlit run app.py` on a free port with STUDIO_DB holding a reference/solver run (the session's
``solver_grid_app``, tests/conftest.py, which the URL-state test reads too); every page is visited and must render without a Streamlit exception box. Skipped when Chromium is missing, unless
STUDIO_REQUIRE_BROWSER=1 (CI), then it fails."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager

import pytest

from tests.support import ROOT

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
PAGES = {"": "SetLexSem Studio", "set_operations": "Set operations", "deceptive_sets": "Deceptive sets",
         "results": "Results", "findings": "Findings", "compare": "Compare", "runs": "Runs"}
# pages written by other parts of the project: visited when present (title not checked)
OPTIONAL_PAGES = {"quantifiers": None, "embeddings": None}
# the script states of a finished run (a compilation error shows as an exception box, which the tests look for)
FINISHED = ("notRunning", "compilationError")


def _need_browser():
    required = os.environ.get("STUDIO_REQUIRE_BROWSER") == "1"
    if not os.path.exists(CHROMIUM):
        if required:
            pytest.fail(f"{CHROMIUM} is missing and STUDIO_REQUIRE_BROWSER=1")
        pytest.skip(f"{CHROMIUM} not installed")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if required:
            pytest.fail("playwright is not installed and STUDIO_REQUIRE_BROWSER=1")
        pytest.skip("playwright not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout} s")



@contextmanager
def served(db):
    """``streamlit run app.py`` on the store ``db`` (a free loopback port, no file watcher): yields its base URL and
    kills the server afterwards (nothing of it is looked at after the test; a polite stop waits for a reply the
    embedded model is writing, seconds, as the interpreter's exit joins that worker thread)."""
    port = free_port()
    env = dict(os.environ, STUDIO_DB=str(db), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/_stcore/health")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(30)


# a rendered page: quiet (connected, the script finished, nothing running or loading) at every look for this long
QUIET_MS, LOOK_EVERY_MS = 750, 50


def wait_rendered(page, timeout_ms: int = 120_000) -> None:
    """Until the script has finished: the app connected, Streamlit's script state (the ``data-test-script-state``
    attribute of ``stApp``) no longer running, and neither the running icon nor a loading skeleton, at every look
    (50 ms apart) for QUIET_MS in a row — a page may rerun once on its first visit, and a click's rerun is requested a
    few ms after the click. A page just opened (``goto``/``reload`` until its ``load`` event) says ``initial`` until
    its session's first run has started, so no other wait for the network is needed."""
    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout_ms)
    app = page.locator('[data-testid="stApp"]')
    busy = page.locator('[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSkeleton"]')
    start = time.monotonic()
    quiet_since = None
    while True:
        done = (app.get_attribute("data-test-connection-state") == "CONNECTED"
                and app.get_attribute("data-test-script-state") in FINISHED and not busy.count())
        now = time.monotonic()
        if not done:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= QUIET_MS / 1000:
            return
        if now - start > timeout_ms / 1000:
            raise TimeoutError("the page kept running")
        page.wait_for_timeout(LOOK_EVERY_MS)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_page_renders_in_chromium(solver_grid_app, chromium):
    base, run_id = solver_grid_app
    browser = chromium
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        pages = dict(PAGES)
        pages.update({p: t for p, t in OPTIONAL_PAGES.items() if (ROOT / "pages" / f"{p}.py").exists()})
        for path, title in pages.items():
            query = f"?runs={run_id}" if path in ("results", "compare") else ""
            page.goto(f"{base}/{path}{query}", wait_until="load", timeout=90_000)
            wait_rendered(page)
            assert page.locator('[data-testid="stException"]').count() == 0, f"exception on /{path}"
            heading = page.locator("h1").first.inner_text(timeout=30_000)
            assert title is None or title in heading, (path, heading)
            if path == "results":
                page.wait_for_selector(".js-plotly-plot", timeout=60_000)
                assert page.locator(".js-plotly-plot").count() >= 1
    finally:
        for context in browser.contexts:     # what this test opened; the browser stays
            context.close()

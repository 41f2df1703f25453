"""Page loads of the dashboard in headless Chromium on a big store: cold and warm, per page; and whether an idle tab
keeps re-running.

    python bench/page_loads.py [--rows 10000000] [--runs 24] [--db PATH] [--idle 60]

Fills a store (a temporary one unless --db names an existing file to reuse) with ``--rows`` synthetic results
(tests/support/synthetic.py: two runs) and ``--runs`` small named reference/solver runs, starts
``streamlit run app.py`` on it, then for every page: **cold** = the first visit in a new browser context right after
the server started (no cache), **warm** = the same URL reloaded. A load is timed from navigation to the moment the
script last ran (the status widget's running icon or a skeleton last seen; the page must then stay quiet for 2 s).
Results, Findings and Compare are opened on the two big runs (``?runs=…``), Runs on the first (``?run=…``).
Then one tab is left open on Results for ``--idle`` seconds and the reruns it shows are counted (0 expected when
nothing is running). Last, a returning user: in a browser that has opened every page once (its HTTP cache holds the
dashboard's scripts — Plotly's alone is 4.6 MB, ~0.9 s to compile on this machine), the server is restarted and each
page is opened once (server caches empty, browser cache warm).
Targets (issue 20): warm < 1 s, cold < 2 s at 10M results, 0 idle reruns. Prints figures; never asserts.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUSY = '[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSkeleton"]'
SMALL = {"task": "setops", "seed": 0, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
         "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


def fill(db: str, rows: int, runs: int) -> list[str]:
    import duckdb

    from core import runner, store
    from tests.support.synthetic import fill_synthetic

    with store.connect(db):
        pass
    con = duckdb.connect(db)
    try:
        big = fill_synthetic(con, rows)
    finally:
        con.close()
    for i in range(runs):
        runner.run({**SMALL, "seed": i}, "reference/solver", db_path=db, name=f"solver seed {i}")
    return big


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(url)


def timed_load(page, url: str | None, quiet_s: float = 2.0, timeout_s: float = 300) -> float:
    """Seconds from navigation (goto, or reload when url is None) to the last moment the script was seen running."""
    t0 = time.perf_counter()
    if url is None:
        page.reload()
    else:
        page.goto(url)
    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout_s * 1000)
    last_busy = time.perf_counter()
    seen_content = False
    while time.perf_counter() - last_busy < quiet_s or not seen_content:
        if page.locator(BUSY).count():
            last_busy = time.perf_counter()
        elif page.locator('[data-testid="stMainBlockContainer"] [data-testid="stHeading"], '
                          '[data-testid="stMainBlockContainer"] h1').count():
            if not seen_content:
                seen_content = True
                last_busy = max(last_busy, time.perf_counter())
        if time.perf_counter() - t0 > timeout_s:
            raise TimeoutError(f"{url}: still running after {timeout_s} s")
        page.wait_for_timeout(25)
    return last_busy - t0


def idle_reruns(page, seconds: float) -> int:
    """How many times the running icon appears on an open tab in ``seconds`` (polled every 50 ms)."""
    runs, was_busy = 0, False
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        busy = page.locator('[data-testid="stStatusWidgetRunningIcon"]').count() > 0
        if busy and not was_busy:
            runs += 1
        was_busy = busy
        page.wait_for_timeout(50)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=24, help="small named solver runs beside the two big ones")
    ap.add_argument("--db", default=None, help="reuse this store (filled on first use)")
    ap.add_argument("--idle", type=float, default=60.0, help="seconds an idle tab is watched for reruns")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from core import store
    from core.store import aggregates
    from ui.nav import PAGES

    tmp = None
    db = args.db
    if db is None:
        tmp = tempfile.mkdtemp(prefix="studio-pages-")
        db = os.path.join(tmp, "studio.duckdb")
    t = time.perf_counter()
    if not os.path.exists(db):
        fill(db, args.rows, args.runs)
    with store.connect(db) as con:
        n_results = con.execute("SELECT coalesce(sum(n_rows), 0) FROM agg_counts WHERE scoring = 'lenient'"
                                ).fetchone()[0] if aggregates.present(con) else None
        n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        big = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE run_id LIKE 'synth%' ORDER BY run_id"
                                         ).fetchall()]
    print(f"store {db}: {n_runs} runs, {n_results:,} results (ready in {time.perf_counter() - t:.0f} s)")

    port = free_port()
    env = dict(os.environ, STUDIO_DB=db, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")

    def start_server() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                 "--server.port", str(port), "--server.address", "127.0.0.1",
                                 "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_server(proc: subprocess.Popen) -> None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()

    server = start_server()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{base}/_stcore/health")
        # the pages that show stored runs open on the two big ones (Runs on the first)
        query = {"results": "?runs=" + ",".join(big), "findings": "?runs=" + ",".join(big),
                 "compare": "?runs=" + ",".join(big), "runs": f"?run={big[0]}"} if big else {}
        runs_q = query.get("results", "")
        targets = [(title, f"{base}/{'' if key == 'home' else key}" + query.get(key, ""))
                   for key, _, title, _ in PAGES]
        print(f"\n{'page':<16} {'cold':>8} {'warm':>8} {'warm':>8}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            for title, url in targets:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = ctx.new_page()
                cold = timed_load(page, url)
                warm = [timed_load(page, None) for _ in range(2)]
                print(f"{title:<16} {cold:>7.2f}s " + " ".join(f"{w:>7.2f}s" for w in warm))
                ctx.close()
            ctx = browser.new_context()
            page = ctx.new_page()
            timed_load(page, f"{base}/results{runs_q}")
            n = idle_reruns(page, args.idle)
            print(f"\nidle Results tab, {args.idle:.0f} s: {n} rerun(s) ({n * 60 / args.idle:.1f} a minute)")
            # a returning user: the browser has the dashboard's scripts cached (every page opened once), then the
            # server restarts (its caches empty; what the store keeps stays) and each page is opened once
            for _, url in targets:
                timed_load(page, url)
            stop_server(server)
            server = start_server()
            wait_http(f"{base}/_stcore/health")
            print("\nafter a server restart, browser cache kept (first visit of each page):")
            for title, url in targets:
                print(f"{title:<16} {timed_load(page, url):>7.2f}s")
            browser.close()
    finally:
        stop_server(server)
        if tmp:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

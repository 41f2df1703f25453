"""Several browser sessions on one dashboard server over a big store while a run keeps writing to it: page load
times per page (p50 / p95 over the sessions) and the server's peak memory.

    python bench/sessions.py [--sessions 8] [--rows 1000000] [--db PATH] [--rounds 2] [--app-dir DIR]
                             [--no-live] [--timeout 300] [--budget 1800] [--max-gb 12] [--browsers idle|equal]

Fills a store (a temporary one unless --db names a file to reuse; tests/support/synthetic.py: two runs of
``--rows`` results in all) and empties what it kept of earlier analyses (the ``analysis_cache`` table: every round
starts from a server with nothing computed). Then, unless --no-live, a live run: a loopback OpenAI-compatible server
(tests/support/loopback.py, 0.25 s a call) answered by ``python -m core run`` with 4 calls in flight — ~16 results a
second, merged into the store about once a second, for as long as the bench lasts. Then ``streamlit run app.py``
(from ``--app-dir``: another checkout of the project, to compare two versions on one store) and ``--sessions``
headless Chromium sessions (one browser, a context each), all started at the same moment, each opening Findings,
Results, Compare (on the two big runs) and Runs (on the first), in that order, ``--rounds`` times (round 1: a server
that has computed nothing; later rounds: the same views again while the live run keeps writing).
A load is timed from navigation to the moment the script was last seen running (the page then quiet for 1.5 s), as
in bench/page_loads.py. Printed: per round and page, p50 / p95 / max of the load times and errors shown; the
server's peak resident memory (VmHWM) and its CPU seconds; results the live run stored meanwhile; the machine's
load average before and after; the CPU seconds the browsers used. The browsers stand for the users' own machines,
which this bench cannot give them: with ``--browsers idle`` (the default) they run under Linux's SCHED_IDLE policy
(Chromium resets its threads' niceness, not their policy), only on CPU the server, the live run and anything else
leave idle — so a tab still drawing a finished page, and this bench's own timing, wait while the server computes
another session's next page (loads read high, not low);
with ``equal`` they share the two cores with the server as ordinary processes, as if the lab's browsers ran on the
server itself (8 Chromium tabs loading Streamlit's frontend take 1-1.8 of the 2 cores, and the server is starved).
Every load gives up after ``--timeout`` seconds, all of them after ``--budget`` seconds (each load printed as it
ends); the live run, its endpoint and the server are stopped at the end. Prints figures; never asserts.
Targets: 8 sessions over 1M results on 2 cores, Findings p95 <= 15 s, server <= 4 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUSY = '[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSkeleton"]'
CONTENT = '[data-testid="stMainBlockContainer"] [data-testid="stHeading"], [data-testid="stMainBlockContainer"] h1'
PAGES = ("findings", "results", "compare", "runs")
# the live run: enough items to outlast the bench (stopped at its end)
LIVE = ("task: setops\nseed: 11\nsamples: 2000\noperations: [union, intersection]\nsizes: [2, 4]\n"
        "members: [numbers, words]\nphrasings: [formal]\napproaches: [baseline]\nshots: [0]\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 120) -> None:
    import urllib.request

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(url)


def fill(db: str, rows: int) -> None:
    import duckdb

    from core import store
    from tests.support.synthetic import fill_synthetic

    with store.connect(db):
        pass
    con = duckdb.connect(db)
    try:
        fill_synthetic(con, rows)
    finally:
        con.close()


def prepare(db: str) -> tuple[list[str], int]:
    """The two big runs; results stored. What the store kept of earlier analyses goes, and runs left 'running' by an
    earlier bench become 'interrupted' (a run of the bench's own starts below)."""
    from core import store
    from core.store import analysis_cache, runs

    with store.connect(db) as con:
        analysis_cache.clear(con)
        runs.interrupt_unfinished(con)
        big = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE run_id LIKE 'synth%' ORDER BY run_id").fetchall()]
        n = con.execute("SELECT count(*) FROM results").fetchone()[0]
    return big, n


def results_of_live(db: str, big: list[str]) -> int | None:
    """Results of the runs other than the big ones; None when the store stays busy (a server still computing)."""
    from core import store

    try:
        with store.connect(db) as con:
            return con.execute("SELECT count(*) FROM results WHERE run_id NOT IN (SELECT unnest(?))", [big]
                               ).fetchone()[0]
    except store.DatabaseBusy:
        return None


def proc_stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user + system CPU seconds) of a process, from /proc; None once it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class Watch:
    """Samples a process's resident memory (and reads its peak, VmHWM) and CPU time from /proc."""

    def __init__(self, pid: int, limit: int = 0):
        self.pid, self.peak_sampled, self.stop = pid, 0, threading.Event()
        self.limit, self.killed = limit, False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _status(self, field: str) -> int:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def cpu_s(self) -> float:
        got = proc_stat(self.pid)
        return got[1] if got is not None else float("nan")

    def _run(self) -> None:
        while not self.stop.wait(0.25):
            self.peak_sampled = max(self.peak_sampled, self._status("VmRSS"))
            if self.limit and self.peak_sampled > self.limit and not self.killed:
                self.killed = True   # the machine is shared: a server past the limit is stopped, and said so
                print(f"  server above {self.limit / 2**30:.1f} GB resident: stopped", flush=True)
                os.kill(self.pid, 9)

    def peak(self) -> int:
        return max(self.peak_sampled, self._status("VmHWM"))


async def timed_load(page, url: str, timeout_s: float, quiet_s: float = 1.5) -> tuple[float, int]:
    """(seconds from navigation to the last moment the script was seen running, exceptions shown)."""
    t0 = time.perf_counter()
    await page.goto(url, timeout=timeout_s * 1000)
    await page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout_s * 1000)
    last_busy, seen_content = time.perf_counter(), False
    while time.perf_counter() - last_busy < quiet_s or not seen_content:
        if await page.locator(BUSY).count():
            last_busy = time.perf_counter()
        elif await page.locator(CONTENT).count() and not seen_content:
            seen_content, last_busy = True, max(last_busy, time.perf_counter())
        if time.perf_counter() - t0 > timeout_s:
            raise TimeoutError(f"{url}: still running after {timeout_s:g} s")
        await page.wait_for_timeout(100)
    return last_busy - t0, await page.locator('[data-testid="stException"]').count()


async def sessions(base: str, big: list[str], n: int, rounds: int, timeout_s: float, budget_s: float) -> dict:
    """{(round, page): [seconds or None (gave up)], ('errors', round, page): count}"""
    from playwright.async_api import async_playwright

    runs_q = "?runs=" + ",".join(big)
    urls = {"findings": f"{base}/findings{runs_q}", "results": f"{base}/results{runs_q}",
            "compare": f"{base}/compare{runs_q}", "runs": f"{base}/runs?run={big[0]}"}
    out: dict = {}

    async def one(browser, start: asyncio.Event) -> None:
        ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
        page = await ctx.new_page()
        await start.wait()
        for r in range(1, rounds + 1):
            for name in PAGES:
                try:
                    secs, errors = await timed_load(page, urls[name], timeout_s)
                except Exception as exc:   # a load that gave up (timeout, browser error): counted as such
                    print(f"  gave up: {name} round {r}: {str(exc).splitlines()[0][:120]}", flush=True)
                    secs, errors = None, 0
                out.setdefault((r, name), []).append(secs)
                if secs is not None:
                    print(f"  round {r} {name}: {secs:.1f}s (+{time.perf_counter() - t_start:.0f}s)", flush=True)
                out[("errors", r, name)] = out.get(("errors", r, name), 0) + errors
        await ctx.close()

    t_start = time.perf_counter()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        start = asyncio.Event()
        tasks = [asyncio.create_task(one(browser, start)) for _ in range(n)]
        await asyncio.sleep(1.0)   # every context open before the first navigation
        start.set()
        t_start = time.perf_counter()
        done, pending = await asyncio.wait(tasks, timeout=budget_s)
        for task in pending:       # past the budget: what is still loading counts as given up
            task.cancel()
        if pending:
            print(f"  budget of {budget_s:g} s spent: {len(pending)} session(s) stopped", flush=True)
            await asyncio.gather(*pending, return_exceptions=True)
        await browser.close()
    return out


class Descendants:
    """CPU seconds used by the processes started below ``root`` (other than ``skip`` and theirs) while it runs: each
    one's user + system time, sampled every 0.5 s from /proc (a process that ends between two samples loses at
    most its last half second) — the Playwright driver and its Chromium processes, which the driver does not all
    wait for, so the kernel's count of waited-for children would miss them."""

    def __init__(self, root: int, skip: set[int]):
        self.root, self.skip, self.seen, self.stop = root, skip, {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        parent, cpu = {}, {}
        for name in os.listdir("/proc"):
            got = proc_stat(int(name)) if name.isdigit() else None
            if got is not None:
                parent[int(name)], cpu[int(name)] = got
        for pid, used in cpu.items():
            up, chain = pid, set()
            while up in parent and up not in chain and up != self.root and up not in self.skip:
                chain.add(up)
                up = parent[up]
            if up == self.root and pid != self.root:
                self.seen[pid] = max(used, self.seen.get(pid, 0.0))

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            self._sample()

    def cpu_s(self) -> float:
        return sum(self.seen.values())


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (linear interpolation, as numpy's default)."""
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--db", default=None, help="reuse this store (filled on first use)")
    ap.add_argument("--rounds", type=int, default=2, help="times each session opens the four pages")
    ap.add_argument("--app-dir", default=str(ROOT), help="the checkout whose app.py the server runs")
    ap.add_argument("--no-live", action="store_true", help="no run writing meanwhile")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a page load may take before giving up")
    ap.add_argument("--budget", type=float, default=1800.0,
                    help="seconds all sessions together may take; loads still running then count as given up")
    ap.add_argument("--browsers", choices=("idle", "equal"), default="idle",
                    help="the browsers' CPU: only what is left idle (they stand for the users' own machines), or an "
                         "equal share with the server")
    ap.add_argument("--max-gb", type=float, default=12.0,
                    help="stop the server if its resident memory passes this (the machine may be shared)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # stopped from outside: the finally below still runs
    app_dir = Path(args.app_dir).resolve()

    tmp = None
    db = args.db
    if db is None:
        tmp = tempfile.mkdtemp(prefix="studio-sessions-")
        db = os.path.join(tmp, "studio.duckdb")
    t = time.perf_counter()
    if not os.path.exists(db):
        fill(db, args.rows)
    big, n_results = prepare(db)
    print(f"store {db}: {n_results:,} results, big runs {', '.join(big)} (ready in {time.perf_counter() - t:.0f} s)")
    print(f"app: {app_dir} (commit {_commit(app_dir)}); {args.sessions} session(s), {args.rounds} round(s)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs; the "
          "machine may be shared)")

    env = dict(os.environ, STUDIO_DB=db, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", PYTHONPATH=str(app_dir))
    loop = live = server = None
    live_before = results_of_live(db, big)
    try:
        if not args.no_live:
            lport = free_port()
            loop = subprocess.Popen([sys.executable, "-m", "tests.support.loopback", "--port", str(lport),
                                     "--latency", "0.25"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            config = Path(tmp or tempfile.mkdtemp(prefix="studio-sessions-")) / "live.yaml"
            config.write_text(LIVE)
            time.sleep(1.0)
            live = subprocess.Popen([sys.executable, "-m", "core", "run", "--config", str(config), "--model",
                                     "openai-compatible/loop", "--base-url", f"http://127.0.0.1:{lport}/v1",
                                     "--concurrency", "4", "--db", db, "--no-progress", "--fresh"],
                                    cwd=app_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            end = time.monotonic() + 60
            while results_of_live(db, big) == live_before and time.monotonic() < end and live.poll() is None:
                time.sleep(0.5)
            print(f"live run writing ({(results_of_live(db, big) or 0) - live_before} results so far)")
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                   "--server.port", str(port), "--server.address", "127.0.0.1",
                                   "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                                  cwd=app_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/_stcore/health")
        watch = Watch(server.pid, int(args.max_gb * 2**30))
        watch.thread.start()
        cpu0, t0, live0 = watch.cpu_s(), time.perf_counter(), results_of_live(db, big)
        browsers = Descendants(os.getpid(), skip={p.pid for p in (server, live, loop) if p is not None})
        browsers.thread.start()
        if args.browsers == "idle":   # the browsers (and this process's timing) inherit the policy from here
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        got = asyncio.run(sessions(base, big, args.sessions, args.rounds, args.timeout, args.budget))
        browsers.stop.set()
        browsers.thread.join()
        browsers_cpu = browsers.cpu_s()
        wall, cpu = time.perf_counter() - t0, watch.cpu_s() - cpu0
        peak = watch.peak()
        watch.stop.set()
        print(f"server peak resident memory so far: {peak / 2**30:.2f} GB", flush=True)
    finally:
        for proc in (server, live, loop):
            stop(proc)
    after = results_of_live(db, big)   # the server stopped: the store is free again
    written = after - live0 if after is not None and live0 is not None else None
    if tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\n{'round':<6} {'page':<10} {'p50':>8} {'p95':>8} {'max':>8}  {'loads':>5} {'gave up':>7} {'errors':>6}")
    for r in range(1, args.rounds + 1):
        for name in PAGES:
            times = got.get((r, name), [])
            times = times + [None] * (args.sessions - len(times))   # not reached within the budget
            done = [x for x in times if x is not None]
            figures = (f"{pct(done, 0.5):>7.1f}s {pct(done, 0.95):>7.1f}s {max(done):>7.1f}s" if done
                       else f"{'-':>8} {'-':>8} {'-':>8}")
            print(f"{r:<6} {name:<10} {figures}  {len(times):>5} {len(times) - len(done):>7} "
                  f"{got.get(('errors', r, name), 0):>6}")
    print(f"\nserver: peak resident memory {peak / 2**30:.2f} GB"
          + (f" (stopped: above --max-gb {args.max_gb:g})" if watch.killed else "")
          + f"; {cpu:.0f} CPU seconds in {wall:.0f} s of sessions")
    print(f"browsers (Playwright's driver and Chromium, sampled every 0.5 s; CPU share: {args.browsers}): "
          f"{browsers_cpu:.0f} CPU seconds")
    if not args.no_live and written is not None:
        print(f"live run: {written} results stored during the sessions ({written / wall:.1f} a second)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def _commit(path: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


if __name__ == "__main__":
    raise SystemExit(main())

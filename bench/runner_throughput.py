"""Runner throughput against a loopback OpenAI-compatible endpoint of fixed latency, through the real provider path.

    python bench/runner_throughput.py [--items 1000] [--concurrency 32] [--latency 0.25] [--direct] [--cli]

The physical limit of C calls in flight with latency L each is C/L calls per second. We print the achieved
throughput as a fraction of it — end to end (item generation, DB setup, cache lookup, journal fsyncs, DuckDB merges
included) and for the call phase alone (first call sent → last call durable). Then two cached re-runs over the same
items: the identical command again (the run is resumed: nothing to do), and a new run over the same prompts (every
answer comes from the cache, is scored and stored) — both must make 0 calls, counted at the endpoint.
For comparison: the SetLexSem reference code makes one call at a time, i.e. items × L seconds.
The ``openai-compatible`` provider speaks the OpenAI HTTP API directly over a pooled aiohttp session (see
``core/models/providers/openai_compatible.py``); with waves of C calls the best possible is ceil(items / C) × L, i.e. 0.977 of
C/L for 1,000 items at C = 32.
``--direct`` also runs an in-process model with the same latency (no HTTP) to show the runner's own overhead;
``--sdk-ceiling`` measures, without the runner, the bare provider and the bare official OpenAI SDK at the same C and L
(what this machine's HTTP stacks allow).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import runner, store  # noqa: E402
from core.models.base import Completion  # noqa: E402


def config_for(n_items: int) -> dict:
    per_cell = max(1, -(-n_items // 8))    # 4 operations × 2 sizes = 8 cells
    return {"task": "setops", "samples": per_cell, "sizes": [2, 4], "members": ["numbers"], "seed": 1}


def endpoint_requests(base_url: str) -> int:
    with urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as resp:
        return int(json.loads(resp.read())["total_requests"])


class DirectModel:
    spec, provider, supported_params = "bench/direct", "bench", ()

    def __init__(self, latency: float, concurrency: int):
        self.latency, self.default_concurrency = latency, concurrency

    async def complete(self, request):
        await asyncio.sleep(self.latency)
        return Completion("{1, 2}", 10, 3, self.latency * 1000, None, "stop")


def sdk_ceiling(c: int, lat: float, n: int, cfg: dict) -> list[str]:
    """The same prompts from C bare asyncio tasks — no runner, no cache, no DB, no scoring — through (1) our
    provider (``get_model("openai-compatible/…").complete``) and (2) the official OpenAI SDK
    (``AsyncOpenAI.chat.completions.create``, the path this provider used before): this machine's HTTP ceilings,
    against which the runner's own overhead can be judged."""
    from core.models import Request, SamplingParams, get_model
    from core.tasks import setops

    prompts = [it["prompt"] for it in setops.items(setops.load_config(cfg))][:n]
    params = SamplingParams()
    out = []
    for label in ("bare provider (aiohttp, no runner/cache/DB)", "bare OpenAI SDK (no runner/cache/DB)"):
        server = subprocess.Popen([sys.executable, "-m", "tests.support.loopback", "--port", "0", "--latency",
                                   str(lat)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            base_url = server.stdout.readline().strip().split(" ", 1)[1]

            async def go():
                if label.startswith("bare provider"):
                    model = get_model("openai-compatible/loop", base_url=base_url)
                    one, close = (lambda p: model.complete(Request(p, params))), model.aclose
                else:
                    import openai

                    client = openai.AsyncOpenAI(api_key="no-key", base_url=base_url, max_retries=0)
                    def one(p):
                        return (client.chat.completions.create(
                                            model="loop", messages=[{"role": "user", "content": p}], temperature=params.temperature,
                                            top_p=params.top_p, max_tokens=params.max_tokens, extra_body={"top_k": params.top_k}))
                    close = client.close
                todo = list(prompts)

                async def worker():
                    while todo:
                        await one(todo.pop())
                t0 = time.perf_counter()
                cpu0 = time.process_time()
                await asyncio.gather(*[worker() for _ in range(c)])
                el, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                await close()
                return el, cpu

            el, cpu = asyncio.run(go())
        finally:
            server.kill()
            server.wait()
        out.append(f"{label}: {n} calls in {el:.2f} s = {n / el:.1f} calls/s = {n / el / (c / lat):.2f} of C/L, "
                   f"CPU {1000 * cpu / n:.3f} ms per call")
    return out


def cli_process(cfg: dict, c: int, lat: float, n: int, tmp: Path) -> str:
    """``python -m core run`` on a new store as a user types it: interpreter start, imports, the run, exit."""
    import yaml

    conf = tmp / "cli.yaml"
    conf.write_text(yaml.safe_dump(cfg))
    server = subprocess.Popen([sys.executable, "-m", "tests.support.loopback", "--port", "0", "--latency", str(lat)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        base_url = server.stdout.readline().strip().split(" ", 1)[1]
        import resource

        children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0, started = time.perf_counter(), time.time()
        done = subprocess.run([sys.executable, "-m", "core", "run", "--config", str(conf), "--model",
                               "openai-compatible/loop", "--base-url", base_url, "--concurrency", str(c),
                               "--limit", str(n), "--db", str(tmp / "cli.duckdb"), "--no-progress"],
                              cwd=ROOT, capture_output=True, text=True)
        wall, ended = time.perf_counter() - t0, time.time()
        # the largest child waited for so far: the CLI's peak when it is above every earlier child's (servers)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        peak_text = (f", peak memory {peak / 1024:,.0f} MiB" if peak > children_peak else
                     f", peak memory at most {children_peak / 1024:,.0f} MiB")
        sent = endpoint_requests(base_url)
        with urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as resp:
            seen = json.loads(resp.read())
    finally:
        server.kill()
        server.wait()
    if done.returncode != 0:
        return f"whole CLI process: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
    phases = ""
    if seen.get("first_request_at") and seen.get("last_answer_at"):
        phases = (f"\n  start-up (process start → first request) {seen['first_request_at'] - started:.2f} s, "
                  f"calls {seen['last_answer_at'] - seen['first_request_at']:.2f} s, "
                  f"wind-down (last answer → exit) {ended - seen['last_answer_at']:.2f} s")
    return (f"whole CLI process (python -m core run, start to exit): {sent} requests in {wall:.2f} s = "
            f"{sent / wall:.1f} calls/s = {sent / wall / (c / lat):.2f} of C/L{peak_text}{phases}")


def report(label: str, p, wall: float, c: int, lat: float) -> None:
    limit = c / lat
    phase = (p.started_at + p.elapsed - p.calls_started_at) if p.calls_started_at else None
    e2e = p.calls / wall if wall else 0.0
    print(f"{label}: {p.calls} calls, {p.done}/{p.total} items, status {p.status}")
    print(f"  end to end : {wall:6.2f} s  {e2e:7.1f} calls/s  = {e2e / limit:.2f} of C/L = {limit:.0f}/s")
    if phase:
        print(f"  call phase : {phase:6.2f} s  {p.calls / phase:7.1f} calls/s  = {p.calls / phase / limit:.2f} of C/L"
              f"  (ideal {-(-p.calls // c) * lat:.2f} s for {p.calls} calls in waves of {c})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--direct", action="store_true", help="also measure an in-process model (no HTTP)")
    ap.add_argument("--cli", action="store_true",
                    help="also time the whole CLI process (`python -m core run`, start to exit) on a new store")
    ap.add_argument("--sdk-ceiling", action="store_true",
                    help="also measure the bare provider and the bare OpenAI SDK (no runner, no DB) at the same C and L")
    args = ap.parse_args(argv)
    c, lat = args.concurrency, args.latency
    cfg = config_for(args.items)
    tmp = Path(tempfile.mkdtemp(prefix="runner-bench-"))
    db = tmp / "bench.duckdb"
    server = subprocess.Popen([sys.executable, "-m", "tests.support.loopback", "--port", "0", "--latency", str(lat)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        base_url = server.stdout.readline().strip().split(" ", 1)[1]
        print(f"loopback endpoint {base_url}, latency L = {lat} s, concurrency C = {c}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        print(f"one call at a time (the reference code's way) would take {args.items * lat:.0f} s")
        kw = dict(base_url=base_url, db_path=db, concurrency=c, limit=args.items)
        t_imp = time.perf_counter()
        importlib.import_module("core.tasks.setops")   # process start-up (YAML, templates), not part of a run
        print(f"task module imported before timing: {time.perf_counter() - t_imp:.2f} s (once per process)")

        import resource

        from core.runner.gc_pacing import Stats

        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        with Stats() as collected:
            p = runner.run(cfg, "openai-compatible/loop", **kw)
        wall = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        sent = endpoint_requests(base_url)
        report("first run (openai-compatible: OpenAI HTTP API over aiohttp)", p, wall, c, lat)
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        # CPU per call hardly depends on what else the machine runs, unlike the throughput: the figure to compare
        # between versions of the runner on a busy machine (one core is 1,000 ms per second)
        print(f"  CPU of this process: {cpu:.2f} s = {1000 * cpu / max(1, p.calls):.3f} ms per call "
              f"(user {cpu1.ru_utime - cpu0.ru_utime:.2f} s, system {cpu1.ru_stime - cpu0.ru_stime:.2f} s)")

        print(f"  garbage collector (core/runner/gc_pacing.py): {collected.collections} collections, "
              f"{1000 * collected.seconds:.0f} ms in all, longest {1000 * collected.longest:.1f} ms")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  endpoint saw {sent} requests; peak memory of this process so far {peak:,.0f} MiB")

        t0 = time.perf_counter()
        p2 = runner.run(cfg, "openai-compatible/loop", **kw)
        wall2 = time.perf_counter() - t0
        sent2 = endpoint_requests(base_url) - sent
        print(f"identical re-run (resumed, all done): {wall2:.2f} s, {p2.calls} calls by the runner, {sent2} requests "
              f"at the endpoint, {p2.done}/{p2.total} items")

        store.delete_run(db, p.run_id)
        t0 = time.perf_counter()
        p3 = runner.run(cfg, "openai-compatible/loop", **kw)
        wall3 = time.perf_counter() - t0
        sent3 = endpoint_requests(base_url) - sent
        print(f"new run over the same prompts (all from the cache): {wall3:.2f} s, {p3.calls} calls, {sent3} requests "
              f"at the endpoint, {p3.cached} items scored from the cache, {p3.done}/{p3.total} items")
    finally:
        server.kill()
        server.wait()

    if args.sdk_ceiling:
        for line in sdk_ceiling(c, lat, args.items, cfg):
            print(line)
    if args.cli:
        print(cli_process(cfg, c, lat, args.items, tmp))
    if args.direct:
        t0 = time.perf_counter()
        pd = runner.run(cfg, DirectModel(lat, c), db_path=tmp / "direct.duckdb", limit=args.items)
        report("in-process model, same latency (runner overhead only)", pd, time.perf_counter() - t0, c, lat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

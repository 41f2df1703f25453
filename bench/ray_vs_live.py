"""Throughput of `run --engine ray` vs the live runner on the loopback endpoint, same in-flight total (issue 21).

    python bench/ray_vs_live.py [--samples 25] [--latency 0.1] [--inflight 16]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cli import main
from tests.support.loopback import LoopbackServer


def timed(args) -> float:
    t = time.perf_counter()
    assert main([str(a) for a in args]) == 0
    return time.perf_counter() - t


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=25)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--inflight", type=int, default=16)
    a = ap.parse_args()
    cfg = {"task": "setops", "seed": 1, "samples": a.samples, "operations": ["union", "intersection"],
           "sizes": [2, 4, 8], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"],
           "shots": [0]}
    tmp = Path(tempfile.mkdtemp())
    (tmp / "c.yaml").write_text(json.dumps(cfg))
    srv = LoopbackServer(a.latency).start()
    try:
        common = ["run", "--config", tmp / "c.yaml", "--model", "openai-compatible/loop", "--base-url", srv.base_url,
                  "--concurrency", a.inflight, "--no-progress"]
        live = timed([*common, "--db", tmp / "live.duckdb"])
        n = srv.stats()["total_requests"]
        from core.runner.ray_engine import start_ray
        t0 = time.perf_counter()
        start_ray(None)
        startup = time.perf_counter() - t0
        ray_s = timed([*common, "--db", tmp / "ray.duckdb", "--engine", "ray"])
    finally:
        srv.stop()
    print(f"{n} requests, {a.inflight} in flight, latency {a.latency}s, load average {os.getloadavg()[0]:.2f}")
    print(f"live runner: {live:.1f} s, {n / live:.1f} items/s")
    print(f"ray (local, started in {startup:.1f} s, not counted): {ray_s:.1f} s, {n / ray_s:.1f} items/s")


if __name__ == "__main__":
    run()

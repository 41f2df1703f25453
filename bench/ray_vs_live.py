"""Throughput of `run --engine ray` vs the live runner on the loopback endpoint, same in-flight total (issue 21).

    python bench/ray_vs_live.py [--items 2000] [--latency 0.05] [--inflight 64] [--actors 2] [--block-size 64]

Both run the same grid (set operations over numbers; ``--items`` rounded up to whole samples of its 6 configurations)
in this process — ``core.runner.run`` and ``core.runner.ray_engine.run_ray``, what ``python -m core run`` calls with
and without ``--engine ray`` — each into its own fresh database, against one loopback endpoint that answers every
request after ``--latency`` seconds. The live runner has ``--inflight`` calls in flight; the Ray path has
``--actors`` HTTP actors with ``--inflight / --actors`` each. The local Ray's start is timed apart and not counted;
the Ray figure is given whole and from its first imported block on (after the actors have started). C/L (in flight /
latency) is the ceiling both aim at.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import runner
from core.runner.ray_engine import run_ray, start_ray
from tests.support.loopback import LoopbackServer


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--inflight", type=int, default=64)
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--block-size", type=int, default=64)
    a = ap.parse_args()
    cfg = {"task": "setops", "seed": 1, "samples": -(-a.items // 6), "operations": ["union", "intersection"],
           "sizes": [2, 4, 8], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"],
           "shots": [0]}
    tmp = Path(tempfile.mkdtemp())
    model = "openai-compatible/loop"
    srv = LoopbackServer(a.latency).start()
    try:
        t = time.perf_counter()
        p = runner.run(cfg, model, base_url=srv.base_url, concurrency=a.inflight, db_path=tmp / "live.duckdb")
        live = time.perf_counter() - t
        assert p.status == "done" and p.failed == 0, (p.status, p.error)
        n_live = srv.stats()["total_requests"]
        t = time.perf_counter()
        start_ray(None)
        startup = time.perf_counter() - t
        stamps: list[float] = []
        t = time.perf_counter()
        c = run_ray(cfg, model, srv.base_url, db_path=tmp / "ray.duckdb", concurrency=a.inflight, actors=a.actors,
                    block_size=a.block_size, on_block=lambda totals: stamps.append(time.perf_counter() - t))
        ray_s = time.perf_counter() - t
        assert c["failed"] == 0 and c["answered"] == c["requests"], c
        n_ray = srv.stats()["total_requests"] - n_live
        peak = srv.stats()["max_in_flight"]
    finally:
        srv.stop()
    first = stamps[1]                         # stamps[0]: the export; stamps[1]: the first block imported
    after = c["requests"] - a.block_size
    print(f"{n_live} requests (live) / {n_ray} (ray), {a.inflight} in flight, latency {a.latency} s: ceiling C/L = "
          f"{a.inflight / a.latency:.0f} items/s; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, "
          f"peak in flight at the endpoint {peak}")
    print(f"live runner: {live:.1f} s, {n_live / live:.1f} items/s")
    print(f"ray ({a.actors} actors × {a.inflight // a.actors} in flight, {c['blocks']} blocks of {a.block_size}; "
          f"local Ray started in {startup:.1f} s, not counted): {ray_s:.1f} s, {n_ray / ray_s:.1f} items/s; first "
          f"block imported after {first:.1f} s (actors starting), then {after / max(1e-9, ray_s - first):.1f} items/s")


if __name__ == "__main__":
    run()

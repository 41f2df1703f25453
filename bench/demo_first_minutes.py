"""The no-key demo, measured per embedded model: on the demo's grid (data/configs/deceptive_demo.yaml: intersections of
deceptive sets, |A| = |B| = 4, baseline, 12 draws as sampled and swapped, 24 items), accuracy per condition (strict and lenient),
answers off the format, seconds per item for the whole process, output tokens per item and the first answer's latency
(from the command's start: loading, assembling the model file on a first run, and the first reply).

    python bench/demo_first_minutes.py [--models local/default,local/smollm2] [--seeds 0,1,2] [--limit N]
                                       [--answer-format free|constrained|members] [--preloaded] [--reask]

``--reask`` runs what the page's "Re-ask recorded failures" button runs instead: 12 of the shipped recording's failed
pairs (data/demo/recording.yaml restricted to them with ``only_samples``, chosen with the seed). Printed for both: the
first answer and the first failure (the first wrong answer: a failure card on the page) after the run's start.

Each (model, seed) runs ``python -m core run`` in a child process on a fresh temporary database (no cache), so the
seconds per item are those of the whole process, model loading included. ``--preloaded`` loads the model in the child
before the run starts, as Home does while it renders, so the first answer counts from the run's start (the click)
with the model in memory; the seconds per item stay those of the whole child process. Also printed: the seconds the
model spent in its calls per item (the rest is the process: imports, loading, the runner). The 1-minute load
average is printed before and after: on 2 cores, other work running changes the times a lot.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GRID = ROOT / "data" / "configs" / "deceptive_demo.yaml"


PRELOAD = ("import runpy, sys; from core.models import get_model; get_model(sys.argv[1]).prepare(); "
           "sys.argv = ['core', *sys.argv[2:]]; runpy.run_module('core', run_name='__main__')")


def one(model: str, seed: int, limit: int | None, answer_format: str, preloaded: bool = False,
        reask: bool = False) -> dict:
    import yaml

    from core import store
    from core.analysis import presenter as P
    from core.analysis.presenter import condition_stats

    with tempfile.TemporaryDirectory() as tmp:
        if reask:
            cfg = P.reask_doc(P.recording_summary(P.recording_path())["failed_samples"], seed)
        else:
            cfg = yaml.safe_load(GRID.read_text())
            cfg["seed"] = seed
        path = Path(tmp) / "grid.yaml"
        path.write_text(json.dumps(cfg))
        db = Path(tmp) / "s.duckdb"
        args = ["run", "--config", str(path), "--model", model, "--db", str(db), "--no-progress",
                "--answer-format", answer_format]
        cmd = [sys.executable, "-c", PRELOAD, model, *args] if preloaded else [sys.executable, "-m", "core", *args]
        if limit:
            cmd += ["--limit", str(limit)]
        started = time.time()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.time() - started
        if done.returncode != 0:
            return {"model": model, "seed": seed, "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
        with store.connect(db) as con:
            run_id = con.execute("SELECT run_id FROM runs").fetchall()[0][0]
            strict = condition_stats(con, run_id, "strict")
            lenient = condition_stats(con, run_id, "lenient")
            n, tokens, first, model_ms = con.execute(
                "SELECT count(*), avg(c.tokens_out), min(r.at), sum(c.latency_ms) FROM results r "
                "JOIN calls c USING (cache_key) "
                "WHERE r.run_id = ?", [run_id]).fetchall()[0]
            created = con.execute("SELECT created_at FROM runs").fetchall()[0][0]
            rows = P.pair_rows(con, run_id, "strict")
            wrong = rows.loc[~rows["correct"].astype(bool), "at"] if len(rows) else rows.get("at")
            first_wrong = wrong.min() if wrong is not None and len(wrong) else None
    first_latency = (first - created).total_seconds() if first is not None and created is not None else None
    failure_latency = ((first_wrong - created).total_seconds()
                       if first_wrong is not None and created is not None else None)
    return {"model": model, "seed": seed, "items": int(n), "s_per_item": wall / max(1, n),
            "tokens_per_item": float(tokens or 0), "first_answer_s": first_latency, "wall_s": wall,
            "first_failure_s": failure_latency,
            "model_s_per_item": (model_ms or 0) / 1000 / max(1, n),
            "strict": {r.condition: (r.correct, r.n) for r in strict.itertuples()},
            "lenient": {r.condition: (r.correct, r.n) for r in lenient.itertuples()},
            "off_format": int(strict["n"].sum() - strict["followed"].sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="local/default,local/smollm2")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--limit", type=int, default=None, help="items spread over the grid (default: all 48)")
    ap.add_argument("--answer-format", default="free", choices=("free", "constrained", "members"))
    ap.add_argument("--preloaded", action="store_true", help="load the model before the run starts (as Home does)")
    ap.add_argument("--reask", action="store_true", help="re-ask 12 of the recording's failed pairs instead")
    a = ap.parse_args()
    what = "re-ask of the recording's failed pairs" if a.reask else f"grid {GRID.name}"
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; {what}", flush=True)
    for model in [m.strip() for m in a.models.split(",") if m.strip()]:
        for seed in [int(s) for s in a.seeds.split(",") if s.strip()]:
            r = one(model, seed, a.limit, a.answer_format, a.preloaded, a.reask)
            if "error" in r:
                print(f"{model} seed {seed}: error: {r['error']}", flush=True)
                continue
            cond = " · ".join(f"{c.replace('_', ' ')} {k}/{n}" for c, (k, n) in r["strict"].items() if n)
            print(f"{model:15s} seed {seed}: strict {cond} | off-format {r['off_format']}/{r['items']} | "
                  f"{r['s_per_item']:.2f} s/item (whole process, {r['wall_s']:.0f} s; in the model "
                  f"{r['model_s_per_item']:.2f}) | "
                  f"{r['tokens_per_item']:.1f} tokens/item | first answer after {r['first_answer_s'] or 0:.1f} s, "
                  + (f"first failure after {r['first_failure_s']:.1f} s" if r["first_failure_s"] is not None
                     else "no failure")
                  + (" (from the run's start, model preloaded)" if a.preloaded else ""),
                  flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""The swap effect of a model per set operation (the measurement behind the demo's grid): the recording's grid
(data/demo/recording.yaml: deceptive sets, |A| = |B| = 4, baseline prompt, formal phrasing, as sampled and swapped,
strict scoring) with each operation in turn, on the same draws. For each operation and size it prints the complete
pairs, accuracy as sampled and swapped, the discordant pairs (right only as sampled / right only swapped), the swap
effect with its exact paired interval and the exact McNemar p, and the replies off the answer format.

    python bench/demo_operations.py [--model local/default] [--ops intersection,union,...] [--samples 200]
                                    [--sizes 4] [--db PATH] [--report-only]

Runs go through ``python -m core run`` (child processes, niced) on ``--db`` (default $STUDIO_DB), so they are cached
and resumable: the intersection part is the recording itself when the database holds it, and an interrupted bench
continues where it stopped. ``--report-only`` makes no call and reports what the database holds — an operation with
fewer than ``--samples`` complete pairs is printed with the count it has.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GRID = ROOT / "data" / "demo" / "recording.yaml"
OPERATIONS = ("intersection", "union", "difference", "symmetric_difference")


def grid(op: str, size: int, samples: int) -> dict:
    import yaml

    doc = yaml.safe_load(GRID.read_text())
    doc.update(operations=[op], sizes=[size], samples=samples)
    return doc


def run(doc: dict, model: str, db: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grid.yaml"
        path.write_text(json.dumps(doc))
        cmd = ["nice", "-n", "5", sys.executable, "-m", "core", "run", "--config", str(path), "--model", model,
               "--db", db, "--no-progress"]
        subprocess.run(cmd, cwd=ROOT, check=False)


def measure(doc: dict, model: str, db: str) -> dict | None:
    """The paired tally of the stored run of ``doc`` × ``model`` in ``db`` (None when there is none)."""
    from core import store
    from core.analysis import presenter as P
    from core.config import run_spec

    cfg = run_spec(doc).config_dict()
    with store.connect(db) as con:
        runs = con.execute("SELECT run_id, config_json FROM runs WHERE model = ? ORDER BY created_at",
                           [model]).fetchall()
        for run_id, config_json in runs:
            try:
                stored = json.loads(config_json or "{}")
            except ValueError:
                continue
            same_pool = stored.get("word_pool", "reference") == cfg.get("word_pool", "reference")
            if same_pool and not stored.get("only_samples") and all(
                    stored.get(k) == v for k, v in cfg.items() if k in ("seed", "operations", "sizes", "members",
                                                                          "conditions", "phrasings", "approaches",
                                                                          "shots")):
                return P.paired_tally(P.pairs(P.pair_rows(con, run_id, "strict")))
    return None


def line(op: str, size: int, t: dict) -> str:
    from core.analysis import presenter as P

    return (f"| {op.replace('_', ' ')} | {size} | {t['n']} | {t['sampled']:.1f} % | {t['swapped']:.1f} % | "
            f"{t['only_sampled']} / {t['only_swapped']} | {P.effect_words(t)} | {t['p_value']:.2g} | "
            f"{t['off_format']} / {t['answers']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="local/default")
    ap.add_argument("--ops", default=",".join(OPERATIONS))
    ap.add_argument("--sizes", default="4")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--db", default=os.environ.get("STUDIO_DB") or str(ROOT / ".studio" / "studio.duckdb"))
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    ops = [o.strip() for o in a.ops.split(",") if o.strip()]
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    print(f"model {a.model}; {a.samples} draws per operation; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores; database {a.db}", flush=True)
    print("| operation | size | pairs | as sampled | swapped | discordant (sampled only / swapped only) | "
          "swapped − as sampled [exact 95 %] | McNemar p | off format |\n|---|---|---|---|---|---|---|---|---|",
          flush=True)
    for size in sizes:
        for op in ops:
            doc = grid(op, size, a.samples)
            if not a.report_only:
                run(doc, a.model, a.db)
            t = measure(doc, a.model, a.db)
            if t is None or not t["n"]:
                print(f"| {op.replace('_', ' ')} | {size} | 0 | not measured | | | | | |", flush=True)
                continue
            print(line(op, size, t), flush=True)


if __name__ == "__main__":
    main()

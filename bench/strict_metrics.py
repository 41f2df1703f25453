"""Time the precision / recall / Jaccard table (the findings' "metrics" finding) under each scoring on a stored store.

    python bench/strict_metrics.py --db STORE [--code TREE] [--repeat 3]

In a fresh process running ``TREE``'s core (default: this checkout; an older commit's tree for before/after figures
taken alternately on one machine): opens the store (a store of an older schema is migrated first, backup included:
that time is printed as "open"), then calls ``core.analysis.findings_metrics.metrics_table`` over every run of the
store, strict then lenient, ``repeat`` times each (nothing is memoised: every call computes), printing the first and
the best time, the rows of the table and the machine's load before. Work on a copy of a store you care about: a
newer checkout migrates the file it opens. Prints figures; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from core import store
from core.analysis.findings_metrics import metrics_table
from core.analysis.sql import VIEW

db, repeat = sys.argv[2], int(sys.argv[3])
t = time.perf_counter()
with store.connect(db) as con:
    opened = time.perf_counter() - t
    out = {"open_seconds": opened, "results": con.execute("SELECT count(*) FROM results").fetchone()[0],
           "schema": con.execute("SELECT max(version) FROM schema_version").fetchone()[0]}
    for scoring in ("strict", "lenient"):
        times, rows = [], None
        for _ in range(repeat):
            t = time.perf_counter()
            rows = metrics_table(con, None, {}, scoring, VIEW)
            times.append(time.perf_counter() - t)
        out[scoring] = {"first": times[0], "best": min(times), "rows": len(rows or []),
                        "n": sum(r["n"] for r in rows or [])}
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--code", default=str(ROOT), help="the checkout whose core computes the table")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    head = subprocess.run(["git", "-C", args.code, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    label = head.stdout.strip() or args.code
    load = os.getloadavg()
    done = subprocess.run([sys.executable, "-c", CHILD, args.code, args.db, str(args.repeat)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": args.code}, check=False)
    if done.returncode:
        print(f"{label}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return
    # DuckDB's progress bar (a long migration) may share stdout: the figures are the last JSON object
    got = json.loads(re.findall(r"\{.*\}", done.stdout)[-1])
    print(f"code {label}, {got['results']:,} results (schema {got['schema']}): open {got['open_seconds']:.2f} s "
          f"(load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    for scoring in ("strict", "lenient"):
        s = got[scoring]
        print(f"  metrics_table {scoring}: first {s['first']:.3f} s, best of {args.repeat} {s['best']:.3f} s "
              f"({s['rows']} rows, n = {s['n']:,})", flush=True)


if __name__ == "__main__":
    main()

"""Many processes cycling connect → insert → commit → close on one DuckDB file, with and without the store's OS lock.

    python bench/many_writers.py [--procs 6] [--cycles 150] [--rows 50] [--rounds 3]

Prints, per round, the rows kept out of those committed (and whether the file still opens) for raw DuckDB (retrying
on its own lock errors, as the store did before issue 17) and for ``core.store.connect`` (under ``<db>.lock``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RAW = """
import random, sys, time, duckdb
db, who, cycles, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for c in range(cycles):
    while True:
        try:
            con = duckdb.connect(db)
            break
        except duckdb.Error:
            time.sleep(random.uniform(0, 0.01))
    try:
        con.execute("BEGIN")
        con.execute("INSERT INTO t SELECT ?, ?, range FROM range(?)", [who, c, rows])
        con.execute("COMMIT")
    except duckdb.Error as exc:
        print("error", str(exc).splitlines()[0][:120])
    finally:
        con.close()
"""

LOCKED = """
import sys
from core import store
db, who, cycles, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for c in range(cycles):
    with store.connect(db) as con, store.transaction(con):
        con.execute("INSERT INTO t SELECT ?, ?, range FROM range(?)", [who, c, rows])
"""


def one_round(code: str, procs: int, cycles: int, rows: int) -> tuple[str, float]:
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "w.duckdb")
        con = duckdb.connect(db)
        con.execute("CREATE TABLE t (who INTEGER, cycle INTEGER, n BIGINT)")
        con.close()
        start = time.perf_counter()
        ps = [subprocess.Popen([sys.executable, "-c", code, db, str(w), str(cycles), str(rows)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(procs)]
        for p in ps:
            p.communicate()
        took = time.perf_counter() - start
        try:
            con = duckdb.connect(db)
            kept = con.execute("SELECT count(*) FROM t").fetchall()[0][0]
            con.close()
            return f"{kept:,} of {procs * cycles * rows:,} rows kept", took
        except duckdb.Error as exc:
            return f"file does not open: {str(exc).splitlines()[0][:100]}", took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=6)
    ap.add_argument("--cycles", type=int, default=150)
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    for name, code in (("raw DuckDB", RAW), ("store.connect (OS lock)", LOCKED)):
        for r in range(a.rounds):
            what, took = one_round(code, a.procs, a.cycles, a.rows)
            print(f"{name:24s} round {r + 1}: {what} ({took:.1f} s)", flush=True)


if __name__ == "__main__":
    main()

"""Time the dashboard's aggregations on a store holding 1,000,000 synthetic set-operation results.

    python bench/analysis_speed.py [--rows 1000000] [--db PATH] [--flat] [--rows-path] [--repeat 3]

Fills a DuckDB file (a temporary one unless --db) with synthetic results over the paper's factors (two models,
50 samples per configuration) — runs, items, results and one cached call per item through the real store schema
(core.store, with its ``v_results`` view), or a flat ``v_results`` table with --flat — then times, each a few times (best and median printed):
violin data (per-config accuracy by operation × model, with mean/std/min/max/N), the error-analysis table for a
slice (members × operation, |A| = 4), the robustness summary and a drill-down page; then the violin data and the
error table again under strict scoring (the reference's verdict columns, its definition of unparsed answers).
Each view is timed on the store's per-configuration aggregates (core/store/aggregates.py) and, with --rows-path,
on the rows as well (the same numbers; tests/analysis/test_aggregates_equal_rows.py). Then `python -m core report
errors / table / findings` are called in one process three times each: the first call reads the aggregates, the
repeats are answered by the in-process memo (core/analysis/memo.py).
Targets: first ``report findings`` (nothing memoised) ≤ 3 s at 1M and ≤ 10 s at 10M results, repeated reports
and page views at 10M ≤ 0.5 s, peak memory of the 10M findings report printed (goal ≤ 2 GB), on 2 idle cores.

    python bench/analysis_speed.py --db STORE --first [--code TREE] [--repeat 3]

``--first`` times only the first findings report: ``core.analysis.findings.report`` over the store's synthetic runs
in a fresh process each time (no memo, no stored result), printing its wall time, its CPU time (user + system over
all threads: on a shared, loaded machine the better figure of the work done), the process's peak RSS and the
machine's load (``os.getloadavg``) before each; ``--code TREE`` runs another checkout's core (an older commit) on
the same store, for before/after figures taken alternately on one machine. Prints figures; never asserts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb  # noqa: E402

from core import analysis  # noqa: E402
from tests.support.synthetic import fill_synthetic  # noqa: E402


def timed(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times), statistics.median(times)


def open_store(path: str, flat: bool):
    """(connection, flat?) — the real store schema (core.store) unless --flat."""
    if flat:
        return duckdb.connect(path), True
    from core import store

    with store.connect(path):  # creates the schema and the v_results view, then closes
        pass
    return duckdb.connect(path), False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--db", default=None, help="this store (filled on first use, reused after)")
    ap.add_argument("--flat", action="store_true", help="flat v_results table instead of the store schema")
    ap.add_argument("--repeat", type=int, default=3, help="timings per view (best printed)")
    ap.add_argument("--rows-path", action="store_true", help="also time each view on the rows (no aggregates)")
    ap.add_argument("--first", action="store_true",
                    help="only the first findings report, in fresh processes (wall time, peak RSS)")
    ap.add_argument("--code", default=str(Path(__file__).resolve().parent.parent),
                    help="with --first: the checkout whose core computes the report (default: this one)")
    args = ap.parse_args()
    if args.first:
        if not args.db:
            ap.error("--first needs --db (a store filled before)")
        first_findings(args.db, args.code, args.repeat)
        return
    tmp = None
    path = args.db
    if path is None:
        tmp = tempfile.mkdtemp(prefix="studio-bench-")
        path = os.path.join(tmp, "bench.duckdb")
    con, flat = open_store(path, args.flat)
    t = time.perf_counter()
    # a store filled before (this bench's or bench/page_loads.py's --db) is reused as it is: its synthetic runs
    reuse = [] if flat else [r[0] for r in con.execute(
        "SELECT run_id FROM runs WHERE run_id LIKE 'synth%' ORDER BY run_id").fetchall()]
    run_ids = reuse or fill_synthetic(con, args.rows, table="v_results" if flat else None)
    fill_s = time.perf_counter() - t
    if reuse:
        print(f"reusing the synthetic runs already in {path}: {', '.join(reuse)} (--rows ignored)")
    n = con.execute("SELECT count(*) FROM v_results").fetchone()[0]
    print(f"store: {path} ({'flat table' if flat else 'store schema + v_results view'}), {n:,} result rows, "
          f"filled in {fill_s:.1f} s, duckdb {duckdb.__version__}, cpus {os.cpu_count()}")

    from core.analysis import aggregated

    slice_ = {"size_a": [4]}
    views = [
        ("violin data (operation x model)", lambda: analysis.violin_data(con, run_ids, "operation", "model")),
        ("error table (members x operation, slice |A|=4)",
         lambda: analysis.error_table(con, run_ids, ["members", "operation"], slice_)),
        ("error table (operation, all items)", lambda: analysis.error_table(con, run_ids, ["operation"], None)),
        ("robustness summary", lambda: analysis.robustness(con, run_ids)),
        ("factor columns", lambda: analysis.factor_columns(con, run_ids)),
        ("run overview", lambda: analysis.run_overview(con, run_ids)),
        ("drill-down (200 wrong intersection items)",
         lambda: analysis.drilldown(con, run_ids, {"operation": ["intersection"]}, correct=False, limit=200)),
        ("strict: violin data", lambda: analysis.violin_data(con, run_ids, "operation", "model", scoring="strict")),
        ("strict: reference error table (operation, reference's unparsed rows)",
         lambda: analysis.reference_error_table(con, run_ids, ["operation"], None)),
        ("findings report (15 findings, strict)", lambda: analysis.findings_report(con, run_ids)),
        ("violin view (Results: statistics and shapes, no points)",
         lambda: analysis.violin_view(con, run_ids, "operation", "model")),
        ("what a page asks first (selection facts, one connection)",
         lambda: analysis.selection_facts(con, run_ids)),
        ("compare the runs (aligned on shared factors, Compare's points)",
         lambda: analysis.compare_runs(con, [analysis.Series(r, (r,)) for r in run_ids], factors=False)),
    ]
    if len(run_ids) >= 2:   # the pairing of every shared item (5 million at 10M rows): DuckDB's counts
        views.append(("paired summary of the first two runs (McNemar + agreement map)",
                      lambda: analysis.paired_summary(con, run_ids[0], run_ids[1])))
    print(f"\n{'view':<72} {'aggregates':>12} {'rows':>10}")
    for name, fn in views:
        _, best, med = timed(fn, repeat=args.repeat)
        if args.rows_path:
            with aggregated.rows_only():
                _, rbest, _ = timed(fn, repeat=1)
            rows_s = f"{rbest * 1000:,.0f} ms"
        else:
            rows_s = "-"
        print(f"{name:<72} {best * 1000:>9,.0f} ms {rows_s:>10}")
    summ = analysis.violin_data(con, run_ids, "operation", "model")[1]
    con.close()

    if flat:
        return
    # the report commands as a user calls them, in one process: first call, then the same call again (memo)
    from core.cli import main as cli

    out = os.path.join(tmp or os.path.dirname(path), "bench-out")
    ids = ",".join(run_ids)
    commands = [
        ("report errors --by members,operation", ["report", "errors", "--db", path, "--run", ids,
                                                  "--by", "members,operation", "--out", out + ".csv"]),
        ("report table --by operation,members", ["report", "table", "--db", path, "--run", ids,
                                                 "--by", "operation,members", "--out", out + "-t.csv"]),
        ("report findings", ["report", "findings", "--db", path, "--run", ids, "--out", out + ".json"]),
    ]
    print(f"\n{'command (in-process)':<50} {'first':>10} {'again':>10} {'again':>10}")
    import contextlib
    import io

    for name, argv in commands:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(argv)
            times.append(time.perf_counter() - t)
            if code:
                print(f"{name}: exit {code}")
        print(f"{name:<50} " + " ".join(f"{x * 1000:>7,.0f} ms" for x in times))
    print("\nviolin summary:")
    print(summ.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    if tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


FIRST = """
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
import duckdb
from core.analysis import findings
con = duckdb.connect(sys.argv[2], read_only=True)
con.execute("SET enable_progress_bar = false")   # its bar shares stdout with the figures
ids = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE run_id LIKE 'synth%' ORDER BY run_id").fetchall()]
n = con.execute("SELECT count(*) FROM results").fetchone()[0]
before = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
rep = findings.report(con, ids)
wall = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_SELF)
rss = usage.ru_maxrss / 1024
cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
print(json.dumps({"results": n, "seconds": wall, "peak_rss_mb": rss, "cpu_seconds": cpu,
                  "contrasts": sum(len(f.get("contrasts", [])) for f in rep["findings"])}))
"""


def first_findings(db: str, code: str, repeat: int) -> None:
    """The first findings report (nothing memoised) in ``repeat`` fresh processes running ``code``'s core."""
    import json
    import subprocess

    head = subprocess.run(["git", "-C", code, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    label = head.stdout.strip() or code
    for _ in range(repeat):
        load = os.getloadavg()
        done = subprocess.run([sys.executable, "-c", FIRST, code, db], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": code}, check=False)
        if done.returncode:
            print(f"{label}: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"first findings report, code {label}: {got['results']:,} results, {got['seconds']:.1f} s wall, "
              f"{got.get('cpu_seconds', float('nan')):.1f} s CPU (user + system, all threads), "
              f"peak RSS {got['peak_rss_mb']:,.0f} MB, {got['contrasts']} contrasts "
              f"(load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})", flush=True)


if __name__ == "__main__":
    main()

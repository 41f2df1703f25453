"""Time the dashboard's aggregations on a store holding 1,000,000 synthetic set-operation results.

    python bench/analysis_speed.py [--rows 1000000] [--db PATH] [--flat]

Fills a DuckDB file (a temporary one unless --db) with synthetic results over the paper's factors (two models,
50 samples per configuration) — runs, items, results and one cached call per item through the real store schema
(core.store, with its ``v_results`` view), or a flat ``v_results`` table with --flat — then times, each a few times (best and median printed):
violin data (per-config accuracy by operation × model, with mean/std/min/max/N), the error-analysis table for a
slice (members × operation, |A| = 4), the robustness summary and a drill-down page; then the violin data and the
error table again under strict scoring (the reference's verdict columns, its definition of unparsed answers).
Target: < 1 s for the violin data and the error table. Prints figures; never asserts.
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
    ap.add_argument("--db", default=None)
    ap.add_argument("--flat", action="store_true", help="flat v_results table instead of the store schema")
    args = ap.parse_args()
    tmp = None
    path = args.db
    if path is None:
        tmp = tempfile.mkdtemp(prefix="studio-bench-")
        path = os.path.join(tmp, "bench.duckdb")
    con, flat = open_store(path, args.flat)
    t = time.perf_counter()
    run_ids = fill_synthetic(con, args.rows, table="v_results" if flat else None)
    fill_s = time.perf_counter() - t
    n = con.execute("SELECT count(*) FROM v_results").fetchone()[0]
    print(f"store: {path} ({'flat table' if flat else 'store schema + v_results view'}), {n:,} result rows, "
          f"filled in {fill_s:.1f} s, duckdb {duckdb.__version__}, cpus {os.cpu_count()}")

    (pts, summ), best, med = timed(lambda: analysis.violin_data(con, run_ids, "operation", "model"))
    print(f"violin data (operation x model, {len(pts):,} configs, {len(summ)} groups): "
          f"best {best * 1000:.0f} ms, median {med * 1000:.0f} ms")
    slice_ = {"size_a": [4]}
    tab, best, med = timed(lambda: analysis.error_table(con, run_ids, ["members", "operation"], slice_))
    print(f"error table (members x operation, slice |A|=4, {int(tab['n'].sum()):,} items, {len(tab)} groups): "
          f"best {best * 1000:.0f} ms, median {med * 1000:.0f} ms")
    tab, best, med = timed(lambda: analysis.error_table(con, run_ids, ["operation"], None))
    print(f"error table (operation, all {int(tab['n'].sum()):,} items): best {best * 1000:.0f} ms, "
          f"median {med * 1000:.0f} ms")
    (rob, per_model), best, med = timed(lambda: analysis.robustness(con, run_ids))
    print(f"robustness summary ({len(rob)} factor rows, {len(per_model)} models): best {best * 1000:.0f} ms, "
          f"median {med * 1000:.0f} ms")
    dd, best, med = timed(lambda: analysis.drilldown(con, run_ids, {"operation": ["intersection"]}, correct=False,
                                                     limit=200))
    print(f"drill-down (200 wrong intersection items): best {best * 1000:.0f} ms, median {med * 1000:.0f} ms")
    (pts, summ_s), best, med = timed(lambda: analysis.violin_data(con, run_ids, "operation", "model",
                                                                  scoring="strict"))
    print(f"strict: violin data (operation x model, {len(pts):,} configs): best {best * 1000:.0f} ms, "
          f"median {med * 1000:.0f} ms")
    tab, best, med = timed(lambda: analysis.error_table(con, run_ids, ["members", "operation"], slice_,
                                                        scoring="strict", unparsed="reference"))
    print(f"strict: error table (members x operation, slice |A|=4, reference's unparsed rows, {len(tab)} groups): "
          f"best {best * 1000:.0f} ms, median {med * 1000:.0f} ms")
    tab, best, med = timed(lambda: analysis.reference_error_table(con, run_ids, ["operation"], None))
    print(f"strict: reference-named error table (operation, all items): best {best * 1000:.0f} ms, "
          f"median {med * 1000:.0f} ms")
    print("\nviolin summary:")
    print(summ.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    con.close()
    if tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

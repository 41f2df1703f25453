"""Time the schema-2 migration of a version-1 store: strict verdicts re-computed from the stored responses.

    python bench/strict_backfill.py [--rows 200000]

Writes a version-1 file (migration 1's DDL, as version-1 code ran it) holding one set-operation run of ``--rows``
answered items whose responses cycle through a few realistic shapes (tagged baseline answers, chain of thought with
an answer block, untagged answers, two answer blocks), then opens it with the current code and prints how long the
migration took and the re-scored rows per second. Prints figures; never asserts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from core import store
from core.store import schema
from tests.support import version_1_store

SHAPES = [
    "<answer>{12, 45, 7}</answer>",
    ("<thinking>\nA = {12, 45} and B = {7, 45}. The union keeps every member of either set, so 12, 45 and 7.\n"
     "Let me check each member once more before answering.\n</thinking>\n<answer>{7, 12, 45}</answer>"),
    "The union of the two sets is {7, 12, 45}.",
    "<answer>{7, 12}</answer> wait, I missed one: <answer>{7, 12, 45}</answer>",
]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="studio-backfill-")
    path = os.path.join(tmp, "v1.duckdb")
    con = version_1_store(path)
    con.execute("INSERT INTO runs (run_id, run_key, task, config_json, model, status) "
                "VALUES ('r', 'r', 'setops', '{}', 'm', 'done')")
    shapes = "[" + ", ".join("'" + s.replace("'", "''") + "'" for s in SHAPES) + "]"
    con.execute(f"""INSERT INTO items (run_id, idx, config_id, sample, seed, prompt, truth, members, set_a, set_b)
                    SELECT 'r', range, 'c', range, 0, 'p', '[7, 12, 45]', 'numbers', '[12, 45]', '[7, 45]'
                    FROM range({args.rows})""")
    con.execute(f"""INSERT INTO calls (cache_key, model, response, draw)
                    SELECT 'k' || range, 'm', list_extract({shapes}, 1 + range % {len(SHAPES)}), 0
                    FROM range({args.rows})""")
    con.execute(f"""INSERT INTO results (run_id, idx, cache_key, correct, followed)
                    SELECT 'r', range, 'k' || range, true, true FROM range({args.rows})""")
    con.close()
    t = time.perf_counter()
    with store.connect(path) as con:
        secs = time.perf_counter() - t
        right, judged = con.execute("SELECT count(*) FILTER (WHERE correct_strict), count(correct_strict) "
                                    "FROM results").fetchone()
    print(f"migrated a version-1 store of {args.rows:,} answered items to version {schema.SCHEMA_VERSION} in "
          f"{secs:.2f} s ({args.rows / secs:,.0f} rows/s re-scored from stored responses); strict: {judged:,} judged, "
          f"{right:,} right (lenient: all right)")
    print(f"({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} — a busy machine slows this)")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

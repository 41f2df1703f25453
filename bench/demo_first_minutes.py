"""The no-key demo, measured: how long the embedded model's replies are, and how long a small deceptive demo takes.

    python bench/demo_first_minutes.py [--items 24] [--demo-items 6] [--answer-format free|constrained]
                                       [--no-answer-cap] [--no-stop]

1. Baseline items of small sets: a grid of the four operations on |A| = |B| = 2 (two-digit numbers and words,
   formal phrasing, baseline approach), ``--items`` of them spread over the grid, run on local/smollm2 with fresh
   draws. Prints the mean / max output tokens per reply, how the replies ended (stop sequence or end of text vs
   the reply cap), the share of replies that followed the answer format and the accuracy.
2. The deceptive page's demo: the Deceptive sets page's default run (|A| = |B| = 4, the three conditions,
   intersection, baseline) limited to ``--demo-items`` items spread over the conditions. Prints the wall time
   from start to the last answer, and the items per condition.

Every run goes to a temporary DuckDB file (fresh draws: no cache). What else was running on the machine matters a
lot on 2 cores: the script prints the 1-minute load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SMALL = {"task": "setops", "seed": 11, "samples": 6, "operations": ["union", "intersection", "difference",
                                                                     "symmetric_difference"],
         "sizes": [2], "members": ["numbers", "words"], "lengths": [2], "phrasings": ["formal"],
         "approaches": ["baseline"], "shots": [0]}


def demo_config() -> dict:
    """The Deceptive sets page's default run (first hypernym pair the page would draw for seed 0)."""
    return {"task": "setops", "seed": 0, "samples": 3, "operations": ["intersection"], "sizes": [4],
            "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
            "approaches": ["baseline"], "shots": [0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=24)
    ap.add_argument("--demo-items", type=int, default=6)
    ap.add_argument("--answer-format", choices=["free", "constrained"], default="free")
    ap.add_argument("--no-answer-cap", action="store_true")
    ap.add_argument("--no-stop", action="store_true")
    args = ap.parse_args()

    from core import runner, store

    params = {"answer_format": args.answer_format, "answer_cap": not args.no_answer_cap}
    if args.no_stop:
        params["stop"] = []
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}")
    print(f"params: {json.dumps(params)}")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.duckdb")
        t0 = time.perf_counter()
        p = runner.run(SMALL, "local/smollm2", params=params, db_path=db, limit=args.items, fresh=True,
                       source="bench")
        wall = time.perf_counter() - t0
        with store.connect(db) as con:
            rows = con.execute(
                """SELECT c.tokens_out, c.finish_reason, r.followed, r.correct,
                          json_extract(c.params_json, '$.max_tokens')::INT AS cap
                   FROM results r JOIN calls c USING (cache_key) WHERE r.run_id = ?""", [p.run_id]).fetchall()
        toks = [r[0] for r in rows if r[0] is not None]
        capped = sum(1 for r in rows if r[1] == "length")
        print(f"1. baseline, |A| = |B| = 2: {len(rows)} replies in {wall:.1f} s; output tokens mean "
              f"{sum(toks) / max(1, len(toks)):.1f}, max {max(toks, default=0)}; reply caps "
              f"{min(r[4] for r in rows)}–{max(r[4] for r in rows)} tokens; ended by the cap: {capped}, by a stop "
              f"sequence or end of text: {len(rows) - capped}; followed the format: "
              f"{sum(1 for r in rows if r[2])}/{len(rows)}; correct: {sum(1 for r in rows if r[3])}/{len(rows)}")

        t0 = time.perf_counter()
        p = runner.run(demo_config(), "local/smollm2", params=params, db_path=db, limit=args.demo_items,
                       fresh=True, source="bench")
        wall = time.perf_counter() - t0
        with store.connect(db) as con:
            per = con.execute("SELECT condition, count(*), sum(correct::INT), avg(c.tokens_out) FROM v_results v "
                              "LEFT JOIN calls c USING (cache_key) WHERE run_id = ? GROUP BY condition ORDER BY 1",
                              [p.run_id]).fetchall()
        print(f"2. deceptive demo: {p.done + p.failed} items ({p.status}) in {wall:.1f} s; per condition "
              + ", ".join(f"{c}: {n} items, {k or 0} correct, {t:.0f} tokens avg" for c, n, k, t in per))
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

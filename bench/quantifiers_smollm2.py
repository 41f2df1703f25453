"""Run the embedded model (local/smollm2) on a small sampled quantifier variation end to end and print its metrics.

    python bench/quantifiers_smollm2.py [--db PATH] [--config bench/quantifiers_smollm2.yaml] [--max-tokens 16]

Uses the real runner, store and llama.cpp model; re-running is free (answers are cached in the DB).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from core import runner, store  # noqa: E402
from core.tasks.quantifiers import metrics as QM  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="/tmp/quantifiers_smollm2.duckdb")
    ap.add_argument("--config", default=str(ROOT / "bench" / "quantifiers_smollm2.yaml"))
    ap.add_argument("--model", default="local/smollm2")
    ap.add_argument("--max-tokens", type=int, default=16)
    args = ap.parse_args()
    config = yaml.safe_load(Path(args.config).read_text())
    started = time.time()
    p = runner.run(config, args.model, params={"max_tokens": args.max_tokens}, db_path=args.db)
    print(f"run {p.run_id}: {p.status}, {p.done}/{p.total} answered ({p.cached} cached, {p.failed} failed) "
          f"in {time.time() - started:.0f} s")
    cols = ["n", "answered", "unparsed", "accuracy", "accuracy_gqg", "precision", "recall", "f1", "pred_true",
            "label_true"]
    with store.connect(args.db) as con:
        for by in (None, "quantifier", "noun_group", "predicate"):
            df = QM.quantifier_metrics(con, [p.run_id], by)
            print(f"\n== by {by or 'overall'} ==")
            print(df[([by] if by else []) + cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

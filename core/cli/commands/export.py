"""`python -m core export --db PATH --run RUN_ID|latest --out FILE.csv|.parquet|.jsonl` — one row per item."""

from __future__ import annotations

import argparse

from core.cli.commands.options import add_db_option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help="export a run (one row per item) as CSV, Parquet or JSONL",
        description="Write every item of a run with its factors, prompt, raw response, parsed answer, truth, "
                    "correctness, metrics, latency, tokens, cost and error. The format follows the file extension.")
    add_db_option(p)
    p.add_argument("--run", default="latest", help="run id, or 'latest' (default)")
    p.add_argument("--out", required=True, help="output file: .csv, .parquet or .jsonl")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from core.store.exports import export_run

    run_id, n = export_run(args.db, args.run, args.out)
    print(f"exported {n} rows of run {run_id} to {args.out}")
    return 0

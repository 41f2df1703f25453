"""`python -m core import --db PATH FILE` — import our own exports or SetLexSem reference result CSVs as a run."""

from __future__ import annotations

import argparse
import sys

from core.cli.commands.options import add_db_option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "import", help="import a result file (our export, or a SetLexSem reference CSV) as a run",
        description="Reads CSV / Parquet / JSONL exports of this tool, and result CSVs of the SetLexSem reference "
                    "code (op_name, prompt, ground_truth, result_obj, llm_vs_gt, set_A, set_B …; hyperparameters "
                    "from paths like numbers/union/baseline/formal_language_K-0_N-None_MA-4_MB-4_L-2_S-292.csv). "
                    "Every row is re-scored from its response or kept as the file's claim only; a file of several "
                    "models becomes one run per model; the same claims are stored once. An unreadable file changes "
                    "nothing.")
    add_db_option(p)
    p.add_argument("--name", default=None, help="a label for the imported run")
    p.add_argument("file", help="the file to import")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from core.store import get_run, writing
    from core.store.io import import_file
    from core.store.rescore import run_summary

    with writing(args.db, f"an import of {args.file}"):   # restore waits; a swap under it stops it (store.writers)
        runs = import_file(args.db, args.file, name=args.name)
    several = len(runs) > 1
    if several:
        print(f"{args.file} holds the answers of {len(runs)} models: one run each")
    for run in runs:
        who = f" ({run.model})" if several else ""
        if run.rows == 0:
            print(f"{args.file}{who} holds results already stored as run {run.run_id}: nothing imported")
        else:
            print(f"imported {run.rows} rows from {args.file}{who} as run {run.run_id}")
        line = run_summary((get_run(args.db, run.run_id) or {}).get("run_json"))
        if line:
            where = f"{run.run_id} " if several else ""
            print(f"note: {where}uploaded (a file's claims): {line}", file=sys.stderr)
    return 0

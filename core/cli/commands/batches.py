"""`python -m core batches [--run R] [--refresh] [--cancel ID]` — the provider batches of the runs: list, ask the
provider for their state, cancel one."""

from __future__ import annotations

import argparse

from core.cli.commands.options import add_db_option

COLUMNS = ["batch_id", "provider", "provider_batch_id", "run_id", "phase", "status", "n_requests", "n_succeeded",
           "n_errored", "n_expired", "n_cancelled", "age", "cost_usd"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "batches", help="list provider batches (provider, id, state, counts, age, cost); refresh or cancel one",
        description="Every batch a --batch run submitted, newest first: our id and the provider's, the run, its "
                    "phase (submitting, open, collected, lost) and the provider's status, request counts, age and "
                    "cost. --refresh asks the provider how the open batches of --run stand (no results are read: "
                    "run the same `run --batch` command to collect). --cancel asks the provider to cancel a batch; "
                    "requests it already ran are kept.")
    add_db_option(p)
    p.add_argument("--run", default=None, help="only this run's batches ('latest' for the newest run)")
    p.add_argument("--refresh", action="store_true", help="ask the provider for the state of --run's open batches")
    p.add_argument("--cancel", default=None, metavar="ID", help="cancel this batch (our id or the provider's)")
    p.set_defaults(func=main)


def _age(td) -> str:
    try:
        seconds = int(td.total_seconds())
    except (AttributeError, ValueError):
        return "-"
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds / 3600:.1f} h"


def main(args: argparse.Namespace) -> int:
    from core import store
    from core.errors import UserError
    from core.runner.batch_collect import cancel_batch, list_batches, refresh_batches

    run_id = None
    if args.run:
        with store.connect(args.db) as con:
            run_id = store.resolve_run_id(con, args.run)
    if args.cancel:
        row = cancel_batch(args.db, args.cancel)
        print(f"asked {row['provider']} to cancel batch {row['batch_id']} ({row['provider_batch_id']}): now "
              f"{row['status']}; requests it already ran are kept and collected by the run's next attach")
        return 0
    if args.refresh:
        if run_id is None:
            raise UserError("--refresh needs --run RUN (the run whose open batches to ask about)")
        rows = refresh_batches(args.db, run_id)
        print(f"refreshed {len(rows)} open batch(es) of run {run_id}")
    df = list_batches(args.db, run_id)
    if df.empty:
        print("no batches" + (f" for run {run_id}" if run_id else "") + " (runs submit them with: python -m core "
              "run … --batch)")
        return 0
    table = df[COLUMNS].copy()
    table["age"] = table["age"].map(_age)
    table["cost_usd"] = table["cost_usd"].map(lambda v: "-" if v != v or v is None else f"${v:.4f}")
    print(table.to_string(index=False, na_rep="-"))
    return 0

"""`python -m core restore BACKUP [--db PATH]` — replace the database by a backup folder (or a .duckdb copy)."""

from __future__ import annotations

import argparse

from core.cli.commands.options import add_db_option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "restore", help="replace the database by a backup (a folder made by backup, or a .duckdb file)",
        description="Build a new database from the backup beside the current one, bring it to the current schema, "
                    "then give the current file a second name (<db>.replaced-<time>, never deleted) and rename "
                    "the new one over it: a valid database is at the path at every instant. Exclusive: refused "
                    "while a run of another process is live on the database.")
    add_db_option(p)
    p.add_argument("backup", help="a backup folder (python -m core backup --list shows them) or a .duckdb file")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from core.store import resolve_db_path
    from core.store.backup import restore

    moved, n_runs = restore(args.db, args.backup)
    kept = f"; the previous file is kept as {moved}" if moved else ""
    print(f"restored {n_runs} run(s) into {resolve_db_path(args.db)} from {args.backup}{kept}")
    return 0

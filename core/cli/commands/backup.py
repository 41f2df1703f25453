"""`python -m core backup [--db PATH] [--out DIR]` — export the whole database into a folder (DuckDB EXPORT
DATABASE); `python -m core restore DIR` brings it back."""

from __future__ import annotations

import argparse

from core.cli.commands.options import add_db_option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "backup", help="copy the database into a backup folder (restore it with: python -m core restore DIR)",
        description="Export every table of the database (runs, items, calls, results, claims, caches) into a new "
                    "folder, by default <db>.backups/<UTC time>/, while holding the file so nothing changes "
                    "meanwhile. Journals of killed runs are merged first. Schema migrations take such a backup "
                    "by themselves before they change a file that holds data.")
    add_db_option(p)
    p.add_argument("--out", default=None, help="the backup folder to create (default: <db>.backups/<UTC time>)")
    p.add_argument("--list", action="store_true", help="list the backups next to the database and exit")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from core.store.backup import backup, list_backups

    if args.list:
        for folder in list_backups(args.db):
            print(folder)
        return 0
    folder, n_runs = backup(args.db, args.out)
    print(f"backed up {n_runs} run(s) to {folder} (restore with: python -m core restore {folder})")
    return 0

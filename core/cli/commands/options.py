"""Options several commands share."""

from __future__ import annotations

DB_HELP = "DuckDB file (default: $STUDIO_DB or .studio/studio.duckdb)"


def add_db_option(parser) -> None:
    """``--db PATH``: the store every command reads or writes (None: core.store's default path)."""
    parser.add_argument("--db", default=None, help=DB_HELP)

"""Results of slow analyses kept in the store for the next process (table ``analysis_cache``: key, JSON value,
when stored; created with the aggregates, core/store/aggregates.py). The analysis layer decides what is kept and
under which key (core/analysis/memo.py); this module is the only code that reads or writes the table.

Every function here is best effort: a store that cannot answer (read-only, busy, an older layout without the
table) reads as "nothing kept" and keeps nothing; the reason is logged.
"""

from __future__ import annotations

import logging

import duckdb

log = logging.getLogger(__name__)


def get(con, key: str) -> str | None:
    """The JSON text kept under ``key``, or None."""
    try:
        row = con.execute("SELECT value FROM analysis_cache WHERE key = ?", [key]).fetchall()
    except duckdb.Error as exc:
        log.debug("analysis cache not readable (%s)", type(exc).__name__)
        return None
    return row[0][0] if row else None


def put(con, key: str, text: str, *, group: str, keep: int) -> bool:
    """Keep ``text`` under ``key``; of the keys starting with ``group`` only the newest ``keep`` stay (keys without a
    group, an older layout's, go). Returns whether it was kept."""
    try:
        con.execute("INSERT OR REPLACE INTO analysis_cache VALUES (?, ?, now())", [key, text])
        con.execute("DELETE FROM analysis_cache WHERE NOT contains(key, ':')")
        con.execute("DELETE FROM analysis_cache WHERE starts_with(key, ?) AND key NOT IN (SELECT key FROM "
                    "analysis_cache WHERE starts_with(key, ?) ORDER BY stored_at DESC LIMIT ?)",
                    [group, group, keep])
    except duckdb.Error as exc:
        log.debug("analysis result not kept (%s)", type(exc).__name__)
        return False
    return True


def clear(con) -> None:
    """Forget every result kept (the next analysis computes afresh)."""
    con.execute("DELETE FROM analysis_cache")

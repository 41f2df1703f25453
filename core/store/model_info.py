"""What a provider says about a model, kept so it is asked once (table ``model_capabilities``, schema version 9):
one row per (model spec, endpoint) with the description as JSON (core/models/capabilities.py: how the model takes
thinking), where it came from and when. The endpoint is a digest of the base URL ('' for the provider's own), never
the URL itself. Best effort: a store that cannot answer reads as "nothing kept" and keeps nothing; the reason is
logged."""

from __future__ import annotations

import logging

import duckdb

log = logging.getLogger(__name__)


def get(con, model: str, endpoint: str) -> str | None:
    """The description kept for (``model``, ``endpoint``), or None."""
    try:
        rows = con.execute("SELECT info_json FROM model_capabilities WHERE model = ? AND endpoint = ?",
                           [model, endpoint]).fetchall()
    except duckdb.Error as exc:
        log.debug("model descriptions not readable (%s)", type(exc).__name__)
        return None
    return rows[0][0] if rows else None


def put(con, model: str, endpoint: str, info_json: str, source: str) -> bool:
    """Keep ``info_json`` for (``model``, ``endpoint``); returns whether it was kept."""
    try:
        con.execute("INSERT OR REPLACE INTO model_capabilities VALUES (?, ?, ?, ?, now())",
                    [model, endpoint, info_json, source])
    except duckdb.Error as exc:
        log.debug("model description not kept (%s)", type(exc).__name__)
        return False
    return True

"""A database file as version-1 code wrote it (schema version 1 only), for the tests of migrations."""

from __future__ import annotations

import duckdb


def write_v1_database(path, runs=(("r1", "done", None),)) -> None:
    """Create ``path`` at schema version 1 holding ``runs`` as (run_id, status, run_json)."""
    from core.store.schema import MIGRATIONS

    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE schema_version (version BIGINT, applied_at TIMESTAMP DEFAULT now())")
        for sql in dict(MIGRATIONS)[1]:
            con.execute(sql)
        con.execute("INSERT INTO schema_version (version) VALUES (1)")
        for run_id, status, run_json in runs:
            con.execute("INSERT INTO runs (run_id, status, run_json) VALUES (?, ?, ?)", [run_id, status, run_json])
    finally:
        con.close()

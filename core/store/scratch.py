"""A query's result kept for a few statements on one connection, without writing the store.

    with temp_table(con, sql, params) as name:   # SELECT * FROM {name} … ; dropped on the way out

DuckDB's TEMP tables live in the connection's own temporary catalogue: no other connection sees them, nothing of them
reaches the database file, and they go with the connection. An analysis that reads one intermediate result from
several statements (core/analysis/comparison.py: the per-draw means of two runs) computes it once here instead of
once per statement.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Iterator, Sequence


@contextmanager
def temp_table(con, sql: str, params: Sequence = ()) -> Iterator[str]:
    """The result of ``sql`` as a TEMP table of ``con``, named by the value yielded, dropped when the block ends."""
    name = f"_scratch_{uuid.uuid4().hex}"
    con.execute(f"CREATE TEMP TABLE {name} AS {sql}", list(params))
    try:
        yield name
    finally:
        con.execute(f"DROP TABLE IF EXISTS temp.{name}")

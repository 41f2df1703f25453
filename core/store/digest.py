"""The content digest of result rows: the same answers give the same digest whatever the file's format (CSV,
Parquet, JSONL) or row order, and a stored run gives the digest its own export would. Imports use it to recognise
results they already hold (core/store/io.py)."""

from __future__ import annotations

import hashlib
import json
import math


def row_digest(row: dict) -> int:
    """One row's share of a file's content digest: over what identifies an answer (item index, prompt, raw
    response, correctness, model), as parsed — so CSV, Parquet and JSONL of the same results agree."""
    def cell(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        return v if isinstance(v, bool) else str(v)

    key = [row.get("idx")] + [cell(row.get(c)) for c in ("prompt", "response", "correct", "model")]
    return int.from_bytes(hashlib.sha256(json.dumps(key, ensure_ascii=False, default=str).encode("utf-8")).digest(),
                          "big")


def stored_run_digest(con, run_id: str) -> str | None:
    """The content digest (as ``_row_digest`` makes it from a file) of a stored run's answered items."""
    rows = con.execute("SELECT idx, prompt, response, correct, model FROM v_results WHERE run_id = ? AND "
                       "(response IS NOT NULL OR correct IS NOT NULL)", [run_id]).fetchall()
    if not rows:
        return None
    keys = ("idx", "prompt", "response", "correct", "model")
    digest = sum(row_digest(dict(zip(keys, r))) for r in rows) % (1 << 256)
    return f"{digest:064x}"

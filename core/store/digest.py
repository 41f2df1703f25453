"""The content digest of result rows: what a file claims, row by row. The same claims give the same digest whatever
the file's format (CSV, Parquet, JSONL), row order, line endings or byte-order marks, and a stored run gives the
digest its own export would. Imports use it to recognise results they already hold (core/store/io.py); a file
that claims other verdicts digests otherwise."""

from __future__ import annotations

import hashlib
import json
import math

# what identifies a row's claims (an export's columns, as parsed): not its run id, name or timings
CLAIM_COLUMNS = ("prompt", "response", "error", "model", "task", "operation", "set_a", "set_b", "truth", "correct",
                 "correct_strict")
_JSON_TEXT = ("set_a", "set_b", "truth")


def _cell(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(v).replace("\r\n", "\n").replace("\r", "\n")


def claim_digest(cells: list) -> int:
    """One row's share of a file's digest (the shares are summed: row order does not matter)."""
    key = [_cell(c) for c in cells]
    return int.from_bytes(hashlib.sha256(json.dumps(key, ensure_ascii=False, default=str).encode("utf-8")).digest(),
                          "big")


def row_claims_digest(row: dict) -> int:
    """The share of a row of our export layout, as parsed and before it is judged (its claimed verdicts)."""
    return claim_digest([row.get("idx")] + [row.get(c) for c in CLAIM_COLUMNS])


def stored_run_digest(con, run_id: str) -> str | None:
    """The content digest (as a file of its export makes it) of a stored run's items."""
    rows = con.execute("SELECT idx, " + ", ".join(f'"{c}"' for c in CLAIM_COLUMNS) + " FROM v_results WHERE "
                       "run_id = ?", [run_id]).fetchall()
    if not rows:
        return None
    total = 0
    for r in rows:
        row = dict(zip(("idx", *CLAIM_COLUMNS), r))
        for c in _JSON_TEXT:
            if isinstance(row[c], str):
                try:
                    row[c] = json.loads(row[c])
                except ValueError:
                    pass
        total += row_claims_digest(row)
    return f"{total % (1 << 256):064x}"

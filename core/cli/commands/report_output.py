"""Writing a report table: CSV or JSON (a list of row objects), atomically, one line on failure. Shared by the
report sub-commands (report.py, report_findings.py)."""

from __future__ import annotations

import json
import math

from core.errors import UserError

OUT_SUFFIXES = (".csv", ".json")


def _plain(v):
    """JSON-ready value: numpy scalars as Python ones, NaN as null."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _write(table, out) -> None:
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        if out.suffix.lower() == ".csv":
            table.to_csv(tmp, index=False)
        else:
            rows = [{k: _plain(v) for k, v in row.items()} for row in table.to_dict("records")]
            tmp.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)

"""What the report sub-commands share (report.py, report_findings.py): their --run and --filter arguments, and
writing a table as CSV or JSON (a list of row objects), atomically, one line on failure."""

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


def filters_arg(pairs) -> dict:
    """--filter COL=V1,V2 … as a filter mapping; UserError naming the first malformed one."""
    from core import analysis

    bad = [f for f in pairs if f not in ("",) and ("=" not in f or not f.split("=", 1)[1])]
    if bad:
        raise UserError(f"--filter {bad[0]!r}: expected COL=VALUE[,VALUE…]")
    return analysis.filters_from_pairs(pairs)


def runs_arg(db, values) -> list[str]:
    """--run values (repeatable, each maybe joined by commas; 'latest' allowed) as run ids, journals merged first."""
    from core import store

    path = store.resolve_db_path(db)
    if not path.exists() and not store.journal_dir(db).exists():
        raise UserError(f"no runs yet: no database at {path} (run or import something first, or pass --db PATH)")
    store.recover_journals(db)
    wanted = [r.strip() for v in values for r in str(v).split(",") if r.strip()]
    if not wanted:
        raise UserError("--run: name a run id or 'latest'")
    with store.connect(db) as con:
        return list(dict.fromkeys(store.resolve_run_id(con, r) for r in wanted))

"""What the report sub-commands share (report.py, report_findings.py): their --run and --filter arguments, and
writing a table as CSV or JSON (a list of row objects) or a text, atomically, one line on failure."""

from __future__ import annotations

import json
import math
import os
import re

from core.errors import UserError
from core.files import write_csv

OUT_SUFFIXES = (".csv", ".json")


def plain(v):
    """JSON-ready value: numpy scalars as Python ones, NaN as null."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


_PAIR_TEXT = re.compile(r"""^\((['"])(.*)\1, (nan|-?[\d.]+(?:e[-+]?\d+)?)\)$""")


def _pair(v):
    """(label, share) of a top-k cell — a tuple, or its Python text "('G2 vs. L1', 66.67)" as the reference writes
    it — else None."""
    if isinstance(v, (tuple, list)) and len(v) == 2 and not isinstance(v[0], (tuple, list)):
        return v[0], v[1]
    if isinstance(v, str):
        m = _PAIR_TEXT.match(v.strip())
        if m:
            return m.group(2), float(m.group(3))
    return None


def _is_pair(v) -> bool:
    return _pair(v) is not None


def split_pairs(table):
    """A table whose cells are (label, share) pairs — the reference's top-k cells, ``('G2 vs. L1', 66.67)`` — with
    each such column written as two plain ones: ``<column>`` (the label) and ``<column>_pct`` (the share, empty when
    there is none), so a spreadsheet reads values, not Python tuples. Other columns are kept as they are."""
    import pandas as pd

    out = table.copy()
    for col in list(out.columns):
        cells = out[col]
        if not any(_is_pair(v) for v in cells):
            continue
        pairs = [_pair(v) for v in cells]
        labels = [p[0] if p else (None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                  for p, v in zip(pairs, cells)]
        shares = [plain(p[1]) if p else None for p in pairs]
        at = list(out.columns).index(col)
        out[col] = labels
        out.insert(at + 1, f"{col}_pct", pd.Series(shares, index=out.index, dtype="Float64"))
    return out


def write_table(table, out) -> None:
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        if out.suffix.lower() == ".csv":
            write_csv(split_pairs(table), tmp)   # the one CSV writer: text cells neutralised
        else:
            rows = [{k: plain(v) for k, v in row.items()} for row in table.to_dict("records")]
            tmp.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_text(out, text: str) -> None:
    """``text`` written to ``out`` atomically (a temporary file beside it, then renamed); one line on failure."""
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
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


def table_args(args) -> tuple:
    """(output path, --by columns, --filter mapping, run ids) of a report command that writes a table, checked in
    that order."""
    from core.files import check_output_path

    out = check_output_path(args.out, OUT_SUFFIXES, flag="--out")
    by = [c.strip() for c in str(args.by).split(",") if c.strip()]
    return out, by, filters_arg(args.filter), runs_arg(args.db, args.run or ["latest"])

"""Peak memory of importing a large result file: ``python -m core import FILE`` in a fresh process, its peak RSS
(``wait4``'s ru_maxrss) printed beside the file's size.

    python bench/import_memory.py [--mb 200] [--format csv|jsonl|parquet] [--code PATH]

The file is one of our own exports grown to the asked size: a small reference-solver run is exported once, then its
rows are repeated with fresh ``idx`` values until the file is ``--mb`` megabytes. ``--code PATH`` runs the import of
another checkout of the code (e.g. ``git archive <commit> | tar -x -C /tmp/before``) on the very same file, for a
before/after comparison. Nothing is asserted: this prints figures.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONFIG = {"task": "setops", "seed": 5, "samples": 25, "operations": ["union", "intersection", "difference",
                                                                   "symmetric_difference"],
          "sizes": [4, 8, 16], "members": ["words", "numbers"], "phrasings": ["formal", "plain"],
          "approaches": ["baseline"], "shots": [0, 1]}


def seed_rows(tmp: Path) -> list[dict]:
    """Rows of a real export (reference solver, JSONL so values keep their types)."""
    from core import runner
    from core.store.exports import export_run

    db = tmp / "seed.duckdb"
    p = runner.run(CONFIG, "reference/solver", db_path=db)
    out = tmp / "seed.jsonl"
    export_run(db, p.run_id, out)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def grow(rows: list[dict], fmt: str, path: Path, target: int) -> int:
    """Write rows (idx renumbered) until the file reaches ``target`` bytes; returns the row count."""
    n = 0
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = list(rows[0])
        text_rows = [{k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()} for r in rows]
        schema = pa.Table.from_pylist(text_rows).schema
        writer = pq.ParquetWriter(path, schema)
        try:
            while path.stat().st_size < target:
                batch = [dict(r, idx=n + i) for i, r in enumerate(text_rows)]
                writer.write_table(pa.Table.from_pylist(batch, schema=schema).select(cols))
                n += len(batch)
        finally:
            writer.close()
        return n
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = None
        while fh.tell() < target:
            for r in rows:
                r = dict(r, idx=n)
                n += 1
                if fmt == "jsonl":
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
                else:
                    if writer is None:
                        writer = csv.DictWriter(fh, fieldnames=list(r), lineterminator="\n")
                        writer.writeheader()
                    writer.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else
                                         ("" if v is None else str(v).lower() if isinstance(v, bool) else v))
                                     for k, v in r.items()})
    return n


def measure(code: Path, path: Path, db: Path) -> tuple[int, float, int, str]:
    """(peak RSS in bytes, seconds, exit code, last stderr line) of ``python -m core import`` run from ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code), "STUDIO_DB": str(db)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "core", "import", str(path)], cwd=code, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout, proc.stderr
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = (out.read() + err.read()).decode("utf-8", "replace").strip().splitlines()
    return usage.ru_maxrss * 1024, seconds, proc.returncode, text[-1] if text else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0, help="file size in MB (default 200)")
    ap.add_argument("--format", choices=("csv", "jsonl", "parquet"), default="csv")
    ap.add_argument("--code", action="append", default=[], help="another checkout to measure too (repeatable)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows = seed_rows(tmp)
        path = tmp / f"big.{args.format}"
        n = grow(rows, args.format, path, int(args.mb * 1e6))
        size = path.stat().st_size
        print(f"file: {path.name}, {size / 1e6:.0f} MB, {n:,} rows")
        for code in [ROOT] + [Path(c).resolve() for c in args.code]:
            db = tmp / f"import-{abs(hash(str(code)))}.duckdb"
            rss, seconds, code_rc, last = measure(code, path, db)
            print(f"{code}: peak RSS {rss / 1e6:,.0f} MB = {rss / size:.1f}x the file, {seconds:.1f} s, "
                  f"exit {code_rc}: {last[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

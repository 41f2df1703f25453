"""`python -m core generate TASK (--config CFG.yaml | --preset NAME) --out FILE` — write a task's items to a file.

The format follows the file's extension (.jsonl, .csv, .parquet) unless ``--format`` is given. Output is
deterministic: the same config and seed give byte-identical files in any process (no timestamps, no hash-order
iteration; Parquet is written without pandas metadata). Lists and mappings (set_a, set_b, truth, member_hypernyms)
are JSON text in CSV and Parquet; columns whose values mix types (e.g. overlap 2 and 0.5) are JSON text as well.
The file is written to a temporary name and moved into place, so a failed run never leaves half a file.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from core import files
from core.errors import ConfigError, UserError

FORMATS = ("jsonl", "csv", "parquet")
PARQUET_BATCH = 20_000


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "generate", help="write a task's items (prompts, sets, truths, factors) to .jsonl/.csv/.parquet",
        description="Expand a task config into its items and write one record per item. Impossible grid "
                    "combinations are skipped with a counted warning on stderr.")
    p.add_argument("task", help="task name: setops or quantifiers")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", help="task config YAML, or a SetLexSem reference experiment YAML as it is")
    src.add_argument("--preset", help="a named preset of the task (see --list-presets)")
    p.add_argument("--out", help="output file (.jsonl, .csv or .parquet)")
    p.add_argument("--format", choices=FORMATS, default=None, help="override the format implied by --out")
    p.add_argument("--limit", type=int, default=None, help="only N items, spread over the grid (every level of every "
                   "factor when N allows), the same ones `run --limit N` asks")
    p.add_argument("--list-presets", action="store_true", help="print the task's presets and exit")
    p.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    p.set_defaults(func=main)


# --------------------------------------------------------------------------------------------------- config
def spec_of(task_name: str, config_path: str | None, preset: str | None):
    """The RunSpec named by --config or --preset (core.config: the one path for every entry point; a SetLexSem
    reference experiment YAML is translated there). A run document's model/params/base_url are accepted and
    ignored: they belong to `run`."""
    from core.config import preset_run_spec, read_run_spec, run_spec

    if preset is not None:
        return preset_run_spec(task_name, preset)
    if config_path:
        return read_run_spec(config_path, task=task_name)
    return run_spec({}, task=task_name)


def config_of(task_name: str, config_path: str | None, preset: str | None):
    """The validated task config named by --config or --preset."""
    return spec_of(task_name, config_path, preset).config


# --------------------------------------------------------------------------------------------------- writers
def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value if isinstance(value, str) else str(value)   # text is neutralised by the one CSV writer


def write_jsonl(rows: Iterable[dict], fh) -> int:
    n = 0
    for row in rows:
        fh.write(json.dumps(row, ensure_ascii=False))
        fh.write("\n")
        n += 1
    return n


def write_csv(rows: Iterable[dict], fh) -> int:
    """Items as CSV through the one CSV writer (an edited template starting with "=" is neutralised)."""
    return files.write_csv(({k: _cell_text(v) for k, v in row.items()} for row in rows), fh)


def _column_kinds(rows: Iterable[dict]) -> tuple[list[str], dict[str, str]]:
    """Column order and a storage kind per column: bool, int, float, str or json."""
    names: list[str] = []
    kinds: dict[str, str] = {}
    for row in rows:
        if not names:
            names = list(row)
        for k, v in row.items():
            if v is None:
                continue
            kind = ("bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"
                    if isinstance(v, float) else "str" if isinstance(v, str) else "json")
            old = kinds.get(k)
            if old is None:
                kinds[k] = kind
            elif old != kind:
                kinds[k] = "json"
    return names, kinds


def write_parquet(make_rows: Callable[[], Iterator[dict]], path: str) -> int:
    """Two passes over a deterministic row source: column kinds first, then batched writing."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("writing .parquet needs pyarrow (pip install -r requirements.txt)") from None

    names, kinds = _column_kinds(make_rows())
    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string(), "json": pa.string()}
    schema = pa.schema([(k, types[kinds.get(k, "str")]) for k in names])
    n = 0

    def convert(k, values):
        kind = kinds.get(k, "str")
        if kind == "json":
            return [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
        return values

    writer = pq.ParquetWriter(path, schema, compression="zstd", version="2.6", write_statistics=True)
    try:
        rows = make_rows()
        while True:
            batch = list(itertools.islice(rows, PARQUET_BATCH))
            if not batch:
                break
            cols = [pa.array(convert(k, [r.get(k) for r in batch]), type=schema.field(k).type) for k in names]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema))
            n += len(batch)
    finally:
        writer.close()
    if n == 0:  # an empty file still gets the schema
        pq.write_table(schema.empty_table(), path)
    return n


def format_of(path: str, fmt: str | None) -> str:
    if fmt:
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix == "json":
        suffix = "jsonl"
    if suffix not in FORMATS:
        raise UserError(f"cannot tell the format of {path!r}: use a .jsonl, .csv or .parquet name or --format")
    return suffix


def write_items(make_rows: Callable[[], Iterator[dict]], path: str, fmt: str | None = None) -> int:
    """Write rows to ``path`` atomically; ``make_rows`` returns a fresh iterator each call. Returns the row count."""
    fmt = format_of(path, fmt)
    out = Path(path)
    if out.parent and not out.parent.exists():
        raise UserError(f"output directory does not exist: {out.parent}")
    if out.is_dir():
        raise UserError(f"{out} is a directory")
    # a unique temporary name next to the target (created with the usual permissions, unlike mkstemp's 0600)
    tmp = str(out.parent / f".{out.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        open(tmp, "xb").close()
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        if fmt == "parquet":
            n = write_parquet(make_rows, tmp)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                writer = write_jsonl if fmt == "jsonl" else write_csv
                n = writer(make_rows(), fh)
        os.replace(tmp, out)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):   # disk full, target vanished or turned read-only …
            raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
    return n


# ------------------------------------------------------------------------------------------------------- main
def main(args: argparse.Namespace) -> int:
    from core.tasks import get_task

    task = get_task(args.task)
    if args.list_presets:
        for name in task.PRESETS:
            print(name)
        return 0
    if not args.out:
        raise UserError("--out FILE is required (a .jsonl, .csv or .parquet name)")
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, got {args.limit}")
    fmt = format_of(args.out, args.format)
    spec = spec_of(args.task, args.config, args.preset)
    cfg = spec.config
    if not args.quiet:
        for line in spec.notes:   # what a reference experiment YAML asks that is not honoured exactly
            print(f"note: {line}", file=sys.stderr)
    total = task.count(cfg)
    warnings = list(task.warnings(cfg))
    if total == 0:
        why = f": {warnings[0]}" + (f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else "") if warnings else ""
        raise ConfigError(f"the config yields no items, every grid combination is impossible{why}")
    if not args.quiet:
        for line in warnings:
            print(f"warning: {line}", file=sys.stderr)
    limit = total if args.limit is None else min(args.limit, total)

    def rows() -> Iterator[dict]:
        from core.tasks import select_items

        return select_items(task, cfg, None if limit >= total else limit)

    n = write_items(rows, args.out, fmt)
    if not args.quiet:
        print(f"wrote {n} {args.task} items to {args.out}", file=sys.stderr)
    return 0

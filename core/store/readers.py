"""Reading a result file as a stream of row chunks, whatever its size: CSV and JSONL line by line, Parquet by row
group. Used by core/store/io.py (which gives the rows their meaning).

    Source(path_or_bytes, filename)    the file as a binary stream: size-checked, hashed (sha256), never copied
    raw_chunks(source) -> Iterator[list[dict]]   rows as read (CSV: text or None; JSONL/Parquet: their own types),
                                                 CHUNK_ROWS at a time; CSV cells a spreadsheet would run are refused
                                                 (core/files.py) and cells our export neutralised read back as
                                                 written; byte-order marks before the header are dropped, and
                                                 the line breaks inside the cells of a CSV whose lines end with
                                                 CR (CRLF or CR alone) are read as LF

Every problem is an ImportFileError with one line naming the file and the place (line, row, column).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from core.errors import ImportFileError
from core.files import is_formula, restore

MAX_IMPORT_BYTES = 200 * 1024 * 1024
MAX_CELL_CHARS = 16 * 1024 * 1024   # one field (a prompt or reply): above any reply we store (openai-compatible replies
                                    # are capped at 4 MiB as they stream), so our own exports always read back;
                                    # Python's csv module stops at 128 kB by default
MAX_LINE_BYTES = 64 * 1024 * 1024   # one JSONL line, refused once this many bytes are read (not read whole first)
MAX_COLUMNS = 2_000                 # a header with a million columns is not a result file
MAX_ROWS = 2_000_000
CHUNK_ROWS = 2_000             # rows read, checked and converted at a time …
CHUNK_CHARS = 32 * 1024 * 1024  # … or fewer, when their cells hold this many characters (big replies)
FORMATS = {".csv": "csv", ".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}


class Source:
    """The file to read, as a binary stream: a path (opened, size-checked, hashed in a first pass) or bytes (an
    upload; read in place, not copied)."""

    def __init__(self, path_or_bytes, filename: str | None):
        self.sha = hashlib.sha256()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            data = path_or_bytes
            self.name = filename or "upload"
            self.size = len(data)
            self._check_size(self.size)
            self.sha.update(data)
            self.fh: BinaryIO = io.BytesIO(data)
            self.where = filename or self.name
        else:
            p = Path(path_or_bytes)
            self.name = filename or p.name
            self.where = filename or str(path_or_bytes)   # reference hyperparameters live in folder names too
            if not p.exists():
                raise ImportFileError(f"{self.name}: file not found")
            if p.is_dir():
                raise ImportFileError(f"{self.name}: is a directory, not a file")
            try:
                self.size = p.stat().st_size
                self._check_size(self.size)
                self.fh = open(p, "rb")
                read = 0
                while block := self.fh.read(1 << 20):   # bounded: a device or a growing file cannot exhaust memory
                    read += len(block)
                    self._check_size(read)
                    self.sha.update(block)
                self.size = read
                self.fh.seek(0)
            except OSError as exc:
                raise ImportFileError(f"{self.name}: cannot read the file ({exc.strerror or exc})") from None
        if not self._has_content():
            self.close()
            raise ImportFileError(f"{self.name}: file is empty")

    def _check_size(self, size: int) -> None:
        if size > MAX_IMPORT_BYTES:
            raise ImportFileError(f"{self.name}: file is too large ({size / 1e6:.0f} MB; the limit is "
                                  f"{MAX_IMPORT_BYTES // 1024 // 1024} MB)")

    def _has_content(self) -> bool:
        while block := self.fh.read(1 << 16):
            if block.strip():
                self.fh.seek(0)
                return True
        self.fh.seek(0)
        return False

    @property
    def sha256(self) -> str:
        return self.sha.hexdigest()

    def format(self) -> str:
        suffix = PurePosixPath(self.name).suffix.lower()
        fmt = FORMATS.get(suffix)
        if fmt is None:
            head = self.fh.read(4)
            self.fh.seek(0)
            if head != b"PAR1":
                raise ImportFileError(f"{self.name}: unsupported file type {suffix or '(none)'}; "
                                      "expected .csv, .parquet or .jsonl")
            fmt = "parquet"
        return fmt

    def close(self) -> None:
        self.fh.close()


def _text_check(src: Source) -> None:
    head = src.fh.read(65536)
    src.fh.seek(0)
    if b"\x00" in head:
        raise ImportFileError(f"{src.name}: looks like a binary file, not CSV/JSONL text")


def _decode(line: bytes, name: str, where: str) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{name}: not UTF-8 text (invalid byte in {where}, at offset {exc.start})") from None


def _parquet_rows(src: Source) -> Iterator[list[dict]]:
    import pyarrow.parquet as pq

    head = src.fh.read(4)
    src.fh.seek(-4, os.SEEK_END)
    tail = src.fh.read(4)
    src.fh.seek(0)
    if head != b"PAR1" or tail != b"PAR1":
        raise ImportFileError(f"{src.name}: not a Parquet file (missing PAR1 magic bytes)")
    try:
        pf = pq.ParquetFile(src.fh)
        if len(pf.schema_arrow.names) > MAX_COLUMNS:
            raise ImportFileError(f"{src.name}: {len(pf.schema_arrow.names):,} columns (the limit is "
                                  f"{MAX_COLUMNS:,}); not a result file")
        seen = 0
        for batch in pf.iter_batches(batch_size=CHUNK_ROWS):
            rows = batch.to_pylist()
            for k, row in enumerate(rows):
                _big_cell(row, src.name, f"row {seen + k + 1}")
            seen += len(rows)
            yield rows
    except ImportFileError:
        raise
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise ImportFileError(f"{src.name}: unreadable Parquet file ({str(exc).splitlines()[0][:200]})") from None


def _big_cell(row: dict, name: str, where: str) -> int:
    """Characters in the row's text cells; ImportFileError for a cell over MAX_CELL_CHARS."""
    total = 0
    for col, value in row.items():
        if isinstance(value, str):
            total += len(value)
            if len(value) > MAX_CELL_CHARS:
                raise ImportFileError(f"{name}: {where}, column {str(col)[:40]!r} holds {len(value):,} characters "
                                      f"(the limit is {MAX_CELL_CHARS:,})")
    return total


def _lines(fh, name: str) -> Iterator[tuple[int, bytes]]:
    n = 0
    while raw := fh.readline(MAX_LINE_BYTES + 1):
        n += 1
        if len(raw) > MAX_LINE_BYTES:
            raise ImportFileError(f"{name}: line {n} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MB")
        yield n, raw


def _jsonl_rows(src: Source) -> Iterator[list[dict]]:
    _text_check(src)
    chunk: list[dict] = []
    chars = 0
    for n, raw in _lines(src.fh, src.name):
        line = _decode(raw, src.name, f"line {n}")
        if n == 1:
            line = line.lstrip("\ufeff")   # byte-order marks, however many
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except RecursionError:
            raise ImportFileError(f"{src.name}: line {n} is nested too deeply") from None
        except ValueError:
            raise ImportFileError(f"{src.name}: line {n} is not valid JSON") from None
        if not isinstance(row, dict):
            raise ImportFileError(f"{src.name}: line {n} is not a JSON object")
        if len(row) > MAX_COLUMNS:
            raise ImportFileError(f"{src.name}: line {n} has {len(row):,} keys (the limit is {MAX_COLUMNS:,})")
        chars += _big_cell(row, src.name, f"line {n}")
        chunk.append(row)
        if len(chunk) >= CHUNK_ROWS or chars >= CHUNK_CHARS:
            yield chunk
            chunk, chars = [], 0
    if chunk:
        yield chunk


def _cr_lines(src: Source) -> bool:
    """Whether the file ends its lines with CR (CRLF or CR alone): its cells' line breaks are read as LF then."""
    head = src.fh.read(1 << 20)
    src.fh.seek(0)
    cut = min((i for i in (head.find(b"\r"), head.find(b"\n")) if i >= 0), default=-1)
    return cut >= 0 and head[cut:cut + 1] == b"\r"


def _csv_rows(src: Source) -> Iterator[list[dict]]:
    _text_check(src)
    csv.field_size_limit(MAX_CELL_CHARS)
    cr = _cr_lines(src)
    text = io.TextIOWrapper(src.fh, encoding="utf-8-sig", newline="")
    reader = csv.reader(text)
    try:
        try:
            header = [h.strip() for h in next(reader)]
            if header:
                header[0] = header[0].lstrip("\ufeff").strip()   # a second byte-order mark (the first is decoded away)
        except StopIteration:
            raise ImportFileError(f"{src.name}: file holds no CSV header") from None
        if not any(header):
            raise ImportFileError(f"{src.name}: file holds no CSV header")
        if len(header) > MAX_COLUMNS:
            raise ImportFileError(f"{src.name}: the header has {len(header):,} columns (the limit is "
                                  f"{MAX_COLUMNS:,}); not a result file")
        names: set[str] = set()
        for h in header:
            if h in names:
                raise ImportFileError(f"{src.name}: column {h[:40]!r} appears twice in the header")
            names.add(h)
        chunk: list[dict] = []
        chars = 0
        for fields in reader:
            if not fields or fields == [""]:
                continue
            if len(fields) > len(header):
                raise ImportFileError(f"{src.name}: not a readable CSV file (line {reader.line_num} has "
                                      f"{len(fields)} fields, the header {len(header)})")
            if cr:
                fields = [v.replace("\r\n", "\n").replace("\r", "\n") for v in fields]
            chunk.append({h: (v if v != "" else None) for h, v in zip(header, fields)})
            chars += sum(map(len, fields))
            if len(chunk) >= CHUNK_ROWS or chars >= CHUNK_CHARS:
                yield chunk
                chunk, chars = [], 0
        if chunk:
            yield chunk
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{src.name}: not UTF-8 text (invalid byte near line {reader.line_num + 1}, "
                              f"offset {exc.start} of a block)") from None
    except csv.Error as exc:
        raise ImportFileError(f"{src.name}: not a readable CSV file ({str(exc).splitlines()[0][:200]})") from None


def raw_chunks(src: Source) -> Iterator[list[dict]]:
    """Chunks of rows as read (CSV: text or None; JSONL/Parquet: their own types), column names stripped, CSV cells
    checked for formulas and neutralised ones read back as written."""
    fmt = src.format()
    rows = {"parquet": _parquet_rows, "jsonl": _jsonl_rows, "csv": _csv_rows}[fmt](src)
    seen = 0
    for chunk in rows:
        if fmt != "csv":
            chunk = [{str(k).strip(): v for k, v in row.items()} for row in chunk]
        else:   # a spreadsheet's format: formulas refused, neutralised cells read back (JSONL/Parquet hold data)
            _check_formulas(chunk, src.name, seen)
            for row in chunk:
                for k, v in row.items():
                    if v is not None and v[:1] == "'":
                        row[k] = restore(v)
        seen += len(chunk)
        if seen > MAX_ROWS:
            raise ImportFileError(f"{src.name}: more than {MAX_ROWS} rows")
        yield chunk


def _check_formulas(rows: list[dict], name: str, offset: int) -> None:
    for pos, row in enumerate(rows):
        for col, value in row.items():
            if is_formula(col) and pos == 0:
                raise ImportFileError(f"{name}: column name {str(col)[:40]!r} looks like a spreadsheet formula; "
                                      "refused")
            if isinstance(value, str) and is_formula(value):
                raise ImportFileError(
                    f"{name}: row {offset + pos + 1}, column {col!r} holds a spreadsheet formula ({value[:30]!r}…); "
                    "formulas are never interpreted — refusing the file")

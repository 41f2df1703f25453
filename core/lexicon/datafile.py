"""Deterministic gzip'ed JSON files for the shipped lexicon data (equal content -> equal bytes)."""

from __future__ import annotations

import gzip
import io
import json
import os

from core.errors import ImportFileError


def dump_json_gz(doc) -> bytes:
    """Canonical JSON (sorted keys, no spaces, UTF-8) in a gzip stream with mtime 0 and no file name."""
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))
    return buf.getvalue()


def write_atomic(path, data: bytes) -> None:
    """Write via a temporary file and a rename, so a failure never leaves a half-written file behind."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_json_gz(path, fmt: str, hint: str) -> dict:
    """Read a file written by :func:`dump_json_gz`; its "format" must be ``fmt``. Errors are ImportFileError."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise ImportFileError(f"data file not found: {path} ({hint})") from None
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFileError(f"{path}: not a gzip-compressed JSON file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise ImportFileError(f"{path}: not a {fmt} file")
    return doc

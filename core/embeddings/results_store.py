"""Computed Embeddings results kept in the store (table ``embedding_results``, schema version 7), so the page shows
them again after a reload or from a shared link instead of asking for another Compute.

A result is keyed by the digest of everything that decides it (``settings_for``): the encoder (its cache identity),
the samples and tuples scored (their content, whatever the file or paste they came from), the paper's difference
filter, the margins ε and grid size and the measures evaluated, and the REPORT layout version. The choices a page
makes *within* a result (which measure or ε to show) are views of it, not part of the key.

    settings = settings_for("minilm", samples, tuples, diff_max_cos=None)
    save(settings, report, rows, data_label="demo set (71 tuples)", db_path=db)
    load(digest(settings), db_path=db)    # -> {"report", "rows", "settings", "data_label", "created_at"} or None

Writes go through ``core.store.embedding_tables`` under ``core.store.connect`` (the inter-process lock), in one
transaction; reads are one parameterised query. Nothing is evaluated: the report and the rows are JSON text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from core.embeddings.criteria import DEFAULT_EPS, DEFAULT_GRID
from core.embeddings.measures import MEASURES
from core.embeddings.report import SCHEMA as REPORT_SCHEMA
from core.embeddings.samples import Sample, SentenceTuple
from core.errors import UserError


def encoder_identity(spec: str) -> str:
    """What identifies an encoder's vectors (its embedding-cache id), without loading it: ``minilm``, ``local``,
    ``openai[:model]``."""
    from core.embeddings.encoders import OPENAI_DEFAULT_MODEL, LocalLlamaEncoder, MiniLMEncoder

    name, _, model = (spec or "").strip().partition(":")
    if name == "minilm":
        return MiniLMEncoder.cache_id
    if name == "local":
        return LocalLlamaEncoder.cache_id
    if name == "openai":
        return f"openai/{model or OPENAI_DEFAULT_MODEL}"
    raise UserError(f"unknown encoder {spec!r}; expected one of: minilm, local, openai[:model]")


def _content_sha(records: Iterable[dict]) -> str:
    h = hashlib.sha256()
    for rec in records:
        h.update(json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def samples_sha(samples: Sequence[Sample], tuples: Sequence[SentenceTuple] = ()) -> str:
    """The identity of a data set: the content of its samples and tuples (the same CSV uploaded or pasted, or the
    demo set, give the same digest)."""
    from dataclasses import asdict

    return _content_sha([{"samples": len(samples), "tuples": len(tuples)}] + [asdict(s) for s in samples]
                        + [asdict(t) for t in tuples])


def settings_for(encoder: str, samples: Sequence[Sample], tuples: Sequence[SentenceTuple] = (), *,
                 diff_max_cos: float | None = None, eps: Sequence[float] = DEFAULT_EPS,
                 grid_size: int = DEFAULT_GRID, measures: Sequence[str] = tuple(MEASURES),
                 data_sha: str | None = None) -> dict[str, Any]:
    """Everything that decides one scoring's result (see the module docstring), as a JSON-able dict. ``data_sha``
    (from ``samples_sha``) saves hashing the samples again when the caller already has it."""
    return {"report": REPORT_SCHEMA, "encoder": encoder, "encoder_id": encoder_identity(encoder),
            "data": data_sha or samples_sha(samples, tuples),
            "diff_max_cos": None if diff_max_cos is None else float(diff_max_cos),
            "eps": [float(e) for e in eps], "grid_size": int(grid_size), "measures": list(measures)}


def digest(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def save(settings: dict, report: dict, rows: list[dict], *, data_label: str = "", db_path=None) -> str:
    """Store one computed result under its settings' digest (replacing an earlier one of the same settings).
    Returns the digest."""
    from core.store import connect, embedding_tables, now_utc, transaction

    key = digest(settings)
    try:
        report_json = json.dumps(report, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        rows_json = json.dumps(rows, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise UserError(f"this embeddings result cannot be stored ({exc})") from None
    with connect(db_path) as con, transaction(con):
        embedding_tables.put_result(
            con, digest=key, encoder=settings.get("encoder"), encoder_label=report.get("encoder_label"),
            data_label=data_label, settings_json=json.dumps(settings, sort_keys=True), n_samples=len(rows),
            report_json=report_json, rows_json=rows_json, created_at=now_utc())
    return key


def _record(row) -> dict | None:
    key, settings_json, data_label, report_json, rows_json, created_at = row
    try:
        return {"digest": key, "settings": json.loads(settings_json), "data_label": data_label,
                "report": json.loads(report_json), "rows": json.loads(rows_json), "created_at": created_at}
    except (TypeError, ValueError):   # a damaged row reads as "not stored": the page computes it again
        return None


def load_many(keys: Iterable[str], db_path=None) -> dict[str, dict]:
    """The stored results of the given digests (those present): digest → {report, rows, settings, data_label,
    created_at}."""
    from core.store import connect

    keys = sorted(set(keys))
    if not keys:
        return {}
    with connect(db_path) as con:
        rows = con.execute("SELECT digest, settings_json, data_label, report_json, rows_json, created_at "
                           "FROM embedding_results WHERE digest IN (SELECT unnest(?::VARCHAR[]))", [keys]).fetchall()
    out = {}
    for r in rows:
        rec = _record(r)
        if rec is not None:
            out[rec["digest"]] = rec
    return out


def load(key: str, db_path=None) -> dict | None:
    return load_many([key], db_path).get(key)


def list_results(db_path=None) -> pd.DataFrame:
    """What is stored, newest first, without the rows: digest, encoder, encoder_label, data_label, n_samples,
    created_at."""
    from core.store import connect

    with connect(db_path) as con:
        return con.execute("SELECT digest, encoder, encoder_label, data_label, n_samples, created_at "
                           "FROM embedding_results ORDER BY created_at DESC").df()


def delete(key: str | None = None, db_path=None) -> int:
    """Forget one stored result (or every one with ``key=None``). Returns how many were removed."""
    from core.store import connect, embedding_tables, transaction

    with connect(db_path) as con, transaction(con):
        return embedding_tables.drop_results(con, key)

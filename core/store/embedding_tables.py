"""Writes to the store's two embeddings tables: ``embedding_cache`` (a vector per encoder and text) and
``embedding_results`` (a computed Embeddings result per digest of its settings). What goes in them is decided by
core/embeddings (cache.py, results_store.py); this module is the only code that writes them. Each function works
inside the caller's connection."""

from __future__ import annotations

from collections.abc import Sequence

RESULT_FIELDS = ("digest", "encoder", "encoder_label", "data_label", "settings_json", "n_samples", "report_json",
                 "rows_json", "created_at")


def add_vectors(con, encoder_id: str, shas: Sequence[str], texts: Sequence[str], vectors: Sequence[list[float]]
                ) -> None:
    """Insert vectors of ``texts`` (their digests ``shas``) under ``encoder_id``; rows already there are kept."""
    import pyarrow as pa

    table = pa.table({
        "encoder": pa.array([encoder_id] * len(texts), pa.string()),
        "text_sha": pa.array(list(shas), pa.string()),
        "text": pa.array(list(texts), pa.string()),
        "vector": pa.array(list(vectors), pa.list_(pa.float32())),
    })
    con.register("new_embeddings", table)
    try:
        con.execute("INSERT INTO embedding_cache SELECT encoder, text_sha, text, vector FROM new_embeddings "
                    "ON CONFLICT DO NOTHING")
    finally:
        con.unregister("new_embeddings")


def drop_vectors(con, encoder_id: str | None = None) -> int:
    """Forget the cached vectors of ``encoder_id`` (every encoder's with None). Returns how many went."""
    where, args = ("WHERE encoder = ?", [encoder_id]) if encoder_id is not None else ("", [])
    n = con.execute(f"SELECT count(*) FROM embedding_cache {where}", args).fetchone()[0]
    con.execute(f"DELETE FROM embedding_cache {where}", args)
    return int(n)


def put_result(con, **fields) -> None:
    """Store one result row (``RESULT_FIELDS``, all of them), replacing one of the same digest."""
    if set(fields) != set(RESULT_FIELDS):
        raise TypeError(f"put_result needs exactly {', '.join(RESULT_FIELDS)}; got {', '.join(sorted(fields))}")
    con.execute(f"INSERT OR REPLACE INTO embedding_results ({', '.join(RESULT_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(RESULT_FIELDS))})", [fields[k] for k in RESULT_FIELDS])


def drop_results(con, digest: str | None = None) -> int:
    """Forget the result of ``digest`` (every one with None). Returns how many went."""
    where, args = ("WHERE digest = ?", [digest]) if digest is not None else ("", [])
    n = con.execute(f"SELECT count(*) FROM embedding_results {where}", args).fetchone()[0]
    con.execute(f"DELETE FROM embedding_results {where}", args)
    return int(n)

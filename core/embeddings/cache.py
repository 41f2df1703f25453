"""Embeddings cached per (encoder, text) in the store's ``embedding_cache`` table.

Look-ups and inserts are batched (one query per call, Arrow tables for inserts). The connection is short-lived
(``core.store.connect``) so a running dashboard and the CLI share the file. ``embed_texts`` is what callers use: it
embeds only the texts missing from the cache and stores them (written by ``core.store.embedding_tables``).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from core.embeddings.encoders import Encoder

_CHUNK = 2000


def _sha(text: str) -> str:
    from core.store import sha256

    return sha256(text)


def lookup(encoder_id: str, texts: Iterable[str], db_path=None) -> dict[str, np.ndarray]:
    """Cached vectors of the given texts (only those present)."""
    from core.store import connect

    by_sha = {_sha(t): t for t in dict.fromkeys(texts)}
    found: dict[str, np.ndarray] = {}
    if not by_sha:
        return found
    shas = sorted(by_sha)
    with connect(db_path) as con:
        for i in range(0, len(shas), _CHUNK):
            part = shas[i:i + _CHUNK]
            rows = con.execute("SELECT text_sha, vector FROM embedding_cache WHERE encoder = ? "
                               "AND text_sha IN (SELECT unnest(?::VARCHAR[]))", [encoder_id, part]).fetchall()
            for sha, vec in rows:
                found[by_sha[sha]] = np.asarray(vec, dtype=np.float32)
    return found


def store(encoder_id: str, vectors: dict[str, np.ndarray], db_path=None) -> int:
    """Insert vectors (text → vector); existing (encoder, text) rows are kept. Returns the number offered."""
    from core.store import connect, embedding_tables, transaction

    if not vectors:
        return 0
    texts = list(vectors)
    with connect(db_path) as con, transaction(con):
        embedding_tables.add_vectors(con, encoder_id, [_sha(t) for t in texts], texts,
                                     [np.asarray(vectors[t], dtype=np.float32).tolist() for t in texts])
    return len(texts)


def embed_texts(encoder: Encoder, texts: Sequence[str], *, db_path=None, use_cache: bool = True,
                progress: Callable[[int, int], None] | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """Vectors for every distinct text (cache first, then the encoder). Returns (text → vector, stats)."""
    unique = list(dict.fromkeys(texts))
    have = lookup(encoder.cache_id, unique, db_path) if use_cache else {}
    todo = [t for t in unique if t not in have]
    if progress:
        progress(len(have), len(unique))
    if todo:
        base = len(have)
        vecs = encoder.encode(todo, progress=(lambda k, n: progress(base + k, len(unique))) if progress else None)
        new = {t: v for t, v in zip(todo, vecs)}
        if use_cache:
            store(encoder.cache_id, new, db_path)
        have.update(new)
    return have, {"texts": len(unique), "cached": len(unique) - len(todo), "embedded": len(todo)}


def clear(encoder_id: str | None = None, db_path=None) -> int:
    """Forget the cached vectors of ``encoder_id`` (every encoder's with None). Returns how many went."""
    from core.store import connect, embedding_tables

    with connect(db_path) as con:
        return embedding_tables.drop_vectors(con, encoder_id)

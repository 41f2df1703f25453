"""The response cache: a call is identified by (model, base URL, sampling parameters, prompt, draw); identical
calls are answered from the ``calls`` table instead of the model."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

# ------------------------------------------------------------------------------------------------------ cache keys


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(model: str, base_url: str | None, params: dict, prompt: str, draw: int = 0) -> str:
    """sha256 of (model spec, base_url, canonical params JSON, prompt, draw index)."""
    return sha256(canonical_json([model, base_url or None, params, prompt, int(draw)]))


class CacheKeys:
    """``cache_key`` for many prompts of one (model, base_url, params): the JSON of the shared head is written once
    (byte for byte what ``canonical_json`` writes for the whole list), only the prompt and draw per call."""

    def __init__(self, model: str, base_url: str | None, params: dict):
        self._head = canonical_json([model, base_url or None, params])[:-1] + ","

    def __call__(self, prompt: str, draw: int = 0) -> str:
        return sha256(self._head + canonical_json(prompt) + "," + str(int(draw)) + "]")


def lookup_calls(con, keys: Iterable[str]) -> dict[str, dict]:
    """Successful cached calls for the given cache keys: key -> call row (dict)."""
    keys = sorted(set(keys))
    if not keys:
        return {}
    # the keys as one list parameter, not an Arrow table: a run looks its calls up before its first request, and
    # pyarrow's first array imports pandas (~0.2 s) — left to the first write, while the first calls are out
    cur = con.execute("SELECT c.* FROM calls c WHERE c.error IS NULL AND c.cache_key IN "
                      "(SELECT unnest(CAST(? AS VARCHAR[])))", [keys])
    names = [d[0] for d in cur.description]
    return {row[0]: dict(zip(names, row)) for row in cur.fetchall()}

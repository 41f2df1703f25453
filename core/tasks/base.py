"""Shared pieces of the task contract."""

from __future__ import annotations

import hashlib
import json
from typing import Any, TypedDict


class Score(TypedDict, total=False):
    """What ``task.score(item, response)`` returns. Common keys first, task-specific after.

    parsed     JSON text of the parsed answer (a sorted list for sets, "true"/"false" for quantifiers),
               None when the response did not follow the instructions
    followed   bool: an answer could be parsed
    correct    bool: exact match with the truth (did-not-follow counts as wrong)
    """

    parsed: str | None
    followed: bool
    correct: bool


def stable_id(obj: Any, n: int = 12) -> str:
    """Short stable hash of a JSON-able object (sorted keys) — identical on every machine and run."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]

"""Parse a model's true/false answer (SPEC Q3).

The answer is the first whole-word "true" or "false" in the response, case-insensitive ("True.", "**FALSE**" and
"Answer: true" all parse; "untrue" and "falsehood" do not). A response with neither word is *unparseable*: it is kept
as its own category (``pred`` None, ``followed`` False, never correct) and is also scored the way the GQG paper did
(its parser returned "false" whenever it found no "true"), in ``correct_gqg``.
"""

from __future__ import annotations

import re

_ANSWER = re.compile(r"\b(true|false)\b", re.IGNORECASE)


def parse_truth(response: str | None) -> str | None:
    """"true", "false", or None when the response holds neither word."""
    if not response:
        return None
    m = _ANSWER.search(response)
    return m.group(1).lower() if m else None


def score_truth(label: str, response: str | None) -> dict:
    """Score dict per CONTRACTS.md: parsed, followed, correct, pred, correct_gqg."""
    if label not in ("true", "false"):
        raise ValueError(f"label must be 'true' or 'false', got {label!r}")
    pred = parse_truth(response)
    return {
        "parsed": pred,                 # "true"/"false" are also valid JSON text
        "followed": pred is not None,
        "correct": pred == label,
        "pred": pred,
        "correct_gqg": (pred or "false") == label,
    }

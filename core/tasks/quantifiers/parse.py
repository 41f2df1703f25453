"""Parse a model's true/false answer: our rule, and the GQG paper's own rule beside it.

Ours (``parse_truth``): the first whole-word "true" or "false" in the response, case-insensitive ("True.",
"**FALSE**" and "Answer: true" all parse; "untrue" and "falsehood" do not). A response with neither word is
*unparseable*: it is kept as its own category (``pred`` None, ``followed`` False, never correct).

GQG's (``parse_truth_gqg``), as its evaluation script (``parse_output`` in github.com/lerow/llm-quantifier,
pythia_test.py) reads an answer: split the stripped response on whitespace; for each piece shorter than 7
characters *as written*, drop every character that is not an ASCII letter and lower-case the rest; the first piece
that then reads "true" or "false" is the answer. No such piece means "false". So "True." and "(true)" count, while
"**true**" (8 characters) and "true/false" are skipped, and "t-r-u-e" is too long but "tr-ue" reads "true".
Its verdict is stored per result in ``correct_gqg``; ``ANSWER_RULES`` names the two rules the metrics can use.
"""

from __future__ import annotations

import re

_ANSWER = re.compile(r"\b(true|false)\b", re.IGNORECASE)
_NOT_LETTER = re.compile(r"[^A-Za-z]")
GQG_MAX_PIECE = 6   # a whitespace-separated piece is read only when it has at most this many characters

# answer rule -> (what it means); "ours" is the default everywhere
ANSWER_RULES = {
    "ours": "first whole word 'true'/'false'; neither = unparsed (its own category, wrong)",
    "gqg": "GQG's evaluation script: first short whitespace piece reading 'true'/'false' after dropping "
           "non-letters; neither = 'false'",
}


def parse_truth(response: str | None) -> str | None:
    """"true", "false", or None when the response holds neither word."""
    if not response:
        return None
    m = _ANSWER.search(response)
    return m.group(1).lower() if m else None


def parse_truth_gqg(response: str | None) -> str:
    """"true" or "false" by the GQG paper's own rule (see the module docstring); never None."""
    for piece in (response or "").strip().split():
        if len(piece) > GQG_MAX_PIECE:
            continue
        word = _NOT_LETTER.sub("", piece).lower()
        if word in ("true", "false"):
            return word
    return "false"


def score_truth(label: str, response: str | None) -> dict:
    """Score dict per CONTRACTS.md: parsed, followed, correct, pred, correct_gqg (GQG's own rule)."""
    if label not in ("true", "false"):
        raise ValueError(f"label must be 'true' or 'false', got {label!r}")
    pred = parse_truth(response)
    return {
        "parsed": pred,                 # "true"/"false" are also valid JSON text
        "followed": pred is not None,
        "correct": pred == label,
        "pred": pred,
        "correct_gqg": parse_truth_gqg(response) == label,
    }

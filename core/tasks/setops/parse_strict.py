"""The SetLexSem reference's own answer rule ("strict" scoring), restated from its documented behaviour.

Public API::

    parse_strict(response: str) -> StrictAnswer(members, followed, reason)
    strict_members(response: str) -> frozenset | None    # just the members (None = did not follow)

``members`` is a frozenset of ints and (case-kept) strings — exactly the set the reference code compares with the
truth — or ``None`` when the reference would record its "did not follow the instructions" sentinel ``{-1}``.

How the reference reads a response (setlexsem/experiment/lmapi.py ``parse_lm_response`` and
``get_text_between_tags``; experiment.py ``run_experiment``), and so how this module does:

1. No literal, lower-case ``<answer>`` anywhere: the answer is the empty set if ``set()`` occurs somewhere in the
   response (reason ``set_call``), otherwise the instruction was not followed (``no_answer_tag``). ``<ANSWER>`` is
   not an answer tag.
2. The candidate blocks are the texts between ``<answer>`` and the next ``</answer>``, found the way a regular
   expression with a look-behind for ``<answer>``, a lazy body and a look-ahead for ``</answer>`` finds all its
   non-overlapping matches. More than one block — a repeated answer, or the instruction's empty ``<answer></answer>``
   echoed beside the real one — did not follow (``several_answer_blocks``). One block: its stripped text
   (``answer_tag``). None (an ``<answer>`` never closed): the *whole* response, stripped (``answer_tag_unclosed``).
3. If the text contains ``set(``, every ``set(`` is deleted and then its last character, whatever it is.
4. Every ASCII space is deleted; the members are the maximal runs of ASCII letters, digits, ``.``, ``-`` and ``_``
   (anything else — commas, quotes, brackets, newlines, tabs, non-ASCII letters — separates them). Case is kept.
5. Members are de-duplicated; each one Python's ``int()`` accepts becomes that int (``007`` → 7, ``-3`` → -3,
   ``1_000`` → 1000; ``1.5`` stays text). The exact one-member sets ``theemptyset``, ``emptyset`` and
   ``Theemptyset`` are the empty set.
6. Comparing sorts both sets: a set holding ints *and* strings cannot be sorted, the reference catches that error
   and records did-not-follow (``mixed_types``). So does an answer that is exactly ``{-1}``, the sentinel itself
   (``sentinel``): the reference's error analysis cannot tell it from a did-not-follow row.

Correctness is then exact set equality with the truth: type-sensitive (7 is not "7") and case-sensitive.
No ``eval``: the members are collected with one regular expression over the chosen text. Every step is linear in
the length of the response (a hostile reply of 100,000 unclosed tags is read in milliseconds).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# reasons (StrictAnswer.reason)
ANSWER_TAG = "answer_tag"
ANSWER_TAG_UNCLOSED = "answer_tag_unclosed"
SET_CALL = "set_call"
NO_ANSWER_TAG = "no_answer_tag"
SEVERAL_ANSWER_BLOCKS = "several_answer_blocks"
MIXED_TYPES = "mixed_types"
SENTINEL = "sentinel"

FOLLOWED_REASONS = frozenset({ANSWER_TAG, ANSWER_TAG_UNCLOSED, SET_CALL})
NOT_FOLLOWED_REASONS = frozenset({NO_ANSWER_TAG, SEVERAL_ANSWER_BLOCKS, MIXED_TYPES, SENTINEL})

OPEN, CLOSE = "<answer>", "</answer>"
_MEMBER = re.compile(r"[A-Za-z0-9._-]+")
_EMPTY_WORDS = (frozenset({"theemptyset"}), frozenset({"emptyset"}), frozenset({"Theemptyset"}))


@dataclass(frozen=True)
class StrictAnswer:
    """members: the reference's answer set, or None when it records did-not-follow."""

    members: frozenset | None
    followed: bool
    reason: str

    def to_json(self) -> str | None:
        """JSON list of the members, ints ascending then strings in code-point order (None if not followed)."""
        if self.members is None:
            return None
        return json.dumps(sorted_members(self.members), ensure_ascii=False)


def sorted_members(members) -> list:
    """Ints ascending, then strings in code-point order (a total order for the mixed sets the reference refuses)."""
    return sorted(members, key=lambda m: (isinstance(m, str), m))


def answer_blocks(text: str, limit: int = 2) -> list[str]:
    """The first ``limit`` matches the reference's block search finds — ``re.findall`` of a look-behind for
    ``<answer>``, a lazy body and a look-ahead for ``</answer>`` — in linear time. (The regular expression itself is
    quadratic on a reply of many unclosed ``<answer>`` tags: every tag starts a scan to the end; 100,000 tags took
    minutes.) Same matches, found with ``str.find``: a match starts right after the first opening tag at or after
    where the previous match ended, and ends at the first closing tag after that; after an empty match the next one
    may start at the same place only if it is not empty (Python's rule for ``findall``)."""
    out: list[str] = []
    pos, empty_at = 0, -1
    while len(out) < limit:
        opening = text.find(OPEN, max(pos - len(OPEN), 0))   # an opening tag that ends at or after pos
        if opening < 0:
            break
        start = opening + len(OPEN)
        end = text.find(CLOSE, start)
        if end == start == empty_at:                         # no second empty match at the same place
            end = text.find(CLOSE, start + 1)
        if end < 0:                                          # no closing tag after this opening, so after none later
            break
        out.append(text[start:end])
        empty_at = start if end == start else -1
        pos = end
    return out


def _members_of(text: str) -> frozenset:
    if "set(" in text:
        text = text.replace("set(", "")[:-1]
    out = set()
    for token in set(_MEMBER.findall(text.replace(" ", ""))):
        try:
            out.add(int(token))
        except ValueError:  # not an integer literal (or too many digits for int())
            out.add(token)
    members = frozenset(out)
    return frozenset() if members in _EMPTY_WORDS else members


def parse_strict(response) -> StrictAnswer:
    """Read ``response`` with the SetLexSem reference's rule (see the module docstring)."""
    text = response if isinstance(response, str) else ""
    if OPEN not in text:
        if "set()" in text:
            return StrictAnswer(frozenset(), True, SET_CALL)
        return StrictAnswer(None, False, NO_ANSWER_TAG)
    blocks = answer_blocks(text)
    if len(blocks) > 1:
        return StrictAnswer(None, False, SEVERAL_ANSWER_BLOCKS)
    reason = ANSWER_TAG if blocks else ANSWER_TAG_UNCLOSED
    members = _members_of((blocks[0] if blocks else text).strip())
    if any(isinstance(m, int) for m in members) and any(isinstance(m, str) for m in members):
        return StrictAnswer(None, False, MIXED_TYPES)
    if members == {-1}:
        return StrictAnswer(None, False, SENTINEL)
    return StrictAnswer(members, True, reason)


def strict_members(response) -> frozenset | None:
    return parse_strict(response).members

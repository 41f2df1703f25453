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
No ``eval``: the members are collected with one regular expression over the chosen text.
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
# the reference's block search: look-behind for the opening tag, the shortest body, look-ahead for the closing tag
_BLOCK = re.compile("(?<=" + re.escape(OPEN) + ")(?s:.*?)(?=" + re.escape(CLOSE) + ")")
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
    blocks = _BLOCK.findall(text)
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

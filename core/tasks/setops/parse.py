"""Turn a raw model response into a set of members — or "did not follow the instructions".

Public API::

    parse_set(response: str, kind: "numbers" | "words") -> ParsedAnswer(members, followed, reason)

``members`` is a canonical tuple (de-duplicated; ints ascending, then strings lexicographic — see
:func:`core.tasks.setops.operations.canonical`) or ``None`` when the response did not follow the instructions.

Where the answer is looked for (first rule that applies wins)
-------------------------------------------------------------
Reasoning blocks — ``<thinking>``, ``<think>``, ``<reasoning>``, ``<scratchpad>``, ``<reflection>`` (any case, spaces
allowed inside the tag) — are removed first, so sets the model mentions while reasoning (A, B, partial results) never
leak into the answer. A closing ``</think>`` without an opening tag (chat templates that pre-fill ``<think>``) marks
everything before it as reasoning.

1. The last complete ``<answer>…</answer>`` block outside reasoning whose content is not blank (reason
   ``answer_tag``; a plain comma/newline list inside the tags → ``answer_tag_bare_list``; only blank blocks →
   ``empty_answer_tag``, an empty set, unless the text around them holds a set). A closing ``</answer>`` without an
   opening tag, when it is the first answer tag (opening tag pre-filled in the prompt), takes the text since the
   previous tag as its content; later stray closing tags are ignored. Reasoning blocks inside an answer block are
   removed from its content. When a block holds several sets, the first one
   that is neither a named operand (``A = {…}``, ``Set B: {…}``) nor an operand of an operator (``{1} ∪ {2}``) wins —
   so ``<answer>A ∪ B = {1, 2} ∪ {3} = {1, 2, 3}</answer>`` gives ``{1, 2, 3}``.
2. An ``<answer>`` opened but never closed (``max_tokens`` hit): a complete set literal inside it is accepted
   (``answer_tag_unclosed``); otherwise ``truncated``.
3. Output that ends inside an unclosed reasoning block: an answer block inside it is used, otherwise ``truncated``.
4. No answer tags: after the last answer label ("Answer:", "final answer is", "the result is", "Solution =" …) the
   first set that is not a named operand (``answer_label``), an empty-set phrase, or — for "Answer:"-style labels — a
   bare comma list on that line (``answer_label_bare_list``). Otherwise the last such set in the whole text
   (``last_set_literal``). If a ``{``/``[``/``(`` is still open after the chosen set (or no set is found), the output was
   cut off: ``truncated``.
5. Answer tags that only occur inside complete reasoning blocks are the last resort.
6. Nothing found: ``no_set_found`` (``empty_response`` for a blank response).

Formats accepted: ``{…}``, ``[…]``, ``(…)``, ``set()``, ``set([...])``, ``frozenset({...})``, LaTeX ``\{ … \}`` /
``\left\{ … \right\}`` / ``\lbrace`` with ``\text{…}`` members, ``∅``/``\emptyset``/``\varnothing``, markdown
code fences and bold, members quoted with ``'`` ``"`` `````, smart quotes or bare, separated by commas, semicolons,
newlines (and spaces inside braces), trailing commas, "and" before the last member. Sets that are not operands
are preferred; among them brace-like sets beat brackets, which beat parentheses (prose often has parentheses).

Empty-set phrasings — "empty set", "the empty set", "null set", "∅", "{}", "set()", "none", "nothing",
"no elements/members/numbers/words", "is empty" — give an empty answer that *did* follow the instructions
(reason ``empty_set_phrase``). ``{∅}`` is read as the empty set (models write it to mean "empty"). A bare
``none``/``nothing``/``empty`` inside answer tags is the empty set; quoted or in braces (``{'none'}``) it is a member.

Normalisation decisions
-----------------------
- numbers: ``007`` → 7, ``-3``/``−3`` → -3, ``+3`` → 3, ``4.0`` → 4. Commas always separate members — thousands
  separators are NOT supported (``{1,000}`` is {1, 0}); the project's numbers are small. A token that is not an
  integer (``2.5``, ``seven``) is kept as a lower-case string member, so it counts as made-up in scoring.
- words: lower-cased; surrounding quotes, backticks, markdown ``*``/``_`` and end punctuation stripped; inner
  apostrophes (smart apostrophes become ``'``) and hyphens kept (``o'clock``, ``well-known``).
- duplicates are removed; an ellipsis member (``...``) is dropped.
- nested sets (``{{1, 2}, {3}}``, ``[{1}, {2}]``) did not follow the instructions (reason ``nested_set``) — the task asks
  for one flat set. A single wrapped set (``[{1, 2}]``, ``({1, 2})``, ``{{1, 2}}`` as left by template brace-escaping)
  is unwrapped.
- A member that is not a single token (prose inside brackets, e.g. "(see above)") makes that bracket group not a set.

No ``eval`` or ``literal_eval``: a small regex scanner over the delimiter positions only, so a response costs time
linear in its length (see ``bench/parse_speed.py``).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Literal

from core.tasks.setops.literals import BULLET, INVALID, best_class, choose, members_of_list, normalise, scan
from core.tasks.setops.operations import canonical

Kind = Literal["numbers", "words"]
KINDS = ("numbers", "words")

# reasons (ParsedAnswer.reason)
ANSWER_TAG = "answer_tag"
ANSWER_TAG_BARE_LIST = "answer_tag_bare_list"
ANSWER_TAG_UNCLOSED = "answer_tag_unclosed"
EMPTY_ANSWER_TAG = "empty_answer_tag"
ANSWER_LABEL = "answer_label"
ANSWER_LABEL_BARE_LIST = "answer_label_bare_list"
LAST_SET_LITERAL = "last_set_literal"
EMPTY_SET_PHRASE = "empty_set_phrase"
NESTED_SET = "nested_set"
TRUNCATED = "truncated"
NO_SET_FOUND = "no_set_found"
EMPTY_RESPONSE = "empty_response"

FOLLOWED_REASONS = frozenset({ANSWER_TAG, ANSWER_TAG_BARE_LIST, ANSWER_TAG_UNCLOSED, EMPTY_ANSWER_TAG, ANSWER_LABEL,
                              ANSWER_LABEL_BARE_LIST, LAST_SET_LITERAL, EMPTY_SET_PHRASE})
NOT_FOLLOWED_REASONS = frozenset({NESTED_SET, TRUNCATED, NO_SET_FOUND, EMPTY_RESPONSE})


@dataclass(frozen=True)
class ParsedAnswer:
    """members: canonical tuple, or None when the response did not follow the instructions."""

    members: tuple | None
    followed: bool
    reason: str

    def to_json(self) -> str | None:
        """JSON text of the members list (what the store keeps in ``results.parsed``), None if not followed."""
        if self.members is None:
            return None
        return json.dumps(list(self.members), ensure_ascii=False)


def _not_followed(reason: str) -> ParsedAnswer:
    return ParsedAnswer(None, False, reason)


def _answer(members, reason: str) -> ParsedAnswer:
    return ParsedAnswer(canonical(members), True, reason)


# ---------------------------------------------------------------------------------------------------------------
# phrases, labels, bare lists

_EMPTY_FULL = re.compile(
    r"(?:the\s+|an\s+|a\s+)?(?:empty(?:\s+set)?|null(?:\s+set)?|none|nothing|no\s+elements?|∅|set\(\s*\)|"
    r"\{\s*\}|\[\s*\]|\(\s*\))", re.IGNORECASE)
_EMPTY_SEARCH = re.compile(
    r"\b(?:empty\s+set|null\s+set|(?:is|are|be|was|remains)\s+(?:an?\s+)?empty|empty\s+intersection|none|nothing|"
    r"no\s+(?:common\s+|shared\s+|such\s+|overlapping\s+)?(?:elements?|members?|items?|numbers?|words?|values?))\b"
    r"|∅", re.IGNORECASE)
_LABEL = re.compile(
    r"\b(?:final\s+answer|answer|result|solution|output)\b\**\s*(?:is\b|:|=|would\s+be\b|will\s+be\b)(?:\s*\**)?",
    re.IGNORECASE)
_LABEL_WORDS = ("answer", "result", "solution", "output")
_LABEL_TAIL = re.compile(r"(?:answer|result|solution|output)\b\**\s*(?:is\b|:|=|would\s+be\b|will\s+be\b)(?:\s*\**)?")


def _labels(text: str) -> list:
    """(end, is_colon_label) of every answer label in ``text``, in order.

    Fast path: find the label words with str.find on the lower-cased text, then match the rest."""
    low = text.lower()
    if len(low) != len(text):  # some character lower-cases to several: positions would not line up
        return [(m.end(), ":" in m.group() or "=" in m.group()) for m in _LABEL.finditer(text)]
    hits = []
    for w in _LABEL_WORDS:
        i = low.find(w)
        while i >= 0:
            if i == 0 or not (low[i - 1].isalnum() or low[i - 1] == "_"):
                m = _LABEL_TAIL.match(low, i)
                if m:
                    hits.append((m.end(), ":" in m.group() or "=" in m.group()))
            i = low.find(w, i + 1)
    hits.sort()
    return hits


_LABEL_PREFIX = re.compile(
    r"^\s*\**\s*(?:(?:so|thus|therefore|hence)\s*,?\s*)?(?:the\s+)?(?:final\s+)?"
    r"(?:answer|result|solution|output|set)\b\**\s*(?:is\b|:|=)?\s*\**\s*", re.IGNORECASE)
_TERMINAL = " \t\r\n.!*`"


def _is_empty_phrase(content: str) -> bool:
    s = _LABEL_PREFIX.sub("", content.strip()).strip(_TERMINAL + "'\"")
    return bool(_EMPTY_FULL.fullmatch(s))


def _bare_list(content: str, kind: str):
    """Members of a plain list such as ``1, 2, 3`` or ``apple\\npear``; None if it is not one."""
    s = _LABEL_PREFIX.sub("", content.strip())
    if "=" in s:
        s = s.rsplit("=", 1)[1]
    s = s.strip(_TERMINAL)
    if not s or any(ch in s for ch in "{}[]()"):
        return None
    lines = [BULLET.sub("", ln) for ln in s.splitlines()]
    s = "\n".join(lines)
    s = re.sub(r"\s+and\s+", ",", s, flags=re.IGNORECASE)
    members = members_of_list(s, kind, space_split=False)
    if members is INVALID and kind == "numbers":
        members = members_of_list(s, kind, space_split=True)
        if members is not INVALID and not all(isinstance(m, int) for m in members):
            members = INVALID
    if members is INVALID or not members:
        return None
    return members


def _first_line(text: str, pos: int) -> str:
    """The first non-blank line of ``text`` from ``pos`` on."""
    n = len(text)
    while pos < n:
        end = text.find("\n", pos)
        if end < 0:
            end = n
        if text[pos:end].strip(" \t\r*`"):
            return text[pos:end]
        pos = end + 1
    return ""


# ---------------------------------------------------------------------------------------------------------------
# regions

_TAGS = re.compile(r"<\s*(/?)\s*(answer|thinking|think|reasoning|scratchpad|reflection)\s*>", re.IGNORECASE)


def _parse_tag_content(content: str, kind: str) -> ParsedAnswer:
    cands, _ = scan(content, kind)
    if cands:
        chosen = choose(cands, first=True)
        if chosen.members is None:
            return _not_followed(NESTED_SET)
        return _answer(chosen.members, ANSWER_TAG)
    if _is_empty_phrase(content):
        return _answer((), EMPTY_SET_PHRASE)
    members = _bare_list(content, kind)
    if members is not None:
        return _answer(members, ANSWER_TAG_BARE_LIST)
    if _EMPTY_SEARCH.search(content):
        return _answer((), EMPTY_SET_PHRASE)
    return _not_followed(NO_SET_FOUND)


def _parse_free_text(text: str, kind: str) -> ParsedAnswer:
    """Text without answer tags (reasoning already removed)."""
    if not text.strip():
        return _not_followed(NO_SET_FOUND)
    cands, unclosed = scan(text, kind)
    clean = [c for c in cands if c.clean]
    clean_starts = [c.start for c in clean]
    for mk_end, colon_label in reversed(_labels(text)):
        region = clean[bisect_left(clean_starts, mk_end):]
        if region:
            chosen = best_class(region)[0]
            if chosen.members is None:
                return _not_followed(NESTED_SET)
            return _answer(chosen.members, ANSWER_LABEL)
        line = _first_line(text, mk_end)
        open_after = bool(unclosed) and unclosed[-1] >= mk_end
        if _is_empty_phrase(line) or (_EMPTY_SEARCH.search(line) and not open_after):
            return _answer((), EMPTY_SET_PHRASE)
        if colon_label:
            members = _bare_list(line, kind)
            if members is not None and not open_after:
                return _answer(members, ANSWER_LABEL_BARE_LIST)
    chosen = choose(cands, first=False) if cands else None
    if unclosed and (chosen is None or unclosed[-1] >= chosen.end):
        return _not_followed(TRUNCATED)
    if chosen is not None:
        if chosen.members is None:
            return _not_followed(NESTED_SET)
        return _answer(chosen.members, LAST_SET_LITERAL)
    last_line = text.rstrip().rsplit("\n", 1)[-1]
    if _EMPTY_SEARCH.search(last_line):
        return _answer((), EMPTY_SET_PHRASE)
    return _not_followed(NO_SET_FOUND)


def _pair_answer_tags(tags: list, boundary: int):
    """Answer blocks ``(start, end)`` (content spans) from answer tags in order, plus the content start of a block
    never closed. A closing tag without an opening one counts only as the very first answer tag (the opening tag was
    pre-filled in the prompt): its content is the text since ``boundary`` (the previous tag)."""
    blocks = []
    pending = None
    first = True
    for t, prev_end in tags:
        if not t.group(1):
            pending = t.end()
        elif pending is not None:
            blocks.append((pending, t.start()))
            pending = None
        elif first:
            blocks.append((max(boundary, prev_end), t.start()))
        first = False
        boundary = t.end()
    return blocks, pending


def _block_text(text: str, s: int, e: int, ranges) -> str:
    inner = [(max(a, s), min(b, e)) for a, b in ranges if a < e and b > s]
    if not inner:
        return text[s:e]
    return _strip_ranges(text[s:e], [(a - s, b - s) for a, b in inner])


def _from_blocks(text: str, blocks, kind: str, outside, ranges=()) -> ParsedAnswer | None:
    """Parse the last non-blank block (reasoning ``ranges`` inside it removed). ``outside`` (a callable giving the
    text around the blocks, or None) is searched when every block is blank."""
    contents = [_block_text(text, s, e, ranges) for s, e in blocks]
    nonblank = [c for c in contents if c.strip()]
    if nonblank:
        return _parse_tag_content(nonblank[-1], kind)
    if blocks:
        if outside is not None:
            res = _parse_free_text(outside(), kind)
            if res.followed and res.reason != EMPTY_SET_PHRASE:
                return res
        return _answer((), EMPTY_ANSWER_TAG)
    return None


def _strip_ranges(text: str, ranges) -> str:
    """``text`` without the given (start, end) ranges, the remaining pieces joined by newlines."""
    out = []
    pos = 0
    for s, e in sorted(ranges):
        if s > pos:
            out.append(text[pos:s])
        pos = max(pos, e)
    out.append(text[pos:])
    return "\n".join(out)


def parse_set(response: str, kind: str) -> ParsedAnswer:
    """Parse a model response into a canonical set of members (see the module docstring for the rules)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(response, str) or not response.strip():
        return _not_followed(EMPTY_RESPONSE)
    text = normalise(response)
    n = len(text)
    tags = []
    i = text.find("<")
    while i >= 0:
        m = _TAGS.match(text, i)
        if m:
            tags.append(m)
        i = text.find("<", i + 1)

    # reasoning ranges (in order, non-overlapping); the last may be unclosed
    think: list = []
    think_open = None
    last_end = 0
    for t in tags:
        if t.group(2).lower() == "answer":
            continue
        if not t.group(1):
            if think_open is None:
                think_open = t.start()
        elif think_open is not None:
            think.append((think_open, t.end()))
            last_end = t.end()
            think_open = None
        else:  # orphan closing tag: everything since the previous reasoning block was reasoning
            think.append((last_end, t.end()))
            last_end = t.end()
    think_unclosed = (think_open, n) if think_open is not None else None
    ranges = think + ([think_unclosed] if think_unclosed else [])

    # answer tags: outside reasoning, inside each complete reasoning block, inside the unclosed one
    outside_tags: list = []
    inside_tags: list = [[] for _ in ranges]
    j = 0
    prev_end = 0
    for t in tags:
        while j < len(ranges) and ranges[j][1] <= t.start():
            prev_end = max(prev_end, ranges[j][1])
            j += 1
        if t.group(2).lower() != "answer":
            continue
        if j < len(ranges) and ranges[j][0] <= t.start():
            inside_tags[j].append((t, 0))
        else:
            outside_tags.append((t, prev_end))
            prev_end = t.end()

    # 1./2. answer blocks outside reasoning
    blocks, pending = _pair_answer_tags(outside_tags, 0)
    if blocks:
        res = _from_blocks(text, blocks, kind, lambda: _strip_ranges(text, ranges + blocks), ranges)
        if res is not None:
            return res
    if pending is not None:
        end = next((s for s, _ in ranges if s >= pending), n)
        content = text[pending:end]
        res = _parse_tag_content(content, kind) if scan(content, kind)[0] else None
        if res is not None and res.followed:
            return ParsedAnswer(res.members, True, ANSWER_TAG_UNCLOSED)
        if res is not None and res.reason == NESTED_SET:
            return res
        return _not_followed(TRUNCATED)

    # 3. output ends inside a reasoning block
    if think_unclosed is not None:
        b, _ = _pair_answer_tags(inside_tags[-1], think_unclosed[0])
        res = _from_blocks(text, b, kind, None)
        if res is not None and res.reason != EMPTY_ANSWER_TAG:
            return res
        return _not_followed(TRUNCATED)

    # 4. free text outside reasoning
    res = _parse_free_text(_strip_ranges(text, ranges), kind)
    if res.followed or res.reason in (NESTED_SET, TRUNCATED):
        return res

    # 5. answer tags inside complete reasoning blocks
    inner = []
    for (s, _), tg in zip(think, inside_tags):
        inner += _pair_answer_tags(tg, s)[0]
    inner = [b for b in inner if text[b[0]:b[1]].strip()]
    if inner:  # (reasoning ranges are not removed here: these blocks live inside them)
        return _from_blocks(text, inner, kind, None)
    return res

"""Finding set literals in free text for the lenient parser: text normalisation (LaTeX, quotes, markup),
member extraction from a list's content, and the scanner that ranks every bracketed candidate in a response
(operands of an operation are skipped; nested sets are flagged)."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------------------------
# text normalisation

_LATEX_TEXT = re.compile(r"\\(?:text|mathrm|textit|textbf|mathit|mathbf|operatorname)\s*\{([^{}]*)\}")
_LATEX_SUBS = (
    (re.compile(r"\\left\s*\\\{|\\left\s*\\lbrace\b|\\lbrace\b|\\\{"), "{"),
    (re.compile(r"\\right\s*\\\}|\\right\s*\\rbrace\b|\\rbrace\b|\\\}"), "}"),
    (re.compile(r"\\(?:emptyset|varnothing)\b|\\O\b"), "∅"),
    (re.compile(r"\\left\s*([\[(])|\\right\s*([\])])"), r"\1\2"),
    (re.compile(r"\\(?:cup)\b"), " ∪ "),
    (re.compile(r"\\(?:cap)\b"), " ∩ "),
    (re.compile(r"\\(?:setminus|backslash)\b"), " − "),
    (re.compile(r"\\(?:triangle|Delta|ominus)\b"), " △ "),
    (re.compile(r"\\[,;:! ]"), " "),
)


def normalise(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if "\\" in text:
        text = _LATEX_TEXT.sub(r"\1", text)
        for rx, rep in _LATEX_SUBS:
            text = rx.sub(rep, text)
    return text


# ---------------------------------------------------------------------------------------------------------------
# members

_QUOTES_AND_MARKUP = " \t\r\n\"'`‘’“”«»„*_.:!?"
_LEADING_CONJ = re.compile(r"^(?:and|or|&)\s+", re.IGNORECASE)
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_INT = re.compile(r"([+\-−]?)0*(\d+)(?:\.0+)?")
_TOKEN = re.compile(r"[^\W_](?:[\w'\-.]*[^\W_])?")
_SPLIT = re.compile(r"[,;\n]")
INVALID = object()


def _member(piece: str, kind: str, space_split: bool, out: list) -> bool:
    """Append the normalised member(s) of one list piece to ``out``; False if the piece is not a member."""
    p = piece.strip()
    if not p:
        return True
    if p[0] in "aAoO&":
        p = _LEADING_CONJ.sub("", p)
    if "\\" in p:
        p = p.replace("\\", "")
    p = p.strip(_QUOTES_AND_MARKUP)
    if not p or p == "∅" or p == "…":
        return True
    if kind == "numbers":
        m = _INT.fullmatch(p)
        if m:
            n = int(m.group(2))
            out.append(-n if m.group(1) in ("-", "−") else n)
            return True
    if "’" in p:
        p = p.replace("’", "'")
    if _TOKEN.fullmatch(p):
        out.append(p.lower())
        return True
    if space_split and (" " in p or "\t" in p):
        parts = p.split()
        if all(_TOKEN.fullmatch(x.strip(_QUOTES_AND_MARKUP)) or _INT.fullmatch(x.strip(_QUOTES_AND_MARKUP))
               for x in parts):
            return all(_member(x, kind, False, out) for x in parts)
    return False


_FAST_NUMBERS = re.compile(r"\s*[+-]?\d+(?:\s*,\s*[+-]?\d+)*\s*,?\s*")
_FAST_WORDS = re.compile(r"\s*(?:'[a-z]+'|\"[a-z]+\"|[a-z]+)(?:\s*,\s*(?:'[a-z]+'|\"[a-z]+\"|[a-z]+))*\s*,?\s*")


def members_of_list(content: str, kind: str, space_split: bool):
    """Members of a delimiter-free list text, or INVALID if some piece is not a single token."""
    # fast paths for the common shapes: plain ints; lower-case words, bare or simply quoted
    if kind == "numbers" and _FAST_NUMBERS.fullmatch(content):
        return [int(x) for x in content.split(",") if not x.isspace() and x]
    if _FAST_WORDS.fullmatch(content):
        return [x.strip().strip("'\"") for x in content.split(",") if not x.isspace() and x]
    out: list = []
    for piece in _SPLIT.split(content):
        if not _member(piece, kind, space_split, out):
            return INVALID
    return out


# ---------------------------------------------------------------------------------------------------------------
# scanning set literals

_CLOSE_TO_OPEN = {"}": "{", "]": "[", ")": "("}
_CLASS = {"{": 0, "[": 1, "(": 2}
_SETCALL = re.compile(r"(?:frozen)?set\s*$", re.IGNORECASE)
_NAMED_STRICT = re.compile(r"\b[A-Z]\s*[:=]\s*\**\s*$")
_NAMED_SET = re.compile(r"\bset\s+[A-Za-z]\s*(?:is|contains|=|:)?\s*\**\s*$", re.IGNORECASE)
_OPERATOR_BEFORE_NAME = re.compile(
    r"(?:[∪∩−△Δ\\^|&\-)]|\b(?:U|union|intersection|intersect|minus|difference|and|xor|with)\b)\s*(?:set\s+)?"
    r"[A-Za-z]?\s*[)]?\s*[:=]\s*\**\s*$", re.IGNORECASE)
_OPERATOR_BEFORE = re.compile(
    r"(?:[∪∩−△Δ\\^|&]|[}\])]\s*,?\s*and|\b(?:U|union|intersect|minus|(?:union|intersection|difference)\s+of))\s*$",
    re.IGNORECASE)
_OPERATOR_AFTER = re.compile(r"\s*(?:[∪∩−△Δ\\^|&]|-\s*[{\[(]|,?\s*and\s+[{\[(]|\b(?:U|union|intersect|minus)\b)")


@dataclass(slots=True)
class _Candidate:
    start: int
    end: int  # exclusive
    cls: int  # 0 brace-like, 1 bracket, 2 parenthesis
    members: object  # list, or None for a nested set
    clean: bool = True


def _is_operand(text: str, start: int, end: int) -> bool:
    """True if the literal at text[start:end] is a named operand (A = {…}) or next to a set operator."""
    before = text[max(0, start - 40):start].rstrip(" \t*")
    last = before[-1:]
    if last in ("=", ":"):
        if _NAMED_SET.search(before):
            return True
        if _NAMED_STRICT.search(before) and not _OPERATOR_BEFORE_NAME.search(before):
            return True
    elif last and last in "∪∩−△Δ\\^|&":
        return True
    elif last.isalpha() and (_NAMED_SET.search(before) or _OPERATOR_BEFORE.search(before)):
        return True
    return bool(_OPERATOR_AFTER.match(text, end, min(len(text), end + 12)))


def _delimiters(text: str) -> list:
    """(position, char) of every bracket and ∅ in ``text``, in order (str.find is much faster than a regex here)."""
    out = []
    for c in "{}[]()∅":
        i = text.find(c)
        while i >= 0:
            out.append((i, c))
            i = text.find(c, i + 1)
    out.sort()
    return out


def scan(text: str, kind: str):
    """All maximal set-like literals in ``text`` (in order) and the positions of openers never closed."""
    stack: list = []
    open_count = {"{": 0, "[": 0, "(": 0}
    groups: list = []  # (start, end_inclusive, opener)
    empties: list = []
    for p, c in _delimiters(text):
        if c == "{" or c == "[" or c == "(":
            stack.append((c, p))
            open_count[c] += 1
        elif c == "∅":
            empties.append(p)
        else:
            want = _CLOSE_TO_OPEN[c]
            if not open_count[want]:
                continue  # stray closer
            while stack[-1][0] != want:  # openers left open inside this group are dropped
                open_count[stack.pop()[0]] -= 1
            open_count[want] -= 1
            groups.append((stack.pop()[1], p, want))
    unclosed = [p for _, p in stack]
    cands: list[_Candidate] = []
    if groups:
        groups.sort()
        # direct children via a containment stack
        children: dict = {}
        roots: list = []
        open_: list = []
        for g in groups:
            while open_ and open_[-1][1] < g[0]:
                open_.pop()
            if open_:
                children.setdefault(open_[-1], []).append(g)
            else:
                roots.append(g)
            open_.append(g)
        todo = list(reversed(roots))
        while todo:
            g = todo.pop()
            cand = _evaluate(text, g, children.get(g, ()), children, kind)
            if cand is not None:
                cands.append(cand)
            else:
                todo.extend(reversed(children.get(g, ())))
    if empties:
        starts = [c.start for c in cands]
        ends = [c.end for c in cands]
        for p in empties:
            k = bisect_right(starts, p) - 1
            if k < 0 or ends[k] <= p:
                cands.append(_Candidate(p, p + 1, 0, []))
        cands.sort(key=lambda c: c.start)
    for c in cands:
        c.clean = not _is_operand(text, c.start, c.end)
    return cands, unclosed


def _opening(text: str, g) -> tuple[int, int]:
    """(where the literal starts — at ``set`` for ``set(...)`` —, its delimiter class)."""
    s, _, opener = g
    setcall = opener == "(" and _SETCALL.search(text, max(0, s - 10), s)
    return (setcall.start(), 0) if setcall else (s, _CLASS[opener])


def _around(text: str, g, kids) -> list[str]:
    """The content of group ``g`` around its direct children."""
    s, e, _ = g
    pieces = []
    pos = s + 1
    for k in kids:
        pieces.append(text[pos:k[0]])
        pos = k[1] + 1
    pieces.append(text[pos:e])
    return pieces


def _evaluate(text: str, g, kids, children, kind) -> _Candidate | None:
    start, cls = _opening(text, g)
    end = g[1] + 1
    # a chain of wrappers around one group ("{{1, 2}}", "[(…)]"): the innermost decides, the best class counts.
    # Unwrapped in a loop, not by recursion: a reply nested 100,000 deep is hostile input, not a crash.
    pieces = _around(text, g, kids)
    while len(kids) == 1 and not "".join(pieces).strip(" \t\r\n,;*`"):
        g = kids[0]
        kids = children.get(g, ())
        cls = min(cls, _opening(text, g)[1])
        pieces = _around(text, g, kids)
    s, e, _ = g
    inner_cls = _opening(text, g)[1]
    if not kids:
        members = members_of_list(text[s + 1:e], kind, space_split=inner_cls == 0)
        if members is INVALID:
            return None
        return _Candidate(start, end, cls, members)
    # a list whose members are groups (and tokens) = a nested set
    marked = "\x00".join(pieces)
    for piece in _SPLIT.split(marked):
        stripped = piece.strip(" \t\r\n")
        if not stripped or stripped == "\x00":
            continue
        if members_of_list(stripped.replace("\x00", ""), kind, False) is INVALID:
            return None
        if "\x00" in stripped and stripped.replace("\x00", "").strip(_QUOTES_AND_MARKUP):
            return None  # e.g. "apple (fruit)" — annotation, not a list of sets
    return _Candidate(start, end, cls, None)


def best_class(cands):
    if not cands:
        return cands
    best = min(c.cls for c in cands)
    return [c for c in cands if c.cls == best]


def choose(cands, first: bool) -> _Candidate:
    """Among clean candidates if any (else all): the best delimiter class, then the first or last one."""
    pool = best_class([c for c in cands if c.clean] or cands)
    return pool[0] if first else pool[-1]

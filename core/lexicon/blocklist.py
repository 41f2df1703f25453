"""The project's blocklist and the curated word pool it defines (words safe to project).

``data/lexicon/blocklist.txt`` lists lower-case words and shell globs (``sex*``) and ``group: SYNSET`` lines (see
``data/lexicon/README.md``). :func:`curate_groups` applies it to hyponym groups: a group is left out when it is listed,
or when its hypernym's name, synset lemma or definition holds a blocked word; every blocked member is removed from the
groups that stay (members of a listed group are blocked everywhere), and a group left with fewer than two members is
dropped. The reference's pool (the groups as shipped) is untouched; the curated pool is what the live demo and its
recording draw from.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from functools import lru_cache

from core.errors import ImportFileError
from core.files import DATA_DIR

DEFAULT_PATH = DATA_DIR / "lexicon" / "blocklist.txt"
MIN_MEMBERS = 2  # the smallest group the deceptive sampler keeps (data/hyponyms/README.md, rule 4)
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Blocklist:
    """Blocked words (exact), globs (``fnmatch`` patterns) and listed groups (synset names)."""

    words: frozenset[str]
    globs: tuple[str, ...]
    groups: frozenset[str]

    @functools.cached_property
    def _glob_pattern(self) -> re.Pattern | None:
        """Every glob as one compiled pattern (``fnmatch.translate`` of each, as ``fnmatchcase`` matches them)."""
        return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in self.globs)) if self.globs else None

    def blocks(self, word: str) -> bool:
        """True when a lower-cased word is blocked (equal to a listed word or matching a glob)."""
        w = word.lower()
        return w in self.words or (self._glob_pattern is not None and self._glob_pattern.match(w) is not None)

    def blocked_in(self, text: str) -> list[str]:
        """The words of ``text`` (letters only, lower-cased; ``_`` and punctuation split words) that are blocked."""
        return [w for w in _WORD.findall(text.lower()) if self.blocks(w)]


def parse_blocklist(text: str, where: str = "blocklist") -> Blocklist:
    words: set[str] = set()
    globs: list[str] = []
    groups: set[str] = set()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("group:"):
            synset = line[len("group:"):].strip()
            if not synset:
                raise ImportFileError(f"{where}:{n}: `group:` without a synset name")
            groups.add(synset)
        elif line != line.lower() or " " in line:
            raise ImportFileError(f"{where}:{n}: {line!r} is not one lower-case word or glob")
        elif any(c in line for c in "*?["):
            globs.append(line)
        else:
            words.add(line)
    return Blocklist(frozenset(words), tuple(dict.fromkeys(globs)), frozenset(groups))


@lru_cache(maxsize=4)
def load_blocklist(path: str | None = None) -> Blocklist:
    """The shipped blocklist (or the one at ``path``)."""
    p = str(DEFAULT_PATH if path is None else path)
    try:
        text = open(p, encoding="utf-8").read()
    except OSError as exc:
        raise ImportFileError(f"cannot read the blocklist {p}: {exc}") from None
    return parse_blocklist(text, p)


def group_reason(group, blocklist: Blocklist) -> str | None:
    """Why a hyponym group is left out of the curated pool as a whole, or None when it is not."""
    if group.synset in blocklist.groups:
        return "listed"
    lemma = group.synset.rsplit(".", 2)[0]
    hits = blocklist.blocked_in(f"{lemma} {group.name} {group.gloss}")
    return f"blocked word {hits[0]!r} in its name or definition" if hits else None


def curate_groups(groups, blocklist: Blocklist | None = None) -> tuple:
    """The curated pool: ``groups`` without blocked groups and blocked members (see the module's docstring)."""
    from dataclasses import replace

    bl = load_blocklist() if blocklist is None else blocklist
    groups = tuple(groups)
    listed_members = {m for g in groups if g.synset in bl.groups for m in g.members}
    kept = []
    for g in groups:
        if group_reason(g, bl) is not None:
            continue
        members = tuple(m for m in g.members if m not in listed_members and not bl.blocks(m))
        if len(members) < MIN_MEMBERS:
            continue
        kept.append(g if len(members) == len(g.members) else replace(g, members=members))
    return tuple(kept)


def unsafe_words(words, blocklist: Blocklist | None = None) -> list[str]:
    """The words among ``words`` that the curated pool would not show (blocked, or a member of a listed group)."""
    bl = load_blocklist() if blocklist is None else blocklist
    listed = _listed_members(bl)
    return [w for w in words if bl.blocks(w) or w in listed]


def _listed_members(bl: Blocklist) -> frozenset[str]:
    from core.lexicon.hyponyms import group_by_synset

    return frozenset(m for s in bl.groups if (g := group_by_synset(s)) is not None for m in g.members)


def item_is_safe(item: dict, blocklist: Blocklist | None = None) -> bool:
    """Whether an item of deceptive sets shows nothing the curated pool leaves out: no blocked member, and no
    hypernym (of its sets or its members) that is listed or holds a blocked word in its name or definition."""
    from core.lexicon.hyponyms import group_by_synset

    bl = load_blocklist() if blocklist is None else blocklist
    words = [*item.get("set_a", ()), *item.get("set_b", ())]
    if unsafe_words(words, bl):
        return False
    hypernyms = {item.get("hypernym_a"), item.get("hypernym_b"), *(item.get("member_hypernyms") or {}).values()}
    for syn in filter(None, hypernyms):
        g = group_by_synset(syn)
        if g is None or group_reason(g, bl) is not None:
            return False
    return True

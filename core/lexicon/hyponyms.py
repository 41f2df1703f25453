"""WordNet hyponym groups for deceptive sets — read from the file shipped in ``data/hyponyms/``.

A group is one hypernym synset (e.g. ``grandparent.n.01``) with the cleaned single-word lemmas of its hyponyms
(``gramps``, ``granny``, ``nan`` …). The groups are built once from WordNet 3.0 by ``python -m core build-hyponyms``
(see :mod:`core.lexicon.wordnet_build` and ``data/hyponyms/README.md``); reading them needs no WordNet and no NLTK.

File format (``groups.json.gz``, deterministic gzip of canonical JSON)::

    {"format": "setlexsem-studio/hyponym-groups", "format_version": 2,
     "source": {...}, "rules": {...}, "counts": {...},
     "groups": [[synset, name, gloss, [member, ...], pos], ...]}    # groups sorted by synset, members sorted;
                                                                     # pos = noun / verb (the hypernym's)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

from core.errors import ImportFileError
from core.files import DATA_DIR
from core.lexicon.datafile import dump_json_gz, read_json_gz, write_atomic

FORMAT = "setlexsem-studio/hyponym-groups"
FORMAT_VERSION = 2   # 2: each group also records the hypernym's part of speech (1 is still read: pos from the id)
DEFAULT_PATH = DATA_DIR / "hyponyms" / "groups.json.gz"


@dataclass(frozen=True)
class HyponymGroup:
    """One hypernym and the cleaned lemmas of its hyponyms (distinct, lower-case, sorted)."""

    synset: str  # e.g. "mammal.n.01"
    name: str  # readable: the synset's first lemma with spaces, e.g. "motor vehicle"
    gloss: str  # the synset's definition
    members: tuple[str, ...]
    pos: str | None = None  # the hypernym's part of speech: "noun", "verb" (None: unknown)
    member_set: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "members", tuple(self.members))
        if self.pos is None:
            object.__setattr__(self, "pos", pos_of_synset(self.synset))
        object.__setattr__(self, "member_set", frozenset(self.members))

    def __len__(self) -> int:
        return len(self.members)

    def to_dict(self) -> dict:
        return {"synset": self.synset, "name": self.name, "gloss": self.gloss, "members": list(self.members),
                "pos": self.pos}


_POS_LETTERS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}


def pos_of_synset(synset: str) -> str | None:
    """The part of speech an NLTK-style synset name carries (``dog.n.01`` -> noun), else None."""
    parts = synset.rsplit(".", 2)
    return _POS_LETTERS.get(parts[1]) if len(parts) == 3 else None


# ------------------------------------------------------------------------------------------------------ read / write
def _canonical_path(path) -> str:
    return os.path.abspath(os.fspath(DEFAULT_PATH if path is None else path))


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[dict, tuple[HyponymGroup, ...]]:
    doc = read_json_gz(path, FORMAT, "build it with `python -m core build-hyponyms`")
    if not isinstance(doc.get("groups"), list):
        raise ImportFileError(f"{path}: hyponym groups file without a list of groups")
    groups = []
    for row in doc["groups"]:
        try:
            synset, name, gloss, members, *rest = row
            if len(rest) > 1:
                raise ValueError(row)
            pos = str(rest[0]) if rest and rest[0] is not None else None
            groups.append(HyponymGroup(str(synset), str(name), str(gloss), tuple(str(m) for m in members), pos))
        except (TypeError, ValueError):
            raise ImportFileError(f"{path}: malformed group entry {str(row)[:80]!r}") from None
    meta = {k: v for k, v in doc.items() if k != "groups"}
    return meta, tuple(groups)


def load_groups(path=None) -> tuple[HyponymGroup, ...]:
    """All shipped groups (or those of ``path``), sorted by synset name. Cached per path."""
    return _load(_canonical_path(path))[1]


def load_metadata(path=None) -> dict:
    """Provenance of the groups file: source WordNet, cleaning rules, counts."""
    return dict(_load(_canonical_path(path))[0])


def serialize_groups(groups, meta: dict) -> bytes:
    """Canonical JSON (sorted keys, groups sorted by synset), gzip'ed with mtime 0: equal input -> equal bytes."""
    doc = dict(meta)
    doc["format"] = FORMAT
    doc["format_version"] = FORMAT_VERSION
    doc["groups"] = [[g.synset, g.name, g.gloss, sorted(g.members), g.pos]
                     for g in sorted(groups, key=lambda g: g.synset)]
    return dump_json_gz(doc)


def write_groups(groups, path, meta: dict) -> None:
    """Write atomically (temp file + rename), so a failed build never leaves a half-written file."""
    write_atomic(path, serialize_groups(groups, meta))
    for cached in (_load, _by_synset, _groups_at_least, _all_vocabulary):
        cached.cache_clear()


# --------------------------------------------------------------------------------------------------------- queries
@lru_cache(maxsize=4)
def _by_synset(path: str) -> dict[str, HyponymGroup]:
    return {g.synset: g for g in _load(path)[1]}


def group_by_synset(synset: str, path=None) -> HyponymGroup | None:
    return _by_synset(_canonical_path(path)).get(synset)


@lru_cache(maxsize=64)
def _groups_at_least(path: str, size: int) -> tuple[HyponymGroup, ...]:
    return tuple(g for g in _load(path)[1] if len(g.members) >= size)


def groups_with_at_least(size: int, path=None) -> tuple[HyponymGroup, ...]:
    """Groups that can supply ``size`` distinct members (what a deceptive set of that size needs)."""
    return _groups_at_least(_canonical_path(path), int(size))


def hyponym_vocabulary(groups=None) -> tuple[str, ...]:
    """The pooled, de-duplicated, sorted members of ``groups`` (default: all shipped groups) — the random baseline's
    vocabulary. Pass the groups a configuration actually draws from (e.g. ``groups_with_at_least(m)``)."""
    if groups is None:
        return _all_vocabulary(_canonical_path(None))
    return tuple(sorted({m for g in groups for m in g.members}))


@lru_cache(maxsize=4)
def _all_vocabulary(path: str) -> tuple[str, ...]:
    return tuple(sorted({m for g in _load(path)[1] for m in g.members}))


def disjoint(a: HyponymGroup, b: HyponymGroup) -> bool:
    """True when the two groups share no member (e.g. 'dog' and 'hunting dog' overlap; pick disjoint pairs)."""
    return a.member_set.isdisjoint(b.member_set)


# ---------------------------------------------------------------------------------------------------------- search
PICKER_LIMIT = 300   # options a hypernym picker lists: 5,703 of them made each page visit carry ~0.3 MB of labels


@dataclass(frozen=True)
class PickerChoices:
    """What a hypernym picker lists (``synsets``) and how it was chosen, for the caption beside it."""

    synsets: tuple[str, ...]  # the kept picks first when they were not listed anyway, then the listed groups
    matched: int  # groups matching the search text (every group when there is none)
    listed: int  # how many of those are listed (at most the limit)
    total: int  # groups searched
    text: str  # the search text as matched (normalised); "" for the default list


def _normal(text: str) -> str:
    """Lower case, ``_`` as a space, runs of spaces as one: "Motor_Vehicle" and "motor  vehicle" search alike."""
    return " ".join(str(text).replace("_", " ").lower().split())


def match_rank(group: HyponymGroup, query: str) -> int | None:
    """How well ``group`` matches a normalised ``query`` (lower rank first), by its name or synset id:
    0 the whole name or id (``fish``, ``fish.n.02``), 1 its start (``fish.n``, ``fisherman``), 2 the start of a later
    word (``flying fish``), 3 anywhere in the name (``catfish``); None when it does not match. The sense suffix
    (``.n.02``) is matched only from the start, so ``n`` does not match every noun."""
    name, synset = _normal(group.name), _normal(group.synset)
    lemma = synset.rsplit(".", 2)[0]
    if query in (name, synset, lemma):
        return 0
    if name.startswith(query) or synset.startswith(query):
        return 1
    if f" {query}" in f" {name}" or f" {query}" in f" {lemma}":
        return 2
    if query in name or query in lemma:
        return 3
    return None


def search_groups(groups, text: str) -> list[HyponymGroup]:
    """Every group matching ``text`` (case-insensitive, on name and synset id), best first: whole name or id, then
    names starting with it, then a later word starting with it, then anywhere; alphabetical within each. Empty text
    matches nothing (the caller decides what an empty search shows)."""
    query = _normal(text)
    if not query:
        return []
    ranked = [(rank, g.name.lower(), g.synset, g) for g in groups if (rank := match_rank(g, query)) is not None]
    return [g for *_, g in sorted(ranked, key=lambda r: r[:3])]


def largest_groups(groups, limit: int) -> list[HyponymGroup]:
    """The ``limit`` groups with the most members (ties by name), in alphabetical order to read as a list: the
    groups every set size can draw from, a useful list before anything is searched."""
    biggest = sorted(groups, key=lambda g: (-len(g.members), g.name.lower(), g.synset))[:max(int(limit), 0)]
    return sorted(biggest, key=lambda g: (g.name.lower(), g.synset))


def picker_choices(groups, text: str = "", keep=(), limit: int = PICKER_LIMIT) -> PickerChoices:
    """The options of a hypernym picker over ``groups``: the best ``limit`` matches of ``text``, or without text the
    ``limit`` largest groups — so a browser receives a few hundred options, not thousands, and typing reaches every
    group. The synsets in ``keep`` (the current picks, a shared link's, a run's) are always listed, ahead of the rest
    when they would not be, so a pick never disappears from its picker."""
    groups = tuple(groups)
    query = _normal(text)
    limit = max(int(limit), 0)
    if query:
        matches = search_groups(groups, query)
        matched, listed = len(matches), matches[:limit]
    else:
        matched, listed = len(groups), largest_groups(groups, limit)
    shown = [g.synset for g in listed]
    seen = set(shown)
    extra = [s for s in dict.fromkeys(keep) if s and s not in seen]
    return PickerChoices(tuple(extra + shown), matched=matched, listed=len(shown), total=len(groups), text=query)

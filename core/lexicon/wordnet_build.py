"""Build the hyponym groups of deceptive sets from a real WordNet (used by ``python -m core build-hyponyms``).

Rules (also written into the output file and ``data/hyponyms/README.md``):

1. Every synset of the chosen parts of speech (all of them by default, as the SetLexSem code walks every synset; in
   WordNet 3.0 only nouns and verbs have hyponyms) that has hyponyms is a candidate hypernym. Its group
   is the **full hyponym closure** (children, grand-children, …; regular hyponym links only — WordNet's *instance*
   hyponyms, i.e. named individuals such as cities or people, are not followed), as in the SetLexSem code.
2. Lemmas are cleaned **per synset**: lower-cased; only single tokens of letters a–z are kept (no underscores, hyphens,
   spaces, digits, apostrophes or dots); then, walking the synset's lemmas in WordNet's order (head word first), a
   lemma is dropped when it is a near-duplicate of one already kept: one is a substring of the other, or their
   Levenshtein distance (``nltk.edit_distance``) is below ``min_edit_distance`` (default 3). This removes spelling
   variants of one concept (``granny``/``grannie``, ``grandpa``/``grandpapa``) but keeps distinct concepts that look
   alike (``grandma`` and ``grandpa`` are different synsets).
3. A group's members are the distinct cleaned lemmas of all synsets in the closure, minus the hypernym's own cleaned
   lemmas, sorted, with the hypernym's part of speech. Groups with fewer than ``min_size`` (default 2, the smallest
   set the SetLexSem studies draw) or more than ``max_size`` (default 30, the reference's bound: "too generic")
   members are dropped.
4. Several hypernyms can yield the very same member set (a chain whose intermediate synsets only have multi-word
   lemmas); only one is kept: the most specific (fewest synsets in its closure), then the smallest synset name.

The result is a pure function of the WordNet files: everything is sorted, no ``set`` order or ``hash()`` reaches the
output. Closures are computed bottom-up once per synset with memoisation and cut off as soon as they are provably too
large, so the walk is linear in the size of WordNet instead of quadratic.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from importlib import metadata

from core.errors import UserError
from core.lexicon.hyponyms import HyponymGroup

DEFAULT_MIN_SIZE = 2
DEFAULT_MAX_SIZE = 30
DEFAULT_MIN_EDIT_DISTANCE = 3
_SIMPLE = re.compile(r"[a-z]+")

# WordNet 3.0's 45 lexicographer files (lexnames(5WN)); NLTK needs this file, Debian does not ship it.
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
_LEX_CLASS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


@dataclass(frozen=True)
class SynsetNode:
    """Backend-neutral view of one synset: what the builder needs and nothing more."""

    id: str  # "dog.n.01" (NLTK) or the lexicon's synset id (wn)
    lemmas: tuple[str, ...]  # in WordNet's order, as written (underscores for spaces in NLTK)
    gloss: str
    hyponyms: tuple[str, ...]  # ids of direct hyponyms
    pos: str | None = None  # "noun", "verb", "adjective", "adverb"


POS_TAGS = ("n", "v", "a", "r")
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
POS_WORDS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}


def pos_tags(pos) -> tuple[str, ...]:
    """``"all"`` / None -> every part of speech; ``"n"`` or ``("n", "v")`` -> those (WordNet's one-letter tags)."""
    if pos is None or pos == "all":
        return POS_TAGS
    tags = (pos,) if isinstance(pos, str) else tuple(pos)
    bad = [t for t in tags if t not in POS_TAGS]
    if bad or not tags:
        raise UserError(f"unknown part of speech {bad[0] if bad else pos!r} (expected n, v, a, r or all)")
    return tags


# ---------------------------------------------------------------------------------------------------- backends
def nltk_graph(reader, pos: str = "n") -> dict[str, SynsetNode]:
    """Synset graph from an NLTK ``WordNetCorpusReader``."""
    synsets = list(reader.all_synsets(pos))  # first load every synset, so hyponyms() below hits NLTK's cache
    nodes = {}
    for s in synsets:
        nodes[s.name()] = SynsetNode(s.name(), tuple(s.lemma_names()), s.definition() or "",
                                     tuple(h.name() for h in s.hyponyms()), POS_WORDS.get(s.pos(), s.pos()))
    return nodes


def wn_graph(wordnet, pos: str = "n") -> dict[str, SynsetNode]:
    """Synset graph from a ``wn.Wordnet`` object (any WN-LMF lexicon)."""
    nodes = {}
    for s in wordnet.synsets(pos=pos):
        # regular hyponyms only (wn's Synset.hyponyms() would add instance hyponyms), like NLTK's hyponyms()
        nodes[s.id] = SynsetNode(s.id, tuple(w.replace(" ", "_") for w in s.lemmas()), s.definition() or "",
                                 tuple(h.id for h in s.get_related("hyponym")), POS_WORDS.get(s.pos, s.pos))
    return nodes


def graph_of(wordnet_reader, pos="all") -> dict[str, SynsetNode]:
    """The synset graph of the parts of speech ``pos`` (see :func:`pos_tags`; hyponym links never leave one)."""
    if isinstance(wordnet_reader, dict):
        return wordnet_reader
    if hasattr(wordnet_reader, "all_synsets"):
        one = nltk_graph
    elif hasattr(wordnet_reader, "synsets") and hasattr(wordnet_reader, "lexicons"):
        one = wn_graph
    else:
        raise TypeError(f"not a WordNet reader: {type(wordnet_reader).__name__}")
    nodes: dict[str, SynsetNode] = {}
    for tag in pos_tags(pos):
        nodes.update(one(wordnet_reader, tag))
    return nodes


# ----------------------------------------------------------------------------------------------------- cleaning
def clean_lemmas(lemma_names, min_edit_distance: int = DEFAULT_MIN_EDIT_DISTANCE) -> tuple[str, ...]:
    """One synset's lemmas → its single-word, lower-case lemmas with near-duplicates removed (WordNet order)."""
    from nltk.metrics.distance import edit_distance

    kept: list[str] = []
    for raw in lemma_names:
        word = raw.lower()
        if not _SIMPLE.fullmatch(word) or word in kept:
            continue
        if any(word in k or k in word or _closer_than(word, k, min_edit_distance, edit_distance) for k in kept):
            continue
        kept.append(word)
    return tuple(kept)


def _closer_than(a: str, b: str, limit: int, edit_distance) -> bool:
    """edit_distance(a, b) < limit, skipping the O(len a * len b) computation when a cheap lower bound decides:
    every edit changes at most one character in or out, so the letters of one word missing from the other (as
    multisets) bound the distance from below (and so does the length difference)."""
    if abs(len(a) - len(b)) >= limit:
        return False
    ca, cb = Counter(a), Counter(b)
    if max((ca - cb).total(), (cb - ca).total()) >= limit:
        return False
    return edit_distance(a, b) < limit


def readable_name(node: SynsetNode) -> str:
    return node.lemmas[0].replace("_", " ") if node.lemmas else node.id


# ------------------------------------------------------------------------------------------------------ building
def build_groups(wordnet_reader, *, pos="all", min_size: int = DEFAULT_MIN_SIZE, max_size: int = DEFAULT_MAX_SIZE,
                 min_edit_distance: int = DEFAULT_MIN_EDIT_DISTANCE) -> tuple[HyponymGroup, ...]:
    """All hyponym groups of ``wordnet_reader`` (an NLTK WordNet reader, a ``wn.Wordnet``, or a prepared graph)."""
    return build(wordnet_reader, pos=pos, min_size=min_size, max_size=max_size,
                 min_edit_distance=min_edit_distance)[0]


def build(wordnet_reader, *, pos="all", min_size: int = DEFAULT_MIN_SIZE, max_size: int = DEFAULT_MAX_SIZE,
          min_edit_distance: int = DEFAULT_MIN_EDIT_DISTANCE) -> tuple[tuple[HyponymGroup, ...], dict]:
    """Like :func:`build_groups`, also returning counts for the README / metadata."""
    if not 1 <= min_size <= max_size:
        raise UserError(f"need 1 <= min_size <= max_size, got {min_size} and {max_size}")
    graph = graph_of(wordnet_reader, pos)
    clean = {sid: clean_lemmas(node.lemmas, min_edit_distance) for sid, node in graph.items()}
    # A hypernym's own lemmas are removed from its group, so a raw closure larger than this can never shrink back
    # to max_size, and neither can any ancestor's (closures only grow upwards): stop tracking it.
    cap = max_size + max((len(c) for c in clean.values()), default=0)
    TOO_BIG = None
    closure: dict[str, frozenset | None] = {}

    def raw_closure(root: str):
        # iterative post-order walk (no recursion limit issues on deep hierarchies)
        stack = [(root, False)]
        on_path = set()
        while stack:
            sid, expanded = stack.pop()
            if sid in closure:
                continue
            children = [c for c in graph[sid].hyponyms if c in graph]
            if not expanded:
                if sid in on_path:
                    raise UserError(f"hyponym cycle through {sid}")
                on_path.add(sid)
                stack.append((sid, True))
                stack.extend((c, False) for c in children if c not in closure)
                continue
            on_path.discard(sid)
            acc: set[str] = set()
            for c in children:
                sub = closure[c]
                if sub is TOO_BIG:
                    acc = None
                    break
                acc.update(clean[c])
                acc.update(sub)
                if len(acc) > cap:
                    acc = None
                    break
            closure[sid] = TOO_BIG if acc is None else frozenset(acc)
        return closure[root]

    candidates: dict[tuple[str, ...], list] = {}
    n_hypernyms = n_too_big = n_too_small = 0
    for sid in sorted(graph):
        node = graph[sid]
        if not node.hyponyms:
            continue
        n_hypernyms += 1
        raw = raw_closure(sid)
        if raw is TOO_BIG:
            n_too_big += 1
            continue
        members = tuple(sorted(raw.difference(clean[sid])))
        if len(members) > max_size:
            n_too_big += 1
            continue
        if len(members) < min_size:
            n_too_small += 1
            continue
        candidates.setdefault(members, []).append(sid)

    groups = []
    n_duplicates = 0
    for members, sids in candidates.items():
        if len(sids) > 1:
            n_duplicates += len(sids) - 1
            sids = sorted(sids, key=lambda s: (_closure_size(graph, s), s))
        node = graph[sids[0]]
        groups.append(HyponymGroup(node.id, readable_name(node), node.gloss, members, node.pos))
    groups.sort(key=lambda g: g.synset)
    sizes = [len(g.members) for g in groups]
    counts = {
        "synsets": len(graph),
        "hypernyms_with_hyponyms": n_hypernyms,
        "dropped_too_generic": n_too_big,
        "dropped_too_small": n_too_small,
        "dropped_duplicate_member_sets": n_duplicates,
        "groups": len(groups),
        "vocabulary": len({m for g in groups for m in g.members}),
        "groups_by_min_size": {str(k): sum(s >= k for s in sizes) for k in (2, 4, 8, 16)},
        "groups_by_pos": {p: sum(g.pos == p for g in groups) for p in sorted({str(g.pos) for g in groups})},
        "members_total": sum(sizes),
    }
    return tuple(groups), counts


def _closure_size(graph: dict[str, SynsetNode], sid: str) -> int:
    seen: set[str] = set()
    todo = [sid]
    while todo:
        for c in graph[todo.pop()].hyponyms:
            if c in graph and c not in seen:
                seen.add(c)
                todo.append(c)
    return len(seen)


def rules(pos, min_size: int, max_size: int, min_edit_distance: int) -> dict:
    return {"pos": [POS_WORDS[t] for t in pos_tags(pos)], "closure": "full (regular hyponym links, no instance hyponyms)", "min_size": min_size,
            "max_size": max_size, "min_edit_distance": min_edit_distance,
            "lemmas": "lower-cased, [a-z]+ only; near-duplicates (substring or edit distance < min_edit_distance) "
                      "removed within each synset keeping WordNet's order; hypernym's own lemmas excluded",
            "duplicates": "identical member sets kept once: fewest closure synsets, then smallest synset name"}


# ------------------------------------------------------------------------------------------- opening WordNet 3.0
class _NLTKData:
    """A temporary NLTK data folder holding a copy of a WNDB directory (e.g. Debian's /usr/share/wordnet).

    NLTK 3.10 only reads corpora below a registered data path (no symlinks) and needs a ``lexnames`` file that Debian
    does not ship; we copy the WNDB files into ``<tmp>/corpora/wordnet``, write ``lexnames`` when missing and
    register ``<tmp>`` on ``nltk.data.path`` for the lifetime of this object.
    """

    FILES = re.compile(r"(data|index)\.(noun|verb|adj|adv)|index\.sense|[a-z]+\.exc|cntlist\.rev|lexnames")

    def __init__(self, wordnet_dir: str, parts_of_speech=("noun", "verb", "adj", "adv")):
        if not os.path.isfile(os.path.join(wordnet_dir, "data.noun")):
            raise UserError(f"no WordNet database in {wordnet_dir} (expected data.noun, index.noun …; on Debian: "
                            "apt-get install wordnet-base wordnet-sense-index)")
        self.tmp = tempfile.mkdtemp(prefix="studio-nltk-wordnet-")
        self.corpus = os.path.join(self.tmp, "corpora", "wordnet")
        os.makedirs(self.corpus)
        for name in sorted(os.listdir(wordnet_dir)):
            m = self.FILES.fullmatch(name)
            if not m:
                continue
            if m.group(2) is None or m.group(2) in parts_of_speech:
                shutil.copyfile(os.path.join(wordnet_dir, name), os.path.join(self.corpus, name))
            elif m.group(1) == "data":  # keep the licence header: NLTK's get_version() reads it from data.adj
                with open(os.path.join(wordnet_dir, name), encoding="utf-8", errors="replace") as src, \
                        open(os.path.join(self.corpus, name), "w", encoding="utf-8") as dst:
                    for line in src:
                        if not line.startswith(" "):
                            break
                        dst.write(line)
        for pos in ("noun", "verb", "adj", "adv"):  # a tiny test WordNet may only have nouns
            for kind in ("data", "index"):
                path = os.path.join(self.corpus, f"{kind}.{pos}")
                if not os.path.exists(path):
                    open(path, "w").close()
        for extra in ("index.sense", "cntlist.rev", "noun.exc", "verb.exc", "adj.exc", "adv.exc"):
            if not os.path.exists(os.path.join(self.corpus, extra)):
                open(os.path.join(self.corpus, extra), "w").close()
        if not os.path.exists(os.path.join(self.corpus, "lexnames")):
            with open(os.path.join(self.corpus, "lexnames"), "w") as fh:
                for i, name in enumerate(_LEXNAMES):
                    fh.write(f"{i:02d}\t{name}\t{_LEX_CLASS[name.split('.')[0]]}\n")
        import nltk.data

        nltk.data.path.insert(0, self.tmp)

    def close(self):
        import nltk.data

        if self.tmp in nltk.data.path:
            nltk.data.path.remove(self.tmp)
        shutil.rmtree(self.tmp, ignore_errors=True)


def open_nltk_wordnet(wordnet_dir: str, parts_of_speech=("noun", "verb", "adj", "adv")):
    """(reader, closer) for the WNDB files in ``wordnet_dir``, read by NLTK's ``WordNetCorpusReader``.

    Only the data/index files of ``parts_of_speech`` are given to NLTK (the others are left empty): hyponym links never
    leave their part of speech, and NLTK then does not spend seconds indexing files the build never reads."""
    import warnings

    if not os.path.isfile(os.path.join(wordnet_dir, "data.noun")):  # before paying for importing NLTK
        raise UserError(f"no WordNet database in {wordnet_dir} (expected data.noun, index.noun …; on Debian: "
                        "apt-get install wordnet-base wordnet-sense-index)")
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _Reader(WordNetCorpusReader):
        # NLTK maps sense keys to another WordNet version for its multilingual data at start-up (seconds of work
        # reading index.sense twice); the builder never uses that mapping.
        def map_wn(self, version="wordnet"):
            return None

    data = _NLTKData(wordnet_dir, tuple(parts_of_speech))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = _Reader(data.corpus, None)
    except Exception as exc:  # damaged files make NLTK fail in many ways: one clear line
        data.close()
        raise UserError(f"cannot read WordNet in {wordnet_dir} ({type(exc).__name__}: {exc})") from None
    return reader, data.close


def nltk_source_info(reader, wordnet_dir: str) -> dict:
    digest = hashlib.sha256()
    with open(os.path.join(wordnet_dir, "data.noun"), "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return {"wordnet": f"WordNet {reader.get_version()}", "reader": f"nltk {metadata.version('nltk')}",
            "data_noun_sha256": digest.hexdigest()}



def open_wn_lexicon(lmf_path: str):
    """(wn.Wordnet, closer) for a WN-LMF file, loaded into a throw-away ``wn`` database (the user's is untouched)."""
    try:
        import wn
    except ImportError:
        raise UserError("--backend wn needs the `wn` package (pip install wn)") from None
    if not os.path.isfile(lmf_path):
        raise UserError(f"WN-LMF file not found: {lmf_path}")
    previous = wn.config.data_directory
    tmp = tempfile.mkdtemp(prefix="studio-wn-")

    def close():
        wn.config.data_directory = previous
        shutil.rmtree(tmp, ignore_errors=True)

    wn.config.data_directory = tmp
    try:
        wn.add(lmf_path, progress_handler=None)
        lexicons = wn.lexicons()
        if not lexicons:
            raise UserError(f"{lmf_path}: no lexicon found in this WN-LMF file")
        spec = " ".join(sorted(f"{lex.id}:{lex.version}" for lex in lexicons))
        return wn.Wordnet(lexicon=spec), close
    except UserError:
        close()
        raise
    except Exception as exc:  # wn raises its own errors for malformed files
        close()
        raise UserError(f"{lmf_path}: cannot load as WN-LMF ({type(exc).__name__}: {exc})") from None


def wn_source_info(wordnet, lmf_path: str) -> dict:
    digest = hashlib.sha256()
    with open(lmf_path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    lexicons = sorted(f"{lex.id}:{lex.version} ({lex.label})" for lex in wordnet.lexicons())
    return {"wordnet": ", ".join(lexicons), "reader": f"wn {metadata.version('wn')}", "lmf_sha256": digest.hexdigest()}


# ------------------------------------------------------------------------------------------- part-of-speech table

def build_pos_table(reader, words) -> dict[str, list[str]]:
    """{pos: sorted words having at least one synset of that part of speech}, for ``words_by_pos``.

    As in the SetLexSem code, a word counts when NLTK's ``synsets(word, pos)`` is non-empty, i.e. after NLTK's
    morphological reduction (``morphy``), so inflected forms count too; ``a`` includes satellite adjectives.
    """
    return {pos: sorted(w for w in words if reader.synsets(w, pos=pos)) for pos in POS_TAGS}

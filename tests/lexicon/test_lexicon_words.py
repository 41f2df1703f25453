"""The web2 word list (SPEC S4): real package data, no mocking."""

import pytest

from core.errors import ConfigError
from core.lexicon.words import length_counts, word_list, word_set, words_of_length


def test_word_list_is_web2_lowercased_deduplicated_sorted():
    words = word_list()
    assert isinstance(words, tuple)
    # OFFLINE_DATA: 234,450 lower-cased words (235,970 entries before lower-casing).
    assert 234_000 <= len(words) <= 235_000
    assert list(words) == sorted(set(words))
    assert all(w == w.lower() for w in words)
    assert {"apple", "zebra", "aardvark"} <= word_set()
    assert word_list() is word_list()  # cached


def test_words_of_length_counts_match_the_nltk_list():
    # NLTK's copy of web2, lower-cased: 26 one-letter, 139 two-, 1,300 three-, 5,006 four-letter words.
    assert [len(words_of_length(n)) for n in (1, 2, 3, 4)] == [26, 139, 1300, 5006]
    five = words_of_length(5)
    assert all(len(w) == 5 for w in five) and list(five) == sorted(five)
    assert sum(length_counts().values()) == len(word_list())
    assert words_of_length(500) == ()


@pytest.mark.parametrize("bad", [0, -3, 2.5, "3", True])
def test_words_of_length_rejects_bad_lengths(bad):
    with pytest.raises(ConfigError):
        words_of_length(bad)

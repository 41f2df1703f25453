"""The lexicon data shipped in data/ (hyponym groups, part-of-speech table): readable with no WordNet, and holding
what the cleaning rules promise. Checked on the real files."""

import re
import subprocess
import sys

import pytest

from core.errors import ConfigError
from core.lexicon import hyponyms as H
from core.lexicon.words import word_set, words_by_pos, words_of_length
from tests.support import ROOT


def test_shipped_groups_follow_the_rules():
    groups = H.load_groups()
    meta = H.load_metadata()
    rules, counts = meta["rules"], meta["counts"]
    assert meta["source"]["wordnet"] == "WordNet 3.0"
    assert len(groups) == counts["groups"] > 3000
    assert [g.synset for g in groups] == sorted(g.synset for g in groups)
    assert len({g.synset for g in groups}) == len(groups)
    assert len({g.members for g in groups}) == len(groups)  # no two hypernyms with the same member set
    for g in groups:
        assert rules["min_size"] <= len(g.members) <= rules["max_size"] == 30
        assert list(g.members) == sorted(set(g.members))  # distinct, sorted
        assert all(re.fullmatch(r"[a-z]+", m) for m in g.members)
        assert re.fullmatch(r"[a-z0-9_.'-]+\.[nv]\.\d\d", g.synset), g.synset
        assert g.pos == {"n": "noun", "v": "verb"}[g.synset.rsplit(".", 2)[1]]
        assert g.name and g.gloss
    assert H.hyponym_vocabulary() == tuple(sorted({m for g in groups for m in g.members}))
    assert len(H.hyponym_vocabulary()) == counts["vocabulary"]
    assert len(H.groups_with_at_least(8)) == counts["groups_by_min_size"]["8"] > 1000
    assert len(H.groups_with_at_least(16)) == counts["groups_by_min_size"]["16"] > 300
    # every synset is walked, as in the reference: verb hierarchies give groups too (WordNet 3.0 has no adjective
    # or adverb hyponyms)
    assert rules["pos"] == ["noun", "verb", "adjective", "adverb"]
    assert counts["groups_by_pos"]["verb"] > 1000 and counts["groups_by_pos"]["noun"] > 3000
    assert sum(counts["groups_by_pos"].values()) == len(groups)
    assert {"devour", "consume", "bolt"} <= H.group_by_synset("eat.v.01").member_set


def test_the_papers_example_hypernyms_are_there():
    grand = H.group_by_synset("grandparent.n.01")
    assert {"gramps", "granny", "grandma"} <= grand.member_set and grand.name == "grandparent"
    # an example pair for deceptive sets: two disjoint groups of at least 8 members
    big = H.groups_with_at_least(8)
    assert any(H.disjoint(big[0], other) for other in big[1:])


def test_groups_and_pos_table_load_without_nltk_or_wordnet():
    code = (
        "import sys; sys.modules['nltk'] = None; sys.modules['wn'] = None\n"
        "from core.lexicon.hyponyms import load_groups, hyponym_vocabulary\n"
        "from core.lexicon.words import words_by_pos\n"
        "print(len(load_groups()), len(hyponym_vocabulary()), len(words_by_pos('n')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    n_groups, n_vocab, n_nouns = map(int, out.stdout.split())
    assert n_groups == len(H.load_groups()) and n_vocab > 10_000 and n_nouns > 30_000


def test_words_by_pos():
    nouns, verbs = words_by_pos("noun"), words_by_pos("v")
    assert {"dog", "house", "apple"} <= set(nouns)
    assert "run" in verbs and "the" not in nouns
    assert list(nouns) == sorted(nouns) and set(nouns) <= word_set()
    assert words_by_pos("adjective") == words_by_pos("a") == words_by_pos("s")
    three = words_by_pos("n", length=3)
    assert three and set(three) <= set(words_of_length(3)) and set(three) <= set(nouns)
    with pytest.raises(ConfigError):
        words_by_pos("preposition")

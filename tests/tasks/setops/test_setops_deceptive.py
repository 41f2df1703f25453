"""Deceptive hyponym sets: the three conditions, paired draws, recorded hypernyms (SPEC S6)."""

from collections import defaultdict

import pytest

from core.lexicon.hyponyms import HyponymGroup
from core.tasks import setops as S
from core.tasks.setops.sets import deceptive as D


def _groups():
    # small but real-shaped groups; "bat" belongs to two hypernyms and must never be drawn for either of them
    return [
        HyponymGroup("mammal.n.01", "mammal", "warm-blooded vertebrate",
                     ("bat", "cat", "dog", "elk", "fox", "gnu", "hare", "lynx", "mink", "otter")),
        HyponymGroup("vehicle.n.01", "vehicle", "a conveyance",
                     ("bike", "bus", "car", "cart", "tram", "truck", "van", "wagon")),
        HyponymGroup("club.n.03", "club", "stout stick",
                     ("bat", "baton", "cudgel", "mace", "truncheon")),
        HyponymGroup("tiny.n.01", "tiny", "too small", ("a", "b")),
    ]


@pytest.fixture
def vocab():
    return D.Vocabulary(_groups())


def test_draw_is_disjoint_and_each_set_comes_from_its_own_hypernym(vocab):
    import random

    groups = {g.synset: set(g.members) for g in _groups()}
    for seed in range(200):
        d = vocab.draw(random.Random(seed), 4, 3)
        assert d.hypernym_a != d.hypernym_b
        assert set(d.a) <= groups[d.hypernym_a] - groups[d.hypernym_b]
        assert set(d.b) <= groups[d.hypernym_b] - groups[d.hypernym_a]
        assert len(set(d.a)) == 4 and len(set(d.b)) == 3
        assert not set(d.random_a) & set(d.random_b)
        assert set(d.random_a) | set(d.random_b) <= set(vocab.pooled)


def test_conditions(vocab):
    import random

    d = vocab.draw(random.Random(7), 4, 4)
    a, b, hyp = D.apply_condition(d, "not_swapped", 0, vocab.home)
    assert (a, b) == (list(d.a), list(d.b))
    assert all(hyp[w] == d.hypernym_a for w in a) and all(hyp[w] == d.hypernym_b for w in b)
    for s in range(5):
        a, b, hyp = D.apply_condition(d, "swapped", s, vocab.home)
        assert len(a) == len(b) == 4
        assert sum(hyp[w] == d.hypernym_b for w in a) == s
        assert sum(hyp[w] == d.hypernym_a for w in b) == s
        assert set(a) | set(b) == set(d.a) | set(d.b)
    a, b, _ = D.apply_condition(d, "swapped", None, vocab.home)  # default: half of the smaller set
    assert sum(w in d.b for w in a) == 2
    a, b, hyp = D.apply_condition(d, "random", None, vocab.home)
    assert (a, b) == (list(d.random_a), list(d.random_b))
    assert all(w in {m for g in _groups() if g.synset == hyp[w] for m in g.members} for w in a + b)


def test_feasibility(vocab):
    assert vocab.feasible(4, 4) is None
    assert vocab.feasible(10, 8) is None  # mammal (all 10 its own next to vehicle) and vehicle
    assert "no two hyponym groups" in vocab.feasible(9, 9)  # only one group has 9 members
    assert "pooled" in vocab.feasible(20, 20)
    two = D.Vocabulary([g for g in _groups() if g.synset != "vehicle.n.01"])
    assert two.feasible(9, 4) is None
    assert "no two hyponym groups" in two.feasible(10, 5)  # "bat" is shared: mammal has only 9 of its own


def test_real_groups_through_the_task(tmp_path):
    """With the shipped hyponym groups: conditions paired per sample, memberships exactly as defined."""
    d = {"members": "deceptive", "samples": 6, "sizes_a": [2, 4], "sizes_b": [4], "swap_count": [None, 1],
         "operations": ["union", "intersection"], "shots": [0, 1]}
    cfg = S.load_config(d)
    by_sample = defaultdict(dict)
    for it in S.items(cfg):
        hyp = it["member_hypernyms"]
        a, b = it["set_a"], it["set_b"]
        assert it["hypernym_a"] != it["hypernym_b"]
        assert set(hyp) == set(a) | set(b) and not set(a) & set(b)
        assert all(w == w.lower() for w in a + b)
        if it["condition"] == "not_swapped":
            assert it["swap_count"] == 0
            assert all(hyp[w] == it["hypernym_a"] for w in a) and all(hyp[w] == it["hypernym_b"] for w in b)
        elif it["condition"] == "swapped":
            s = it["swap_count"]
            assert s in (1, min(it["size_a"], it["size_b"]) // 2)
            assert sum(hyp[w] == it["hypernym_b"] for w in a) == s
            assert sum(hyp[w] == it["hypernym_a"] for w in b) == s
        key = (it["size_a"], it["sample"])
        by_sample[key].setdefault((it["hypernym_a"], it["hypernym_b"]), set()).add(it["condition"])
    for pairs in by_sample.values():  # one hypernym pair per sample, shared by all three conditions
        assert len(pairs) == 1 and next(iter(pairs.values())) == {"not_swapped", "swapped", "random"}


def test_overlap_does_not_apply_to_deceptive_sets():
    cfg = S.load_config({"members": "deceptive", "samples": 2, "sizes": [2], "overlap": [None, 1],
                         "operations": ["union"]})
    assert S.count(cfg) == 3 * 2
    assert "overlap control does not apply to deceptive sets" in S.warnings(cfg)[0]


def test_a_given_hypernym_pair_is_used_for_every_draw(vocab):
    import random

    for seed in range(30):
        d = vocab.draw(random.Random(seed), 4, 4, ("vehicle.n.01", "mammal.n.01"))
        assert (d.hypernym_a, d.hypernym_b) == ("vehicle.n.01", "mammal.n.01")
        assert set(d.a) <= {"bike", "bus", "car", "cart", "tram", "truck", "van", "wagon"}
    assert vocab.pair_reason("mammal.n.01", "club.n.03", 10, 2) is not None  # "bat" is shared: 9 own members
    assert vocab.pair_reason("mammal.n.01", "club.n.03", 9, 4) is None


def test_hypernym_pairs_config_validation():
    from core.errors import ConfigError

    for bad, words in [([["mammal.n.01"]], "not a pair"), ([["x.n.01", "x.n.01"]], "must differ"), ("m", "list")]:
        with pytest.raises(ConfigError, match=words):
            S.load_config({"members": "deceptive", "hypernym_pairs": bad})


def test_hypernym_pairs_through_the_task_with_the_shipped_groups():
    from core.errors import ConfigError

    groups = D.vocabulary().groups
    big = [g.synset for g in groups if len(g.members) >= 12][:2]
    cfg = S.load_config({"members": "deceptive", "samples": 3, "sizes": [3], "operations": ["union"],
                         "hypernym_pairs": [big]})
    rows = list(S.items(cfg))
    assert len(rows) == 9 and all((r["hypernym_a"], r["hypernym_b"]) == tuple(big) for r in rows)
    with pytest.raises(ConfigError, match="unknown hypernym"):
        S.count(S.load_config({"members": "deceptive", "hypernym_pairs": [["nothing.n.99", big[0]]]}))


def test_part_of_speech_of_groups_filters_and_is_recorded():
    groups = _groups() + [HyponymGroup("eat.v.01", "eat", "take in solid food",
                                       ("bolt", "devour", "dine", "gobble", "graze", "nibble"))]
    every, verbs = D.Vocabulary(groups), D.Vocabulary(groups, "verb")
    assert [g.synset for g in verbs.groups] == ["eat.v.01"] and verbs.pooled == groups[-1].members
    assert every.pos_of({"cat": "mammal.n.01", "bus": "vehicle.n.01"}) == "noun"
    assert every.pos_of({"cat": "mammal.n.01", "dine": "eat.v.01"}) == "noun+verb"


def test_shipped_groups_by_part_of_speech_through_the_task():
    """All parts of speech by default (as the reference); pos: noun / verb restricts the groups and the random
    baseline's pool, and every item records the parts of speech of its members' groups."""
    vocab = D.vocabulary()
    cfg = S.load_config({"members": "deceptive", "samples": 8, "sizes": [4], "operations": ["union"],
                         "pos": ["noun", "verb", None]})
    seen = defaultdict(set)
    for it in S.items(cfg):
        groups = {vocab.by_synset[h] for h in it["member_hypernyms"].values()}
        assert it["pos"] == "+".join(sorted({g.pos for g in groups}))
        seen[it["condition"], it["config_id"]].add(it["pos"])
        members = set(it["set_a"]) | set(it["set_b"])
        if it["pos"] == "verb" and it["condition"] != "random":
            assert members <= {m for g in groups for m in g.members}
    per_cell = {pos for cell in seen.values() for pos in cell}
    assert {"noun", "verb"} <= per_cell
    # the verb cells draw only verb groups, the random baseline included
    verb_cfg = S.load_config({"members": "deceptive", "samples": 5, "sizes": [4], "operations": ["union"],
                              "pos": "verb"})
    assert {it["pos"] for it in S.items(verb_cfg)} == {"verb"}
    # a fixed pair of another part of speech is skipped with a reason, not drawn
    noun_pair = [g.synset for g in vocab.groups if g.pos == "noun" and len(g.members) >= 10][:2]
    skipped = S.load_config({"members": "deceptive", "samples": 2, "sizes": [3], "operations": ["union"],
                             "pos": "verb", "hypernym_pairs": [noun_pair]})
    assert S.count(skipped) == 0 and "is a noun group, not a verb one" in S.warnings(skipped)[0]


def test_word_pool_reference_is_the_default_and_leaves_research_grids_unchanged(curated_pool):
    """A research grid (no word_pool) gives the same items as `word_pool: reference` and keeps its form; the curated
    pool changes the draws only of deceptive members and is recorded in the config."""
    from core.errors import ConfigError

    d = {"members": ["deceptive", "numbers"], "samples": 5, "sizes": [4], "operations": ["intersection"]}
    default, reference = S.load_config(d), S.load_config({**d, "word_pool": "reference"})
    curated = S.load_config({**d, "word_pool": "curated"})
    assert default == reference and "word_pool" not in default.to_dict()
    assert S.load_config(curated.to_dict()) == curated and curated.to_dict()["word_pool"] == "curated"
    items = {name: list(S.items(c)) for name, c in
             (("default", default), ("reference", reference), ("curated", curated))}
    assert items["default"] == items["reference"]

    def by_members(rows, members):
        return [(r["set_a"], r["set_b"]) for r in rows if r["members"] == members]

    assert by_members(items["curated"], "numbers") == by_members(items["default"], "numbers")
    assert by_members(items["curated"], "deceptive") != by_members(items["default"], "deceptive")
    with pytest.raises(ConfigError, match="word_pool"):
        S.load_config({**d, "word_pool": "clean"})


def test_only_samples_gives_the_full_grids_items_of_those_draws(curated_pool):
    """A re-ask of chosen draws: the same sets, prompts, config_ids and sample indices as the full grid's items."""
    from core.errors import ConfigError

    d = {"members": "deceptive", "samples": 30, "sizes": [4], "operations": ["intersection"],
         "conditions": ["not_swapped", "swapped"], "word_pool": "curated"}
    full = {(it["config_id"], it["sample"]): it for it in S.items(S.load_config(d))}
    sub = S.load_config({**d, "only_samples": [29, 3, 17, 3]})
    assert sub.only_samples == (3, 17, 29) and S.count(sub) == 6
    got = list(S.items(sub))
    assert [S.item(sub, i) for i in range(6)] == got
    assert sorted(it["sample"] for it in got) == [3, 3, 17, 17, 29, 29]
    for it in got:
        same = full[it["config_id"], it["sample"]]
        assert {k: v for k, v in it.items() if k != "idx"} == {k: v for k, v in same.items() if k != "idx"}
    assert S.load_config(sub.to_dict()) == sub
    assert "only_samples" not in S.load_config(d).to_dict()
    for bad in ([], [30], [-1], "3"):
        with pytest.raises(ConfigError, match="only_samples"):
            S.load_config({**d, "only_samples": bad})


def test_the_curated_pool_has_its_own_config_ids(curated_pool):
    d = {"members": "deceptive", "samples": 2, "sizes": [4], "operations": ["intersection"]}
    ref = {it["config_id"] for it in S.items(S.load_config(d))}
    cur = {it["config_id"] for it in S.items(S.load_config({**d, "word_pool": "curated"}))}
    assert ref.isdisjoint(cur)

"""Items of the set-operation task: determinism, pairing, shots, overlap, truths (SPEC S1–S3, S7, S8, P4)."""

import re
from collections import defaultdict

import pytest

from core.tasks import setops as S
from core.tasks.setops import operations as ops

NUM = {"members": "numbers"}
PY = {"union": set.union, "intersection": set.intersection, "difference": set.difference,
      "symmetric_difference": set.symmetric_difference}
DEMO = re.compile(r"If set A is \(([^)]*)\) and set B is \(([^)]*)\)")


def _ints(text):
    return frozenset(int(x) for x in text.split(",") if x.strip())


def test_item_keys_and_random_access_equal_the_stream():
    d = dict(NUM, samples=4, sizes=[2, 5], lengths=[None, 1], overlap=[None, 1], shots=[0, 3],
             phrasings=["formal", "iterative"], approaches=["baseline", "cot"])
    cfg = S.load_config(d)
    stream = list(S.items(cfg))
    assert len(stream) == S.count(cfg)
    assert [it["idx"] for it in stream] == list(range(len(stream)))
    assert list(stream[0]) == list(S.ITEM_KEYS)
    fresh = S.Config.from_dict(d)  # a new object: no shared caches
    for i in range(0, len(stream), 13):
        assert S.item(fresh, i) == stream[i]
    assert list(S.items(cfg, 10, 30)) == stream[10:30]
    with pytest.raises(IndexError):
        S.item(cfg, len(stream))


def test_truths_sizes_and_distinct_samples():
    cfg = S.load_config(dict(NUM, samples=30, sizes_a=[1, 4], sizes_b=[3, 7], lengths=[None, 1, 4]))
    per_cell = defaultdict(set)
    for it in S.items(cfg):
        a, b = set(it["set_a"]), set(it["set_b"])
        assert len(a) == it["size_a"] == len(it["set_a"]) and len(b) == it["size_b"] == len(it["set_b"])
        assert it["truth"] == sorted(PY[it["operation"]](a, b))
        if it["length"]:
            assert all(len(str(x)) == it["length"] for x in a | b)
        else:
            assert all(0 <= x < 10000 for x in a | b)
        per_cell[it["config_id"]].add((frozenset(a), frozenset(b)))
    assert all(len(pairs) == 30 for pairs in per_cell.values())


def test_number_max_bounds_unconstrained_numbers():
    for it in S.items(dict(NUM, samples=20, sizes=[8], number_max=50, operations=["union"])):
        assert all(0 <= x < 50 for x in it["set_a"] + it["set_b"])


def test_same_sets_across_operation_phrasing_approach_and_shots():
    d = dict(NUM, samples=5, sizes=[4], shots=[0, 1, 5], phrasings=["formal", "plain", "pythonic"],
             approaches=["baseline", "composite"])
    by_sample = defaultdict(set)
    for it in S.items(d):
        by_sample[it["sample"]].add((tuple(it["set_a"]), tuple(it["set_b"])))
    assert all(len(v) == 1 for v in by_sample.values())
    assert len({next(iter(v)) for v in by_sample.values()}) == 5
    # ... and a different seed gives different sets
    other = S.item(dict(d, seed=1), 0)
    assert (other["set_a"], other["set_b"]) != (S.item(d, 0)["set_a"], S.item(d, 0)["set_b"])


def test_growing_samples_keeps_earlier_items():
    small = [(it["set_a"], it["set_b"]) for it in S.items(dict(NUM, samples=5, sizes=[3], operations=["union"]))]
    big = [(it["set_a"], it["set_b"]) for it in S.items(dict(NUM, samples=9, sizes=[3], operations=["union"]))]
    assert big[:5] == small


@pytest.mark.parametrize("fixed", [True, False])
def test_shots_come_from_the_sampler_never_equal_the_item_and_are_nested(fixed):
    # one-digit numbers (1…9) in sets of 8: only 9 different sets, so shots often collide with items
    d = dict(NUM, samples=40, sizes=[8], lengths=[1], operations=["union"], shots=[1, 3, 5], fixed_shots=fixed)
    demos_by = {}
    for it in S.items(d):
        item_pair = (frozenset(it["set_a"]), frozenset(it["set_b"]))
        found = DEMO.findall(it["prompt"])
        assert f"Set A is ({', '.join(map(str, it['set_a']))})" in it["prompt"]
        shots = [(_ints(a), _ints(b)) for a, b in found]
        assert len(shots) == it["shots"]
        assert item_pair not in shots
        assert len(set(shots)) == len(shots)
        for a, b in shots:
            assert len(a) == len(b) == 8 and all(1 <= x <= 9 for x in a | b)
        demos_by[(it["sample"], it["shots"])] = shots
    for sample in range(40):
        assert demos_by[(sample, 1)] == demos_by[(sample, 5)][:1]
        assert demos_by[(sample, 3)] == demos_by[(sample, 5)][:3]
    five = {tuple(demos_by[(s, 5)]) for s in range(40)}
    if fixed:
        # the same demonstrations for all, except that a shot equal to the item's sets is skipped for that item:
        # every item shows 5 of the stream's first 6 pairs
        assert len(five) <= 6 and len(set().union(*five)) <= 6
    else:
        assert len(five) == 40


def test_fixed_shots_are_identical_across_items_when_no_collision():
    d = dict(NUM, samples=10, sizes=[4], operations=["difference"], shots=[3])
    prompts = [it["prompt"] for it in S.items(d)]
    tails = {p.split("<examples>", 1)[1] for p in prompts}
    assert len(tails) == 1


@pytest.mark.parametrize("overlap, sizes, expected", [(0, (5, 5), 0), (2, (3, 6), 2), (0.5, (4, 8), 2),
                                                      (1.0, (3, 3), 3), (0.34, (3, 9), 1),
                                                      # floor(m·f), the reference's int(m * f): never rounded up
                                                      (0.5, (3, 3), 1), (0.9, (4, 4), 3), (0.5, (5, 9), 2)])
def test_overlap_control_gives_exactly_c_shared_members(overlap, sizes, expected):
    d = dict(NUM, samples=25, sizes_a=[sizes[0]], sizes_b=[sizes[1]], overlap=overlap, operations=["intersection"])
    for it in S.items(d):
        assert len(it["set_a"]) == sizes[0] and len(it["set_b"]) == sizes[1]
        assert len(set(it["set_a"]) & set(it["set_b"])) == expected
        assert it["overlap"] == overlap and len(it["truth"]) == expected


def test_overlap_works_on_a_tight_population():
    # 9 one-digit numbers (1…9), sets of 5 and 5 sharing 1 need exactly 9 members
    for it in S.items(dict(NUM, samples=20, sizes=[5], lengths=[1], overlap=1, operations=["union"])):
        assert sorted(it["truth"]) == list(range(1, 10))


def test_operations_module():
    a, b = [3, 1, 2], [2, 5]
    assert ops.apply("union", a, b) == [3, 1, 2, 5]
    assert ops.apply("intersection", a, b) == [2]
    assert ops.apply("difference", a, b) == [3, 1]
    assert ops.apply("symmetric_difference", a, b) == [3, 1, 5]
    assert ops.truth("symmetric_difference", a, b) == [1, 3, 5]
    assert ops.keeps("symmetric_difference", True, False) and not ops.keeps("difference", True, True)


def test_solve_scores_correct_and_a_wrong_answer_does_not():
    cfg = S.load_config(dict(NUM, samples=3, sizes=[2, 4]))
    for it in S.items(cfg):
        good = S.score(it, S.solve(it))
        assert good["correct"] and good["followed"] and good["jaccard"] == 1.0
        assert good["truth_len"] == len(it["truth"])
        bad = S.score(it, "<answer>{" + ", ".join(str(x) for x in it["set_a"] + [99999]) + "}</answer>")
        assert not bad["correct"] and bad["made_up"] == 1
        assert S.score(it, "I cannot do that.")["followed"] is False


def test_preview_spreads_over_the_grid():
    cfg = S.load_config(dict(NUM, samples=10, sizes=[2, 4, 8], operations=["union", "intersection"]))
    prev = S.preview(cfg, 6)
    assert len(prev) == 6 and len({p["config_id"] for p in prev}) == 6
    assert all(p == S.item(cfg, p["idx"]) for p in prev)


def test_part_of_speech_filter_for_words():
    from core.lexicon.words import words_by_pos

    cfg = S.load_config({"members": ["words", "numbers"], "pos": ["noun", "v", None], "lengths": [None, 4],
                         "samples": 3, "sizes": [5], "operations": ["union"]})
    rows = list(S.items(cfg))
    assert len(rows) == (2 * 3 + 2) * 3
    nouns, verbs = set(words_by_pos("noun")), set(words_by_pos("verb"))
    for r in rows:
        members = r["set_a"] + r["set_b"]
        assert "pos" in r
        if r["pos"] == "noun":
            assert set(members) <= nouns
        elif r["pos"] == "verb":
            assert set(members) <= verbs
        if r["length"]:
            assert all(len(str(m)) == 4 for m in members)
    with pytest.raises(Exception, match="not a part of speech"):
        S.load_config({"pos": ["pronoun"]})
    # every item has the column; numbers have no part of speech, and a cell without the filter keeps the config_id it
    # had before the column existed
    plain = S.item(dict(NUM, samples=1, sizes=[2]), 0)
    assert plain["pos"] is None
    assert S.item(dict(NUM, samples=1, sizes=[2], pos=[None]), 0)["config_id"] == plain["config_id"]
    assert S.item({"members": "words", "samples": 1, "sizes": [2], "pos": "noun"}, 0)["config_id"] != \
        S.item({"members": "words", "samples": 1, "sizes": [2]}, 0)["config_id"]

"""Searching the hyponym groups for a hypernym picker (core.lexicon.hyponyms.search_groups / picker_choices): the
ranking of matches, the cap, the default list and the picks that are always listed."""

from __future__ import annotations

from core.lexicon.hyponyms import HyponymGroup, load_groups, match_rank, picker_choices, search_groups


def _group(synset: str, n: int, name: str | None = None) -> HyponymGroup:
    """A group of ``n`` made-up members; the name is the synset's lemma with spaces unless given."""
    return HyponymGroup(synset, name or synset.rsplit(".", 2)[0].replace("_", " "), "gloss",
                        tuple(f"{synset}-{i}" for i in range(n)))


GROUPS = [
    _group("catfish.n.03", 6), _group("flying_fish.n.01", 5), _group("fish.v.02", 12), _group("fish.n.02", 20),
    _group("fisherman.n.01", 3), _group("fish_family.n.01", 8), _group("selfishness.n.01", 5),
    _group("motor_vehicle.n.01", 30), _group("grandparent.n.01", 8), _group("Christianity.n.01", 25),
    _group("emotion.n.01", 29),
]


def _synsets(groups) -> list[str]:
    return [g.synset for g in groups]


def test_exact_names_first_then_prefixes_then_later_words_then_anywhere():
    assert _synsets(search_groups(GROUPS, "fish")) == [
        "fish.n.02", "fish.v.02",                   # the whole name (its senses in synset order)
        "fish_family.n.01", "fisherman.n.01",       # names starting with it, alphabetical
        "flying_fish.n.01",                         # a later word starting with it
        "catfish.n.03", "selfishness.n.01"]         # anywhere in the name


def test_search_is_case_insensitive_and_reads_underscores_as_spaces():
    assert _synsets(search_groups(GROUPS, "  FISH  ")) == _synsets(search_groups(GROUPS, "fish"))
    assert _synsets(search_groups(GROUPS, "Motor_Vehicle")) == ["motor_vehicle.n.01"]
    assert _synsets(search_groups(GROUPS, "motor  vehicle")) == ["motor_vehicle.n.01"]
    assert _synsets(search_groups(GROUPS, "christ")) == ["Christianity.n.01"]


def test_synset_ids_match_from_their_start_only():
    assert _synsets(search_groups(GROUPS, "fish.n.02")) == ["fish.n.02"]
    assert match_rank(GROUPS[3], "fish.n.02") == 0
    assert _synsets(search_groups(GROUPS, "fish.v")) == ["fish.v.02"]
    # the sense suffix is not searched inside: "n.01" or "v" would otherwise match every noun or verb
    assert search_groups(GROUPS, "n.01") == []
    assert "fish.v.02" not in _synsets(search_groups(GROUPS, "v"))
    assert match_rank(GROUPS[0], "vehicle") is None


def test_empty_text_matches_nothing():
    assert search_groups(GROUPS, "") == [] and search_groups(GROUPS, "   ") == []


def test_the_cap_keeps_the_best_matches_and_counts_them_all():
    choices = picker_choices(GROUPS, "fish", limit=3)
    assert choices.synsets == ("fish.n.02", "fish.v.02", "fish_family.n.01")
    assert (choices.matched, choices.listed, choices.total, choices.text) == (7, 3, len(GROUPS), "fish")


def test_without_text_the_largest_groups_are_listed_alphabetically():
    choices = picker_choices(GROUPS, "", limit=4)
    # the four largest: motor vehicle 30, emotion 29, Christianity 25, fish.n.02 20 — read as a list by name
    assert choices.synsets == ("Christianity.n.01", "emotion.n.01", "fish.n.02", "motor_vehicle.n.01")
    assert (choices.matched, choices.listed, choices.text) == (len(GROUPS), 4, "")


def test_kept_picks_are_always_listed_first_when_missing_and_never_twice():
    choices = picker_choices(GROUPS, "fish", keep=("grandparent.n.01", "fish.n.02", "grandparent.n.01"), limit=3)
    assert choices.synsets == ("grandparent.n.01", "fish.n.02", "fish.v.02", "fish_family.n.01")
    assert choices.listed == 3      # the kept pick is not counted as a match
    nothing = picker_choices(GROUPS, "zebra", keep=("emotion.n.01", None))
    assert nothing.synsets == ("emotion.n.01",) and nothing.matched == 0


def test_every_shipped_group_is_reachable_by_its_synset_id():
    groups = [g for g in load_groups() if len(g.members) >= 4]
    default = set(picker_choices(groups).synsets)
    assert len(default) == 300 < len(groups)
    outside = [g for g in groups if g.synset not in default]
    for g in outside[:: max(1, len(outside) // 200)]:   # ~200 of the groups the default list leaves out
        choices = picker_choices(groups, g.synset)
        assert choices.synsets[0] == g.synset and choices.listed <= 300

"""The curated word pool: the project's blocklist applied to the shipped hyponym groups (words safe to project)."""

import pytest

from core.errors import ImportFileError
from core.lexicon import blocklist as B
from core.lexicon.hyponyms import HyponymGroup, load_groups
from core.tasks import setops as S
from core.tasks.setops.sets import deceptive as D
from tests.support import ROOT
from tests.support.lexicon import remembering

DEMO_GRIDS = (ROOT / "data" / "configs" / "deceptive_demo.yaml", ROOT / "data" / "demo" / "recording.yaml")


def _grid(path):
    from core.config import read_run_spec

    return read_run_spec(path).config


def _shown_text(it: dict, vocab) -> list[str]:
    """Everything of an item a demo page can show: members, and each hypernym's synset, name and definition."""
    words = list(it["set_a"]) + list(it["set_b"])
    for syn in {it["hypernym_a"], it["hypernym_b"], *it["member_hypernyms"].values()}:
        g = vocab.by_synset[syn]
        words.append(f"{syn.rsplit('.', 2)[0]} {g.name} {g.gloss}")
    return words


@pytest.mark.parametrize("path", DEMO_GRIDS, ids=lambda p: p.name)
def test_the_demo_grids_draw_from_the_curated_pool(path, curated_pool):
    assert _grid(path).word_pool == "curated"


def test_no_blocked_word_in_any_set_or_hypernym_of_the_demo_grid_over_many_seeds(curated_pool):
    """300 seeds of the demo's grid (3,600 draws, both conditions): no member, hypernym name, synset lemma or
    definition holds a blocked word, and no member of a listed group appears."""
    bl = B.load_blocklist()
    vocab = D.vocabulary(None, None, "curated")
    base = _grid(DEMO_GRIDS[0]).to_dict()
    listed = set(B.unsafe_words({m for g in load_groups() if g.synset in bl.groups for m in g.members}, bl))
    blocked_in = remembering(bl).blocked_in   # the same words recur across seeds: each is matched once
    checked = 0
    for seed in range(300):
        for it in S.items(S.load_config({**base, "seed": seed})):
            for text in _shown_text(it, vocab):
                assert not blocked_in(text), (seed, text)
            assert not (set(it["set_a"]) | set(it["set_b"])) & listed, seed
            checked += 1
    assert checked == 300 * 12 * 2


def test_the_words_seen_on_a_projector_are_in_the_reference_pool_and_not_in_the_curated_one(curated_pool):
    reference, curated = D.vocabulary(None, None, "reference"), D.vocabulary(None, None, "curated")
    seen = ["cybersex", "erection", "thong", "cocainize", "rape", "murder", "heroin"]
    assert all(w in reference.home for w in seen)
    assert not [w for w in seen if w in curated.home]
    for syn in ("sex.n.04", "sexual_assault.n.01", "sexual_arousal.n.01", "underpants.n.01", "terrorist.n.01"):
        assert syn in reference.by_synset and syn not in curated.by_synset
    assert len(curated.eligible(4)) > 0.9 * len(reference.eligible(4))  # the pool stays large


def test_curate_groups_rules():
    bl = B.parse_blocklist("# comment\nkill*\nbomb\ngroup: weapon.n.01\n")
    groups = (
        HyponymGroup("weapon.n.01", "weapon", "an instrument", ("club", "mace", "sword")),
        HyponymGroup("tool.n.01", "tool", "an implement", ("hammer", "mace", "saw", "bomb")),
        HyponymGroup("pest.n.01", "pest", "something you kill", ("rat", "mouse", "louse")),
        HyponymGroup("killer_whale.n.01", "killer whale", "a toothed whale", ("orca", "grampus")),
        HyponymGroup("arms.n.01", "arms", "kit", ("sword", "bomb", "club")),
        HyponymGroup("fruit.n.01", "fruit", "edible", ("apple", "pear")),
    )
    kept = {g.synset: g.members for g in B.curate_groups(groups, bl)}
    # listed group out, its members (mace, sword, club) blocked everywhere; a blocked word in a gloss or a name
    # drops its group; a group left with fewer than two members is dropped
    assert kept == {"tool.n.01": ("hammer", "saw"), "fruit.n.01": ("apple", "pear")}
    assert B.group_reason(groups[2], bl) == "blocked word 'kill' in its name or definition"
    assert B.group_reason(groups[0], bl) == "listed"
    assert bl.blocks("Killer") and not bl.blocks("skill")


@pytest.mark.parametrize("bad", ["Sex", "two words", "group:"])
def test_a_malformed_line_is_one_clear_error(bad):
    with pytest.raises(ImportFileError, match=r"blocklist:1:"):
        B.parse_blocklist(bad)


def test_the_reference_pool_is_the_shipped_groups_unchanged():
    groups = load_groups()
    ref = D.vocabulary(None, None, "reference")
    assert ref.groups == tuple(sorted(groups, key=lambda g: g.synset))
    with pytest.raises(ValueError, match="unknown word pool"):
        D.vocabulary(None, None, "clean")


def test_no_blocked_word_in_the_shipped_recording():
    """The recording's 200 draws (both conditions, the items its grid generates: the recorded items) are safe to
    project, and they are the draws the recording file holds."""
    from core.analysis import presenter
    from core.lexicon.blocklist import item_is_safe
    from core.tasks import setops

    items = list(setops.items(_grid(DEMO_GRIDS[1])))
    assert len(items) == 400
    assert [it["sample"] for it in items if not item_is_safe(it)] == []
    recorded = presenter.read_result_file(presenter.recording_path())
    assert sorted(map(int, recorded["sample"].unique())) == sorted({int(it["sample"]) for it in items})

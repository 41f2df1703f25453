"""The Deceptive sets page with a small hyponym-groups file: the three conditions side by side, a pair drawn at
random, and a reference/solver run over all three conditions shown live at 100 %."""

from __future__ import annotations

import sys

import pytest

from tests.support import ROOT  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core import runner  # noqa: E402
from core.lexicon import hyponyms as H  # noqa: E402
from core.lexicon.hyponyms import HyponymGroup  # noqa: E402

GROUPS = [
    HyponymGroup("grandparent.n.01", "grandparent", "a parent of your father or mother",
                 ("gramps", "granddad", "grandma", "grandpa", "granny", "nan", "nana", "grandfather")),
    HyponymGroup("appearance.n.03", "appearance", "the act of appearing in public view",
                 ("apparition", "arrival", "emergence", "materialization", "presence", "showing", "turnout")),
    HyponymGroup("tree.n.01", "tree", "a tall perennial woody plant",
                 ("ash", "beech", "birch", "elm", "fir", "larch", "maple", "oak", "pine", "yew")),
    HyponymGroup("eat.v.01", "eat", "take in solid food",
                 ("bolt", "consume", "devour", "dine", "gobble", "graze", "nibble", "wolf")),
    HyponymGroup("cook.v.02", "cook", "transform and make suitable for consumption by heating",
                 ("bake", "boil", "broil", "fry", "grill", "poach", "roast", "steam")),
]


def _clear_caches():
    import streamlit as st

    from core.tasks.setops import config as setops_config
    from core.tasks.setops.sets import deceptive as D

    for fn in (H._load, H._by_synset, H._groups_at_least, H._all_vocabulary, D.vocabulary,
               setops_config._config_from_json):
        fn.cache_clear()
    st.cache_resource.clear()


def _shipped(groups, tmp_path, monkeypatch):
    """These groups as the shipped hyponym groups (and a new store) while a test runs."""
    path = tmp_path / "groups.json.gz"
    H.write_groups(groups, path, {"source": "test groups"})
    monkeypatch.setattr(H, "DEFAULT_PATH", path)
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    _clear_caches()
    yield path
    monkeypatch.undo()
    _clear_caches()


@pytest.fixture()
def groups_file(tmp_path, monkeypatch):
    yield from _shipped(GROUPS, tmp_path, monkeypatch)


# beside the five: a fish group and 350 larger made-up ones, so the pickers cannot list every group (300 at most)
FISH = HyponymGroup("fish.n.01", "fish", "any of various cold-blooded aquatic vertebrates",
                    ("bass", "carp", "cod", "perch", "pike", "salmon", "tuna", "trout"))
FILLERS = [HyponymGroup(f"filler_{i:03d}.n.01", f"filler {i:03d}", "made up",
                        tuple(f"word{i:03d}{c}" for c in "abcdefghij")) for i in range(350)]


@pytest.fixture()
def many_groups_file(tmp_path, monkeypatch):
    yield from _shipped([*GROUPS, FISH, *FILLERS], tmp_path, monkeypatch)


def open_deceptive(a: str = "grandparent.n.01", b: str = "appearance.n.03") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/deceptive_sets.py")
    at.query_params["a"] = a
    at.query_params["b"] = b
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_three_conditions_side_by_side_and_a_live_solver_run(groups_file):
    at = open_deceptive()
    assert at.selectbox(key="dec_a").value == "grandparent.n.01"
    assert at.selectbox(key="dec_b").value == "appearance.n.03"
    md = [m.value for m in at.markdown]
    for title in ("Not swapped", "Swapped", "Random baseline"):
        assert any(f"**{title}**" in m for m in md)
    chips = [m for m in md if m.startswith("A = ") or m.startswith("B = ")]
    assert len(chips) == 6 and all("<span" in c for c in chips)
    assert {m.label: m.value for m in at.metric}["Items"] == "6"  # 1 operation x 3 conditions x 2 samples: the demo
    # the embedded default (local/default) is selected: the page says what it can show; the small model says more
    assert at.selectbox(key="dec_m_model").value == "local/default"
    assert any("local/default is Qwen2.5-Coder-1.5B" in c.value for c in at.caption)
    at.selectbox(key="dec_m_model").set_value("local/smollm2")
    at.run()
    assert any("About local/smollm2" in m.value for m in at.markdown)

    at.selectbox(key="dec_m_model").set_value("reference/solver")
    at.run()
    assert not any("About local/smollm2" in m.value for m in at.markdown)
    assert any("No stored run with deceptive items to replay yet" in c.value for c in at.caption)
    at.button(key="dec_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state["dec_run_id"]
    p = runner.get_handle(run_id).wait(120)
    assert p.status == "done" and p.correct == p.done == 6, (p.status, p.error)
    at.run()
    # presenter bars: every condition's N and interval drawn (core/analysis/presenter.py), the answers counted
    assert any("6 answers; 0 did not follow the answer format" in c.value for c in at.caption)
    # every answer on one line (an expander), in full on click: chips coloured by hypernym, the raw reply
    labels = [e.label for e in at.expander if "answered" in e.label]
    assert len(labels) == 6 and all("✓ right" in lab for lab in labels)
    cards = [x.value for x in at.markdown if "answered:" in x.value]
    sets = [x.value for x in at.markdown if "A = " in x.value and "\nB = " in x.value]
    assert len(cards) == 6 and len(sets) == 6 and all(s.count("<span") == 8 for s in sets)   # |A| = |B| = 4
    assert sum(":green[**right**]" in x.value for x in at.markdown) == 6
    assert len([c for c in at.code if "<answer>" in c.value]) == 6
    # the replay list (cached on the store's change token) has the new run
    replay = at.selectbox(key="presenter_replay_run")
    assert replay.value == run_id and replay.options[0].startswith("deceptive · grandparent vs appearance")

    # N items spread over the grid: 3 of them are one per condition
    at.number_input(key="dec_limit").set_value(3).run()
    at.button(key="dec_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    limited = at.session_state["dec_run_id"]
    assert limited != run_id and runner.get_handle(limited).wait(120).done == 3
    from core import store

    with store.connect() as con:   # $STUDIO_DB of the fixture
        conds = sorted(r[0] for r in con.execute("SELECT condition FROM items WHERE run_id = ?", [limited]).fetchall())
    assert conds == ["not_swapped", "random", "swapped"]

    at.button(key="dec_draw").click().run()
    assert not at.exception
    assert at.selectbox(key="dec_a").value != at.selectbox(key="dec_b").value


@pytest.mark.slow
def test_part_of_speech_restricts_the_groups_and_the_random_baseline(groups_file):
    at = open_deceptive()
    at.selectbox(key="dec_pos").set_value("verb").run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.selectbox(key="dec_a").options) == {"eat (eat.v.01, 8)", "cook (cook.v.02, 8)"}
    # the picked pair's glosses are shown beside the sets, not in the 5,703 pickers' labels
    assert any("take in solid food" in m.value for m in at.markdown)
    verbs = set(GROUPS[3].members) | set(GROUPS[4].members)
    chips = [m.value for m in at.markdown if m.value.startswith(("A = ", "B = "))]
    assert len(chips) == 6
    for chip in chips:   # every shown member, the random baseline's included, is a verb-group member
        shown = {part.split("</span>")[0].rsplit(">", 1)[1] for part in chip.split("<span")[1:]}
        assert shown and shown <= verbs


def _label(g: HyponymGroup) -> str:
    return f"{g.name} ({g.synset}, {len(g.members)})"


@pytest.mark.slow
def test_the_pickers_list_at_most_300_groups_and_a_linked_pick_outside_them(many_groups_file):
    at = open_deceptive()     # grandparent (8) and appearance (7): smaller than the 350 fillers (10)
    a, b = at.selectbox(key="dec_a"), at.selectbox(key="dec_b")
    assert (a.value, b.value) == ("grandparent.n.01", "appearance.n.03")
    # the 300 largest groups (of 356 with at least 4 members), each picker's own pick ahead of them
    assert len(a.options) == len(b.options) == 301
    assert a.options[0] == _label(GROUPS[0]) and _label(GROUPS[1]) not in a.options
    assert b.options[0] == _label(GROUPS[1]) and _label(GROUPS[0]) not in b.options
    assert _label(FISH) not in a.options
    assert any("the 300 largest of 356 hypernyms" in c.value for c in at.caption)


@pytest.mark.slow
def test_searching_finds_any_group_and_keeps_the_current_picks(many_groups_file):
    at = open_deceptive()
    at.text_input(key="dec_find").set_value("FISH").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="dec_a").options == [_label(GROUPS[0]), _label(FISH)]
    assert any("“fish”: 1 of 356 hypernyms match" in c.value for c in at.caption)
    at.selectbox(key="dec_a").set_value("fish.n.01").run()
    assert at.query_params["a"] == "fish.n.01"

    # another search for B: A's pick stays listed (first), B picks a tree
    at.text_input(key="dec_find").set_value("tree").run()
    assert at.selectbox(key="dec_a").options == [_label(FISH), _label(GROUPS[2])]
    assert at.selectbox(key="dec_a").value == "fish.n.01"
    at.selectbox(key="dec_b").set_value("tree.n.01").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.query_params["a"], at.query_params["b"]) == ("fish.n.01", "tree.n.01")
    assert any("**fish** — any of various cold-blooded aquatic vertebrates" in m.value for m in at.markdown)

    # a search matching more than 300: the best 300, and the picks still there
    at.text_input(key="dec_find").set_value("filler").run()
    a = at.selectbox(key="dec_a")
    assert len(a.options) == 301 and a.options[0] == _label(FISH) and a.value == "fish.n.01"
    assert a.options[1:3] == [_label(FILLERS[0]), _label(FILLERS[1])]
    assert any("the best 300 of 350 matches" in c.value for c in at.caption)

    # nothing matches: each picker keeps only its pick
    at.text_input(key="dec_find").set_value("zebra").run()
    assert at.selectbox(key="dec_b").options == [_label(GROUPS[2])]
    assert any("No hypernym matches “zebra”" in c.value for c in at.caption)

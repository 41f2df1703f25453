"""Issue 19: the capable embedded default (local/default), the members-only answer grammar, and presenter mode.

- local/default is the default model, named in the registry and the picker; its file is assembled from its parts,
  checked against the SHA-256 while copied, and never used when it does not match;
- answer format "members" allows only members of A ∪ B (the grammar's language, and a real model under it);
- the presenter's numbers: per-condition accuracy with N and a Wilson interval, replay order and position, the bars
  drawn with their intervals and the paper beside; the Deceptive sets page replays a stored run, labelled a replay.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from streamlit.testing.v1 import AppTest

from core import runner, store
from core.analysis import presenter as P
from core.models import DEFAULT_MODEL, get_model
from core.models.base import ModelError
from core.models.providers import embedded
from core.tasks.setops.answers import answer_grammar
from tests.support import ROOT

DECEPTIVE = {"task": "setops", "seed": 2, "samples": 2, "operations": ["union", "difference"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}


def test_local_default_is_the_default_and_the_small_model_stays():
    assert DEFAULT_MODEL == "local/default"
    assert get_model("local/default").spec == "local/default"
    assert get_model("local/smollm2").spec == "local/smollm2"
    with pytest.raises(ModelError, match="local/default, local/smollm2"):
        get_model("local/nope")
    from ui.model_picker import MODEL_CHOICES

    assert MODEL_CHOICES[:2] == ("local/default", "local/smollm2")


def _fake(tmp_path, content: bytes, digest: str):
    parts = []
    for i in range(3):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(content[i * 10:(i + 1) * 10])
        parts.append(p)
    m = embedded.Embedded("fake", "fake", "0", "MIT", "here", "fake.gguf", digest, len(content), "fakepkg", parts=3)
    return m, parts


def test_parts_are_assembled_checked_and_refused_when_they_do_not_match(tmp_path, monkeypatch):
    content = bytes(range(30))
    m, parts = _fake(tmp_path, content, hashlib.sha256(content).hexdigest())
    monkeypatch.setattr(embedded, "_part_paths", lambda _m: parts)
    target, stamp = tmp_path / "out" / "fake.gguf", tmp_path / "out" / "fake.gguf.sha256"
    assert embedded.assemble(m, target, stamp).read_bytes() == content
    assert stamp.read_text().strip() == m.sha256
    bad = embedded.Embedded(**{**m.__dict__, "sha256": "0" * 64})
    target2 = tmp_path / "out2" / "fake.gguf"
    with pytest.raises(ModelError, match="do not make the expected file"):
        embedded.assemble(bad, target2, target2.with_name("fake.gguf.sha256"))
    assert not target2.exists() and not list(target2.parent.glob(".*part"))   # nothing half-made is left


def test_the_members_grammar_allows_only_members_of_the_union():
    item = {"members": "deceptive", "set_a": ["grandpa", "turnout"], "set_b": ["granny", "presence"]}
    g = answer_grammar(None, item, members=True)
    ok = re.compile(g["regex"])
    assert ok.fullmatch("<answer>{}</answer>") and ok.fullmatch("<answer>{'granny', presence}</answer>")
    assert not ok.fullmatch("<answer>{'appearance'}</answer>")             # made up: impossible under it
    nums = answer_grammar(None, {"members": "numbers", "set_a": [12, 7], "set_b": [7, 40]}, members=True)
    assert re.fullmatch(nums["regex"], "<answer>{7, 40}</answer>") and not re.fullmatch(nums["regex"],
                                                                                         "<answer>{8}</answer>")
    assert '"grandpa"' in g["gbnf"] and '"\'granny\'"' in g["gbnf"]
    assert not ok.fullmatch("<answer>{" + ", ".join(["granny"] * 5) + "}</answer>")   # at most |A ∪ B| members


@pytest.mark.slow
def test_a_real_model_under_the_members_grammar_names_only_members(tmp_path):
    """local/smollm2 (fast) under answer format "members": every reply is a set of members of A ∪ B."""
    from core.tasks.setops.parse import parse_set

    db = tmp_path / "s.duckdb"
    p = runner.run({**DECEPTIVE, "samples": 1}, "local/smollm2", db_path=db,
                   params={"answer_format": "members", "max_tokens": 200}, limit=6)
    assert p.done == 6, p
    with store.connect(db) as con:
        rows = con.execute("SELECT i.set_a, i.set_b, v.response FROM v_results v JOIN items i USING (run_id, idx)"
                           ).fetchall()
    import json

    for set_a, set_b, response in rows:
        union = {str(x) for x in json.loads(set_a) + json.loads(set_b)}
        members = parse_set(response, "words").members
        assert members is not None and {str(x) for x in members} <= union, (response, union)


def test_presenter_numbers_and_figure(tmp_path):
    db = tmp_path / "s.duckdb"
    p = runner.run(DECEPTIVE, "reference/solver", db_path=db)
    with store.connect(db) as con:
        stats = P.condition_stats(con, p.run_id, "strict")
        order = P.replay_order(con, p.run_id)
        first = P.condition_stats(con, p.run_id, "strict", upto=order[:3])
    assert list(stats["condition"]) == ["not_swapped", "swapped", "random"]
    assert stats["n"].tolist() == [4, 4, 4] and stats["accuracy"].tolist() == [100.0] * 3
    assert all(stats["lo"] < 100) and all(stats["hi"] == 100)                # Wilson: an interval, not a point
    assert sorted(order) == list(range(12)) and int(first["n"].sum()) == 3
    fig = P.bars(stats, P.paper_conditions())
    live, paper = fig.data
    assert list(live.error_y.arrayminus) == pytest.approx(list(stats["accuracy"] - stats["lo"]))
    assert "N = 4" in live.text[0] and paper.name.startswith("paper: Claude Haiku")
    assert P.replay_position(100.0, 100.0, 2.0, 12) == 1 and P.replay_position(100.0, 110.0, 2.0, 12) == 12


def test_the_page_replays_a_stored_run_labelled_as_a_replay(tmp_path, monkeypatch):
    db = tmp_path / "s.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(db))
    runner.run(DECEPTIVE, "reference/solver", db_path=db, name="earlier run")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/deceptive_sets.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="presenter_replay_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(w.value for w in at.warning)
    assert "REPLAY — not live" in shown and "earlier run" in shown and "reference/solver" in shown

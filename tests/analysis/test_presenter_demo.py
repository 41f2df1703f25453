"""What the demo's first screen is computed from: the failures kept newest first, the answers' provenance (made now or
read back from the store), "too few pairs to test", the paper's figures of the same operation, and the re-ask of the
recording's failed pairs (the recorded items exactly)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
import pytest

from core.analysis import presenter as P


def _row(idx, cond, sample, correct, followed=True):
    return dict(idx=idx, condition=cond, operation="intersection", sample=sample, correct=correct,
                followed=followed)


def test_failures_are_every_pair_with_a_wrong_answer_newest_first():
    rows = pd.DataFrame([
        _row(0, "not_swapped", 0, True), _row(1, "swapped", 0, False),     # the swap failure
        _row(2, "not_swapped", 1, True), _row(3, "swapped", 1, True),      # both right: no card
        _row(4, "not_swapped", 2, False), _row(5, "swapped", 2, True),     # the reverse
        _row(6, "not_swapped", 3, False),                                  # half answered, wrong
    ])
    fails = P.failures(P.pairs(rows))
    assert list(fails["sample"]) == [3, 2, 0]
    assert list(fails["verdict"]) == ["wrong as sampled", "wrong as sampled, right when swapped",
                                      "right as sampled, wrong when swapped"]
    assert P.failures(P.pairs(rows.iloc[2:4])).empty
    assert P.failures(P.pairs(rows.iloc[0:0])).empty


def test_one_pair_is_too_few_to_test():
    one = P.paired_test(0, 1, 0, 0)
    assert not P.testable(one) and P.effect_words(one) == "too few pairs to test"
    assert P.direction_words(one) == ""
    many = P.paired_test(10, 8, 1, 3)
    assert P.testable(many) and P.direction_words(many) == "worse when swapped"
    assert P.direction_words(P.paired_test(10, 1, 8, 3)) == "better when swapped"


def test_the_paper_is_compared_like_with_like():
    inter = P.paper_conditions(["intersection"]).set_index("condition")["mean"]
    assert (round(inter["not_swapped"]), round(inter["swapped"])) == (91, 50)
    assert P.paper_words(P.paper_conditions(["intersection"])) == (
        "paper, Claude Haiku, intersections: 91 % as sampled → 50 % swapped")
    pooled = P.paper_conditions(["intersection", "union"])
    assert "operation" not in pooled.columns and "all four operations" in P.paper_words(pooled)
    empty = pd.DataFrame([{"condition": c, "label": P.LABELS[c], "n": 0, "correct": 0, "followed": 0,
                           "accuracy": float("nan"), "lo": float("nan"), "hi": float("nan")} for c in P.CONDITIONS])
    fig = P.bars(empty, P.paper_conditions(["intersection"]))
    paper = [t for t in fig.data if t.name.startswith("paper")][0]
    assert paper.name == "paper: Claude Haiku, intersections (± std)"
    assert [round(v) for v in paper.y] == [91, 50, 87]


def test_answer_provenance_tells_answers_made_now_from_answers_read_back(tmp_path):
    from core import store

    db = tmp_path / "s.duckdb"
    t0 = datetime(2026, 11, 28, 8, 0, 0)
    with store.connect(db) as con:
        cols = {r[0] for r in con.execute("DESCRIBE results").fetchall()}
        assert {"run_id", "idx", "cached", "at", "error"} <= cols
        for idx, at, cached in ((0, t0, False), (1, t0 + timedelta(seconds=5), False),
                                (2, t0 + timedelta(minutes=30), True), (3, t0 + timedelta(minutes=31), False)):
            con.execute('INSERT INTO results (run_id, idx, cached, "at") VALUES (?, ?, ?, ?)',
                        ["r1", idx, cached, at])
    with store.connect(db) as con:
        opened = t0 + timedelta(minutes=20)   # the click: answers stored before it are read back
        p = P.answer_provenance(con, "r1", opened)
        assert (p["answered"], p["read_back"], p["now"]) == (4, 3, 1)   # the cached one counts as read back
        assert p["first"] == t0 and p["last"] == t0 + timedelta(minutes=30)
        assert p["made_first"] == t0 and p["made_last"] == t0 + timedelta(minutes=31)
        p = P.answer_provenance(con, "r1")
        assert (p["read_back"], p["now"]) == (1, 3)
        assert P.answer_provenance(con, "other")["answered"] == 0


def test_a_reask_asks_the_recorded_items_of_failed_draws(remembered_blocklist, curated_pool):
    """(Each of the 40 re-asks below checks every recorded failure's items against the blocklist: each word's
    verdict is computed once, ``remembered_blocklist``.)"""
    from core.config import read_run_spec, run_spec
    from core.tasks import setops

    rec = P.recording_summary(P.recording_path())
    failed = rec["failed_samples"]
    assert len(failed) == rec["tally"]["only_sampled"] > P.REASK_PAIRS
    doc = P.reask_doc(failed, seed=7)
    chosen = doc["only_samples"]
    assert len(chosen) == P.REASK_PAIRS and set(chosen) <= set(failed)
    assert P.reask_doc(failed, seed=7)["only_samples"] == chosen              # the seed fixes the choice
    spec = run_spec(doc)
    assert P.reask_of(spec.config_dict()) == chosen
    full = read_run_spec(P.recording_grid_path())
    assert P.reask_of(full.config_dict()) is None                             # the recording itself is no re-ask
    other = dict(spec.config_dict(), seed=1)
    assert P.reask_of(other) is None                                          # another grid is no re-ask
    recorded = {(r["config_id"], r["sample"], r["condition"]): r["prompt"] for r in setops.items(full.config)}
    items = list(setops.items(spec.config))
    from core.lexicon.blocklist import item_is_safe

    assert all(item_is_safe(it) for it in items)                              # words safe to project
    for seed in range(40):
        assert all(item_is_safe(it) for it in setops.items(run_spec(P.reask_doc(failed, seed)).config))
    assert len(items) == 2 * P.REASK_PAIRS
    assert all(recorded[it["config_id"], it["sample"], it["condition"]] == it["prompt"] for it in items)
    with pytest.raises(ValueError, match="no pair"):
        P.reask_doc([], seed=1)

"""The demo's paired view, from its parts to the shipped recording: the exact paired test against its definition, a
wrong answer diffed against the truth, swapped members named with their hypernym, draws paired across conditions in
the order they arrive, and the shipped recording (data/demo/recording.jsonl) imported with ``python -m core import``
showing the swap effect in ``report findings`` with an interval that excludes 0."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from scipy.stats import binomtest

from core.analysis import presenter as P

RECORDING = P.recording_path()


def test_paired_test_counts_only_the_discordant_pairs():
    t = P.paired_test(both_right=30, only_sampled=8, only_swapped=2, both_wrong=10)
    assert t["n"] == 50 and t["sampled"] == 76.0 and t["swapped"] == 64.0
    assert t["effect"] == pytest.approx(-12.0)
    assert t["p_value"] == pytest.approx(binomtest(2, 10, 0.5).pvalue)
    ci = binomtest(2, 10, 0.5).proportion_ci(method="exact")
    assert t["lo"] == pytest.approx(100 * 10 / 50 * (2 * ci.low - 1))
    assert t["hi"] == pytest.approx(100 * 10 / 50 * (2 * ci.high - 1))
    assert -100 <= t["lo"] < t["effect"] < t["hi"] <= 100
    # the concordant pairs change the scale of the effect, never the test
    assert P.paired_test(0, 8, 2, 0)["p_value"] == t["p_value"]


def test_paired_test_edges():
    assert P.paired_test(5, 0, 0, 5) | {} == P.paired_test(5, 0, 0, 5)
    none = P.paired_test(5, 0, 0, 5)
    assert none["effect"] == 0 and none["p_value"] == 1.0 and math.isnan(none["lo"])
    assert not P.excludes_zero(none)
    all_drop = P.paired_test(0, 20, 0, 0)
    assert all_drop["effect"] == -100 and all_drop["lo"] >= -100 and all_drop["hi"] < 0 and P.excludes_zero(all_drop)
    assert math.isnan(P.paired_test(0, 0, 0, 0)["effect"])
    assert P.effect_words(P.paired_test(0, 0, 0, 0)) == "no complete pair yet"
    assert "−" in P.effect_words(all_drop) and "-" not in P.effect_words(all_drop)


SWAPPED = {"condition": "swapped", "operation": "intersection", "sample": 0,
           "set_a": ["oak", "cat", "elm", "dog"], "set_b": ["ash", "cow", "yew", "pig"],
           "member_hypernyms": {"oak": "tree.n.01", "elm": "tree.n.01", "ash": "tree.n.01", "yew": "tree.n.01",
                                "cat": "animal.n.01", "dog": "animal.n.01", "cow": "animal.n.01",
                                "pig": "animal.n.01"},
           "hypernym_a": "tree.n.01", "hypernym_b": "animal.n.01", "truth": [], "parsed": ["cat", "Cow", "unicorn"],
           "correct": False, "followed": True}


def test_a_wrong_answer_is_diffed_against_the_truth():
    d = P.answer_diff(SWAPPED)
    assert d["missing"] == []
    assert d["extra"] == [("cat", "A"), ("Cow", "B"), ("unicorn", "made up")]
    union = dict(SWAPPED, truth=["oak", "cat", "ash"], parsed='["oak", "pig"]')   # JSON text, as the store has it
    d = P.answer_diff(union)
    assert d["missing"] == ["cat", "ash"] and d["extra"] == [("pig", "B")]
    off = P.answer_diff(dict(SWAPPED, parsed=None, truth=["oak"]))
    assert off["answered"] is None and off["missing"] == ["oak"]


def test_swapped_members_are_named_with_their_hypernym():
    moved = P.swapped_members(SWAPPED)
    assert ("cat", "animal", "A", "tree") in moved      # cat — an animal — now in the set of trees
    assert ("ash", "tree", "B", "animal") in moved
    assert len(moved) == 4
    sampled = dict(SWAPPED, set_a=["oak", "elm", "ash", "yew"], set_b=["cat", "dog", "cow", "pig"])
    assert P.swapped_members(sampled) == []


def test_pairs_join_the_conditions_of_a_draw_in_arrival_order():
    rows = pd.DataFrame([
        dict(idx=2, condition="not_swapped", operation="intersection", sample=1, correct=True, followed=True),
        dict(idx=0, condition="not_swapped", operation="intersection", sample=0, correct=True, followed=True),
        dict(idx=3, condition="swapped", operation="intersection", sample=1, correct=False, followed=True),
        dict(idx=1, condition="swapped", operation="intersection", sample=0, correct=True, followed=False),
        dict(idx=4, condition="not_swapped", operation="intersection", sample=2, correct=False, followed=True),
    ])
    table = P.pairs(rows)
    assert list(table["sample"]) == [1, 0, 2]
    assert list(table["complete"]) == [True, True, False]
    t = P.paired_tally(table)
    assert (t["n"], t["both_right"], t["only_sampled"], t["only_swapped"], t["both_wrong"]) == (2, 1, 1, 0, 0)
    assert (t["answers"], t["off_format"]) == (5, 1)


@pytest.fixture(scope="module")
def recording_rows():
    assert RECORDING.is_file(), "the demo ships its recording"
    return P.read_result_file(RECORDING)


def test_the_recording_is_what_its_config_generates(recording_rows):
    """Every row is an item of data/demo/recording.yaml (same prompt, same truth), made by local/default."""
    from core.config import read_run_spec
    from core.tasks import setops

    spec = read_run_spec(RECORDING.with_suffix(".yaml"))
    items = {it["idx"]: it for it in setops.items(spec.config)}
    assert set(recording_rows["model"]) == {"local/default"}
    for r in recording_rows.itertuples():
        assert r.prompt == items[r.idx]["prompt"] and list(r.truth) == items[r.idx]["truth"]
    meta = json.loads(RECORDING.with_suffix(".json").read_text())
    assert meta["machine"] and meta["made"]


def test_the_recording_imported_shows_the_swap_effect_in_findings(recording_rows, cli, tmp_path):
    db = tmp_path / "s.duckdb"
    r = cli("import", RECORDING, "--db", db)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "findings.json"
    r = cli("report", "findings", "--db", db, "--only", "deceptiveness_swapping_effect", "--out", out)
    assert r.returncode == 0, r.stderr
    finding = json.loads(out.read_text())["findings"][0]
    (contrast,) = [c for c in finding["contrasts"] if (c["a"], c["b"]) == ("swapped", "not_swapped")]
    assert contrast["estimate"] < 0 and contrast["ci_high"] < 0 and contrast["n"] >= 200   # over draws; excludes 0
    # the presenter's own paired tally of the file agrees in sign and excludes 0 too
    t = P.recording_summary(RECORDING)["tally"]
    assert t["n"] >= 200 and t["effect"] < 0 and P.excludes_zero(t)   # the demo ships at least 200 pairs

"""set_metrics, the truth of the four operations, canonical order and the A4 error helpers."""

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from core.tasks.setops.scoring import (
    OPERATIONS,
    apply_operation,
    canonical,
    error_fields,
    error_summary,
    gl_label,
    kind_of,
    score_set_response,
    set_metrics,
)
from tests.support import ROOT  # noqa: E402

A = [1, 2, 3, 4]
B = [3, 4, 5]


@pytest.mark.parametrize("op,expected", [
    ("union", (1, 2, 3, 4, 5)),
    ("intersection", (3, 4)),
    ("difference", (1, 2)),
    ("symmetric_difference", (1, 2, 5)),
])
def test_apply_operation_numbers(op, expected):
    assert apply_operation(op, A, B) == expected


def test_apply_operation_words_sorted_and_distinct():
    a, b = ["pear", "apple", "fig"], ["fig", "kiwi"]
    assert apply_operation("union", a, b) == ("apple", "fig", "kiwi", "pear")
    assert apply_operation("difference", b, a) == ("kiwi",)
    assert apply_operation("intersection", ["a"], ["b"]) == ()


def test_apply_operation_unknown():
    with pytest.raises(ValueError, match="unknown set operation"):
        apply_operation("complement", A, B)


def test_canonical_order_ints_first_then_strings():
    assert canonical(["b", 10, "a", 2, 10, "b", -1]) == (-1, 2, 10, "a", "b")
    with pytest.raises(TypeError):
        canonical([True, 1])


def test_canonical_independent_of_hash_seed():
    code = ("from core.tasks.setops.operations import canonical, apply_operation;"
            "w=['zeta','alpha','mu','beta','omega','kappa'];"
            "print(canonical(w), apply_operation('symmetric_difference', w, ['mu','nu']))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}, cwd=str(ROOT)).stdout
            for seed in ("0", "12345")}
    assert len(outs) == 1


def test_metrics_partial_answer():
    m = set_metrics(truth=[1, 2, 3, 4, 5], answer=[1, 2, 9], set_a=A, set_b=B)
    assert m == {
        "truth_len": 5, "empty_truth": False, "correct": False, "jaccard": 2 / 6, "precision": 2 / 3,
        "recall": 2 / 5, "answer_len": 3, "made_up": 1,
    }


def test_metrics_exact_match_ignores_order_and_duplicates():
    m = set_metrics([3, 1], [1, 3, 3], A, B)
    assert m["correct"] and m["jaccard"] == m["precision"] == m["recall"] == 1.0
    assert (m["truth_len"], m["answer_len"], m["made_up"]) == (2, 2, 0)


def test_metrics_words_are_case_insensitive():
    m = set_metrics(["apple"], ["Apple "], ["apple"], ["pear"])
    assert m["correct"] and m["made_up"] == 0


@pytest.mark.parametrize("truth,answer,exp", [
    ([], [], (True, 1.0, 1.0, 1.0)),
    ([], [1], (False, 0.0, 0.0, 0.0)),
    ([1], [], (False, 0.0, 0.0, 0.0)),
])
def test_metrics_empty_sets(truth, answer, exp):
    m = set_metrics(truth, answer, A, B)
    assert (m["correct"], m["jaccard"], m["precision"], m["recall"]) == exp
    assert m["empty_truth"] == (not truth)
    assert m["answer_len"] == len(answer)


def test_metrics_did_not_follow():
    m = set_metrics([], None, A, B)
    assert m == {"truth_len": 0, "empty_truth": True, "correct": False, "jaccard": 0.0, "precision": 0.0,
                 "recall": 0.0, "answer_len": None, "made_up": 0}


def test_made_up_counts_members_outside_both_sets():
    # 5 is in B (not made up even though the truth of A−B excludes it); 42 and 'x' are made up
    m = set_metrics(apply_operation("difference", A, B), [1, 5, 42, "x"], A, B)
    assert m["made_up"] == 2


def test_metrics_tolerate_odd_member_types():
    # integral floats are ints; other values compare as lower-case text (and are made up here)
    m = set_metrics([1, 2], [1.0, 2, None, True, 2.5], A, B)
    assert (m["answer_len"], m["made_up"], m["correct"]) == (5, 3, False)
    assert set_metrics(["Pear"], ["pear"], ["PEAR"], [])["correct"]


small = st.sets(st.integers(0, 12), max_size=8)


@settings(max_examples=200, deadline=None, database=None)
@given(small, small, st.sampled_from(OPERATIONS), st.one_of(st.none(), small))
def test_metric_invariants(a, b, op, answer):
    truth = apply_operation(op, a, b)
    assert truth == canonical(truth)
    m = set_metrics(truth, answer, a, b)
    for k in ("jaccard", "precision", "recall"):
        assert 0.0 <= m[k] <= 1.0
    assert m["jaccard"] <= min(m["precision"], m["recall"]) + 1e-12
    assert m["correct"] == (answer is not None and set(answer) == set(truth))
    assert m["correct"] == (m["jaccard"] == 1.0 and answer is not None)
    if answer is not None:
        assert m["made_up"] == len(set(answer) - set(a) - set(b))
    assert set_metrics(truth, truth, a, b)["made_up"] == 0  # the truth never holds made-up members


def test_gl_label():
    assert gl_label(8, 7) == "G8 vs. L7"
    assert gl_label(0, 0) == "G0 vs. L0"
    assert gl_label(3, None) == "G3 vs. L?"


def test_error_fields():
    f = error_fields(set_metrics([], [], A, B))
    assert f == {"did_not_follow": False, "has_made_up": False, "empty_truth_correct": True,
                 "empty_truth_wrong": False, "spurious_empty": False, "gl": "G0 vs. L0"}
    assert error_fields(set_metrics([], None, A, B))["empty_truth_wrong"]
    assert error_fields(set_metrics([], None, A, B))["did_not_follow"]
    assert error_fields(set_metrics([1], [], A, B))["spurious_empty"]
    assert error_fields(set_metrics([1], [1, 99], A, B))["has_made_up"]


def _rows(n, truth_len, answer_len, correct, made_up=0):
    row = {"truth_len": truth_len, "answer_len": answer_len, "empty_truth": truth_len == 0, "correct": correct,
           "made_up": made_up}
    return [dict(row) for _ in range(n)]


def test_error_summary_reproduces_paper_definitions():
    # The paper's intersection/numbers column: N 16000, correct 10573, empty-set equal 8064, mismatch 5408,
    # accuracy 66.08, accuracy non-empty 15.68, nullset correct 50.4 %, nullset wrong 33.8 %.
    rows = (_rows(8064, 0, 0, True) + _rows(5400, 0, 1, False) + _rows(8, 0, None, False)
            + _rows(2509, 1, 1, True) + _rows(16000 - 8064 - 5408 - 2509, 2, 1, False, made_up=1))
    s = error_summary(rows)
    assert (s["n"], s["n_correct"], s["empty_set_equal"], s["empty_set_mismatch"]) == (16000, 10573, 8064, 5408)
    assert (s["accuracy"], s["accuracy_non_empty"]) == (66.08, 15.68)
    assert (s["pct_nullset_correct"], s["pct_nullset_wrong"]) == (50.4, 33.8)
    assert s["did_not_follow"] == 8
    assert s["made_up_sum"] == 19 and s["pct_made_up"] == round(100 * 19 / 16000, 2)
    assert s["pct_answers_made_up"] == round(100 * 19 / 16000, 2)
    assert s["top_mistakes"] == [("G0 vs. L1", round(100 * 5400 / 5427, 2)), ("G2 vs. L1", round(100 * 19 / 5427, 2)),
                                 ("G0 vs. L?", round(100 * 8 / 5427, 2))]
    assert s["top_correct"] == [("G0 vs. L0", round(100 * 8064 / 10573, 2)),
                                ("G1 vs. L1", round(100 * 2509 / 10573, 2))]
    assert s["accuracy_on_non_empty"] == round(100 * 2509 / (2509 + 19), 2)


def test_error_summary_pct_made_up_counts_members_like_the_paper():
    # Union, numbers in the paper: 375 made-up members over 16000 comparisons -> 2.34
    rows = _rows(300, 8, 9, False, made_up=1) + _rows(25, 8, 11, False, made_up=3) + _rows(15675, 8, 8, True)
    s = error_summary(rows)
    assert (s["made_up_sum"], s["pct_made_up"], s["pct_answers_made_up"]) == (375, 2.34, 2.03)


def test_error_summary_ties_are_deterministic_and_empty_group_ok():
    rows = _rows(2, 3, 2, False) + _rows(2, 3, None, False) + _rows(2, 10, 2, False) + _rows(2, 1, 2, False)
    assert [g for g, _ in error_summary(rows, k=4)["top_mistakes"]] == ["G1 vs. L2", "G3 vs. L2", "G3 vs. L?",
                                                                         "G10 vs. L2"]
    empty = error_summary([])
    assert empty["n"] == 0 and empty["accuracy"] == 0.0 and empty["top_mistakes"] == []


def test_kind_of():
    assert kind_of("numbers") == "numbers"
    assert {kind_of(m) for m in ("words", "deciles", "deceptive")} == {"words"}


def test_score_set_response_is_the_task_score_dict():
    item = {"members": "words", "set_a": ["kite", "lamp"], "set_b": ["lamp", "moss"], "truth": ["lamp"]}
    s = score_set_response(item, "<thinking>A = {'kite','lamp'}</thinking><answer>{'Lamp', 'ghost'}</answer>")
    assert json.loads(s["parsed"]) == ["ghost", "lamp"]
    assert s["followed"] and not s["correct"] and s["made_up"] == 1 and s["answer_len"] == 2
    assert "reason" not in s
    s = score_set_response(item, "<answer>{'kite'", with_reason=True)
    assert s["parsed"] is None and not s["followed"] and s["reason"] == "truncated" and s["answer_len"] is None
    num = {"members": "numbers", "set_a": [7], "set_b": [8], "truth": []}
    s = score_set_response(num, "<answer>∅</answer>")
    assert s["parsed"] == "[]" and s["correct"] and s["empty_truth"]

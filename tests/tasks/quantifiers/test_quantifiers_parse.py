"""Q3 parsing: the first whole-word true/false, case-insensitive; unparseable kept apart and scored GQG-style."""

import pytest

from core.tasks.quantifiers.parse import parse_truth, score_truth


@pytest.mark.parametrize("response,expected", [
    ("true", "true"),
    ("False", "false"),
    ("TRUE.", "true"),
    ("**False**", "false"),
    ("Answer: true", "true"),
    ("The answer is false, not true.", "false"),
    ("true or false? true", "true"),
    ("It is true!", "true"),
    ("\n\nFalse\n", "false"),
    ("untrue", None),
    ("falsehood is everywhere", None),
    ("truely", None),
    ("yes", None),
    ("", None),
    (None, None),
    ("A. True\nB. False", "true"),
])
def test_parse_truth(response, expected):
    assert parse_truth(response) == expected


def test_score_correct_and_gqg():
    assert score_truth("true", "True.") == {
        "parsed": "true", "followed": True, "correct": True, "pred": "true", "correct_gqg": True}
    assert score_truth("true", "false") == {
        "parsed": "false", "followed": True, "correct": False, "pred": "false", "correct_gqg": False}
    # unparseable: its own category (pred None, not followed, not correct) …
    s = score_truth("false", "I cannot tell.")
    assert s["pred"] is None and s["followed"] is False and s["correct"] is False and s["parsed"] is None
    # … and scored the GQG way as "false"
    assert s["correct_gqg"] is True
    assert score_truth("true", "I cannot tell.")["correct_gqg"] is False


def test_bad_label():
    with pytest.raises(ValueError):
        score_truth("yes", "true")

"""Q3 parsing: the first whole-word true/false, case-insensitive; unparseable kept apart and scored GQG-style."""

import pytest

from core.tasks.quantifiers.parse import parse_truth, parse_truth_gqg, score_truth


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


# GQG's evaluation script (lerow/llm-quantifier, pythia_test.py parse_output): whitespace pieces of at most 6
# characters as written, non-letters dropped, lower-cased; the first "true"/"false" wins; nothing → "false".
@pytest.mark.parametrize("response,expected", [
    ("true", "true"),
    ("False", "false"),
    ("TRUE.", "true"),
    ("(true)", "true"),            # 6 characters: read
    ("(false)", "false"),          # 7 characters: skipped … and nothing else → "false"
    ("(false) true", "true"),      # the skipped piece does not count; the next one does
    ("**true**", "false"),         # 8 characters as written: skipped → default "false" (ours reads "true")
    ("true/false", "false"),       # one 10-character piece: skipped
    ("tr-ue", "true"),             # non-letters dropped inside a short piece
    ("t-r-u-e", "false"),          # 7 characters: skipped
    ("1true", "true"),
    ("untrue", "false"),
    ("Answer: true", "true"),
    ("I think it is false", "false"),
    ("It is true!", "true"),
    ("\n\tTrue\n", "true"),
    ("", "false"),
    (None, "false"),
    ("Yes.", "false"),
])
def test_parse_truth_gqg(response, expected):
    assert parse_truth_gqg(response) == expected


def test_gqg_rule_differs_from_ours_where_it_should():
    assert parse_truth("**true**") == "true" and parse_truth_gqg("**true**") == "false"
    assert score_truth("true", "**true**")["correct"] is True
    assert score_truth("true", "**true**")["correct_gqg"] is False


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

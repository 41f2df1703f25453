"""Every entry of tests/data/parse_corpus.yaml parses to its expected members / followed / reason (the lenient
parser; the strict expectations of the same entries are checked in test_parse_strict.py)."""


import pytest
import yaml

from core.tasks.setops.parse import FOLLOWED_REASONS, NOT_FOLLOWED_REASONS, ParsedAnswer, parse_set
from tests.support import DATA

CORPUS = yaml.safe_load((DATA / "parse_corpus.yaml").read_text(encoding="utf-8"))


def test_corpus_is_large_and_well_formed():
    assert len(CORPUS) >= 60
    notes = [e["note"] for e in CORPUS]
    assert len(set(notes)) == len(notes), "notes identify entries; keep them unique"
    for e in CORPUS:
        assert set(e) == {"note", "kind", "response", "expected", "followed", "reason", "strict", "strict_reason"}, \
            e["note"]
        assert e["kind"] in ("numbers", "words")
        assert (e["expected"] is None) == (not e["followed"]), e["note"]
        assert e["reason"] in (FOLLOWED_REASONS if e["followed"] else NOT_FOLLOWED_REASONS), e["note"]
    # both outcomes and every reason are represented
    assert {e["reason"] for e in CORPUS} == FOLLOWED_REASONS | NOT_FOLLOWED_REASONS


@pytest.mark.parametrize("entry", CORPUS, ids=[e["note"][:60] for e in CORPUS])
def test_corpus_entry(entry):
    got = parse_set(entry["response"], entry["kind"])
    assert isinstance(got, ParsedAnswer)
    expected = None if entry["expected"] is None else tuple(entry["expected"])
    assert got.members == expected
    assert got.followed is entry["followed"]
    assert got.reason == entry["reason"]


def test_to_json_is_the_stored_form():
    assert parse_set("<answer>{3, 1}</answer>", "numbers").to_json() == "[1, 3]"
    assert parse_set("<answer>{'Éclair', 'b'}</answer>", "words").to_json() == '["b", "éclair"]'
    assert parse_set("<answer>set()</answer>", "numbers").to_json() == "[]"
    assert parse_set("no idea", "numbers").to_json() is None


def test_parsed_answer_is_frozen():
    got = parse_set("<answer>{1}</answer>", "numbers")
    with pytest.raises(AttributeError):
        got.members = (2,)


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match="kind"):
        parse_set("{1}", "letters")


def test_non_string_response_did_not_follow():
    assert parse_set(None, "numbers") == ParsedAnswer(None, False, "empty_response")  # type: ignore[arg-type]


def test_thinking_sets_never_leak_when_answer_missing():
    # reasoning mentions sets, the output then ends without a final answer
    r = "<thinking>A = {1, 2}. B = {2, 3}. Union is {1, 2, 3}.</thinking>\nI am not sure."
    assert parse_set(r, "numbers") == ParsedAnswer(None, False, "no_set_found")


def test_think_tag_variants_are_case_insensitive():
    r = "<THINKING>A = {9}</Thinking>\n<Answer>{4}</aNsWeR>"
    assert parse_set(r, "numbers").members == (4,)


def test_mixed_numbers_answer_sorts_ints_first():
    got = parse_set("<answer>{zeta, 10, alpha, 2}</answer>", "numbers")
    assert got.members == (2, 10, "alpha", "zeta")

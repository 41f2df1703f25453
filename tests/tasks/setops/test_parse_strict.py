"""Strict scoring = the SetLexSem reference's answer rule (core/tasks/setops/parse_strict.py).

Three checks that do not need the reference code:
1. every entry of tests/data/parse_corpus.yaml reads as its ``strict`` / ``strict_reason`` expectation (the
   expectations were confirmed against the reference's own functions; see test_reference_parity.py);
2. an independent re-statement of the reference's rules, written below from its documented behaviour (a
   character-level scanner, no shared code with the module), agrees with the module on the corpus and on thousands of
   generated shapes;
3. the verdict (correct_strict, made-up count) is exact set equality: type- and case-sensitive.
"""

from __future__ import annotations

import json
import random

import pytest
import yaml

from core.tasks.setops.parse_strict import (
    FOLLOWED_REASONS,
    NOT_FOLLOWED_REASONS,
    StrictAnswer,
    parse_strict,
    sorted_members,
)
from core.tasks.setops.scoring import score_set_response, strict_fields, strict_from_reference
from tests.support import DATA

CORPUS = yaml.safe_load((DATA / "parse_corpus.yaml").read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------- the re-statement

_TOKEN_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")


def _blocks(text: str) -> list[str]:
    """Texts between '<answer>' and the next '</answer>', as re.findall with a look-behind, a lazy DOTALL body and a
    look-ahead finds them: scan left to right; a match may start at any position preceded by '<answer>' that is not
    before the end of the previous match; after an empty match the next one may start at the same place only if it
    is not empty."""
    out, pos, last_empty_at = [], 0, None
    while pos <= len(text):
        start = next((p for p in range(pos, len(text) + 1) if text[max(0, p - 8):p] == "<answer>" and p >= 8), None)
        if start is None:
            break
        end = text.find("</answer>", start)
        if end == start and last_empty_at == start:   # an empty match right where the last empty one was
            end = text.find("</answer>", start + 1)
        if end < 0:
            pos = start + 1
            continue
        out.append(text[start:end])
        last_empty_at = end if end == start else None
        pos = max(start, end)
        if end == start and last_empty_at is None:
            pos += 1
    return out


def _tokens(text: str) -> list[str]:
    runs, cur = [], ""
    for ch in text:
        if ch == " ":
            continue            # spaces are removed before tokenising
        if ch in _TOKEN_CHARS:
            cur += ch
        else:
            if cur:
                runs.append(cur)
            cur = ""
    if cur:
        runs.append(cur)
    return runs


def _as_member(tok: str):
    try:
        return int(tok)          # Python int(): '007', '-3', '1_000' are ints; '1.5', '-', '.' are not
    except ValueError:
        return tok


def restated(response: str):
    """The reference's reading, written from its documented rules: the members as a frozenset, or None for
    did-not-follow (its sentinel {-1})."""
    if "<answer>" not in response:
        return frozenset() if "set()" in response else None
    blocks = _blocks(response)
    if len(blocks) > 1:
        return None
    text = (blocks[0] if blocks else response).strip()
    if "set(" in text:
        text = text.replace("set(", "")[:-1]
    members = frozenset(_as_member(t) for t in set(_tokens(text)))
    if members in (frozenset({"theemptyset"}), frozenset({"emptyset"}), frozenset({"Theemptyset"})):
        members = frozenset()
    kinds = {type(m) for m in members}
    if len(kinds) > 1 or members == {-1}:   # sorting ints with strings fails; {-1} is the sentinel itself
        return None
    return members


# ------------------------------------------------------------------------------------------- corpus


def test_corpus_has_strict_expectations_for_many_shapes():
    assert len(CORPUS) >= 60
    assert {e["strict_reason"] for e in CORPUS} == FOLLOWED_REASONS | NOT_FOLLOWED_REASONS
    for e in CORPUS:
        assert (e["strict"] is None) == (e["strict_reason"] in NOT_FOLLOWED_REASONS), e["note"]
    # the shapes the issue names are all there
    responses = [e["response"] for e in CORPUS]
    assert any(r.count("<answer>") >= 2 for r in responses)                         # two answer blocks
    assert any("<answer></answer>" in r and r.count("<answer>") == 2 for r in responses)   # echoed empty pair
    assert any("<answer>" not in r and "set()" in r for r in responses)             # no tags, set()
    assert any("<ANSWER>" in r for r in responses)                                  # upper case tags
    assert any("<answer>" in r and "</answer>" not in r for r in responses)         # unclosed tag
    assert sum(e["strict_reason"] == "no_answer_tag" for e in CORPUS) >= 10         # no tags


@pytest.mark.parametrize("entry", CORPUS, ids=[e["note"][:60] for e in CORPUS])
def test_corpus_entry_strict(entry):
    got = parse_strict(entry["response"])
    assert isinstance(got, StrictAnswer)
    assert got.reason == entry["strict_reason"]
    assert got.followed is (entry["strict"] is not None)
    if entry["strict"] is None:
        assert got.members is None and got.to_json() is None
    else:
        assert sorted_members(got.members) == entry["strict"]
        assert json.loads(got.to_json()) == entry["strict"]
    assert restated(entry["response"]) == got.members


def _shapes(n: int, seed: int) -> list[str]:
    pieces = ["<answer>", "</answer>", "<answer>", "</answer>", "set(", ")", "set()", "{", "}", "[", "]", "(", "1",
              "22", "-3", "007", "1_000", "1.5", " ", "\n", "\t", ",", "'", '"', "cat", "Dog", "the empty set",
              "emptyset", "The empty set", "é", "answer", "<ANSWER>", "-1", "_", "-", ".", "∅", "frozenset(",
              "<thinking>", "</thinking>", "ice cream"]
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(n)]


def test_restatement_agrees_on_generated_shapes():
    for response in _shapes(4000, seed=9):
        assert parse_strict(response).members == restated(response), repr(response)


# ------------------------------------------------------------------------------------------- verdicts


def test_strict_verdict_is_exact_equality():
    words = {"truth": ["cat", "dog"], "set_a": ["cat", "dog"], "set_b": ["dog", "eel"], "members": "words"}
    ok = strict_fields(words["truth"], words["set_a"], words["set_b"], "<answer>{'dog', 'cat'}</answer>")
    assert ok == {"parsed_strict": '["cat", "dog"]', "followed_strict": True, "correct_strict": True,
                  "answer_len_strict": 2, "made_up_strict": 0}
    upper = strict_fields(words["truth"], words["set_a"], words["set_b"], "<answer>{'Dog', 'cat'}</answer>")
    assert upper["correct_strict"] is False and upper["made_up_strict"] == 1   # case kept: 'Dog' is not in A ∪ B
    nums = strict_fields([7], [7, 8], [7], "<answer>{'7'}</answer>")
    assert nums["correct_strict"] is True                                        # quoted digits read as ints
    assert strict_fields(["7"], ["7"], ["7"], "<answer>{7}</answer>")["correct_strict"] is False   # 7 ≠ "7"
    # did not follow: no verdict members, not correct, nothing made up (the error table decides how to count it)
    assert strict_fields([1], [1], [2], "{1}") == {"parsed_strict": None, "followed_strict": False,
                                                   "correct_strict": False, "answer_len_strict": None,
                                                   "made_up_strict": 0}


def test_score_holds_both_verdicts():
    item = {"truth": [1, 2], "set_a": [1], "set_b": [2], "members": "numbers"}
    s = score_set_response(item, "The answer: {1, 2}", with_reason=True)
    assert s["correct"] is True and s["followed"] is True                # ours reads the untagged set
    assert s["correct_strict"] is False and s["followed_strict"] is False and s["reason_strict"] == "no_answer_tag"
    two = score_set_response(item, "<answer>{1}</answer> no wait <answer>{1, 2}</answer>")
    assert two["correct"] is True and two["correct_strict"] is False     # the reference refuses two blocks


def test_strict_from_reference_keeps_its_own_verdict():
    got = strict_from_reference("{'Cat', 'dog'}", True, ["Cat", "dog"], [])
    assert got == {"parsed_strict": '["Cat", "dog"]', "followed_strict": True, "correct_strict": True,
                   "answer_len_strict": 2, "made_up_strict": 0}
    assert strict_from_reference("{-1}", False, [1], [2])["followed_strict"] is False
    assert strict_from_reference("set()", False, [1], [2])["answer_len_strict"] == 0
    assert strict_from_reference("__import__('os')", False, [1], [2])["followed_strict"] is False   # never run

"""Property tests: any set written in any accepted style round-trips through parse_set; arbitrary text never
crashes the parser; a response cut off inside its answer never yields a set."""

import os
import string

from hypothesis import HealthCheck, given, settings, strategies as st

from core.tasks.setops.operations import canonical
from core.tasks.setops.parse import FOLLOWED_REASONS, NOT_FOLLOWED_REASONS, parse_set

# PARSE_PROPERTY_EXAMPLES=5000 for a deeper local run
SETTINGS = settings(max_examples=int(os.environ.get("PARSE_PROPERTY_EXAMPLES", "200")), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

_letters = string.ascii_lowercase
words = st.builds(
    lambda head, mid, tail: head + mid + tail,
    st.text(_letters, min_size=1, max_size=8),
    st.sampled_from(["", "", "", "-", "'"]),
    st.text(_letters, min_size=0, max_size=6),
).map(lambda w: w.rstrip("-'") or "a")
numbers = st.integers(min_value=-999, max_value=99999)

QUOTES = [("", ""), ("'", "'"), ('"', '"'), ("‘", "’"), ("“", "”"), ("`", "`")]
SEPARATORS = [", ", ",", " , ", ",\n", ",\n  ", "; "]
CONTAINERS = ["{}", "[]", "()", "set([])", "frozenset({})", "latex", "latex_lr"]
WRAPPERS = ["tags", "tags_ws", "think_tags", "think_label", "label", "bold_label", "fence", "prose_after",
            "equation", "bare"]


def _render_member(m, kind, quote, case, zeros):
    if kind == "numbers":
        text = str(m)
        if zeros and m >= 0:
            text = "0" * zeros + text
    else:
        text = {"lower": m, "upper": m.upper(), "title": m.title()}[case]
    return quote[0] + text + quote[1]


def _render_set(items, container, sep, trailing_comma):
    body = sep.join(items) + ("," if trailing_comma and items else "")
    if container == "latex":
        return "\\{" + body + "\\}"
    if container == "latex_lr":
        return "\\left\\{ " + body + " \\right\\}"
    if container == "set([])":
        return "set([" + body + "])" if items else "set()"
    if container == "frozenset({})":
        return "frozenset({" + body + "})" if items else "frozenset()"
    if container == "()" and len(items) == 1 and not trailing_comma:
        body += ","  # a one-member tuple
    return container[0] + body + container[1]


def _wrap(lit, wrapper, decoy):
    if wrapper == "tags":
        return f"<answer>{lit}</answer>"
    if wrapper == "tags_ws":
        return f"Here you go.\n< ANSWER >\n  {lit}\n</answer >\n"
    if wrapper == "think_tags":
        return f"<thinking>A = {decoy} and B = {decoy}; the result is not {decoy}.</thinking>\n<answer>{lit}</answer>"
    if wrapper == "think_label":
        return f"<think>Set A: {decoy}. Set B: {decoy}.</think>\nFinal answer: {lit}"
    if wrapper == "label":
        return f"Answer: {lit}"
    if wrapper == "bold_label":
        return f"**The answer is** {lit}. That's because A = {decoy}."
    if wrapper == "fence":
        return f"```python\n{lit}\n```"
    if wrapper == "prose_after":
        return f"{lit} is the answer."
    if wrapper == "equation":
        return f"A = {decoy}\nB = {decoy}\nA ∪ B = {lit}"
    return lit


@st.composite
def rendered(draw):
    kind = draw(st.sampled_from(["numbers", "words"]))
    members = draw(st.lists(numbers if kind == "numbers" else words, min_size=0, max_size=12))
    container = draw(st.sampled_from(CONTAINERS))
    quote = draw(st.sampled_from(QUOTES))
    if kind == "words" and quote == ("", "") and any("'" in m for m in members):
        quote = ('"', '"')
    sep = draw(st.sampled_from(SEPARATORS))
    case = draw(st.sampled_from(["lower", "upper", "title"]))
    zeros = draw(st.integers(0, 2))
    dupes = draw(st.booleans())
    order = draw(st.randoms(use_true_random=False))
    items = list(members) + (list(members[:2]) if dupes else [])
    order.shuffle(items)
    rendered_items = [_render_member(m, kind, quote, case, zeros) for m in items]
    lit = _render_set(rendered_items, container, sep, draw(st.booleans()))
    wrapper = draw(st.sampled_from(WRAPPERS))
    decoy = "{" + ", ".join(["777777", "888888"] if kind == "numbers" else ["decoyone", "decoytwo"]) + "}"
    return kind, members, _wrap(lit, wrapper, decoy)


@SETTINGS
@given(rendered())
def test_any_accepted_style_round_trips(case):
    kind, members, response = case
    got = parse_set(response, kind)
    assert got.followed, (response, got)
    assert got.members == canonical(members), response


@SETTINGS
@given(st.text(max_size=400), st.sampled_from(["numbers", "words"]))
def test_arbitrary_text_never_crashes_and_is_consistent(text, kind):
    got = parse_set(text, kind)
    if got.followed:
        assert got.reason in FOLLOWED_REASONS
        assert isinstance(got.members, tuple)
        assert got.members == canonical(got.members)
        for m in got.members:
            assert isinstance(m, (int, str)) and not isinstance(m, bool)
            if isinstance(m, str):
                assert m == m.lower() and m.strip() == m and m
            if kind == "words":
                assert isinstance(m, str)
    else:
        assert got.reason in NOT_FOLLOWED_REASONS
        assert got.members is None


_ALPHABET = "{}[]()<>/,;:=∅'\"\n abcAB012-∪answerthinkg"


@SETTINGS
@given(st.text(alphabet=_ALPHABET, max_size=200), st.sampled_from(["numbers", "words"]))
def test_delimiter_soup_never_crashes(text, kind):
    got = parse_set(text, kind)
    assert got.followed == (got.members is not None)


@SETTINGS
@given(st.lists(numbers, min_size=1, max_size=10), st.data())
def test_cut_off_inside_the_answer_is_truncated(members, data):
    lit = "{" + ", ".join(str(m) for m in members) + "}"
    prefix = data.draw(st.sampled_from(["", "<thinking>A = {1, 2} and B = {2, 3}.</thinking>\n"]))
    cut = data.draw(st.integers(min_value=1, max_value=len(lit) - 1))  # after "{", before "}"
    response = prefix + "<answer>" + lit[:cut]
    got = parse_set(response, "numbers")
    assert (got.followed, got.reason) == (False, "truncated"), response


@SETTINGS
@given(st.lists(words, min_size=1, max_size=6), st.lists(words, min_size=1, max_size=6))
def test_last_complete_answer_block_wins(first, last):
    r = "<answer>{" + ", ".join(first) + "}</answer>\nWait, let me fix that.\n<answer>{" + ", ".join(last) + "}</answer>"
    assert parse_set(r, "words").members == canonical(last)


_LABEL_SOUP = st.lists(st.sampled_from(["answer", "Answer", "FINAL ANSWER", "result", "output", "solution", " is ",
                                        ":", "=", "**", " ", "\n", "x", "_", "{1}", "answers", "would be", "e"]),
                       max_size=30).map("".join)


@SETTINGS
@given(_LABEL_SOUP)
def test_label_fast_path_matches_regex(text):
    from core.tasks.setops.parse import _LABEL, _labels

    assert _labels(text) == [(m.end(), ":" in m.group() or "=" in m.group()) for m in _LABEL.finditer(text)]

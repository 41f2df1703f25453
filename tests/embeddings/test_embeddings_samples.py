"""Sample construction from sentence tuples (E1), the demo set, and validation of uploaded CSVs."""

import math

import pytest

from core.embeddings.samples import (
    SAMPLE_SPECS,
    SentenceTuple,
    build_samples,
    count_samples,
    demo_path,
    load_any,
    load_demo,
    load_samples,
    load_tuples,
    write_tuples,
)
from core.errors import ImportFileError

T = SentenceTuple("x1", "P.", "C.", "N.", "F1.", "F2.", "demo")


def test_nine_samples_per_tuple_exactly_as_e1_lists():
    got = [(s.operator, s.a, s.b, s.target) for s in build_samples([T])]
    assert got == [
        ("overlap", "F1.", "F2.", "C."),
        ("difference", "F1.", "P.", "C."), ("difference", "F1.", "C.", "P."), ("difference", "F1.", "F2.", "P."),
        ("difference", "F2.", "C.", "N."), ("difference", "F2.", "N.", "C."), ("difference", "F2.", "F1.", "N."),
        ("union", "P.", "C.", "F1."), ("union", "C.", "N.", "F2."),
    ]
    assert count_samples(10) == {"overlap": 10, "difference": 60, "union": 20}
    assert [s.variant for s in build_samples([T], ["union"])] == ["{S_prev,S_curr}->S1", "{S_curr,S_next}->S2"]
    assert len({s.sample_id for s in build_samples([T, SentenceTuple("x2", *"abcde")])}) == 2 * len(SAMPLE_SPECS)


def test_demo_set_size_topics_and_fusion_word_budget():
    tuples = load_demo()
    assert len(tuples) >= 60
    assert len({t.topic for t in tuples}) >= 8
    assert len({t.tuple_id for t in tuples}) == len(tuples)
    for t in tuples:
        for fused, x, y in ((t.s1, t.s_prev, t.s_curr), (t.s2, t.s_curr, t.s_next)):
            budget = math.floor(0.5 * (len(x.split()) + len(y.split())))
            assert len(fused.split()) <= budget, (t.tuple_id, fused)
        assert len({t.s_prev, t.s_curr, t.s_next, t.s1, t.s2}) == 5
    assert len(build_samples(tuples)) == 9 * len(tuples)


def test_round_trip_and_aliases(tmp_path):
    p = tmp_path / "t.csv"
    write_tuples([T], p)
    assert load_tuples(p) == [T]
    q = tmp_path / "alias.csv"
    q.write_text("S_prev;S_curr;S_next;S1;S2\nP.;C.;N.;F1.;F2.\n", encoding="utf-8")
    assert load_tuples(q)[0].s_next == "N." and load_tuples(q)[0].tuple_id == "t001"


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"s_prev,s_curr,s_next,s1\na,b,c,d\n", "missing column(s) s2"),
    (b"s_prev,s_curr,s_next,s1,s2\na,b,,d,e\n", "line 2: column s_next is empty"),
    (b"id,s_prev,s_curr,s_next,s1,s2\nk,a,b,c,d,e\nk,a,b,c,d,e\n", "duplicate id"),
    (b"s_prev,s_curr,s_next,s1,s2\n", "no data rows"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
    ("s_prev,s_curr,s_next,s1,s2\ncaf\u00e9,b,c,d,e\n".encode("latin-1"), "UTF-8"),
])
def test_bad_tuple_files_give_one_clear_line(content, message):
    with pytest.raises(ImportFileError, match=message.replace("(", r"\(").replace(")", r"\)")) as exc:
        load_tuples(content)
    assert "\n" not in str(exc.value)


def test_samples_csv_and_detection(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text('operator,a,b,target\nintersection,"A, one",B,O\ndifference,A,B,D\n', encoding="utf-8")
    kind, samples, tuples = load_any(p)
    assert kind == "samples" and tuples == [] and [s.operator for s in samples] == ["overlap", "difference"]
    assert samples[0].a == "A, one"
    kind, samples, tuples = load_any(demo_path())
    assert kind == "tuples" and len(samples) == 9 * len(tuples)
    with pytest.raises(ImportFileError, match="line 2: unknown operator 'merge'"):
        load_samples(b"operator,a,b,target\nmerge,a,b,c\n")
    with pytest.raises(ImportFileError, match="file not found"):
        load_tuples(tmp_path / "nope.csv")

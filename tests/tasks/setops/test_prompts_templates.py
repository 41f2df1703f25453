"""Prompt templates as data: the four parts of Figure 2, phrasings, approaches, k-shot, user edits (SPEC P1–P5)."""

import re

import pytest

from core.errors import ConfigError
from core.tasks import setops as S
from core.tasks.setops.operations import OPERATIONS, apply
from core.tasks.setops.prompts import (
    approach_names,
    default_templates,
    default_templates_yaml,
    load_templates,
    parse_templates_yaml,
    phrasing_names,
    render as R,
    templates_diff,
)

PHRASINGS = ("formal", "plain", "functional", "pythonic", "iterative")
APPROACHES = ("baseline", "baseline_allow_empty", "cot", "self_recitation", "domain_expertise", "composite",
              "composite_allow_empty")
NUM = {"members": "numbers"}


def test_shipped_templates_offer_the_phrasings_and_approaches_of_the_spec():
    assert set(PHRASINGS) <= set(phrasing_names())
    assert set(APPROACHES) <= set(approach_names())
    assert "<answer></answer>" in default_templates_yaml()


def _grid_items(**extra):
    d = dict(NUM, samples=2, sizes=[3], operations=list(OPERATIONS), phrasings=list(PHRASINGS),
             approaches=list(APPROACHES), shots=[0, 3])
    d.update(extra)
    return list(S.items(d))


def test_every_prompt_has_the_four_parts_in_order_and_asks_for_answer_tags():
    for it in _grid_items():
        p = it["prompt"]
        construction = p.index("<sets>")
        task = p.index("<task>")
        instructions = p.index("<answer></answer>")
        assert construction < task < instructions
        if it["shots"]:
            assert task < p.index("<examples>") < p.index("</examples>") < instructions
        else:
            assert "<examples>" not in p
        if it["approach"] in ("cot", "self_recitation", "composite", "composite_allow_empty"):
            assert "<thinking></thinking>" in p
        else:
            assert "<thinking>" not in p and "Do not explain your reasoning" in p
        assert ("empty set" in p) == it["approach"].endswith("allow_empty")
        if it["approach"] in ("domain_expertise", "composite", "composite_allow_empty"):
            assert p.index("set theory") < construction
        # the item's sets are shown exactly as recorded, in order
        assert "Set A = {" + ", ".join(map(str, it["set_a"])) + "}" in p
        assert "Set B = {" + ", ".join(map(str, it["set_b"])) + "}" in p


def test_prompts_differ_across_every_phrasing_approach_and_operation():
    items = _grid_items()
    assert len({it["prompt"] for it in items}) == len(items)
    tasks = {(it["phrasing"], it["operation"]): re.search(r"<task>.*</task>", it["prompt"]).group(0) for it in items}
    assert len(set(tasks.values())) == len(PHRASINGS) * len(OPERATIONS)


def test_word_members_are_quoted():
    t = load_templates()
    text = R.construction(t, ["cat", "dog"], ["emu"], True, t.phrasings["formal"])
    assert "Set A = {'cat', 'dog'}" in text and "Set B = {'emu'}" in text


@pytest.mark.parametrize("phrasing", PHRASINGS)
@pytest.mark.parametrize("op", OPERATIONS)
def test_each_demonstration_shows_the_correct_result(phrasing, op):
    t = load_templates()
    phr = t.phrasings[phrasing]
    a, b = [11, 75, 30], [30, 52]
    result = apply(op, a, b)
    line = R.demo(phr, op, a, b, False, 1)
    shown = "{" + ", ".join(map(str, result)) + "}"
    assert shown in line
    assert "{11, 75, 30}" in line and "{30, 52}" in line
    if phrasing == "iterative":
        for m in (11, 75, 30, 52):
            assert re.search(rf"\b{m} is in (A and in B|A only|B only), (keep|drop)", line)
    empty_line = R.demo(phr, "intersection", [1, 2], [3], False, 1)
    assert phr.set_format.empty in empty_line


def test_templates_override_changes_prompts_is_stored_and_changes_config_id():
    base = dict(NUM, samples=2, sizes=[2], operations=["union"], shots=[1])
    edited = dict(base, templates={"construction": "First set: {set_a}\nSecond set: {set_b}",
                                   "approaches": {"baseline": {"instructions": "Answer in <answer></answer> now."}}})
    a, b = S.item(base, 0), S.item(edited, 0)
    assert (a["set_a"], a["set_b"]) == (b["set_a"], b["set_b"])
    assert b["prompt"].startswith("First set: {" + ", ".join(map(str, b["set_a"])) + "}")
    assert b["prompt"].endswith("Answer in <answer></answer> now.")
    assert a["config_id"] != b["config_id"]
    cfg = S.load_config(edited)
    assert cfg.to_dict()["templates"] == edited["templates"]  # stored with the run's config
    assert S.load_config(cfg.to_dict()) == cfg


def test_override_can_add_a_phrasing():
    new = {"task": {op: f"<task>Do {op} on A and B.</task>" for op in OPERATIONS},
           "demo": {op: "{set_a} and {set_b} give {result}" for op in OPERATIONS}}
    d = dict(NUM, samples=1, sizes=[2], operations=["difference"], phrasings=["terse"], shots=[2],
             templates={"phrasings": {"terse": new}})
    p = S.item(d, 0)["prompt"]
    assert "<task>Do difference on A and B.</task>" in p and p.count(" give {") == 2


@pytest.mark.parametrize(
    "override, words",
    [
        ({"construction": "A is {set_a}, B is {set_c}"}, "unknown placeholder {set_c}"),
        ({"phrasings": {"formal": {"task": {"union": "{result}"}}}}, "unknown placeholder {result}"),
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"phrasings": {"formal": {"tone": "x"}}}, "unknown key 'tone'"),
        ({"phrasings": {"short": {"task": {"union": "u"}}}}, "lacks the operation 'intersection'"),
        ({"approaches": {"cot": {"instructions": 5}}}, "must be text"),
        ({"set_format": {"open": 1}}, "must be text"),
    ],
)
def test_invalid_overrides_are_config_errors(override, words):
    with pytest.raises(ConfigError) as info:
        S.load_config(dict(NUM, templates=override))
    assert words in str(info.value)


def test_literal_braces_need_no_escaping():
    t = load_templates({"approaches": {"baseline": {"instructions": "Write {} or {1, 2} or {X} inside <answer></answer>."}}})
    assert R.instructions(t, "baseline", t.phrasings["formal"]) == "Write {} or {1, 2} or {X} inside <answer></answer>."


def test_templates_diff_round_trip():
    doc = default_templates()
    assert templates_diff(doc) == {}
    doc["phrasings"]["plain"]["task"]["union"] = "<task>Merge A and B.</task>"
    diff = templates_diff(doc)
    assert diff == {"phrasings": {"plain": {"task": {"union": "<task>Merge A and B.</task>"}}}}
    assert load_templates(diff).phrasings["plain"].task["union"].text == "<task>Merge A and B.</task>"
    assert parse_templates_yaml(default_templates_yaml()) == default_templates()
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_templates_yaml("a: [1\n")

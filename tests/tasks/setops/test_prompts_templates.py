"""Prompt templates as data: the four parts of Figure 2, phrasings, approaches, k-shot, user edits (SPEC P1–P5)."""

import re
from collections import defaultdict

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


REASONING = ("cot", "self_recitation", "composite", "composite_allow_empty")
PERSONA = "You are an expert at performing set operations in mathematics."


def _grid_items(**extra):
    d = dict(NUM, samples=2, sizes=[3], operations=list(OPERATIONS), phrasings=list(PHRASINGS),
             approaches=list(APPROACHES), shots=[0, 3])
    d.update(extra)
    return list(S.items(d))


def _instructions(prompt: str) -> str:
    """The approach part: everything after the task and the demonstrations."""
    tail = prompt.rsplit("</examples>", 1)[1] if "</examples>" in prompt else prompt.split("</task>", 1)[1]
    return tail


def _task(prompt: str) -> str:
    return re.search(r"<task>(.*)</task>", prompt, re.S).group(1)


def test_every_prompt_has_the_four_parts_in_order_and_asks_for_answer_tags():
    for it in _grid_items():
        p = it["prompt"]
        construction = p.index("Set A is")
        task = p.index("<task>")
        instructions = p.index("<answer></answer>")
        assert construction < task < p.index("</task>") < instructions
        if it["shots"]:
            assert task < p.index("<examples>") < p.index("</examples>") < instructions
        else:
            assert "<examples>" not in p
        # the item's sets are shown as the reference shows them (bare members in parentheses), in order
        assert "Set A is (" + ", ".join(map(str, it["set_a"])) + ")" in p
        assert "Set B is (" + ", ".join(map(str, it["set_b"])) + ")" in p


def test_each_approach_carries_exactly_the_reference_ingredients():
    """PROMPT_TEMPLATES of the reference: persona only in domain_expertise and composite; "the answer can be an empty
    set" only in the two allow-empty approaches; reasoning in <thinking> tags (ending with an opening <thinking> cue)
    in self_recitation, chain of thought, composite and composite_allow_empty; "do not explain" and "no code" only in
    the baselines; "step by step" in chain of thought and the composites; the final-answer sentence everywhere."""
    for it in _grid_items(operations=["intersection"], shots=[0, 1]):
        app, p = it["approach"], it["prompt"]
        instr = _instructions(p)
        assert (PERSONA in p) == (app in ("domain_expertise", "composite")), app
        assert ("may be an empty set" in instr) == app.endswith("allow_empty"), app
        assert ("<thinking></thinking>" in instr) == (app in REASONING), app
        assert p.endswith("\n\n<thinking>") == (app in REASONING), app
        assert ("Do not give your reasoning." in instr) == app.startswith("baseline"), app
        assert ("do not use any tools" in instr) == app.startswith("baseline"), app
        assert ("Stop once the answer is written." in instr) == app.startswith("baseline"), app
        assert ("step by step." in instr) == (app in ("cot", "composite", "composite_allow_empty")), app
        assert "final answer as a mathematical set" in instr and "<answer></answer> XML tags" in instr
        if app in REASONING:
            assert p.count("<thinking>") == 2  # the one inside the instruction's tag pair, and the cue
        else:
            assert "<thinking>" not in p


def test_formal_names_the_operation_plain_defines_it():
    """The reference's formal instruction only names the operation; the plain one defines it by membership."""
    tasks = {(it["phrasing"], it["operation"]): _task(it["prompt"]) for it in _grid_items(approaches=["baseline"])}
    names = {"union": "set union", "intersection": "set intersection", "difference": "set difference",
             "symmetric_difference": "symmetric set difference"}
    defining = ("either", "both", "belong", "not in", "not to", "common", "only", "add")
    for op, name in names.items():
        formal, plain = tasks[("formal", op)], tasks[("plain", op)]
        assert name in formal
        assert not any(w in formal for w in defining), formal
        # as in the reference, the symmetric difference's formal instruction omits "as a Python set"
        assert ("as a Python set" in formal) == (op != "symmetric_difference")
        assert "belong" in plain and "Python set" in plain
        assert not any(w in plain for w in ("union", "intersection", "difference")), plain
    assert "either A or B" in tasks[("plain", "union")]
    assert "both A and B" in tasks[("plain", "intersection")]
    assert "do not belong to B" in tasks[("plain", "difference")]
    assert "but not to both" in tasks[("plain", "symmetric_difference")]


def test_functional_pythonic_iterative_describe_the_operation_as_the_reference_does():
    tasks = {(it["phrasing"], it["operation"]): _task(it["prompt"]) for it in _grid_items(approaches=["baseline"])}
    for op in OPERATIONS:
        fun, py, it_ = tasks[("functional", op)], tasks[("pythonic", op)], tasks[("iterative", op)]
        assert fun.startswith("Collect") and "put them together" in fun and "in Python" in fun
        assert py.startswith("Pick") and "one set in Python" in py
        # the reference's "pythonic" phrasing is words, not a Python operator
        assert not any(sym in py for sym in ("|", "&", " - ", "^"))
        assert it_.startswith("Begin with an empty set") and "go through the elements of set A" in it_
        # only the iterative union mentions Python (as in the reference)
        assert ("Python" in it_) == (op == "union")
    assert "not in both" in tasks[("pythonic", "symmetric_difference")]
    assert "not in set B" in tasks[("functional", "difference")]
    assert "add those that are not in set A" in tasks[("iterative", "symmetric_difference")]


def test_demonstrations_are_the_same_for_every_phrasing():
    """The reference's make_k_shot ignores the prompt type: every phrasing shows the same demonstrations."""
    blocks = defaultdict(set)
    for it in _grid_items(approaches=["baseline"], shots=[3]):
        blocks[(it["operation"], it["sample"])].add(it["prompt"].split("<examples>", 1)[1].split("</examples>")[0])
    assert blocks and all(len(v) == 1 for v in blocks.values())


def test_templates_name_the_reference_instruction_of_every_entry():
    t = load_templates()
    refs = {"formal": "formal_language", "plain": "plain_language", "functional": "functional_language",
            "pythonic": "pythonic_language", "iterative": "iterative_accumulation"}
    for name, ref in refs.items():
        assert t.phrasings[name].reference.startswith(ref)
    for name in APPROACHES:
        ref = "chain_of_thought" if name == "cot" else name
        assert f'PROMPT_TEMPLATES["{ref}"]' in t.approaches[name].reference
        assert t.approaches[name].cue.text == ("<thinking>" if name in REASONING else "")


def test_members_are_shown_as_the_reference_shows_them():
    t = load_templates()
    text = R.construction(t, ["cat", "dog"], ["emu"], True, t.phrasings["formal"])
    assert "Set A is (cat, dog)" in text and "Set B is (emu)" in text


@pytest.mark.parametrize("phrasing", PHRASINGS)
@pytest.mark.parametrize("op", OPERATIONS)
def test_each_demonstration_shows_the_correct_result(phrasing, op):
    t = load_templates()
    phr = t.phrasings[phrasing]
    a, b = [11, 75, 30], [30, 52]
    result = apply(op, a, b)
    line = R.demo(phr, op, a, b, False, 1)
    assert line.startswith("- If set A is (11, 75, 30) and set B is (30, 52), the answer is (")
    assert "the answer is (" + ", ".join(map(str, result)) + ")" in line
    if op == "symmetric_difference":   # which members come from A only and which from B only
        assert "A alone holds (11, 75)" in line and "B alone holds (52)" in line
    else:
        words = " and ".join(", ".join(map(str, result)).rsplit(", ", 1))
        verb = "is" if len(result) == 1 else "are"
        assert f"because {'only ' if op == 'difference' else ''}{words} {verb} in" in line
    one = R.demo(phr, "intersection", [1, 2], [2, 3], False, 1)
    assert "because 2 is in both A and B" in one
    empty_line = R.demo(phr, "intersection", [1, 2], [3], False, 1)
    assert "the answer is () (the empty set), because no member is in both A and B" in empty_line


def test_a_user_phrasing_can_still_walk_member_by_member():
    steps = {"task": {op: f"<task>{op}</task>" for op in OPERATIONS},
             "demo": {op: "A = {set_a}, B = {set_b}: {steps}. Kept: {result}." for op in OPERATIONS},
             "step": "{member} is {where}, {verdict}", "where": {"both": "in both", "a_only": "in A only",
                                                               "b_only": "in B only"},
             "verdict": {"keep": "keep", "drop": "drop"}}
    t = load_templates({"phrasings": {"walk": steps}})
    line = R.demo(t.phrasings["walk"], "difference", [1, 2], [2, 3], False, 1)
    assert line == "- A = (1, 2), B = (2, 3): 1 is in A only, keep; 2 is in both, drop; 3 is in B only, drop. Kept: (1)."


def test_templates_override_changes_prompts_is_stored_and_changes_config_id():
    base = dict(NUM, samples=2, sizes=[2], operations=["union"], shots=[1])
    edited = dict(base, templates={"construction": "First set: {set_a}\nSecond set: {set_b}",
                                   "approaches": {"baseline": {"instructions": "Answer in <answer></answer> now."}}})
    a, b = S.item(base, 0), S.item(edited, 0)
    assert (a["set_a"], a["set_b"]) == (b["set_a"], b["set_b"])
    assert b["prompt"].startswith("First set: (" + ", ".join(map(str, b["set_a"])) + ")")
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
    assert "<task>Do difference on A and B.</task>" in p and p.count(" give (") == 2


@pytest.mark.parametrize(
    "override, words",
    [
        ({"construction": "A is {set_a}, B is {set_c}"}, "unknown placeholder {set_c}"),
        ({"phrasings": {"formal": {"task": {"union": "{result}"}}}}, "unknown placeholder {result}"),
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"phrasings": {"formal": {"tone": "x"}}}, "unknown key 'tone'"),
        ({"phrasings": {"short": {"task": {"union": "u"}}}}, "lacks the operation 'intersection'"),
        ({"approaches": {"cot": {"instructions": 5}}}, "must be text"),
        ({"approaches": {"cot": {"cue": "<{thinking}>"}}}, "unknown placeholder {thinking}"),
        ({"verb_forms": {"few": "are"}}, "unknown key 'few'"),
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

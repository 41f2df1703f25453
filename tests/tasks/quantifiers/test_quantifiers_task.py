"""Quantifier task: the GQG vanilla preset exactly, variations, determinism, config errors, scoring."""

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from core.errors import ConfigError
from core.tasks import get_task, quantifiers as Q
from tests.support import ROOT


@pytest.fixture(scope="module")
def vanilla():
    return list(Q.items(Q.preset_config("gqg-vanilla")))


def test_vanilla_counts_and_label_balance(vanilla):
    assert len(vanilla) == Q.count(Q.preset_config("gqg-vanilla")) == 18360
    labels = Counter(it["label"] for it in vanilla)
    assert labels == {"true": 8592, "false": 9768}
    assert all(it["truth"] is (it["label"] == "true") for it in vanilla)
    assert Counter(it["object"] for it in vanilla) == {o: 1530 for o in Q.GQG_OBJECTS}
    assert Counter(it["quantifier"] for it in vanilla) == {q: 1224 for q in Q.GQG_QUANTIFIERS}
    assert Counter(it["predicate"] for it in vanilla) == {"large": 9180, "small": 9180}
    assert len({it["prompt"] for it in vanilla}) == 18360
    # 15 × 12 × 2 configurations, 51 samples (counts 0…50) each
    per_config = Counter(it["config_id"] for it in vanilla)
    assert len(per_config) == 360 and set(per_config.values()) == {51}


def test_vanilla_matches_published_file_layout(vanilla):
    lines = [Q.to_gqg_line(it) + "\n" for it in vanilla]
    # the published test_data_new.txt of github.com/lerow/llm-quantifier is 3,451,080 characters long
    assert sum(len(line) for line in lines) == 3_451_080
    assert lines[0] == ('{"input": "There are 50 tables. 50 of the tables are large. 0 of the tables are small. '
                        'Are at least 3 of the tables small? Answer with only one word, true or false.", '
                        '"target": "false"}\n')
    # all "… small?" prompts first, then all "… large?"; objects in the published order (trees before shelves)
    assert {it["predicate"] for it in vanilla[:9180]} == {"small"}
    assert vanilla[9180]["prompt"].endswith("Are at least 3 of the tables large? Answer with only one word, "
                                            "true or false.")
    assert [vanilla[k * 765]["object"] for k in range(12)] == list(Q.GQG_OBJECTS)
    assert Q.GQG_OBJECTS.index("trees") < Q.GQG_OBJECTS.index("shelves")
    # within an object: i = number of small objects ascending, then quantifier in Table 2 order
    assert [it["count_small"] for it in vanilla[:45:15]] == [0, 1, 2]
    assert [it["quantifier"] for it in vanilla[:15]] == list(Q.GQG_QUANTIFIERS)
    # regression fingerprint of the whole reproduction (our own output)
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()
    assert digest == VANILLA_SHA256


VANILLA_SHA256 = "3675c2bcce869048f382ae179c92f3c941df60ba49282673161c6eb359e8ebe8"


def test_paper_table4_examples(vanilla):
    by_prompt = {it["prompt"]: it["label"] for it in vanilla}
    tail = "Answer with only one word, true or false."
    examples = {
        f"There are 50 tables. 50 of the tables are large. 0 of the tables are small. Are at least 3 of the tables "
        f"small? {tail}": "false",
        f"There are 50 circles. 7 of the circles are large. 43 of the circles are small. Are at least 4 of the "
        f"circles small? {tail}": "true",
        f"There are 50 apples. 49 of the apples are large. 1 of the apples is small. Are less than half of the "
        f"apples large? {tail}": "false",
        f"There are 50 mountains. 24 of the mountains are large. 26 of the mountains are small. Are at most half of "
        f"the mountains large? {tail}": "true",
    }
    for prompt, label in examples.items():
        assert by_prompt[prompt] == label


def test_agreement_is_for_one(vanilla):
    for it in vanilla:
        p = it["prompt"]
        assert (" 1 of the %s is large." % it["object"] in p) is (it["count_large"] == 1)
        assert (" 1 of the %s is small." % it["object"] in p) is (it["count_small"] == 1)
        assert " is " not in p.replace(" 1 of the %s is " % it["object"], "")


def test_item_records_carry_contract_keys(vanilla):
    required = {"config_id", "idx", "sample", "seed", "prompt", "truth", "label", "quantifier", "object",
                "noun_group", "total", "count_large", "count_small", "predicate", "template"}
    it = vanilla[1234]
    assert required <= set(it)
    assert it["idx"] == 1234 and it["total"] == 50 and it["template"] == "gqg" and it["noun_group"] == "gqg"
    assert it["count_large"] + it["count_small"] == 50
    assert json.loads(json.dumps(it)) == it
    assert set(Q.FACTORS) <= set(it)
    assert Q.item(Q.preset_config("gqg-vanilla"), 1234) == it


def test_get_task_and_solver_and_score(vanilla):
    task = get_task("quantifiers")
    assert task is Q
    for it in vanilla[::97]:
        s = task.score(it, task.solve(it))
        assert s["correct"] and s["correct_gqg"] and s["followed"]
        wrong = "false" if it["label"] == "true" else "true"
        assert not task.score(it, f"The answer is {wrong}.")["correct"]


def test_config_roundtrip_and_preset_key():
    cfg = Q.preset_config("gqg-vanilla")
    assert Q.load_config(cfg.to_dict()) == cfg
    assert Q.load_config({"task": "quantifiers", "preset": "gqg-vanilla"}) == cfg
    small = Q.load_config({"preset": "gqg-vanilla", "quantifiers": ["all"], "samples": 3})
    assert Q.count(small) == 12 * 2 * 3


def test_sampled_variation():
    cfg = Q.load_config({
        "task": "quantifiers", "quantifiers": ["at least 40%", "between 2 and 4", "some"],
        "objects": ["lanterns", "cup holders"], "total": 12, "count_range": [1, 9],
        "predicates": [["heavy", "light"], ["red", "blue"]], "samples": 4, "seed": 7,
    })
    its = list(Q.items(cfg))
    assert len(its) == Q.count(cfg) == 3 * 2 * 2 * 2 * 4
    for it in its:
        assert 1 <= it["count_asked"] <= 9
        assert it["count_large"] + it["count_small"] == 12
        q = Q.parse_quantifier(it["quantifier"])
        assert it["truth"] is q.holds(12, it["count_asked"])
        assert it["noun_group"] == "custom"
        assert f"There are 12 {it['object']}." in it["prompt"]
        assert it["prompt"].count(it["predicate"]) >= 2
    # 4 distinct counts per (quantifier, noun, pair, asked) cell; cells use the same config_id for their samples
    cells = {}
    for it in its:
        cells.setdefault(it["config_id"], []).append(it["count_asked"])
    assert len(cells) == 3 * 2 * 2 * 2 and all(len(set(v)) == 4 for v in cells.values())
    # another seed draws other counts
    other = Q.load_config({**cfg.to_dict(), "seed": 8})
    assert [it["count_asked"] for it in Q.items(other)] != [it["count_asked"] for it in its]


def test_custom_template_and_statement_template():
    cfg = Q.load_config({"objects": ["boxes"], "quantifiers": ["all"], "total": 3,
                         "template": "{count_first} {first}, {count_second} {second} {objects}: {Quantifier} "
                                     "{predicate}? {{true/false}}"})
    it = Q.item(cfg, 0)
    assert it["prompt"] == "3 large, 0 small boxes: All small? {true/false}" and it["label"] == "false"
    assert it["template"].startswith("custom-")
    st = Q.load_config({"objects": ["boxes"], "quantifiers": ["at least half"], "template": "statement"})
    assert "Statement: At least half of the boxes are small." in Q.item(st, 0)["prompt"]


DETERMINISM_SCRIPT = """
import hashlib, json
from core.tasks import quantifiers as Q
cfg = Q.load_config({"task": "quantifiers", "quantifiers": ["at least half", "some", "exactly 3"],
    "noun_groups": ["pilot_rare", "gqg"], "objects": ["lanterns"], "samples": 5, "seed": 11,
    "predicates": [["large", "small"], ["old", "new"]]})
print(hashlib.sha256("\\n".join(json.dumps(it, sort_keys=True) for it in Q.items(cfg)).encode()).hexdigest())
"""


def test_byte_identical_across_processes_and_hash_seeds():
    outs = set()
    for hash_seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], cwd=ROOT, env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        outs.add(out)
    assert len(outs) == 1 and len(outs.pop()) == 64


@pytest.mark.parametrize("bad,fragment", [
    ({"task": "setops"}, "task must be"),
    ({"quantifier": ["all"]}, "unknown key"),
    ({"quantifiers": ["most"]}, "unknown quantifier"),
    ({"quantifiers": ["all", "All"]}, "twice"),
    ({"quantifiers": []}, "non-empty"),
    ({"total": 0}, "total"),
    ({"total": "50"}, "whole number"),
    ({"total": True}, "whole number"),
    ({"count_range": [5, 2]}, "count_range"),
    ({"count_range": [0, 60]}, "count_range"),
    ({"samples": 52}, "exceeds"),
    ({"samples": 0}, "samples"),
    ({"predicates": [["large"]]}, "pair"),
    ({"predicates": [["large", "large"]]}, "different"),
    ({"predicates": "large"}, "pair"),
    ({"objects": ["ta{bles}"]}, "letters"),
    ({"objects": [""]}, "letters"),
    ({"objects": ["tables", "tables"]}, "twice"),
    ({"noun_groups": ["popular"]}, "unknown noun group"),
    ({"template": "nope"}, "unknown template"),
    ({"template": "Are {quantifier} of the {objects} {predicate}?"}, "count"),
    ({"template": "{count_first} {objects} {predicate}"}, "{quantifier}"),
    ({"template": "{quantifier.__class__} {objects} {predicate} {count_first}"}, "not allowed"),
    ({"template": "{quantifier!r} {objects} {predicate} {count_first}"}, "not allowed"),
    ({"template": "{quantifier:>99} {objects} {predicate} {count_first}"}, "not allowed"),
    ({"template": "{0} {quantifier} {objects} {predicate} {count_first}"}, "not allowed"),
    ({"template": "{quantifier {objects}"}, "not valid"),
    ({"preset": "nope"}, "preset"),
    ("not a mapping", "mapping"),
])
def test_config_errors(bad, fragment):
    with pytest.raises(ConfigError) as exc:
        Q.load_config(bad)
    msg = str(exc.value)
    assert fragment in msg and "\n" not in msg


def test_item_index_out_of_range():
    cfg = Q.load_config({"objects": ["boxes"], "quantifiers": ["all"], "total": 2})
    assert Q.count(cfg) == 6
    with pytest.raises(IndexError):
        Q.item(cfg, 6)


def test_direct_construction_is_validated_and_normalised():
    assert Q.Config() == Q.preset_config("gqg-vanilla") and Q.count(Q.Config()) == 18360
    cfg = Q.Config(quantifiers=("At  least 3",), objects=("boxes",), total=5)
    assert cfg.quantifiers == ("at least 3",) and Q.count(cfg) == 1 * 1 * 6 * 2
    with pytest.raises(ConfigError):
        Q.Config(quantifiers=("most",))

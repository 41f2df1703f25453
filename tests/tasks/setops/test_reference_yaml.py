"""The SetLexSem reference's own experiment YAMLs run as they are (SPEC P6; core/tasks/setops/reference_yaml.py).

The files in tests/data/reference_configs/ are unmodified copies of the reference's configs/experiments/*.yaml."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from core.config import parse_run_spec, read_run_spec, run_spec
from core.errors import ConfigError
from core.tasks import setops as S

REF = Path(__file__).resolve().parents[2] / "data" / "reference_configs"


def _doc(name: str) -> dict:
    return yaml.safe_load((REF / name).read_text(encoding="utf-8"))


def test_anthr_haiku_gives_the_papers_main_grid():
    """31 cells of set type x M x item length (one-digit numbers cannot fill 16) x 128 prompt cells = 3,968
    configurations x N_RUN 50 = 198,400 prompts, with four approaches, two phrasings and k in {0, 1, 3, 5}."""
    spec = read_run_spec(REF / "anthr_haiku.yaml")
    cfg = spec.config
    plan = S.plan(cfg)
    assert len(plan.cells) == 3968 and plan.count == 198_400 and cfg.samples == 50 and cfg.seed == 292
    factors = Counter()
    for cell in plan.cells:
        factors.update({(k, v) for k, v in cell.factors.items()})
    assert {v for (k, v) in factors if k == "approach"} == {"baseline", "baseline_allow_empty", "composite",
                                                            "composite_allow_empty"}
    assert {v for (k, v) in factors if k == "phrasing"} == {"formal", "plain"}
    assert {v for (k, v) in factors if k == "shots"} == {0, 1, 3, 5}
    assert {v for (k, v) in factors if k == "operation"} == set(S.OPERATIONS)
    assert {v for (k, v) in factors if k == "length"} == {1, 2, 3, 4}
    assert {v for (k, v) in factors if k == "size_a"} == {2, 4, 8, 16}
    assert all(c.factors["size_a"] == c.factors["size_b"] for c in plan.cells)   # one M list: |A| = |B| = m
    assert not any(c.factors["members"] == "numbers" and c.factors["length"] == 1 and c.factors["size_a"] == 16
                   for c in plan.cells)
    (warning,) = plan.warnings()
    assert "skipped 128 of 4096 grid cells" in warning and "numbers of length 1" in warning
    assert spec.model == "anthropic/claude-3-haiku-20240307" and spec.name == "240505_ClaudeHaiku"
    assert cfg.fixed_shots is True
    # items generate: the last one too
    last = S.item(cfg, plan.count - 1)
    assert last["approach"] == "composite_allow_empty" and last["prompt"].endswith("<thinking>")


@pytest.mark.parametrize("name, condition", [("anthr_haiku_deceptive.yaml", "swapped"),
                                             ("anthr_haiku_deceptive_NoSwap.yaml", "not_swapped")])
def test_deceptive_studies_generate_in_the_condition_the_reference_labels_them(name, condition):
    spec = read_run_spec(REF / name)
    cfg = spec.config
    assert cfg.members == ("deceptive",) and cfg.conditions == (condition,)
    assert S.count(cfg) == 4 * 64 * 50   # M {2,4,8,16} x (4 ops x 4 k x 1 phrasing x 4 approaches) x 50
    assert any("SWAP_STATUS absent" in n and condition in n for n in spec.notes)
    for i in (0, S.count(cfg) - 1):
        it = S.item(cfg, i)
        assert it["condition"] == condition and it["hypernym_a"] and it["hypernym_b"]
        if condition == "swapped":   # the reference swaps m // 2 members
            assert it["swap_count"] == it["size_a"] // 2


def test_swap_status_key_gives_both_conditions_and_unknown_models_are_noted():
    spec = read_run_spec(REF / "amazon_nova_micro_deceptive.yaml")
    assert spec.config.conditions == ("not_swapped", "swapped")
    assert spec.model is None and any("MODEL_NAME 'us.amazon.nova-lite-v1:0'" in n for n in spec.notes)
    assert any("ITEM_LEN does not apply to deceptive_words" in n for n in spec.notes)
    assert S.count(spec.config) == 1 * 2 * (4 * 2 * 1 * 2) * 50


def test_decile_study_generates_with_log_width_bins():
    spec = read_run_spec(REF / "anthr_haiku_deciles.yaml")
    cfg = spec.config
    assert cfg.members == ("deciles",) and cfg.decile_mode == ("log_width",)
    assert cfg.deciles == tuple(range(1, 10)) and cfg.lengths == (3, 5)
    assert cfg.approaches == ("baseline_allow_empty", "composite_allow_empty") and cfg.phrasings == ("formal",)
    assert S.count(cfg) > 0 and S.count(cfg) % 50 == 0
    assert any("wordfreq" in n for n in spec.notes)
    it = S.item(cfg, 0)
    assert it["members"] == "deciles" and it["decile"] == 1 and len(it["set_a"][0]) == 3


def test_overlap_study_shares_floor_m_f_members():
    cfg = read_run_spec(REF / "anthr_haiku_overlap.yaml").config
    assert cfg.members == ("numbers", "words") and cfg.overlap == (0.5,)
    for it in S.items(cfg, 0, 200):
        assert len(set(it["set_a"]) & set(it["set_b"])) == it["size_a"] // 2


def test_reference_names_are_aliases_everywhere():
    cfg = S.load_config({"operations": ["symmetric difference", "union"], "phrasings": ["formal_language",
                         "plain_language", "functional_language", "pythonic_language", "iterative_accumulation"],
                         "approaches": ["chain_of_thought", "baseline"], "members": ["decile_words", "deceptive_words"],
                         "samples": 1, "sizes": [2]})
    assert cfg.operations == ("symmetric_difference", "union")
    assert cfg.phrasings == ("formal", "plain", "functional", "pythonic", "iterative")
    assert cfg.approaches == ("cot", "baseline") and cfg.members == ("deciles", "deceptive")
    # an alias and our own name of one value are one grid level, not two
    assert S.load_config({"approaches": ["cot", "chain_of_thought"]}).approaches == ("cot",)
    with pytest.raises(ConfigError, match="Cartesian product is not one of the four"):
        S.load_config({"operations": ["cartesian product"]})


def test_our_own_keys_may_be_added_to_a_reference_file_and_win():
    doc = dict(_doc("test_config.yaml"), samples=2, frequency_source="wordfreq")
    spec = run_spec(doc)
    assert spec.config.samples == 2 and S.count(spec.config) == 2


@pytest.mark.parametrize("change, words", [
    ({"OP_LIST": ["cartesian product"]}, "Cartesian product is not one of the four"),
    ({"SET_TYPES": ["letters"]}, "SET_TYPES value 'letters' is not one of"),
    ({"IS_FIX_SHOT": [True, False]}, "IS_FIX_SHOT lists both True and False"),
    ({"M": ["None"]}, "must list set sizes"),
    ({"SET_TYPES": ["numbers", "overlapping_BasicNumberSampler"]}, "mixes overlapping_*"),
    ({"SET_TYPES": ["decile_words"]}, "decile_words needs DECILE_NUM"),
    ({"PROMPT_TYPE": ["poetic_language"]}, "phrasings: 'poetic_language' is not valid"),
    ({"PROMPT_APPROACH": ["tree_of_thought"]}, "approaches: 'tree_of_thought' is not valid"),
    ({"SWAPPED": True}, "unknown key 'SWAPPED'"),
    ({"N_RUN": None}, "N_RUN is missing"),
])
def test_what_cannot_run_is_one_config_error(change, words):
    doc = _doc("test_config.yaml")
    for k, v in change.items():
        if v is None:
            doc.pop(k)
        else:
            doc[k] = v
    with pytest.raises(ConfigError) as info:
        run_spec(doc)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_reference_file_is_not_a_quantifiers_config():
    with pytest.raises(ConfigError, match="is a setops config"):
        run_spec(_doc("test_config.yaml"), task="quantifiers")


def test_a_reference_file_inside_a_run_document_and_from_text():
    text = (REF / "test_config.yaml").read_text(encoding="utf-8")
    a = parse_run_spec(text)
    b = run_spec({"config": _doc("test_config.yaml"), "model": "reference/solver"})
    assert a.config == b.config and b.model == "reference/solver" and a.model.startswith("anthropic/")
    # the stored config is ours: it round-trips without the reference's keys or notes
    again = run_spec(a.config_dict())
    assert again.config == a.config and again.notes == ()


@pytest.mark.parametrize("preset, files", [
    ("paper-main", ["anthr_haiku.yaml"]),
    ("paper-deciles", ["anthr_haiku_deciles.yaml"]),
    ("paper-deceptive", ["anthr_haiku_deceptive.yaml", "anthr_haiku_deceptive_NoSwap.yaml"]),
])
def test_presets_are_the_reference_studies(preset, files):
    """Each paper preset is the grid its reference YAML gives (same seed, so the same items); the deceptive preset
    adds the random-baseline condition to the swapped and not-swapped studies."""
    cfg = S.preset_config(preset)
    for name in files:
        assert name in S.PRESET_SOURCES[preset]
        ref = read_run_spec(REF / name).config
        ours = cfg.to_dict()
        theirs = ref.to_dict()
        if preset == "paper-deceptive":
            assert set(theirs.pop("conditions")) < set(ours.pop("conditions")) == {"not_swapped", "swapped", "random"}
        assert ours == theirs
    if preset == "paper-main":
        assert S.count(cfg) == 198_400
    if preset == "paper-deceptive":
        assert S.count(cfg) == 3 * 256 * 50

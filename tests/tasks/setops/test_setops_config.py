"""Config validation and grid expansion of the set-operation task (SPEC S1–S3, S7, S8)."""

import math

import pytest
import yaml

from core.errors import ConfigError
from core.tasks import get_task, setops as S

NUM = {"members": "numbers"}


def test_registry_returns_the_setops_module():
    assert get_task("setops") is S
    for name in ("Config", "load_config", "count", "item", "items", "score", "solve", "FACTORS"):
        assert hasattr(S, name)


def test_defaults_validate_and_round_trip_through_yaml():
    cfg = S.load_config({})
    assert cfg.operations == ("union", "intersection", "difference", "symmetric_difference")
    again = S.load_config_yaml(cfg.to_yaml())
    assert again == cfg and again.to_dict() == cfg.to_dict()
    d = {"seed": 3, "samples": 2, "sizes_a": [2, 3], "sizes_b": 5, "members": ["numbers"], "overlap": [None, 1, 0.5],
         "lengths": ["none", 2], "shots": [0, 3], "fixed_shots": False}
    cfg = S.load_config(d)
    assert cfg.size_pairs() == [(2, 5), (3, 5)]
    assert cfg.lengths == (None, 2)
    assert S.load_config(yaml.safe_load(cfg.to_yaml())) == cfg


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"sizez": [2]}, "unknown config key 'sizez'"),
        ({"task": "quantifiers"}, "task must be"),
        ({"operations": ["uniom"]}, "'uniom' is not valid"),
        ({"operations": []}, "must not be empty"),
        ({"sizes": [0]}, "sizes: 0 is out of range"),
        ({"sizes": "two"}, "'two' is not an integer"),
        ({"sizes": [True]}, "not an integer"),
        ({"sizes": [2], "sizes_a": [2], "sizes_b": [3]}, "not both"),
        ({"sizes_a": [2]}, "given together"),
        ({"members": ["letters"]}, "'letters' is not valid"),
        ({"lengths": [0]}, "lengths: 0 is out of range"),
        ({"deciles": [11]}, "deciles: 11 is out of range"),
        ({"decile_mode": "linear"}, "'linear' is not valid"),
        ({"conditions": ["mixed"]}, "'mixed' is not valid"),
        ({"swap_count": [-1]}, "swap_count: -1"),
        ({"overlap": [1.5]}, "fraction must lie in [0, 1]"),
        ({"overlap": ["half"]}, "neither a member count"),
        ({"number_max": 0}, "number_max: 0"),
        ({"phrasings": ["poetic"]}, "'poetic' is not valid"),
        ({"approaches": ["magic"]}, "'magic' is not valid"),
        ({"shots": [2.5]}, "not an integer"),
        ({"fixed_shots": "yes"}, "fixed_shots must be true or false"),
        ({"samples": 0}, "samples: 0"),
        ({"seed": "x"}, "seed: 'x' is not an integer"),
        ({"templates": "short"}, "templates must be a mapping"),
        ([1, 2], "must be a mapping"),
    ],
)
def test_bad_configs_raise_one_clear_config_error(bad, words):
    with pytest.raises(ConfigError) as info:
        S.load_config(bad)
    msg = str(info.value)
    assert words in msg
    assert "\n" not in msg


def test_bad_yaml_is_a_config_error_with_the_line():
    with pytest.raises(ConfigError, match="not valid YAML at line"):
        S.load_config_yaml("sizes: [2, 4]\nmembers: [numbers\n")


def test_lists_form_a_grid_and_count_is_cells_times_samples():
    d = dict(NUM, samples=3, operations=["union", "difference"], sizes=[2, 4, 8], lengths=[None, 2, 3],
             phrasings=["formal", "plain"], approaches=["baseline", "cot", "composite"], shots=[0, 1])
    cfg = S.load_config(d)
    assert S.count(cfg) == 2 * 3 * 3 * 2 * 3 * 2 * 3
    assert S.warnings(cfg) == []
    ids = {c.config_id for c in S.plan(cfg).cells}
    assert len(ids) == len(S.plan(cfg).cells)  # one id per grid cell


def test_sixteen_one_digit_numbers_are_skipped_with_a_counted_warning():
    d = dict(NUM, samples=5, sizes=[2, 16], lengths=[1, 2], operations=["union", "intersection"], shots=[0, 1])
    cfg = S.load_config(d)
    prompt_cells = 2 * 1 * 1 * 2
    assert S.count(cfg) == (2 * 2 - 1) * prompt_cells * 5
    (w,) = S.warnings(cfg)
    assert f"skipped {prompt_cells} of {4 * prompt_cells} grid cells ({prompt_cells * 5} items)" in w
    assert "numbers of length 1" in w and "only 9 distinct members" in w and "16" in w  # 1…9, as the reference


def test_too_few_distinct_pairs_for_the_samples_is_skipped():
    # nine one-digit numbers (1…9), sets of 8: 9 * 9 = 81 (A, B) pairs — enough for 81 samples, not for 82
    ok = S.load_config(dict(NUM, samples=81, sizes=[8], lengths=[1], operations=["union"]))
    assert S.count(ok) == 81 and not S.warnings(ok)
    too_many = S.load_config(dict(NUM, samples=82, sizes=[8], lengths=[1], operations=["union"]))
    assert S.count(too_many) == 0
    assert "only 81 different (A, B) pairs" in S.warnings(too_many)[0]


def test_overlap_larger_than_the_smaller_set_is_skipped():
    cfg = S.load_config(dict(NUM, samples=2, sizes_a=[2], sizes_b=[4], overlap=[1, 3], operations=["union"]))
    assert S.count(cfg) == 2
    assert "overlap of 3 members exceeds the smaller set's size 2" in S.warnings(cfg)[0]


def test_number_population_sizes():
    from core.tasks.setops.sets import populations

    assert populations.numbers(1, 10000) == range(1, 10)   # one-digit numbers are 1…9 (reference, SPEC S3)
    assert populations.numbers(2, 10000) == range(10, 100)
    assert populations.numbers(3, 10000) == range(100, 1000)
    assert populations.numbers(None, 500) == range(0, 500)
    from core.tasks.setops.sets.draw import distinct_pairs

    assert distinct_pairs(10, 2, 2, None) == math.comb(10, 2) ** 2
    assert distinct_pairs(10, 4, 2, 1) == math.comb(10, 4) * 4 * 6

"""A quantifier config's ``reasoning`` list crosses the efforts with the grid: every effort asks the same items (the
same prompts, in the same order), each level has its own configurations, a config without it keeps its ids."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.tasks import quantifiers as Q, select_items

BASE = {"task": "quantifiers", "quantifiers": ["all", "some", "at least half"], "samples": 4}


def test_every_effort_asks_the_same_items():
    base, crossed = Q.load_config(BASE), Q.load_config({**BASE, "reasoning": ["none", "high"]})
    plain = list(Q.items(base))
    both = list(Q.items(crossed))
    n = len(plain)
    assert Q.count(crossed) == len(both) == 2 * n
    assert [it["prompt"] for it in both] == [it["prompt"] for it in plain] * 2
    assert [it["reasoning"] for it in both] == ["none"] * n + ["high"] * n
    assert all(it["reasoning"] is None for it in plain)
    ids = [{it["config_id"] for it in both[k * n:(k + 1) * n]} for k in (0, 1)]
    assert ids[0].isdisjoint(ids[1]) and ids[0].isdisjoint({it["config_id"] for it in plain})
    assert Q.describe(crossed)["n_true"] == 2 * Q.describe(base)["n_true"]
    assert Q.load_config(crossed.to_dict()) == crossed and "reasoning" not in base.to_dict()


def test_a_limited_run_spreads_over_the_efforts():
    picked = list(select_items(Q, Q.load_config({**BASE, "reasoning": ["low", "high"]}), 6, "spread"))
    assert {it["reasoning"] for it in picked} == {"low", "high"}


def test_a_bad_effort_is_one_clear_error():
    with pytest.raises(ConfigError, match="reasoning: 'extreme' is not valid"):
        Q.load_config({**BASE, "reasoning": ["low", "extreme"]})

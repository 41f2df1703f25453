"""The reasoning-effort finding on two simulated models asked the same deceptive draws at two efforts: one whose
swap effect vanishes when it thinks, one whose swap effect stays. The interaction is found for the first with the
right sign and not declared for the second (a true null); per-draw contrasts against their definition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("core.analysis.stats")   # the statistics of the honest-verdicts method

from core.analysis.reasoning import draw_contrasts, reasoning_verdicts  # noqa: E402

DRAWS = 40
PHRASINGS = ("formal", "plain")
OPERATIONS = ("union", "intersection")


def simulate(model: str, p_right: dict, seed: int) -> pd.DataFrame:
    """Items of ``model``: every draw asked in both conditions, at both efforts, under every phrasing and operation;
    each answer right with probability ``p_right[(effort, condition)]``."""
    rng = np.random.default_rng(seed)
    rows = []
    for draw in range(DRAWS):
        for effort in ("low", "high"):
            for condition in ("not_swapped", "swapped"):
                for phrasing in PHRASINGS:
                    for op in OPERATIONS:
                        right = rng.random() < p_right[(effort, condition)]
                        rows.append({"model": model, "draw": draw, "reasoning": effort, "condition": condition,
                                     "swap_count": 1 if condition == "swapped" else 0, "phrasing": phrasing,
                                     "approach": "baseline", "operation": op, "accuracy": 100.0 * right})
    return pd.DataFrame(rows)


VANISHES = {("low", "not_swapped"): 0.9, ("low", "swapped"): 0.3, ("high", "not_swapped"): 0.9,
            ("high", "swapped"): 0.9}
STAYS = {("low", "not_swapped"): 0.9, ("low", "swapped"): 0.4, ("high", "not_swapped"): 0.9,
         ("high", "swapped"): 0.4}


@pytest.fixture(scope="module")
def verdicts():
    rows = pd.concat([simulate("thinker", VANISHES, 1), simulate("stubborn", STAYS, 2)], ignore_index=True)
    return reasoning_verdicts(rows).set_index(["model", "contrast"])


def test_interaction_found_with_the_right_sign(verdicts):
    v = verdicts.loc[("thinker", "interaction")]
    assert v["verdict"] == "lower" and v["estimate"] < 0 and v["ci_high"] < 0 and v["p_holm"] < 0.05
    assert v["n_draws"] == DRAWS
    assert verdicts.loc[("thinker", "swap_effect_low"), "verdict"] == "higher"   # the failure is there at low
    assert verdicts.loc[("thinker", "effort"), "verdict"] == "higher"            # thinking helps overall


def test_true_null_not_declared(verdicts):
    v = verdicts.loc[("stubborn", "interaction")]
    assert v["verdict"] == "no evidence" and v["p_holm"] >= 0.05
    assert v["ci_low"] < 0 < v["ci_high"]
    assert verdicts.loc[("stubborn", "swap_effect_high"), "verdict"] == "higher"   # the failure stays


def test_per_draw_values_follow_their_definition():
    rows = simulate("m", VANISHES, 3)
    got = draw_contrasts(rows, "low", "high")
    d = rows[rows["draw"] == 5]

    def acc(effort, condition):
        return d[(d["reasoning"] == effort) & (d["condition"] == condition)]["accuracy"].mean()

    swap_low = acc("low", "not_swapped") - acc("low", "swapped")
    swap_high = acc("high", "not_swapped") - acc("high", "swapped")
    assert got["swap_effect_low"].loc[5] == pytest.approx(swap_low)
    assert got["interaction"].loc[5] == pytest.approx(swap_high - swap_low)
    assert got["effort"].loc[5] == pytest.approx(d[d["reasoning"] == "high"]["accuracy"].mean()
                                                 - d[d["reasoning"] == "low"]["accuracy"].mean())
    assert set(got) == {"effort", "swap_effect_low", "swap_effect_high", "interaction", "spread"}


def test_one_effort_gives_no_verdict():
    rows = simulate("m", VANISHES, 4)
    assert reasoning_verdicts(rows[rows["reasoning"] == "low"]).empty


def test_level_contrasts_walk_every_level_and_pair_on_draws():
    """Three levels: each against the next, the swap effect at each level; the failure is there at low, halved at
    medium and gone at high."""
    from core.analysis.reasoning import level_contrasts

    swapped = {"low": 0.3, "medium": 0.6, "high": 0.9}
    rng = np.random.default_rng(5)
    rows = pd.DataFrame([
        {"model": "thinker", "draw": draw, "reasoning": effort, "condition": cond, "phrasing": phr,
         "approach": "baseline", "operation": op,
         "accuracy": 100.0 * (rng.random() < (0.9 if cond == "not_swapped" else swapped[effort]))}
        for draw in range(DRAWS) for effort in swapped for cond in ("not_swapped", "swapped")
        for phr in PHRASINGS for op in OPERATIONS])
    c = level_contrasts(rows).set_index(["contrast", "low"])
    assert sorted(c.loc["swap_effect"].index) == ["high", "low", "medium"]
    assert [(lo, c.loc[("effort", lo), "high"]) for lo in ("low", "medium")] == [("low", "medium"),
                                                                                ("medium", "high")]
    assert c.loc[("swap_effect", "low"), "verdict"] == "higher"
    assert c.loc[("interaction", "low"), "estimate"] < 0 and c.loc[("interaction", "medium"), "estimate"] < 0
    assert (c["n_draws"] == DRAWS).all() and c["testable"].all()


def test_one_draw_is_too_few_to_test():
    from core.analysis.reasoning import level_contrasts

    rows = simulate("thinker", VANISHES, 1)
    c = level_contrasts(rows[rows["draw"] == 0])
    assert len(c) and (c["n_draws"] == 1).all() and not c["testable"].any()
    assert c["ci_low"].isna().all() and c["p"].isna().all() and c["p_holm"].isna().all()
    assert set(c["verdict"]) == {"too few to test"}

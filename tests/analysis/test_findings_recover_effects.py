"""``report findings`` recovers effects built into simulated models, through the CLI, at a few thousand items.

Two OpenAI-compatible stand-ins (one loopback server, told apart by the model name) answer correctly with a
probability that depends only on set size, token type and the deceptive condition — they ignore phrasing, approach
and shots. The draw is a hash of (model, prompt), so the test is deterministic. Runs go through ``python -m core
run``; the findings come from ``python -m core report findings --format json`` (``python -m core``'s main, called
in this process). What must hold:

- each built-in effect (size, numbers vs words, swapping, the model) has the right sign, a 95 % interval that
  excludes 0 and a Holm-adjusted p below α, with n counted in independent draws;
- estimates, n, p and intervals equal a short pandas/scipy computation of the documented method (the draw as the
  unit, matched strata, sign-flip permutation and percentile bootstrap over draws; stratified label permutation
  between draws) from the exported rows;
- the contrasts the stand-ins ignore (phrasing) are not significant;
- a finding the runs cannot answer says which levels are missing.
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from core.config import run_spec
from core.tasks.setops.scoring import solve
from tests.support.cli import cli_output
from tests.support.loopback import LoopbackServer

GRID = {"task": "setops", "seed": 11, "samples": 12, "operations": ["union", "intersection", "difference",
                                                                     "symmetric_difference"],
        "sizes": [2, 8], "members": ["numbers", "words"], "lengths": [3], "phrasings": ["formal", "plain"],
        "approaches": ["baseline_allow_empty"], "shots": [0, 1]}
DECEPTIVE = {"task": "setops", "seed": 5, "samples": 20, "operations": ["union", "intersection", "difference",
                                                                         "symmetric_difference"],
             "sizes": [4], "members": ["deceptive"], "conditions": ["not_swapped", "swapped"],
             "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
SKILL = {"strong": 0.0, "weak": -0.15}


def p_correct(item: dict, model: str) -> float:
    """The stand-in's skill: set size and token type (and the deceptive condition) matter; nothing else does."""
    if item["members"] == "deceptive":
        p = 0.9 if item["condition"] == "not_swapped" else 0.35
    else:
        p = {2: 0.95, 8: 0.55}[item["size_a"]] - (0.0 if item["members"] == "numbers" else 0.2)
    return max(0.02, p + SKILL[model])


def _items():
    out = {}
    for cfg in (GRID, DECEPTIVE):
        spec = run_spec(cfg)
        for it in spec.task_module.items(spec.config):
            out[it["prompt"]] = it
    return out


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    items = _items()

    def respond(prompt: str, model: str) -> str:
        it = items[prompt]
        draw = int(hashlib.sha256(f"{model}|{prompt}".encode()).hexdigest()[:8], 16) / 16 ** 8
        right = solve(it)
        if draw < p_correct(it, model):
            return right
        return right.replace("</answer>", "").rstrip("}") + (", " if right.count("{") and
                                                              right.strip("<answer>{}/ ") else "") + "zzwrong}</answer>"

    tmp = tmp_path_factory.mktemp("findings")
    db = tmp / "s.duckdb"
    srv = LoopbackServer(0.005, responder=respond).start()
    runs = {}
    try:
        for name, cfg in (("grid", GRID), ("deceptive", DECEPTIVE)):
            path = tmp / f"{name}.yaml"
            path.write_text(json.dumps(cfg))
            for model in SKILL:
                out = cli_output("run", "--config", path, "--model", f"openai-compatible/{model}", "--base-url",
                           srv.base_url, "--concurrency", "16", "--no-progress", "--db", db, "--name", f"{model} {name}")
                runs[(model, name)] = out.split("run ", 1)[1].split(":", 1)[0]
    finally:
        srv.stop()

    def report(*run_ids, alpha="0.05"):
        out = tmp / f"f{len(run_ids)}-{alpha}.json"
        cli_output("report", "findings", *[a for r in run_ids for a in ("--run", r)], "--alpha", alpha, "--format", "json",
             "--out", out, "--db", db)
        return {f["id"]: f for f in json.loads(out.read_text())["findings"]}

    def export(run_id):
        out = tmp / f"{run_id}.csv"
        cli_output("export", "--run", run_id, "--out", out, "--db", db)
        return pd.read_csv(out)

    return runs, report, export


def _contrast(finding, a, b, model="openai-compatible/strong", **within):
    for c in finding["contrasts"]:
        if str(c["a"]) == str(a) and str(c["b"]) == str(b) and c.get("model") in (model, None) and all(
                str((c.get("within") or {}).get(k)) == str(v) for k, v in within.items()):
            return c
    raise AssertionError(f"no contrast {a} vs {b} {within} in {finding['id']}: {finding['contrasts']}")


def _significant(c, sign):
    assert (c["estimate"] > 0) == (sign > 0), c
    assert (c["ci_low"] > 0 if sign > 0 else c["ci_high"] < 0), c
    assert c["p_adjusted"] < 0.05 and c["significant"], c


@pytest.mark.slow
def test_built_in_effects_are_recovered_and_ignored_ones_are_not(studied):
    runs, report, export = studied
    strong = runs[("strong", "grid")]
    found = report(strong, runs[("strong", "deceptive")])
    size = _contrast(found["operand_size"], 2, 8)
    _significant(size, +1)                                                   # small sets are easier
    assert size["design"].startswith("between draws") and size["n_a"] == size["n_b"] == 24, size   # 12 x 2 types
    _significant(_contrast(found["numbers_vs_words"], "numbers", "words"), +1)
    swap = _contrast(found["deceptiveness_swapping_effect"], "swapped", "not_swapped")
    _significant(swap, -1)
    assert swap["design"] == "paired by draw" and swap["n"] == 20, swap      # 20 draws, each over 4 operations
    phrasing = _contrast(found["which_prompt_language_is_better_formal_vs_plain"], "formal", "plain")
    assert not phrasing["significant"] and phrasing["design"] == "paired by draw", phrasing
    assert phrasing["n"] == 48, phrasing                                     # 12 samples x 2 sizes x 2 types
    for c in found["deceptiveness_effect_k_shots"]["contrasts"]:
        assert c["within"] == {"shots": 0}
    assert found["deceptiveness_effect_k_shots"]["contrasts"][0]["family"] != swap["family"]   # its own family
    # a finding these runs cannot answer says which levels are missing
    assert not found["compare_deciles"]["applicable"] and found["compare_deciles"]["missing"]
    assert found["compare_deciles"]["verdicts"][0].startswith("Not answerable")
    assert not found["is_overlap_important_only_haiku_numbers"]["applicable"]
    assert "overlap" in found["is_overlap_important_only_haiku_numbers"]["missing"]


DRAW = ["seed", "sample", "members", "size_a", "size_b", "length", "decile", "decile_mode", "overlap", "pos",
        "hypernym_a", "hypernym_b", "set_a", "set_b"]


def _draws(df):
    df = df.copy()
    df["acc"] = df["correct_strict"].astype(float) * 100
    df["draw"] = df[DRAW].astype(object).where(df[DRAW].notna(), "").astype(str).agg("|".join, axis=1)
    return df


def _strata(df, skip):
    design = ["operation", "size_a", "size_b", "members", "length", "pos", "decile", "decile_mode", "condition",
              "swap_count", "overlap", "phrasing", "approach", "shots"]
    return [c for c in design if c not in skip and df[c].notna().any()]


@pytest.mark.slow
def test_verdicts_equal_a_recomputation_from_the_exported_rows(studied):
    """The documented method, written again from the export with pandas and scipy: estimate, n, p and interval."""
    import numpy as np
    from scipy import stats

    from core.analysis.stats import EXACT_MAX, RESAMPLES, SEED

    runs, report, export = studied
    run_id = runs[("strong", "grid")]
    found = report(run_id)
    df = _draws(export(run_id))
    # paired by draw: formal − plain, per draw the mean over its strata (every other factor equal)
    strata = _strata(df, {"phrasing"})
    cells = df.groupby([*strata, "draw", "phrasing"], dropna=False)["acc"].mean().unstack("phrasing").dropna()
    d = np.sort((cells["formal"] - cells["plain"]).groupby(level="draw").mean().to_numpy())
    exact = 2 ** len(d) <= EXACT_MAX
    if np.all(d == 0):
        p = 1.0
    else:
        p = stats.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True,
                                   n_resamples=EXACT_MAX if exact else RESAMPLES,
                                   random_state=np.random.default_rng(SEED)).pvalue
    ci = stats.bootstrap((d,), np.mean, n_resamples=RESAMPLES, method="percentile", vectorized=True,
                         random_state=np.random.default_rng(SEED)).confidence_interval if np.ptp(d) else None
    c = _contrast(found["which_prompt_language_is_better_formal_vs_plain"], "formal", "plain")
    assert c["n"] == len(d) and c["estimate"] == pytest.approx(d.mean(), abs=1e-9)
    assert c["p"] == pytest.approx(p, abs=1e-12)
    if ci is not None:
        assert (c["ci_low"], c["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-9)
    # between draws: numbers − words, each draw's mean over its configurations, stratified on the draw's size
    strata = _strata(df, {"members", "pos"})
    cells = df.groupby([*strata, "draw", "members"], dropna=False)["acc"].mean().rename("acc").reset_index()
    units = cells.groupby(["draw", "members", "size_a"])["acc"].mean().reset_index()
    w = units.groupby("size_a").size() / len(units)
    diff = units.groupby(["size_a", "members"])["acc"].mean().unstack()
    estimate = float((w * (diff["numbers"] - diff["words"])).sum())
    rng = np.random.default_rng(0)
    null = []
    for _ in range(2000):
        shuffled = units.copy()
        shuffled["members"] = shuffled.groupby("size_a")["members"].transform(lambda s: rng.permutation(s.values))
        m = shuffled.groupby(["size_a", "members"])["acc"].mean().unstack()
        null.append(float((w * (m["numbers"] - m["words"])).sum()))
    p = (np.sum(np.abs(null) >= abs(estimate) - 1e-9) + 1) / (len(null) + 1)
    c = _contrast(found["numbers_vs_words"], "numbers", "words")
    assert (c["n_a"], c["n_b"]) == tuple(units["members"].value_counts()[["numbers", "words"]])
    assert c["estimate"] == pytest.approx(estimate, abs=1e-9)
    assert c["p"] == pytest.approx(p, abs=0.01)               # two Monte Carlo permutation p values
    assert c["ci_low"] < estimate < c["ci_high"] and -100 <= c["ci_low"] and c["ci_high"] <= 100


@pytest.mark.slow
def test_models_are_compared_paired_by_draw_and_the_weaker_one_loses(studied):
    runs, report, export = studied
    found = report(runs[("strong", "grid")], runs[("weak", "grid")])
    models = found["llm_comparison"]
    c = models["contrasts"][0]
    assert {c["a"], c["b"]} == {"openai-compatible/strong", "openai-compatible/weak"}
    sign = +1 if c["a"] == "openai-compatible/strong" else -1
    _significant(c, sign)
    assert c["design"] == "paired by draw" and c["n"] == 48, c      # the runs share their draws: 12 x 2 sizes x 2 types
    # one verdict per model for every other finding, never pooled
    nvw = found["numbers_vs_words"]["contrasts"]
    assert sorted(x["model"] for x in nvw) == ["openai-compatible/strong", "openai-compatible/weak"]
    both = report(runs[("strong", "deceptive")], runs[("weak", "deceptive")])
    swaps = both["deceptiveness_swapping_effect"]["contrasts"]
    assert [(x["model"], x["n"]) for x in swaps] == [("openai-compatible/strong", 20), ("openai-compatible/weak", 20)]


def test_holm_adjustment_matches_its_definition():
    from core.analysis.stats import holm

    assert holm([0.01, 0.04, 0.03, float("nan")])[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])

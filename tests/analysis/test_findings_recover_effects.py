"""Issue 18: ``report findings`` recovers effects built into simulated models, through the CLI.

Two OpenAI-compatible stand-ins (one loopback server, told apart by the model name) answer correctly with a
probability that depends only on set size, token type and the deceptive condition — they ignore phrasing, approach
and shots. The draw is a hash of (model, prompt), so the test is deterministic. Runs go through ``python -m core
run``; the findings come from ``python -m core report findings --format json``. What must hold:

- each built-in effect has the right sign, a 95 % interval that excludes 0 and a Holm-adjusted p below α;
- the estimates equal what the exported per-item results give (computed here with pandas, independently);
- the contrasts the stand-ins ignore (phrasing, shots) are not significant after correction;
- the deceptive swap contrast is paired (by sample);
- a finding the runs cannot answer says which levels are missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from core.config import run_spec
from core.tasks.setops.scoring import solve
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

GRID = {"task": "setops", "seed": 11, "samples": 12, "operations": ["union", "intersection", "difference",
                                                                     "symmetric_difference"],
        "sizes": [2, 8], "members": ["numbers", "words"], "phrasings": ["formal", "plain"],
        "approaches": ["baseline"], "shots": [0, 1]}
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
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = {}
    try:
        for name, cfg in (("grid", GRID), ("deceptive", DECEPTIVE)):
            path = tmp / f"{name}.yaml"
            path.write_text(json.dumps(cfg))
            for model in SKILL:
                done = subprocess.run([sys.executable, "-m", "core", "run", "--config", str(path), "--model",
                                       f"openai-compatible/{model}", "--base-url", srv.base_url, "--concurrency",
                                       "16", "--no-progress", "--db", str(db), "--name", f"{model} {name}"],
                                      cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
                assert done.returncode == 0, done.stderr[-2000:]
                runs[(model, name)] = done.stdout.split("run ", 1)[1].split(":", 1)[0]
    finally:
        srv.stop()

    def report(*run_ids, alpha="0.05"):
        out = tmp / f"f{len(run_ids)}-{alpha}.json"
        done = subprocess.run([sys.executable, "-m", "core", "report", "findings", *[a for r in run_ids
                                                                                     for a in ("--run", r)],
                               "--alpha", alpha, "--format", "json", "--out", str(out), "--db", str(db)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return {f["id"]: f for f in json.loads(out.read_text())["findings"]}

    def export(run_id):
        out = tmp / f"{run_id}.csv"
        done = subprocess.run([sys.executable, "-m", "core", "export", "--run", run_id, "--out", str(out), "--db",
                               str(db)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return pd.read_csv(out)

    return runs, report, export


def _contrast(finding, a, b, **within):
    for c in finding["contrasts"]:
        if str(c["a"]) == str(a) and str(c["b"]) == str(b) and all(
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
    _significant(_contrast(found["operand_size"], 2, 8), +1)                 # small sets are easier
    _significant(_contrast(found["numbers_vs_words"], "numbers", "words"), +1)
    swap = _contrast(found["deceptiveness_swapping_effect"], "swapped", "not_swapped")
    _significant(swap, -1)
    assert swap["paired"] and swap["n_pairs"] == 80, swap                    # 4 operations x 20 samples
    phrasing = _contrast(found["which_prompt_language_is_better_formal_vs_plain"], "formal", "plain")
    assert not phrasing["significant"] and phrasing["paired"], phrasing      # the stand-in ignores phrasing
    for c in found["deceptiveness_effect_k_shots"]["contrasts"]:
        assert c["within"] == {"shots": 0}
    # a finding these runs cannot answer says which levels are missing
    assert not found["compare_deciles"]["applicable"] and found["compare_deciles"]["missing"]
    assert found["compare_deciles"]["verdicts"][0].startswith("Not answerable")
    assert not found["is_overlap_important_only_haiku_numbers"]["applicable"]
    assert "overlap" in found["is_overlap_important_only_haiku_numbers"]["missing"]


@pytest.mark.slow
def test_estimates_equal_the_exported_per_item_results(studied):
    runs, report, export = studied
    run_id = runs[("strong", "grid")]
    found = report(run_id)
    df = export(run_id)
    per_config = df.groupby(["config_id", "members", "size_a", "phrasing", "shots", "operation"], dropna=False)[
        "correct_strict"].mean().mul(100).reset_index(name="accuracy")
    formal_k0 = (per_config["phrasing"] == "formal") & (per_config["shots"] == 0)   # the reference's filter
    everything = per_config["phrasing"].notna()
    for finding, factor, a, b, rows in (("numbers_vs_words", "members", "numbers", "words", everything),
                                        ("operand_size", "size_a", 2, 8, formal_k0),
                                        ("which_prompt_language_is_better_formal_vs_plain", "phrasing", "formal",
                                         "plain", everything)):
        sel = per_config[rows]
        expected = sel.loc[sel[factor] == a, "accuracy"].mean() - sel.loc[sel[factor] == b, "accuracy"].mean()
        c = _contrast(found[finding], a, b)
        assert c["estimate"] == pytest.approx(expected, abs=1e-9), (finding, c["estimate"], expected)


@pytest.mark.slow
def test_models_are_compared_and_the_weaker_one_loses(studied):
    runs, report, export = studied
    found = report(runs[("strong", "grid")], runs[("weak", "grid")])
    # llm_comparison keeps the reference's filter (allow-empty approaches, formal, k = 0, lengths 1-4): these
    # baseline runs cannot answer it, and it says so
    assert not found["llm_comparison"]["applicable"]
    both = report(runs[("strong", "deceptive")], runs[("weak", "deceptive")])
    swap = _contrast(both["deceptiveness_swapping_effect"], "swapped", "not_swapped")
    assert swap["paired"] and swap["n_pairs"] == 160                         # pairs within each model


def test_holm_adjustment_matches_its_definition():
    from core.analysis.findings import holm

    assert holm([0.01, 0.04, 0.03, float("nan")])[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])

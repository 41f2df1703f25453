"""A finding's table against the SetLexSem reference's own pipeline — runs only when SETLEXSEM_REFERENCE_DIR names a
checkout of github.com/amazon-science/SetLexSem-Challenge (nothing of it is vendored here):

    SETLEXSEM_REFERENCE_DIR=/tmp/setlexsem pytest tests/analysis/test_findings_reference_parity.py

The reference aggregates per-item results per hyperparameter combination with ``aggregate_metrics``
(setlexsem/utils.py: accuracy in percent, rounded to 2 decimals) and tabulates a hypothesis with ``get_stats``
(setlexsem/analyze/hypothesis_testing_utils.py: Avg/Std/Min/Max per set operation × token type, rounded to 2).
Both functions are compiled from its source on their own (their modules import paths and plotting we do not need)
and fed the per-item verdicts of a stored run; our finding table for the same run must agree number for number —
to the reference's rounding (it rounds each configuration's accuracy before averaging, so a mean may differ by one
unit in the last place).
"""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path

import pandas as pd
import pytest

from core import runner, store
from core.analysis import findings
from core.tasks.setops.scoring import solve
from tests.support.loopback import LoopbackServer

REF = os.environ.get("SETLEXSEM_REFERENCE_DIR")
pytestmark = pytest.mark.skipif(not REF, reason="SETLEXSEM_REFERENCE_DIR (a SetLexSem-Challenge checkout) not set")
GRID = {"task": "setops", "seed": 21, "samples": 12, "operations": ["union", "intersection", "difference",
                                                                     "symmetric_difference"],
        "sizes": [2, 4], "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"],
        "shots": [0, 1]}


def _functions(relpath: str, names: set[str], namespace: dict) -> dict:
    path = Path(REF) / relpath
    if not path.is_file():
        pytest.fail(f"SETLEXSEM_REFERENCE_DIR={REF} has no {relpath}")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    picked = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert {n.name for n in picked} == names, f"{relpath} lacks some of {sorted(names)}"
    exec(compile(ast.Module(picked, []), str(path), "exec"), namespace)   # noqa: S102 — test-only, local checkout
    return namespace


def test_the_get_stats_table_of_a_finding_equals_the_reference_pipeline(tmp_path):
    ns = _functions("setlexsem/utils.py", {"aggregate_metrics"}, {"pd": pd})
    _functions("setlexsem/analyze/hypothesis_testing_utils.py", {"agg", "get_stats"}, ns)
    spec_items = {}
    from core.config import run_spec

    spec = run_spec(GRID)
    for it in spec.task_module.items(spec.config):
        spec_items[it["prompt"]] = it

    def respond(prompt: str, model: str) -> str:   # right with a probability set by size and token type
        it = spec_items[prompt]
        p = (0.9 if it["size_a"] == 2 else 0.6) - (0.0 if it["members"] == "numbers" else 0.2)
        draw = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) / 16 ** 8
        return solve(it) if draw < p else "<answer>{zzwrong}</answer>"

    srv = LoopbackServer(0.001, responder=respond).start()
    db = tmp_path / "s.duckdb"
    try:
        run = runner.run(GRID, "openai-compatible/parity", db_path=db, base_url=srv.base_url)
    finally:
        srv.stop()
    with store.connect(db) as con:
        ours = findings.report(con, [run.run_id], only=["numbers_vs_words"])["findings"][0]["table"]
        items = con.execute("SELECT config_id, operation, members, correct_strict FROM v_results WHERE run_id = ?",
                            [run.run_id]).df()
    # the reference's df_all_runs → df_results (aggregate_metrics per hyperparameter combination = our config)
    items["accuracy"] = items["correct_strict"].astype(bool)
    for metric in ("precision", "recall", "jaccard_index", "percent_match"):
        items[metric] = 0.0
    per_config = (items.groupby(["config_id", "operation", "members"])[
        ["accuracy", "precision", "recall", "jaccard_index", "percent_match"]]
        .apply(ns["aggregate_metrics"]).reset_index())
    nice = per_config.rename(columns={"operation": "Set operation", "members": "Token type",
                                      "avg_accuracy": "Accuracy"})
    theirs = ns["get_stats"](nice)                        # rows Avg/Std/Min/Max, columns (operation, type)
    print(theirs.to_string())
    assert len(ours) == theirs.shape[1] == 8
    for row in ours:
        col = (row["operation"], row["members"])
        for ours_key, their_key in (("mean", "Avg"), ("std", "Std"), ("min", "Min"), ("max", "Max")):
            assert round(row[ours_key], 2) == pytest.approx(theirs.loc[their_key, col], abs=0.0101), (col, ours_key)

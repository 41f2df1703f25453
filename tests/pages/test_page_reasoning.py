"""Results over a run crossing reasoning efforts (a thinking stand-in server): the violins colour by effort, the cost
view lists tokens per correct answer per effort, Compare splits two runs by effort."""

from __future__ import annotations

import pytest

from core import runner
from core.tasks import setops
from core.tasks.setops.scoring import solve
from tests.support.loopback import LoopbackServer

GRID = {"task": "setops", "samples": 3, "sizes": [2], "members": ["numbers"], "seed": 31,
        "operations": ["union", "intersection"], "reasoning": ["low", "high"]}


@pytest.fixture(scope="module")
def reasoning_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("page_reasoning") / "studio.duckdb"
    items = {it["prompt"]: it for it in setops.items(setops.load_config(GRID))}
    srv = LoopbackServer(0.001, responder=lambda p, m: solve(items[p]),
                         reasoning="First guess <answer>{0}</answer>; checking again.").start()
    try:
        grid = runner.run(GRID, "openai-compatible/thinker", base_url=srv.base_url, db_path=db)
        low = runner.run({k: v for k, v in GRID.items() if k != "reasoning"}, "openai-compatible/thinker",
                         base_url=srv.base_url, db_path=db, params={"reasoning_effort": "low"})
    finally:
        srv.stop()
    assert grid.status == low.status == "done"
    return db, grid.run_id, low.run_id


@pytest.mark.slow
def test_results_colour_by_effort_and_cost_view(reasoning_db, open_page, monkeypatch):
    db, grid, _ = reasoning_db
    monkeypatch.setenv("STUDIO_DB", str(db))
    at = open_page("pages/results.py", {"runs": grid})
    assert at.selectbox(key="res_color").value == "reasoning"
    at = open_page("pages/results.py", {"runs": grid, "view": "cost"})
    table = next(d.value for d in at.dataframe if "Tokens / correct" in d.value.columns)
    assert list(table["Effort"]) == ["low", "high"]
    assert (table["Correct"] == 6).all() and table["Reasoning tokens / correct"].notna().all()
    levels = next(d.value for d in at.dataframe if "Spread (std, points)" in d.value.columns)
    assert list(levels["Effort"]) == ["low", "high"] and (levels["Accuracy %"] == 100).all()
    assert (levels["Configurations"] == 2).all() and (levels["Reasoning tokens / item"] > 0).all()
    contrasts = next(d.value for d in at.dataframe if "Holm p" in d.value.columns)
    effort = contrasts[contrasts["Contrast"] == "effort"].iloc[0]
    assert (effort["From"], effort["To"], effort["Estimate (points)"], effort["Draws"]) == ("low", "high", 0, 3)


@pytest.mark.slow
def test_compare_splits_two_runs_by_effort(reasoning_db, open_page, monkeypatch):
    db, grid, low = reasoning_db
    monkeypatch.setenv("STUDIO_DB", str(db))
    at = open_page("pages/compare.py", {"runs": f"{grid},{low}", "x": "reasoning"})
    assert at.selectbox(key="cmp_x").value == "reasoning"
    assert not any("No combination" in w.value for w in at.warning)

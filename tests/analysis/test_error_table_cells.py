"""Error-table cells a person reads (issue 22): no "(nan%)", and the made-up percentage's row says it can exceed
100 (it counts members, not answers)."""

from __future__ import annotations

import pandas as pd
import pytest

from core import analysis


@pytest.mark.slow
def test_error_table_cells_never_show_nan_percent(tmp_path):
    """A group without a single right answer has no top-k "correct" confusion: those cells stay empty (never
    "G2 vs. L1 (nan%)", nor a label no answer had). The made-up percentage's row says it can exceed 100."""
    from core import runner, store
    from core.store.exports import export_run
    from core.store.io import import_results

    db = tmp_path / "s.duckdb"
    cfg = {"task": "setops", "seed": 0, "samples": 4, "operations": ["union", "intersection"], "sizes": [2],
           "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
    solver = runner.run(cfg, "reference/solver", db_path=db).run_id
    out = tmp_path / "wrong.csv"
    export_run(db, solver, out)
    df = pd.read_csv(out)
    df.loc[df["operation"] == "union", "response"] = "<answer>{999}</answer>"    # every union answer wrong
    df.to_csv(out, index=False)
    run_id = import_results(db, str(out))[0]
    with store.connect(db) as con:
        table = analysis.error_table(con, [run_id], by=["operation"], unparsed="reference")
    union = table[table["operation"] == "union"].iloc[0]
    assert union["n_correct"] == 0 and all(union[f"top{k}_correct"] is None for k in (1, 2, 3))
    assert isinstance(union["top1_mistake"], str) and "%" in union["top1_mistake"]
    intersection = table[table["operation"] == "intersection"].iloc[0]
    assert intersection["n_wrong"] == 0 and intersection["top1_mistake"] is None   # nothing wrong: no mistake
    assert isinstance(intersection["top1_correct"], str)
    cells = " ".join(str(v) for c in table.columns if c.startswith("top") for v in table[c])
    assert "nan" not in cells
    paper = analysis.error_table_paper_layout(table, ["operation"])
    assert any("can exceed 100" in row for row in paper.index)
    assert "nan" not in " ".join(paper.to_numpy().ravel().astype(str))

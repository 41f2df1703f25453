"""core.analysis against the real store: a real reference/solver run, synthetic rows through the store schema,
and an exported-then-imported run compared item by item."""

from __future__ import annotations

import pytest

from core import analysis as A, runner, store
from core.analysis import queries as AQ
from tests.support.synthetic import fill_synthetic

SMALL = {"task": "setops", "seed": 3, "samples": 4, "operations": ["union", "intersection"], "sizes": [2, 4],
         "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture()
def db(tmp_path):
    return str(tmp_path / "studio.duckdb")


def test_solver_run_is_all_correct(db):
    p = runner.run(SMALL, "reference/solver", db_path=db)
    assert p.status == "done" and p.done == 16
    with store.connect(db) as con:
        points, summary = A.violin_data(con, [p.run_id], "operation", None)
        table = A.error_table(con, [p.run_id], ["operation"])
        rob, per_model = A.robustness(con, [p.run_id])
        items = A.drilldown(con, [p.run_id], limit=5)
    assert len(points) == 4 and (points["accuracy"] == 100).all() and (points["n"] == 4).all()
    assert summary["mean"].tolist() == [100.0, 100.0]
    assert (table["accuracy"] == 100).all() and (table["did_not_follow"] == 0).all()
    assert per_model["score"].iloc[0] == 0
    assert items["response"].str.contains("<answer>").all()


def test_synthetic_rows_through_store_schema(db):
    with store.connect(db):
        pass
    import duckdb

    con = duckdb.connect(db)
    try:
        ids = fill_synthetic(con, 20_000, samples=10)
        assert con.execute("SELECT count(*) FROM v_results").fetchone()[0] == 20_000
        points, summary = A.violin_data(con, ids, "operation", "model")
        assert summary["N"].sum() == 2000 and set(summary["model"]) == {"synthetic/a", "synthetic/b"}
        by_op = summary.groupby("operation")["mean"].mean()
        assert by_op["union"] > by_op["symmetric_difference"]  # the synthetic effect is recovered
        rob, _ = A.robustness(con, ids)
        top = rob[rob["model"] == "synthetic/a"].iloc[0]["factor"]
        assert top in ("operation", "condition", "size_a", "size_b")
        paired = A.paired_items(con, ids[0], ids[1])
        assert len(paired) == 10_000  # same config ids, samples and prompts
    finally:
        con.close()


def test_export_import_roundtrip_pairs_items(db, tmp_path):
    from core.store.exports import export_run
    from core.store.io import import_results

    p = runner.run(SMALL, "reference/solver", db_path=db)
    out = tmp_path / "run.csv"
    export_run(db, p.run_id, out)
    other = str(tmp_path / "other.duckdb")
    rid, n = import_results(other, out.read_bytes(), "run.csv")
    assert n == 16
    with store.connect(other) as con:
        pts, shared = A.compare_runs(con, [A.Series("imported", (rid,))], x="operation")
        assert (pts["accuracy"] == 100).all()
    runner.run(SMALL, "reference/solver", db_path=other)
    with store.connect(other) as con:
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        a, b = sorted(runs)
        paired = A.paired_items(con, a, b)
        mc = A.mcnemar(paired)
    assert mc["n"] == 16 and mc["only_a"] == mc["only_b"] == 0 and mc["p_value"] == 1.0


def test_lean_source_matches_the_view(db):
    """Aggregations read items ⋈ results ⋈ runs directly (no call-cache join); same rows as v_results."""
    p = runner.run(SMALL, "reference/solver", db_path=db)
    with store.connect(db) as con:
        src = AQ.relation(con)
        assert src != "v_results"
        cols = [c for c in A.view_columns(con) if c not in AQ.CALL_ONLY]
        sel = ", ".join(AQ.quote(c) for c in cols)
        lean = con.execute(f"SELECT {sel} FROM {src} ORDER BY run_id, idx").df()
        view = con.execute(f"SELECT {sel} FROM v_results ORDER BY run_id, idx").df()
        assert lean.equals(view)
        dd = A.drilldown(con, [p.run_id], limit=5, offset=3)
        full = con.execute("SELECT idx, response, latency_ms FROM v_results WHERE run_id = ? ORDER BY idx "
                           "LIMIT 5 OFFSET 3", [p.run_id]).df()
        assert dd["idx"].tolist() == full["idx"].tolist()
        assert dd["response"].tolist() == full["response"].tolist()

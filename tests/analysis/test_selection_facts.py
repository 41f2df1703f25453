"""analysis.selection_facts (what a page asks first, on one connection) gives exactly what the separate calls give,
on both paths, for one run, several, both tasks and none."""

from __future__ import annotations

import random

import pandas as pd

from core import analysis as A, runner, store
from core.analysis import aggregated, memo
from tests.analysis.test_aggregates_equal_rows import DECEPTIVE, QUANT, SETOPS, _perturb


def _separately(con, run_ids) -> dict:
    varying = A.factor_columns(con, run_ids, varying=True)
    return {"sizes_same": A.sizes_always_equal(con, run_ids), "factors": A.factor_columns(con, run_ids),
            "varying": varying, "levels": {c: A.factor_levels(con, run_ids, c) for c in varying},
            "overview": {sc: A.run_overview(con, run_ids, scoring=sc) for sc in A.SCORINGS}}


def _equal(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for k in ("sizes_same", "factors", "varying", "levels"):
        assert a[k] == b[k], k
    for sc in A.SCORINGS:
        pd.testing.assert_frame_equal(a["overview"][sc], b["overview"][sc])


def test_the_facts_are_the_separate_answers(tmp_path):
    db = str(tmp_path / "s.duckdb")
    ids = [runner.run(g, "reference/solver", db_path=db).run_id for g in (SETOPS, DECEPTIVE, QUANT)]
    _perturb(db, ids[:2], random.Random(3))   # some answers without a strict verdict, failures, unanswered items
    with store.connect(db) as con:
        for run_ids in (ids[:1], ids[:2], ids[1:2], ids, ids[2:], None):
            memo.clear()
            facts = A.selection_facts(con, run_ids)
            _equal(facts, _separately(con, run_ids))
            with aggregated.rows_only():
                _equal(A.selection_facts(con, run_ids), facts)
            assert facts["factors"] and set(facts["varying"]) <= set(facts["factors"])
        strict, lenient = (A.selection_facts(con, ids[:2])["overview"][sc] for sc in ("strict", "lenient"))
        assert not strict.equals(lenient)   # the perturbed runs' verdicts differ by scoring


def test_run_overview_among_is_the_runs_own_overview(tmp_path):
    db = str(tmp_path / "s.duckdb")
    ids = [runner.run(g, "reference/solver", db_path=db).run_id for g in (SETOPS, DECEPTIVE, QUANT)]
    _perturb(db, ids[:2], random.Random(4))
    with store.connect(db) as con:
        for path in ("aggregates", "rows"):
            for run_ids in (ids[:1], ids[1:], ids):
                for sc in A.SCORINGS:
                    memo.clear()
                    if path == "rows":
                        with aggregated.rows_only():
                            got, want = A.run_overview_among(con, run_ids, scoring=sc), \
                                A.run_overview(con, run_ids, scoring=sc)
                    else:
                        got, want = A.run_overview_among(con, run_ids, scoring=sc), \
                            A.run_overview(con, run_ids, scoring=sc)
                    pd.testing.assert_frame_equal(got, want)

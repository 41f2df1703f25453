"""The aggregate path (core/store/aggregates.py, core/analysis/aggregated.py) gives the same views as the row path,
on random stores: real runs (set operations incl. deceptive sets, quantifiers) whose results are rewritten at random
through the store's writer in random batches — wrong answers, unparsed answers, made-up members, failed calls,
items left unanswered, a success written over an error —, synthetic rows, an imported run, a deleted run and a store
migrated from an older schema. Every stored aggregate also equals a recomputation from the rows (``check``)."""

from __future__ import annotations

import json
import math
import random
import shutil

import pandas as pd
import pytest

from core import analysis as A, runner, store
from core.analysis import aggregated, presenter
from core.analysis.findings_metrics import metrics_table
from core.analysis.sql import VIEW, where_clause
from core.store import aggregates
from tests.support.synthetic import fill_synthetic

SETOPS = {"task": "setops", "seed": 5, "samples": 3, "operations": ["union", "intersection", "difference",
                                                                    "symmetric_difference"],
          "sizes": [2, 4], "members": ["numbers", "words"], "phrasings": ["formal", "plain"],
          "approaches": ["baseline"], "shots": [0]}
DECEPTIVE = {"task": "setops", "seed": 1, "samples": 3, "operations": ["union", "intersection"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}
QUANT = {"task": "quantifiers", "seed": 0, "quantifiers": ["at least half", "none"], "noun_groups": ["common"],
         "samples": 2, "nouns_per_group": 2}


@pytest.fixture(scope="session")
def solver_store(tmp_path_factory):
    """``solver_store(path, grids)``: a store at ``path`` holding one reference-solver run of each grid, in order, as
    running them there one after the other gives; its run ids. Each list of grids is run once per test process (a
    longer list starts from a copy of its longest prefix already run) and every test gets a copy of it: what one
    test writes is never what another reads."""
    made: dict[str, tuple[str, list[str]]] = {}

    def key(grids) -> str:
        return json.dumps(grids, sort_keys=True)

    def store_of(path, grids) -> list[str]:
        grids = list(grids)
        if key(grids) not in made:
            db = str(tmp_path_factory.mktemp("solver_store") / "s.duckdb")
            start, ids = 0, []
            for n in range(len(grids) - 1, 0, -1):
                if key(grids[:n]) in made:
                    template, ids = made[key(grids[:n])]
                    shutil.copyfile(template, db)
                    start, ids = n, list(ids)
                    break
            ids += [runner.run(g, "reference/solver", db_path=db).run_id for g in grids[start:]]
            made[key(grids)] = (db, ids)
        template, ids = made[key(grids)]
        shutil.copyfile(template, path)
        return list(ids)

    return store_of


def _made_up(members: list):
    return 10 ** 9 if all(isinstance(m, int) for m in members) else "zzmadeup"


def _perturb(db: str, run_ids: list[str], rng: random.Random) -> None:
    """Rewrite the set-operation runs' results at random through ``write_calls_results`` in random batches (as merges do). The
    reference's parse (``parsed_strict``) follows its verdict: a wrong answer has a made-up member, a partly right one
    half the truth and a made-up member, an empty answer is ``[]`` (right for an empty truth), an answer that did not
    follow the rule has none."""
    with store.connect(db) as con:
        rows = con.execute("SELECT r.*, i.truth AS _truth FROM results r JOIN items i USING (run_id, idx) "
                           "WHERE run_id IN (SELECT unnest(?)) ORDER BY run_id, idx", [run_ids]).df().to_dict("records")
    rows = [{k: (None if (isinstance(v, float) and v != v) or v is pd.NaT else v) for k, v in r.items()}
            for r in rows]
    out = []
    for r in rows:
        r = dict(r)
        truth = json.loads(r.pop("_truth"))
        u = rng.random()
        if u < 0.2:                        # wrong, with a longer answer and a made-up member
            r.update(correct=False, correct_strict=False, answer_len=(r["truth_len"] or 0) + 1,
                     answer_len_strict=(r["truth_len"] or 0) + 1, made_up=1, made_up_strict=1,
                     parsed_strict=json.dumps([*truth, _made_up(truth)]))
        elif u < 0.25:                     # partly right: half the truth and a made-up member
            got = [*truth[: len(truth) // 2], _made_up(truth)]
            r.update(correct=False, correct_strict=False, answer_len_strict=len(got), made_up_strict=1,
                     parsed_strict=json.dumps(got))
        elif u < 0.29:                     # the empty set: right where the truth is empty
            r.update(correct=not truth, correct_strict=not truth, answer_len=0, answer_len_strict=0,
                     made_up_strict=0, parsed_strict="[]")
        elif u < 0.35:                     # did not follow the instruction
            r.update(correct=False, followed=False, answer_len=None, correct_strict=False, followed_strict=False,
                     answer_len_strict=None, made_up=0, made_up_strict=None, parsed_strict=None)
        elif u < 0.42:                     # right for our parser, not for the reference's
            r.update(correct_strict=False, followed_strict=False, answer_len_strict=None, parsed_strict=None)
        elif u < 0.5:                      # the call failed
            r.update(correct=None, correct_strict=None, followed=None, error="HTTP 500: server error",
                     parsed=None, parsed_strict=None)
        out.append(r)
    rng.shuffle(out)
    keep = out[: int(len(out) * 0.9)]      # 10 % of the items stay unanswered
    with store.connect(db) as con, store.transaction(con):
        for table in ("results",):
            con.execute(f"DELETE FROM {table} WHERE run_id IN (SELECT unnest(?))", [run_ids])
        aggregates.refresh_runs(con, run_ids)
    i = 0
    while i < len(keep):
        n = rng.randint(1, 40)
        with store.connect(db) as con, store.transaction(con):
            store.write_calls_results(con, [], keep[i:i + n])
        i += n
    # a few failures are answered later (a success replaces an error), and a later error never replaces a success
    again = [dict(r, error=None, correct=True, correct_strict=True, followed=True, followed_strict=True)
             for r in keep if r.get("error")][:5]
    again += [dict(r, error="timeout", correct=None) for r in keep if not r.get("error")][:5]
    with store.connect(db) as con, store.transaction(con):
        store.write_calls_results(con, [], again)


def _same(fn):
    a = fn()
    with aggregated.rows_only():
        b = fn()
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), rtol=1e-9)
    elif isinstance(a, tuple):
        for x, y in zip(a, b):
            pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True), rtol=1e-9)
    else:
        _close(json.loads(json.dumps(a, default=str)), json.loads(json.dumps(b, default=str)))
    return a


def _close(a, b, path="") -> None:
    """Equal JSON, numbers to 1e-9 relative (as the frames are compared): DuckDB adds doubles in parallel, in no
    fixed order, so a standard deviation may differ in its last bits from one computation to the next."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), path
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b)), (path, a, b)
    else:
        assert a == b and type(a) is type(b), (path, a, b)


def _views_agree(con, run_ids, task="setops", *, reports):
    """Every view on both paths; the findings report (the memoised and stored one against a fresh computation:
    it reads rows on either path) under the scorings in ``reports`` — each test asks it where its runs differ most,
    as it is the slowest view by far."""
    facs = A.factor_columns(con, run_ids)
    _same(lambda: A.factor_columns(con, run_ids))
    _same(lambda: A.factor_columns(con, run_ids, varying=True))
    _same(lambda: A.factor_columns(con, run_ids, per_sample=True))
    # every factor's levels in one call (the slice filters), run-level ones (model, name, params) included
    levels = _same(lambda: A.factor_levels_of(con, run_ids, facs))
    where, params = where_clause(con, run_ids, None, answered=False)
    assert levels == {c: [r[0] for r in con.execute(f'SELECT DISTINCT "{c}" AS lv FROM v_results {where} '
                                                    "ORDER BY lv NULLS LAST", params).fetchall()] for c in facs}
    _same(lambda: A.sizes_always_equal(con, run_ids))
    for scoring in A.SCORINGS:
        _same(lambda: A.run_overview(con, run_ids, scoring=scoring))
        for x in [c for c in facs if c not in ("run_id", "name")][:6]:
            _same(lambda: A.factor_levels(con, run_ids, x))
            _same(lambda: A.violin_data(con, run_ids, x, "model", scoring=scoring))
        _same(lambda: A.robustness(con, run_ids, scoring=scoring))
        if task == "setops":
            for unparsed in ("ours", "reference"):
                for by in (["members", "operation"], ["operation"], ["size_a", "phrasing"]):
                    by = [c for c in by if c in facs]
                    if by:
                        _same(lambda: A.error_table(con, run_ids, by, scoring=scoring, unparsed=unparsed))
                        _same(lambda: A.reference_error_table(con, run_ids, by, scoring=scoring,
                                                              unparsed=unparsed))
            _same(lambda: A.error_table(con, run_ids, ["operation"], {"size_a": [4]}, scoring=scoring))
            _same(lambda: metrics_table(con, run_ids, {}, scoring, VIEW))
            _same(lambda: metrics_table(con, run_ids, {"size_a": [4]}, scoring, VIEW))
            if scoring in reports:
                _same(lambda: A.findings_report(con, run_ids, scoring=scoring))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_stores_same_views_both_paths(tmp_path, seed, solver_store):
    db = str(tmp_path / "s.duckdb")
    rng = random.Random(seed)
    grids = [SETOPS, DECEPTIVE] if seed != 2 else [SETOPS, DECEPTIVE, QUANT]
    ids = solver_store(db, grids)
    _perturb(db, ids[:2], rng)
    with store.connect(db) as con:
        assert aggregates.check(con) == []
        # the whole store is selected once per seed, as a list of runs (seed 0) or as no selection (seeds 1 and 2,
        # where seed 2's store holds both tasks): the two spellings select the same runs, so each seed asks one
        _views_agree(con, ids if seed == 0 else None, reports=[A.SCORINGS, ["strict"], ["lenient"]][seed])
        _views_agree(con, ids[1:2], reports=())       # deceptive alone: hypernyms and pos vary inside configs
        replayable = _same(lambda: presenter.replayable_runs(con))   # the demo's list of runs with deceptive items
        assert ids[1] in set(replayable["run_id"])
        if seed == 2:
            _views_agree(con, ids[2:], task="quantifiers", reports=())
        # a filter on a column that varies inside a configuration takes the row path and still works
        hyp = A.factor_levels(con, ids[1:2], "hypernym_a")
        assert hyp and "hypernym_a" in aggregated.inside_columns(con, ids[1:2])["varies"]
        _same(lambda: A.violin_data(con, ids[1:2], "condition", None, {"hypernym_a": hyp[:1]}))


def test_synthetic_store_and_deleted_run(tmp_path):
    """Two synthetic runs of 600 configurations x 4 samples: the two paths' equality does not depend on the number
    of rows (neither path has a size threshold), and at this size every factor the synthetic grid varies at 30,000
    rows still varies (operations, sizes, members, lengths, conditions, both phrasings, two approaches), so every
    view meets several levels of each; the findings report, the slowest view, took ~4x longer at 30,000 rows."""
    db = str(tmp_path / "s.duckdb")
    with store.connect(db) as con:
        ids = fill_synthetic(con, 4_800, samples=4)
        levels = A.factor_levels_of(con, ids, ["operation", "size_a", "members", "length", "condition", "phrasing",
                                               "approach"])
        assert all(len(v) >= 2 for v in levels.values()), levels
        assert aggregates.check(con) == []
        _views_agree(con, ids, reports=["lenient"])     # the findings report at 30,000 rows
    before = A.change_token
    store.delete_run(db, ids[0])
    with store.connect(db) as con:
        assert aggregates.check(con) == []
        assert con.execute("SELECT count(*) FROM agg_counts WHERE run_id = ?", [ids[0]]).fetchone()[0] == 0
        _views_agree(con, None, reports=())           # one run left: the views of a single run
    assert before is A.change_token


def test_import_and_versions(tmp_path, solver_store):
    from core.store.exports import export_run
    from core.store.io import import_results

    db = str(tmp_path / "s.duckdb")
    (rid,) = solver_store(db, [SETOPS])
    _perturb(db, [rid], random.Random(7))
    out = tmp_path / "x.parquet"
    export_run(db, rid, str(out))
    # the same claims would be that run itself (dedup on claims): under another model's name they are an upload
    pd.read_parquet(out).assign(model="reference/solver-copy").to_parquet(out)
    with store.connect(db) as con:
        v0 = dict(aggregates.versions(con))
        token0 = A.change_token(con)
    new, _ = import_results(db, str(out))
    with store.connect(db) as con:
        assert aggregates.check(con) == []
        v1 = dict(aggregates.versions(con))
        assert v1[rid] == v0[rid] and new in v1 and A.change_token(con) != token0
        a = A.error_table(con, [rid], ["operation"], scoring="strict")
        b = A.error_table(con, [new], ["operation"], scoring="strict")
        # the rewritten verdicts went out with the export, but the import is re-scored from the responses (the
        # solver's, all right): the imported run's aggregates hold our verdicts, not the file's
        assert (a["accuracy"] < 100).all() and (b["accuracy"] == 100).all()
        _views_agree(con, [rid, new], reports=["lenient"])


def test_older_store_gets_aggregates_on_migration(tmp_path):
    from tests.support.old_db import write_v1_database

    db = tmp_path / "old.duckdb"
    write_v1_database(db)
    with store.connect(str(db)) as con:
        assert aggregates.present(con)
        n_items = con.execute("SELECT count(*) FROM items").fetchone()[0]
        assert con.execute("SELECT coalesce(sum(n_items), 0) FROM agg_configs").fetchone()[0] == n_items
        assert aggregates.check(con) == []
        _views_agree(con, None, reports=["strict"])


def test_repeated_report_is_memoised_and_a_write_invalidates_it(tmp_path, cli, monkeypatch, solver_store):
    import importlib

    from core.analysis import memo

    ET = importlib.import_module("core.analysis.error_table")   # the package exports a function of that name

    db = str(tmp_path / "s.duckdb")
    (rid,) = solver_store(db, [SETOPS])
    memo.clear()
    calls = []
    real = ET._counts
    monkeypatch.setattr(ET, "_counts", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = tmp_path / "e.csv"
    args = ("report", "errors", "--db", db, "--run", rid, "--by", "operation", "--out", out)
    assert cli(*args).returncode == 0 and len(calls) == 1
    first = out.read_text()
    assert cli(*args).returncode == 0 and len(calls) == 1          # the memo answered
    assert out.read_text() == first and "100.0" in first
    _perturb(db, [rid], random.Random(3))                          # writes through the store: versions grow
    assert cli(*args).returncode == 0 and len(calls) == 2
    assert out.read_text() != first


@pytest.mark.parametrize("window", [3, 64, 1 << 16])
def test_drilldown_pages_equal_a_full_sort(tmp_path, monkeypatch, window, solver_store):
    """The drill-down finds its page run by run in growing idx windows: the same rows as sorting the whole slice,
    at any offset, across window and run boundaries."""
    from core.analysis import queries

    monkeypatch.setattr(queries, "_FIRST_WINDOW", window)
    db = str(tmp_path / "s.duckdb")
    ids = solver_store(db, [{**SETOPS, "seed": s} for s in (1, 2)])
    _perturb(db, ids, random.Random(window))
    rng = random.Random(11)
    with store.connect(db) as con:
        for _ in range(12):
            flt = rng.choice([None, {"operation": ["intersection"]}, {"members": ["words"], "size_a": [4]}])
            correct = rng.choice([None, True, False])
            scoring = rng.choice(A.SCORINGS)
            limit, offset = rng.randint(1, 40), rng.randint(0, 150)
            runs = rng.choice([ids, ids[1:], None])
            got = A.drilldown(con, runs, flt, correct=correct, limit=limit, offset=offset, scoring=scoring)
            where, params = queries.where_clause(con, runs, flt, answered=False)
            if correct is not None:
                where = (where + " AND " if where else "WHERE ") + \
                    f"{queries.scored_expr(con, 'correct', scoring)} = ?"
                params.append(correct)
            want = con.execute(f"SELECT run_id, idx, response FROM v_results {where} ORDER BY run_id, idx "
                               "LIMIT ? OFFSET ?", [*params, limit, offset]).fetchall()
            assert [(r, int(i), t if isinstance(t, str) else None)
                    for r, i, t in zip(got["run_id"], got["idx"], got["response"])] == want


def test_findings_report_is_kept_in_the_store_by_the_runs_versions(tmp_path, monkeypatch, solver_store):
    import importlib

    from core.analysis import memo

    F = importlib.import_module("core.analysis.findings")
    db = str(tmp_path / "s.duckdb")
    (rid,) = solver_store(db, [DECEPTIVE])
    calls = []
    real = F.report
    monkeypatch.setattr(F, "report", lambda *a, **k: calls.append(1) or real(*a, **k))
    memo.clear()
    with store.connect(db) as con:
        first = A.findings_report(con, [rid])
    memo.clear()                                   # another process: nothing in its memory
    with store.connect(db) as con:
        again = A.findings_report(con, [rid])
    assert len(calls) == 1                          # read from the store's analysis_cache
    assert json.dumps(again, sort_keys=True, default=str) == json.dumps(first, sort_keys=True, default=str)
    _perturb(db, [rid], random.Random(5))           # the runs changed: computed again
    memo.clear()
    with store.connect(db) as con:
        changed = A.findings_report(con, [rid])
    assert len(calls) == 2 and changed != first


def test_source_counts_the_same_on_both_paths(tmp_path, solver_store):
    """Every count ``aggregated.source`` gives (the store's definitions, counted from the rows on the row path) and
    the error table's length counts, summed by groups of design factors inside slices, equal on both paths; a column
    that changes inside a configuration (a deceptive sample's part of speech) is read from the rows."""
    db = str(tmp_path / "s.duckdb")
    ids = solver_store(db, [SETOPS, DECEPTIVE])
    _perturb(db, ids, random.Random(4))
    counts = [c for c in aggregated.COUNTS if c != "n_rows"]   # result rows: a count of the store's own bookkeeping
    with store.connect(db) as con:
        assert aggregated.source(con, ids, ["operation"], counts=["n"]).aggregated
        assert not aggregated.source(con, ids, ["pos"], counts=["n"]).aggregated
        with aggregated.rows_only():
            assert not aggregated.source(con, ids, ["operation"], counts=["n"]).aggregated
        for scoring in A.SCORINGS:
            for by, filters in ((["run_id", "config_id"], None), (["operation"], {"members": ["words"]}), ([], None),
                                (["members", "size_a"], {"operation": ["union", "difference"]}), (["pos"], None)):
                keys = ", ".join(by)
                group = f"GROUP BY {keys} ORDER BY {keys}" if by else ""

                def summed():
                    src = aggregated.source(con, ids, by, filters, counts=counts, scoring=scoring)
                    sums = ", ".join(f"coalesce(sum({c}), 0) AS {c}" for c in counts)
                    return con.execute(f"SELECT {keys + ', ' if by else ''}{sums} FROM {src.sql} {group}",
                                       src.params).df()

                def lengths():
                    src = aggregated.source(con, ids, by, filters, scoring=scoring, lengths=True)
                    cols = ", ".join([*by, "correct", "CAST(truth_len AS BIGINT) AS t", "CAST(answer_len AS BIGINT) AS a"])
                    return con.execute(f"SELECT {cols}, CAST(sum(k) AS BIGINT) AS k FROM {src.sql} GROUP BY ALL "
                                       "ORDER BY ALL NULLS LAST", src.params).df()

                got = _same(summed)
                assert int(got["n"].sum()) > 0 and int(got["n_correct"].sum()) > 0
                assert int(_same(lengths)["k"].sum()) == int(got["n"].sum())


def _strict_in_python(con, run_id: str) -> dict:
    """{(operation, members): (n, precision, recall, jaccard)} of one run's answered set-operation items under strict
    scoring, scored one by one in Python (``strict_scores``): the reference the stored sums must meet."""
    from core.tasks.setops.scoring import strict_scores

    out: dict = {}
    for op, members, truth, parsed in con.execute(
            "SELECT operation, members, truth, parsed_strict FROM v_results WHERE run_id = ? AND task = 'setops' "
            "AND correct_strict IS NOT NULL", [run_id]).fetchall():
        out.setdefault((op, members), []).append(strict_scores(truth, parsed))
    return {k: (len(v), *(100 * sum(x[i] for x in v) / len(v) for i in range(3))) for k, v in out.items()}


def test_strict_metrics_come_from_the_aggregates(tmp_path, solver_store):
    """agg_counts' strict rows hold the strict precision, recall and Jaccard (of the reference's parse) of set
    operations and the stored ones of other tasks: runs made here whose answers did and did not follow the rule (empty
    truths and empty answers among them), a quantifier run with metrics, and an upload whose responses were edited
    (re-scored from them on import). The strict table is the same read from the aggregates, from the rows and scored
    item by item in Python; it differs from the lenient one."""
    from core.store.exports import export_run
    from core.store.io import import_results

    db = str(tmp_path / "s.duckdb")
    ids = solver_store(db, [SETOPS, DECEPTIVE, QUANT])
    _perturb(db, ids[:2], random.Random(9))
    rng = random.Random(10)
    with store.connect(db) as con, store.transaction(con):   # the quantifier run gets metrics of its own
        rows = con.execute("SELECT * FROM results WHERE run_id = ?", [ids[2]]).df().to_dict("records")
        rows = [{k: (None if (isinstance(v, float) and v != v) or v is pd.NaT else v) for k, v in r.items()}
                for r in rows]
        store.write_calls_results(con, [], [dict(r, precision=rng.random(), recall=rng.random(),
                                                 jaccard=rng.random()) for r in rows])
    out = tmp_path / "x.parquet"
    export_run(db, ids[0], str(out))
    frame = pd.read_parquet(out)
    wrong = {0: "I cannot tell.", 1: "{1, 2, 3}", 2: "{}", 3: "The answer is {" + "}"}
    frame["response"] = [wrong.get(i % 7, r) for i, r in enumerate(frame["response"])]
    frame.assign(model="reference/solver-edited").to_parquet(out)
    upload, _ = import_results(db, str(out))
    with store.connect(db) as con:
        assert aggregates.check(con) == []
        metric_cols = "precision_sum, precision_n, recall_sum, recall_n, jaccard_sum, jaccard_n"
        strict, lenient = (con.execute(f"SELECT config_id, {metric_cols} FROM agg_counts WHERE run_id = ? AND "
                                       "scoring = ? ORDER BY config_id", [ids[2], s]).fetchall()
                           for s in ("strict", "lenient"))
        assert strict == lenient and sum(r[2] for r in strict) > 0   # another task keeps its own metrics
        differ = 0
        for rid in (ids[0], ids[1], upload):
            table = _same(lambda: metrics_table(con, [rid], {}, "strict", VIEW))
            want = _strict_in_python(con, rid)
            assert {(r["operation"], r["members"]) for r in table} == set(want)
            for r in table:
                n, p, rc, j = want[(r["operation"], r["members"])]
                assert r["n"] == n
                assert math.isclose(r["precision"], p, rel_tol=1e-9, abs_tol=1e-9)
                assert math.isclose(r["recall"], rc, rel_tol=1e-9, abs_tol=1e-9)
                assert math.isclose(r["jaccard"], j, rel_tol=1e-9, abs_tol=1e-9)
            loose = {(r["operation"], r["members"]): r for r in metrics_table(con, [rid], {}, "lenient", VIEW)}
            differ += sum(not math.isclose(r["precision"], loose[(r["operation"], r["members"])]["precision"])
                          for r in table if (r["operation"], r["members"]) in loose)
        assert differ > 0
        # every run at once (the upload is its own series) and a slice, both scorings, both paths
        for scoring in A.SCORINGS:
            _same(lambda: metrics_table(con, None, {}, scoring, VIEW))
            _same(lambda: metrics_table(con, None, {"operation": ["union"], "size_a": [2]}, scoring, VIEW))


def test_a_version_10_store_gets_strict_metrics_on_migration(tmp_path, solver_store):
    """A store whose strict rows of agg_counts hold the lenient metrics (as version 10 kept them) is recounted by
    migration 11, after a backup: every aggregate then equals a fresh computation, the runs' versions (the analysis
    caches' keys) stay, and the strict table reads the same from the aggregates as from the rows."""
    import duckdb

    from core.store.schema import backups_dir

    db = tmp_path / "s.duckdb"
    ids = solver_store(str(db), [SETOPS, QUANT])
    _perturb(str(db), ids[:1], random.Random(12))
    with store.connect(str(db)) as con:
        versions = aggregates.versions(con)
        want = metrics_table(con, None, {}, "strict", VIEW)
    con = duckdb.connect(str(db))
    try:
        sets = ", ".join(f"{c} = l.{c}" for c in ("precision_sum", "precision_n", "recall_sum", "recall_n",
                                                  "jaccard_sum", "jaccard_n"))
        con.execute(f"UPDATE agg_counts SET {sets} FROM agg_counts l WHERE agg_counts.scoring = 'strict' "
                    "AND l.scoring = 'lenient' AND l.run_id = agg_counts.run_id AND l.config_id = agg_counts.config_id")
        con.execute("DELETE FROM schema_version WHERE version = 11")
        assert aggregates.check(con) != []          # what version 10 stored is not what this code counts
    finally:
        con.close()
    with store.connect(str(db)) as con:
        assert 11 in {r[0] for r in con.execute("SELECT version FROM schema_version").fetchall()}
        assert aggregates.check(con) == []
        assert aggregates.versions(con) == versions
        _close(json.loads(json.dumps(_same(lambda: metrics_table(con, None, {}, "strict", VIEW)))),
               json.loads(json.dumps(want)))
    assert [p.name for p in backups_dir(db).iterdir() if p.name.startswith("before-v11-")]

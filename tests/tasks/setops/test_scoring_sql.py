"""The DuckDB SQL definitions of the A4 error table agree with the pure-Python reference, on a real DuckDB file."""

import random

import pytest

from core.tasks.setops.parse import parse_set
from core.tasks.setops.scoring import (
    AGG_SQL,
    ROW_SQL,
    apply_operation,
    error_fields,
    error_summary,
    set_metrics,
    strict_scores,
    top_gl_sql,
)

duckdb = pytest.importorskip("duckdb")


def _random_results(n=600, seed=7):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a = rng.sample(range(20), rng.randint(0, 6))
        b = rng.sample(range(20), rng.randint(0, 6))
        op = rng.choice(["union", "intersection", "difference", "symmetric_difference"])
        truth = list(apply_operation(op, a, b))
        roll = rng.random()
        if roll < 0.45:
            answer = truth
        elif roll < 0.55:
            answer = None
        elif roll < 0.65:
            answer = []
        else:
            answer = rng.sample(range(25), rng.randint(0, 5))
        m = set_metrics(truth, answer, a, b)
        rows.append({"op": op, "grp": i % 3, **m})
    return rows


@pytest.fixture()
def con(tmp_path):
    import pandas as pd

    c = duckdb.connect(str(tmp_path / "scoring.duckdb"))
    rows = _random_results()
    frame = pd.DataFrame([{"op": r["op"], "grp": r["grp"], "correct": r["correct"],
                           "followed": r["answer_len"] is not None, "truth_len": r["truth_len"],
                           "answer_len": r["answer_len"], "made_up": r["made_up"], "empty_truth": r["empty_truth"],
                           "jaccard": r["jaccard"]} for r in rows])
    frame["answer_len"] = frame["answer_len"].astype("Int64")
    c.register("frame", frame)
    c.execute("CREATE TABLE results AS SELECT op::VARCHAR AS op, grp::INTEGER AS grp, correct::BOOLEAN AS correct, "
              "followed::BOOLEAN AS followed, truth_len::INTEGER AS truth_len, answer_len::INTEGER AS answer_len, "
              "made_up::INTEGER AS made_up, empty_truth::BOOLEAN AS empty_truth, jaccard::DOUBLE AS jaccard "
              "FROM frame")
    c.unregister("frame")
    yield c, rows
    c.close()


def test_row_sql_matches_error_fields(con):
    c, rows = con
    cols = ", ".join(f"{expr} AS {name}" for name, expr in ROW_SQL.items())
    got = c.execute(f"SELECT {cols} FROM results").fetchall()
    for r, g in zip(rows, got):
        assert dict(zip(ROW_SQL, g)) == error_fields(r)


def test_agg_sql_matches_error_summary_per_group(con):
    c, rows = con
    cols = ", ".join(f"{expr} AS {name}" for name, expr in AGG_SQL.items())
    got = c.execute(f"SELECT op, {cols} FROM results GROUP BY op ORDER BY op").fetchall()
    assert len(got) == 4
    for op, *vals in got:
        ref = error_summary([r for r in rows if r["op"] == op])
        for name, v in zip(AGG_SQL, vals):
            if isinstance(ref[name], float):
                assert v == pytest.approx(ref[name], abs=0.011), name
            else:
                assert v == ref[name], name


@pytest.mark.parametrize("correct", [True, False])
def test_top_gl_sql_matches_error_summary(con, correct):
    c, rows = con
    got = c.execute(top_gl_sql("results", ["op"], correct=correct)).fetchall()
    key = "top_correct" if correct else "top_mistakes"
    for op in sorted({r["op"] for r in rows}):
        ref = error_summary([r for r in rows if r["op"] == op])[key]
        mine = [(gl, share) for o, gl, n, share, rank in got if o == op]
        assert [g for g, _ in mine] == [g for g, _ in ref]
        assert [s for _, s in mine] == pytest.approx([s for _, s in ref], abs=0.011)
    ungrouped = c.execute(top_gl_sql("results", correct=correct, k=2)).fetchall()
    assert [(gl, share) for gl, n, share, rank in ungrouped] == [
        (g, pytest.approx(s, abs=0.011)) for g, s in error_summary(rows, k=2)[key]]


def test_parsed_answers_feed_the_sql(con):
    c, _ = con
    a, b = [3, 9], [9, 27]
    truth = apply_operation("intersection", a, b)
    responses = ["<answer>{9}</answer>", "<answer>{9, 100}</answer>", "<answer>{}</answer>", "no idea"]
    for resp in responses:
        m = set_metrics(truth, parse_set(resp, "numbers").members, a, b)
        c.execute("INSERT INTO results VALUES ('probe', 9, ?, ?, ?, ?, ?, ?, ?)",
                  [m["correct"], m["answer_len"] is not None, m["truth_len"], m["answer_len"], m["made_up"],
                   m["empty_truth"], m["jaccard"]])
    got = c.execute(f"SELECT {AGG_SQL['n_correct']}, {AGG_SQL['made_up_sum']}, {AGG_SQL['did_not_follow']}, "
                    f"{AGG_SQL['spurious_empty']} FROM results WHERE op = 'probe'").fetchone()
    assert got == (1, 1, 1, 1)


def test_strict_metric_sql_equals_strict_scores(tmp_path):
    """The strict partial credit in SQL (what the store sums per configuration: core/store/aggregates.py) and in
    Python agree item by item on a real DuckDB file: numbers and words, mixed case, "4" and 4, duplicates, empty
    truths and answers, answers that did not follow the rule (NULL), truths that are not JSON lists."""
    import json

    from core.store.aggregates import strict_metric_sql, with_strict_parts

    rng = random.Random(3)
    pool = [1, 2, 3, 4, 5, "4", "cat", "Cat", "dog", "ant"]
    pairs = [("[1, 2, 3]", "[2, 3, 4, 5]"), ("[1, 2]", None), ("[]", "[]"), ('["Cat"]', '["cat"]'), ("[1]", "[]"),
             ("[]", "[1]"), ("not json", "[1]"), ('{"a": 1}', "[]"), (None, "[]"), ('["4"]', "[4]"),
             ("[1, 1, 2]", "[1, 1]"), ("[1, 2]", "not json")]
    for _ in range(400):
        truth = json.dumps(rng.sample(pool, rng.randint(0, 5)))
        parsed = None if rng.random() < 0.15 else json.dumps(
            [rng.choice(pool) for _ in range(rng.randint(0, 6))])
        pairs.append((truth, parsed))
    con = duckdb.connect(str(tmp_path / "strict.duckdb"))
    con.execute("CREATE TABLE t (i INTEGER, truth VARCHAR, parsed VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, t, a) for i, (t, a) in enumerate(pairs)])
    metrics = ", ".join(strict_metric_sql(m) for m in ("precision", "recall", "jaccard"))
    got = con.execute(f"SELECT {metrics} FROM {with_strict_parts('t', 'truth', 'parsed')} ORDER BY i").fetchall()
    for (truth, parsed), row in zip(pairs, got):
        assert row == pytest.approx(strict_scores(truth, parsed), abs=1e-12), (truth, parsed)
    assert len(got) == len(pairs)

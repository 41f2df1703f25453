"""Issue 22 (item 1): imports are re-scored. A file's own verdict columns never decide: the truth is recomputed from
the operands and operation, both verdicts from the response; the file's verdicts are kept as claimed_*; the
disagreements are counted, printed by the CLI and stored with the run."""

from __future__ import annotations

import csv
import json

import pandas as pd

from core import runner, store

CFG = {"task": "setops", "seed": 4, "samples": 5, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
REF_HEADER = ["op_name", "prompt", "ground_truth", "result_obj", "llm_vs_gt", "set_A", "set_B",
              "context_length_in", "context_length_out", "log_context"]


def test_a_forged_export_is_judged_by_its_responses(cli, tmp_path):
    db, db2 = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    p = runner.run(CFG, "reference/solver", db_path=db)
    out = tmp_path / "export.csv"
    assert cli("export", "--run", p.run_id, "--out", out, "--db", db).returncode == 0
    df = pd.read_csv(out)
    assert df["correct"].all() and df["correct_strict"].all()
    df["response"] = "<answer>{1}</answer>"        # every answer changed, the verdict columns left alone
    forged = tmp_path / "forged.csv"
    df.to_csv(forged, index=False)
    done = cli("import", forged, "--db", db2)
    assert done.returncode == 0, done.stderr
    assert "10 row(s) claim correct, the response says otherwise" in done.stderr, done.stderr
    with store.connect(db2) as con:
        got = con.execute("SELECT count(*), sum(CAST(correct AS INT)), sum(CAST(correct_strict AS INT)), "
                          "sum(CAST(claimed_correct AS INT)), sum(made_up) FROM v_results").fetchall()[0]
        run_json = con.execute("SELECT run_json FROM runs").fetchall()[0][0]
    assert got[0] == 10 and got[1] == 0 and got[2] == 0 and got[3] == 10    # ours: all wrong; the file's claim kept
    assert got[4] > 0                                  # {1} is a made-up member on most items
    assert json.loads(run_json)["meta"]["rescored"]["claims_right_but_wrong"] == 10


def test_a_reference_csv_with_edited_answers_and_a_wrong_truth(cli, tmp_path):
    path = tmp_path / "results" / "numbers" / "union" / "baseline" / "formal_language_K-0_N-None_MA-2_MB-2_L-2_S-1.csv"
    path.parent.mkdir(parents=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(REF_HEADER)
        w.writerow(["union", "p1 {12, 40} {40, 77}", "{12, 40, 77}", "{12, 40, 77}", True, "{12, 40}", "{40, 77}", 1, 1, ""])
        w.writerow(["union", "p2 {1, 2} {2, 3}", "{1, 2, 3}", "{9}", True, "{1, 2}", "{2, 3}", 1, 1, ""])       # forged verdict
        w.writerow(["union", "p3 {5, 6} {6, 7}", "{5}", "{5}", True, "{5, 6}", "{6, 7}", 1, 1, ""])             # forged truth
        w.writerow(["union", "p4 {8} {9}", "{8, 9}", "{8, 9}", False, "{8}", "{9}", 1, 1, ""])            # modest file
    db = tmp_path / "s.duckdb"
    done = cli("import", path, "--db", db)
    assert done.returncode == 0, done.stderr
    assert "2 row(s) claim correct, the response says otherwise" in done.stderr
    assert "1 row(s) claim wrong, the response is right" in done.stderr
    assert "1 row(s) give a truth that is not the operation's result" in done.stderr
    with store.connect(db) as con:
        rows = con.execute("SELECT prompt, truth, correct, correct_strict, claimed_correct FROM v_results "
                           "ORDER BY idx").fetchall()
    verdicts = [(r[0][:2], r[2], r[3], r[4]) for r in rows]
    assert verdicts == [("p1", True, True, True), ("p2", False, False, True), ("p3", False, False, True),
                        ("p4", True, True, False)]
    assert json.loads(rows[2][1]) == [5, 6, 7]        # the truth is the union of the operands, not the file's


def test_two_runs_never_pool_their_mistakes_in_the_error_table(cli, tmp_path):
    """Issue 22, item 2: with two runs selected the error table has one block per model (page, report errors and
    report html all use this table)."""
    from core.analysis import error_table, reference_error_table
    from tests.support.loopback import LoopbackServer

    db = tmp_path / "s.duckdb"
    good = runner.run(CFG, "reference/solver", db_path=db)
    srv = LoopbackServer(0.001, answer="<answer>{1}</answer>").start()
    try:
        bad = runner.run(CFG, "openai-compatible/wrong", db_path=db, base_url=srv.base_url)
    finally:
        srv.stop()
    with store.connect(db) as con:
        ours = error_table(con, [good.run_id, bad.run_id], by=["operation"], scoring="strict")
        theirs = reference_error_table(con, [good.run_id, bad.run_id], by=["operation"])
    assert set(ours["model"]) == {"reference/solver", "openai-compatible/wrong"} and len(ours) == 4
    acc = dict(zip(zip(ours["model"], ours["operation"]), ours["accuracy"]))
    assert acc[("reference/solver", "union")] == 100 and acc[("openai-compatible/wrong", "union")] == 0
    assert list(theirs.columns[:2]) == ["model", "operation"] and len(theirs) == 4
    done = cli("report", "errors", "--run", f"{good.run_id},{bad.run_id}", "--by", "operation", "--out",
                tmp_path / "e.csv", "--db", db)
    assert done.returncode == 0, done.stderr
    assert pd.read_csv(tmp_path / "e.csv")["model"].nunique() == 2


def test_our_own_export_imported_back_is_the_run_it_came_from(cli, tmp_path):
    """Issue 22, item 5: re-importing our own export (CSV, Parquet or JSONL) names the stored run instead of
    making a second one; a forged copy of it is a new run."""
    db = tmp_path / "s.duckdb"
    p = runner.run(CFG, "reference/solver", db_path=db)
    for ext in ("csv", "parquet", "jsonl"):
        out = tmp_path / f"e.{ext}"
        assert cli("export", "--run", p.run_id, "--out", out, "--db", db).returncode == 0
        done = cli("import", out, "--db", db)
        assert done.returncode == 0 and f"already stored as run {p.run_id}" in done.stdout, (ext, done.stdout)
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 1
    df = pd.read_csv(tmp_path / "e.csv")
    df.loc[0, "response"] = "<answer>{}</answer>"
    df.to_csv(tmp_path / "edited.csv", index=False)
    done = cli("import", tmp_path / "edited.csv", "--db", db)
    assert done.returncode == 0 and "imported 10 rows" in done.stdout, done.stdout


def test_an_import_is_named_by_the_files_name_column(tmp_path):
    from core.store.exports import export_run
    from core.store.io import import_results

    db, db2 = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    p = runner.run(CFG, "reference/solver", db_path=db, name="solver, seed 4")
    out = tmp_path / "export.csv"
    export_run(db, p.run_id, out)
    run_id, _ = import_results(db2, str(out))
    assert store.run_record(db2, run_id)["name"] == "solver, seed 4"      # not "export.csv (studio)"
    df = pd.read_csv(out)
    df.loc[df.index % 2 == 0, "name"] = "another run"                     # two names: the file's name is not one
    df.loc[0, "response"] = "<answer>{}</answer>"                         # (and other results: not the same run)
    mixed = tmp_path / "mixed.csv"
    df.to_csv(mixed, index=False)
    run_id, _ = import_results(db2, str(mixed))
    assert store.run_record(db2, run_id)["name"] == "mixed.csv (studio)"

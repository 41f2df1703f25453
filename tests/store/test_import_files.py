"""Import: SetLexSem reference result CSVs (path hyperparameters, set literals, {-1}), our own exports round-trip,
and every kind of bad file → one clear ImportFileError line, DB unchanged."""

import subprocess
import sys

import pandas as pd
import pytest

from core import runner, store
from core.errors import ImportFileError
from core.store.exports import export_run
from core.store.io import import_results, read_results_file, reference_path_meta
from tests.support import ROOT

REF_HEADER = "op_name,prompt,ground_truth,result_obj,llm_vs_gt,set_A,set_B,context_length_in,context_length_out,log_context\n"


def ref_csv(tmp_path, rows, rel="numbers/union/baseline/formal_language_K-0_N-None_MA-4_MB-4_L-2_S-292.csv"):
    path = tmp_path / "results" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(REF_HEADER + "".join(rows), encoding="utf-8")
    return path


NUM_ROWS = [
    'union,"Set A is {12, 40, 51, 77}. Set B is {3, 40, 88, 90}. Union?","{3, 12, 40, 51, 77, 88, 90}",'
    '"{3, 12, 40, 51, 77, 88, 90}",True,"{12, 40, 51, 77}","{3, 40, 88, 90}",120,30,\n',
    'union,"A is {1, 2, 3, 4}, B is {4, 5, 6, 7}","{1, 2, 3, 4, 5, 6, 7}","{1, 2, 3}",False,"{1, 2, 3, 4}","{4, 5, 6, 7}",118,12,\n',
    'union,"A is {10, 20, 30, 40}, B is {30, 40, 50, 60}","{10, 20, 30, 40, 50, 60}","{-1}",False,"{10, 20, 30, 40}","{30, 40, 50, 60}",119,80,x\n',
    'union,"A is {5, 6, 7, 8}, B is {6, 7, 8, 9}","{5, 6, 7, 8, 9}","{5, 6, 7, 8, 9, 99}",False,"{5, 6, 7, 8}","{6, 7, 8, 9}",117,25,\n',
]


def test_reference_path_meta():
    meta = reference_path_meta("study/numbers/union/baseline/formal_language_K-0_N-None_MA-4_MB-4_L-2_S-292.csv")
    assert meta == {"K": "0", "N": None, "MA": "4", "MB": "4", "L": "2", "S": "292", "phrasing": "formal_language",
                    "members": "numbers", "members_folder": "numbers", "operation": "union", "approach": "baseline"}
    meta = reference_path_meta("decile_words/intersection/chain_of_thought/plain_language_K-2_N-None_M-8_L-None_"
                               "Decile-3_S-7.csv")
    assert meta["members"] == "deciles" and meta["Decile"] == "3" and meta["M"] == "8" and meta["L"] is None
    assert reference_path_meta("just_a_file.csv") == {}
    assert reference_path_meta("/home/me/Downloads/stuff/x.csv") == {}


def test_reference_csv_import(tmp_path):
    path = ref_csv(tmp_path, NUM_ROWS)
    df, meta = read_results_file(path)
    assert meta["kind"] == "reference" and meta["rows"] == 4
    assert list(df["correct"]) == [True, False, False, False]
    assert list(df["followed"]) == [True, True, False, True]
    assert df["made_up"].tolist() == [0, 0, 0, 1]
    assert df.loc[1, "recall"] == pytest.approx(3 / 7) and df.loc[1, "precision"] == 1.0
    db = tmp_path / "i.duckdb"
    from core.cli import main

    assert main(["import", "--db", str(db), str(path)]) == 0
    with store.connect(db) as con:
        rows = con.execute(
            "SELECT operation, members, size_a, size_b, length, shots, seed, phrasing, approach, truth, set_a, "
            "parsed, correct, followed, tokens_in, source FROM v_results ORDER BY idx").fetchall()
    assert rows[0] == ("union", "numbers", 4, 4, 2, 0, 292, "formal", "baseline",   # the reference's formal_language
                       "[3,12,40,51,77,88,90]", "[12,40,51,77]", "[3, 12, 40, 51, 77, 88, 90]", True, True, 120,
                       "import:formal_language_K-0_N-None_MA-4_MB-4_L-2_S-292.csv")
    assert rows[2][11] is None and rows[2][12] is False and rows[2][13] is False     # {-1} = did not follow


def test_reference_words_and_empty_sets(tmp_path):
    rows = [
        "intersection,apple pear fig kiwi,set(),set(),True,\"{'apple', 'pear'}\",\"{'fig', 'kiwi'}\",1,1,\n",
        "intersection,apple pear kiwi,\"{'pear'}\",\"{'Pear'}\",True,\"{'apple', 'pear'}\",\"{'pear', 'kiwi'}\",1,1,\n",
    ]
    path = ref_csv(tmp_path, rows, rel="words/intersection/baseline/plain_language_K-4_N-None_MA-2_MB-2_L-None_S-1.csv")
    df, meta = read_results_file(path)
    assert df["correct"].tolist() == [True, True] and df["members"].tolist() == ["words", "words"]
    assert df["shots"].tolist() == [4, 4] and df["phrasing"].tolist() == ["plain"] * 2  # plain_language
    assert df["empty_truth"].tolist() == [True, False]


def test_export_import_round_trip(tmp_path):
    db = tmp_path / "r.duckdb"
    cfg = {"task": "setops", "samples": 3, "sizes": [2, 4], "members": ["numbers"], "seed": 9}
    p = runner.run(cfg, "reference/solver", db_path=db)
    original = store.results_df(db, p.run_id)
    cols = ["idx", "config_id", "operation", "size_a", "set_a", "truth", "prompt", "response", "parsed", "correct",
            "jaccard", "truth_len"]
    for ext in ("csv", "parquet", "jsonl"):
        out = tmp_path / f"e.{ext}"
        run_id, n = export_run(db, p.run_id, out)
        assert run_id == p.run_id and n == 24
        target = tmp_path / f"import-{ext}.duckdb"   # each format into a database of its own: a faithful round trip
        new_id, n2 = import_results(target, out)
        assert n2 == 24 and new_id.startswith("import-")
        back = store.results_df(target, new_id)
        pd.testing.assert_frame_equal(back[cols].reset_index(drop=True), original[cols].reset_index(drop=True),
                                      check_dtype=False)
        assert store.get_run(target, new_id)["model"] == "reference/solver"
    # our own export imported back into the database it came from is that run (issue 22), in every format
    for ext in ("csv", "parquet", "jsonl", "csv"):
        assert import_results(db, tmp_path / f"e.{ext}") == (p.run_id, 0)
    # elsewhere, the same results as CSV, Parquet and JSONL are one run, not three: the second and third name the first
    other = tmp_path / "other.duckdb"
    first, n = import_results(other, tmp_path / "e.csv")
    assert n == 24
    assert import_results(other, tmp_path / "e.parquet") == (first, 0)
    assert import_results(other, tmp_path / "e.jsonl") == (first, 0)
    assert import_results(other, tmp_path / "e.csv") == (first, 0)   # and the same file again


BAD_FILES = {
    "binary.csv": (b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR" + bytes(range(256)), "binary"),
    "empty.csv": (b"   \n", "empty"),
    "latin1.csv": (REF_HEADER.encode() + "union,caf\xe9,{1},{1},True,{1},{1},1,1,\n".encode("latin-1"), "UTF-8"),
    "formula.csv": ((REF_HEADER + "union,\"=cmd|' /C calc'!A0\",{1},{1},True,{1},{1},1,1,\n").encode(), "formula"),
    "columns.csv": (b"a,b,c\n1,2,3\n", "unrecognised columns"),
    "types.csv": ((REF_HEADER + "union,p,{1},{1},maybe,{1},{1},1,1,\n").encode(), "expected true or false"),
    "notaset.csv": ((REF_HEADER + "union,p,hello world,{1},True,{1},{1},1,1,\n").encode(), "not a set literal"),
    "evil.csv": ((REF_HEADER + "union,p,\"__import__('os').system('touch PWNED')\",{1},True,{1},{1},1,1,\n").encode(),
                 "not a set literal"),
    "dict.csv": ((REF_HEADER + "union,p,\"{'a': 1}\",{1},True,{1},{1},1,1,\n").encode(), "expected a set"),
    "op.csv": ((REF_HEADER + "multiply,p,{1},{1},True,{1},{1},1,1,\n").encode(), "op_name"),
    "studio.csv": (b"idx,prompt,correct\nx,p,true\n", "expected a number"),
    "dup.csv": (b"idx,prompt,correct\n1,p,true\n1,q,false\n", "repeats idx"),
    "fake.parquet": (b"PAR1 this is not parquet PAR1", "Parquet"),
    "rows.jsonl": (b'{"idx": 1, "prompt": "p", "correct": true}\nnot json\n', "line 2"),
    "data.xlsx": (b"PK\x03\x04 zip", "unsupported file type"),
}


@pytest.mark.parametrize("fname", sorted(BAD_FILES))
def test_bad_files_raise_clear_errors(tmp_path, fname, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data, expected = BAD_FILES[fname]
    with pytest.raises(ImportFileError, match=expected) as info:
        read_results_file(data, fname)
    msg = str(info.value)
    assert fname in msg and "\n" not in msg
    assert not (tmp_path / "PWNED").exists()


def test_huge_file_refused(tmp_path, monkeypatch):
    import core.store.readers as readers

    monkeypatch.setattr(readers, "MAX_IMPORT_BYTES", 1000)
    path = ref_csv(tmp_path, NUM_ROWS * 10)
    with pytest.raises(ImportFileError, match="too large"):
        read_results_file(path)
    with pytest.raises(ImportFileError, match="too large"):
        read_results_file(path.read_bytes(), "x.csv")


def test_cli_import_of_bad_file_leaves_db_unchanged(tmp_path):
    db = tmp_path / "u.duckdb"
    good = ref_csv(tmp_path, NUM_ROWS)
    assert import_results(db, good)[1] == 4

    def snapshot():
        with store.connect(db) as con:
            return [con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("runs", "items", "results")]

    before = snapshot()
    # the bad row is the last one: nothing of the good rows before it may be stored
    bad = ref_csv(tmp_path, NUM_ROWS[1:] + ['union,p,"{1}","{1}",True,"{1}",oops,1,1,\n'], rel="bad.csv")
    r = subprocess.run([sys.executable, "-m", "core", "import", "--db", str(db), str(bad)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: bad.csv: row 4") and "Traceback" not in r.stderr
    assert snapshot() == before


def test_export_filtered_view(tmp_path):
    from core.store.exports import export_view

    db = tmp_path / "r.duckdb"
    cfg = {"task": "setops", "samples": 3, "sizes": [2, 4], "members": ["numbers"], "seed": 9}
    p = runner.run(cfg, "reference/solver", db_path=db)
    n = export_view(db, tmp_path / "v.csv", run_ids=[p.run_id], filters={"operation": ["union", "difference"],
                                                                          "size_a": [4]})
    df = pd.read_csv(tmp_path / "v.csv")
    assert n == len(df) == 6 and set(df["operation"]) == {"union", "difference"} and set(df["size_a"]) == {4}
    with pytest.raises(Exception, match="not an export column"):
        export_view(db, tmp_path / "w.csv", filters={"1; DROP TABLE runs": [1]})

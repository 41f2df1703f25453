"""Export and import carry the strict verdict beside the lenient one: export columns, read back on import, computed on
import for an export that predates them (when the raw response is there), and a SetLexSem reference CSV keeps the
reference's own verdict (llm_vs_gt) and parse (result_obj, case kept)."""

from __future__ import annotations

import json

import pandas as pd

from core import store
from core.store.exports import export_run
from core.store.io import EXPORT_COLUMNS, STRICT_COLUMNS, import_results, read_results_file
from core.tasks.setops.operations import truth as set_truth
from core.tasks.setops.scoring import score_set_response, strict_fields
from tests.support.corpus_run import write_corpus_run

REF_HEADER = "op_name,prompt,ground_truth,result_obj,llm_vs_gt,set_A,set_B\n"


def _truth(it) -> list:
    return set_truth(it["operation"], it["set_a"], it["set_b"])


def test_export_places_strict_next_to_lenient_and_import_reads_them_back(tmp_path):
    db = tmp_path / "a.duckdb"
    items = write_corpus_run(db)
    cols = EXPORT_COLUMNS
    assert cols.index("parsed_strict") == cols.index("correct") + 1
    assert cols[cols.index("parsed_strict"):cols.index("parsed_strict") + 3] == [
        "parsed_strict", "followed_strict", "correct_strict"]
    for ext in ("csv", "parquet", "jsonl"):
        out = tmp_path / f"corpus.{ext}"
        export_run(db, "corpus", out)
        df, meta = read_results_file(out)
        assert meta["kind"] == "studio" and len(df) == len(items)
        for it, row in zip(items, df.to_dict("records")):
            # imports are re-scored (issue 22): the truth is the operation's result on the operands, which the
            # corpus run's made-up truths are not — so the verdict read back is the one against that truth
            want = strict_fields(_truth(it), it["set_a"], it["set_b"], it["response"])
            if ext == "csv" and it["response"] == "":   # CSV cannot tell an empty reply from none: a claim only
                want = dict.fromkeys(want)
            got = {k: (None if isinstance(row[k], float) and pd.isna(row[k]) else row[k]) for k in STRICT_COLUMNS}
            if got["parsed_strict"] is not None:
                got["parsed_strict"] = json.dumps(json.loads(got["parsed_strict"]), ensure_ascii=False)
            assert got == want, (ext, it["response"])
        db2 = tmp_path / f"b_{ext}.duckdb"
        run_id, _ = import_results(db2, out)
        with store.connect(db2) as con:
            back = con.execute("SELECT count(*) FILTER (WHERE correct_strict), count(*) FILTER (WHERE correct) "
                               "FROM v_results WHERE run_id = ?", [run_id]).fetchall()[0]
        rescored = [score_set_response({**it, "truth": _truth(it)}, it["response"]) for it in items
                    if ext != "csv" or it["response"] != ""]
        expected = (sum(bool(r["correct_strict"]) for r in rescored), sum(bool(r["correct"]) for r in rescored))
        assert back == expected and back[0] != back[1]


def test_import_of_an_older_export_computes_strict_from_the_response(tmp_path):
    db = tmp_path / "a.duckdb"
    items = write_corpus_run(db)
    out = tmp_path / "old.csv"
    export_run(db, "corpus", out)
    old = pd.read_csv(out, dtype=str, keep_default_na=False).drop(columns=list(STRICT_COLUMNS))
    old.to_csv(out, index=False)
    df, _ = read_results_file(out)
    for it, row in zip(items, df.to_dict("records")):
        if not it["response"]:   # CSV cannot tell an empty response from none: no verdict is computed for it
            assert pd.isna(row["correct_strict"])
            continue
        assert row["correct_strict"] == strict_fields(_truth(it), it["set_a"], it["set_b"],
                                                      it["response"])["correct_strict"], it["response"]
    # without the raw response there is nothing to judge: no verdict at all, the file's lenient one kept as its claim
    old.drop(columns=["response"]).to_csv(out, index=False)
    df, meta = read_results_file(out)
    assert df["correct_strict"].isna().all() and df["correct"].isna().all() and df["claimed_correct"].notna().all()
    assert meta["rescored"]["claimed_only"] == meta["rescored"]["only_response"] == len(items)


def test_reference_csv_keeps_the_reference_verdict_and_case(tmp_path):
    path = tmp_path / "words" / "union" / "baseline" / "formal_language_K-0_N-None_M-2_L-None_S-292.csv"
    path.parent.mkdir(parents=True)
    path.write_text(REF_HEADER
                    + "union,p1 A: {cat} B: {dog},\"{'cat', 'dog'}\",\"{'Cat', 'dog'}\",False,\"{'cat'}\",\"{'dog'}\"\n"
                    + "union,p2 A: {cat} B: {dog},\"{'cat', 'dog'}\",\"{'cat', 'dog'}\",True,\"{'cat'}\",\"{'dog'}\"\n"
                    + "union,p3 A: {cat} B: {dog},\"{'cat', 'dog'}\",{-1},False,\"{'cat'}\",\"{'dog'}\"\n", encoding="utf-8")
    df, meta = read_results_file(path)
    assert meta["kind"] == "reference"
    assert df["correct"].tolist() == [True, True, False]            # ours lower-cases 'Cat'
    assert df["correct_strict"].tolist() == [False, True, False]    # the reference's reading, judged by us
    assert df["claimed_correct"].tolist() == [False, True, False]   # its llm_vs_gt, kept as the claim
    assert [None if pd.isna(v) else v for v in df["parsed_strict"]] == ['["Cat", "dog"]', '["cat", "dog"]', None]
    assert df["made_up_strict"].tolist() == [1, 0, 0] and df["followed_strict"].tolist() == [True, True, False]

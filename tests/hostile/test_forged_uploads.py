"""Forged uploads are re-scored row by row or kept as claims row by row, never counted as re-scored when they cannot be
checked. Each case is an export of a real run (a stand-in model answering ``{1}`` through the OpenAI-compatible
path, so most of its answers are wrong), every response set to ``<answer>{zzz}</answer>`` and every verdict to true,
plus one change — the forgeries an adversarial pass made. Also: a self-consistent forgery of prompts the store holds
real replies to, a file mixing two models, an edited copy of a stored run naming it by its run_id column, and
strict verdicts that disagree while the lenient ones agree."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import runner, store
from core.store.exports import export_run
from core.store.io import import_file
from core.store.rescore import import_check
from core.tasks.setops.operations import truth as set_truth
from core.tasks.setops.scoring import solve

CFG = {"task": "setops", "seed": 4, "samples": 10, "operations": ["union", "intersection", "difference",
                                                                  "symmetric_difference"],
       "sizes": [2], "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"],
       "shots": [0]}
MODEL = "openai-compatible/answers-one"
N = 80


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A store holding a run made here (80 items) and its CSV export, as a DataFrame."""
    from tests.support.loopback import LoopbackServer

    tmp = tmp_path_factory.mktemp("forged")
    db = tmp / "here.duckdb"
    srv = LoopbackServer(0.001, answer="<answer>{1}</answer>").start()
    try:
        run_id = runner.run(CFG, MODEL, db_path=db, base_url=srv.base_url).run_id
    finally:
        srv.stop()
    out = tmp / "export.csv"
    export_run(db, run_id, out)
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(df) == N
    return {"db": db, "run_id": run_id, "df": df, "tmp": tmp}


def _forged(made) -> pd.DataFrame:
    df = made["df"].copy()
    df["response"] = "<answer>{zzz}</answer>"
    df["correct"] = df["correct_strict"] = "true"
    return df


def _import(made, df: pd.DataFrame, name: str):
    path = made["tmp"] / name
    df.to_csv(path, index=False)
    runs = import_file(made["db"], path)
    assert len(runs) == 1 and runs[0].rows == N, runs
    run_id = runs[0].run_id
    rec = json.loads(store.get_run(made["db"], run_id)["run_json"])["meta"]["rescored"]
    return run_id, rec, import_check(made["db"], run_id)


def test_the_plain_forgery_is_judged_by_its_responses(made):
    run_id, counts, check = _import(made, _forged(made), "plain.csv")
    assert counts["rescored"] == N and counts["claims_right_but_wrong"] == N
    assert counts["claims_right_but_wrong_strict"] == N
    assert check["accuracy"] == 0.0 and check["claimed"] == 100.0


@pytest.mark.parametrize("case, change, reason", [
    ("columns", lambda df: df[["idx", "prompt", "correct", "response"]], "task"),
    ("task", lambda df: df.assign(task="setopsX"), "task"),
    ("operation", lambda df: df.assign(operation="Union"), "operation"),
    ("set_a_empty", lambda df: df.assign(set_a=""), "operands"),
    ("set_a_text", lambda df: df.assign(set_a='"x"'), "operands"),
    ("set_a_mixed", lambda df: df.assign(set_a='[1, "a"]'), "operands"),
    ("quantifiers", lambda df: df.assign(task="quantifiers"), "operands"),
])
def test_a_row_that_cannot_be_checked_is_a_claim_only(made, case, change, reason):
    run_id, counts, check = _import(made, change(_forged(made)), f"{case}.csv")
    assert counts["rescored"] == 0 and counts["claimed_only"] == N and counts[f"only_{reason}"] == N, counts
    assert check["accuracy"] is None and check["accuracy_strict"] is None and check["rows"] == 0   # nothing judged
    assert check["claimed"] == 100.0 and "claim only, not re-scored" in check["text"]
    with store.connect(made["db"]) as con:
        answered = con.execute("SELECT sum(n), sum(n_correct) FROM agg_counts WHERE run_id = ?",
                               [run_id]).fetchall()[0]
    assert answered == (0, 0)     # no view counts a claim as an answer


def test_a_row_with_an_error_is_never_correct(made):
    from core.analysis import error_table

    run_id, counts, check = _import(made, _forged(made).assign(error="boom"), "error.csv")
    assert counts["failed"] == N and counts["rescored"] == 0
    assert check["accuracy"] is None and "carry an error" in check["text"]
    with store.connect(made["db"]) as con:
        assert con.execute("SELECT count(*) FILTER (WHERE correct), count(*) FILTER (WHERE correct_strict) "
                           "FROM v_results WHERE run_id = ?", [run_id]).fetchall()[0] == (0, 0)
        table = error_table(con, [run_id], by=["operation"], scoring="strict")
    assert not (table.get("accuracy", pd.Series(dtype=float)) == 100).any()


def test_reference_layout_with_mixed_operands_is_a_claim_only(made):
    path = made["tmp"] / "formal_language_K-0_N-None_MA-2_MB-2_L-2_S-1.csv"
    rows = ["op_name,prompt,ground_truth,result_obj,llm_vs_gt,set_A,set_B"]
    for i in range(N):
        rows.append(f"union,\"A is {{1, 'a'}}, B is {{{i}}}\",\"{{1, 'a', {i}}}\",\"{{1, 'a', {i}}}\",True,"
                    f"\"{{1, 'a'}}\",\"{{{i}}}\"")
    path.write_text("\n".join(rows) + "\n")
    run_id = import_file(made["db"], path)[0].run_id
    check = import_check(made["db"], run_id)
    assert check["accuracy"] is None and check["rows"] == 0
    assert "80 row(s) are claim only" in check["summary"] and "operands missing, mixed" in check["summary"]


def test_strict_claims_are_checked_too(made):
    """The solver's answers, lenient claims right, strict claims flipped on 10 rows: the summary says so."""
    df = made["df"].copy()
    items = df.to_dict("records")
    df["response"] = [solve({"truth": set_truth(r["operation"], json.loads(r["set_a"]), json.loads(r["set_b"])),
                             "members": r["members"]}) for r in items]
    df["correct"] = df["correct_strict"] = "true"
    df.loc[df.index < 10, "correct_strict"] = "false"
    run_id, counts, check = _import(made, df, "strict.csv")
    assert counts["rescored"] == N and counts["claims_right_but_wrong"] == 0
    assert counts["claims_wrong_but_right_strict"] == 10
    assert "10 row(s) claim wrong under strict scoring, the response is right" in check["summary"]
    assert "every verdict" not in check["summary"]


def test_a_self_consistent_forgery_disagrees_with_the_models_stored_replies(made):
    """Right answers put in the model's mouth for prompts it answered here: re-scored 100 %, and flagged 80 of 80
    against its own stored replies; with the operands and truth edited too, the prompts no longer render from the
    items and every row is a claim only."""
    df = made["df"].copy()
    items = df.to_dict("records")
    df["response"] = [solve({"truth": json.loads(r["truth"]), "members": r["members"]}) for r in items]
    df["correct"] = df["correct_strict"] = "true"
    df = df.drop(columns=["run_id"])
    run_id, counts, check = _import(made, df, "consistent.csv")
    assert check["accuracy_strict"] == 100.0
    assert counts["own_compared"] == N and counts["own_differ"] == N and counts["own_verdict_differ"] > 0
    assert f"{N} of {N} row(s) differ from this model's own replies stored here" in check["summary"]
    # operands, truth and responses edited consistently, the prompt unchanged
    df["set_a"] = [json.dumps([*json.loads(a)[:1], 99999] if r["members"] == "numbers" else
                              [*json.loads(a)[:1], "zzz"]) for a, r in zip(df["set_a"], items)]
    df["truth"] = [json.dumps(set_truth(r["operation"], json.loads(a), json.loads(r["set_b"])))
                   for a, r in zip(df["set_a"], items)]
    df["response"] = [solve({"truth": json.loads(t), "members": r["members"]}) for t, r in zip(df["truth"], items)]
    run_id, counts, check = _import(made, df, "consistent-operands.csv")
    assert counts["only_prompt"] == N and check["accuracy"] is None
    assert counts["own_compared"] == N and counts["own_differ"] == N


def test_a_file_mixing_two_models_makes_one_run_per_model(made):
    df = made["df"].copy()
    df.loc[df.index % 2 == 1, "model"] = "openai-compatible/another"
    df = pd.concat([df, made["df"].assign(model="openai-compatible/third", response="<answer>{}</answer>")])
    path = made["tmp"] / "mixed.csv"
    df.to_csv(path, index=False)
    runs = import_file(made["db"], path)
    assert sorted(r.model for r in runs) == sorted([MODEL, "openai-compatible/another", "openai-compatible/third"])
    assert sorted(r.rows for r in runs) == [N // 2, N // 2, N]
    for r in runs:
        assert store.get_run(made["db"], r.run_id)["model"] == r.model
        with store.connect(made["db"]) as con:
            assert con.execute("SELECT count(DISTINCT model), count(*) FROM v_results WHERE run_id = ?",
                               [r.run_id]).fetchall()[0] == (1, r.rows)


def test_an_edited_copy_of_a_stored_run_says_which_run_it_differs_from(made):
    df = made["df"].copy()
    df.loc[df.index < 45, "response"] = "<answer>{}</answer>"
    run_id, counts, check = _import(made, df, "edited-copy.csv")
    assert run_id != made["run_id"]
    assert counts["source_compared"] == N and counts["source_differ"] == 45
    assert f"the file names stored run {made['run_id']}: 45 of {N} response(s) differ" in check["summary"]
    assert check["disagreements"] >= 45


def test_quantifier_rows_are_re_checked_from_their_scenario(tmp_path):
    """A quantifier export imports fully re-scored (the prompt re-rendered from the scenario's values); a forged
    label is a truth that differs, an edited count no longer renders the prompt (claim only)."""
    import yaml

    from tests.support import ROOT

    cfg = yaml.safe_load((ROOT / "data" / "configs" / "quantifiers_small.yaml").read_text())
    cfg.update(samples=2, nouns_per_group=1)
    db = tmp_path / "q.duckdb"
    run_id = runner.run(cfg, "reference/solver", db_path=db, limit=24).run_id
    export_run(db, run_id, tmp_path / "q.csv")
    df = pd.read_csv(tmp_path / "q.csv", dtype=str, keep_default_na=False)
    n = len(df)
    other = tmp_path / "other.duckdb"
    first = import_file(other, tmp_path / "q.csv")[0]
    counts = json.loads(store.get_run(other, first.run_id)["run_json"])["meta"]["rescored"]
    assert counts["rescored"] == n and counts["claimed_only"] == 0
    forged = df.assign(label=["false" if v == "true" else "true" for v in df["label"]],
                       truth=["false" if v == "true" else "true" for v in df["truth"]])
    forged.loc[forged.index < 3, "count_asked"] = "999"
    forged.to_csv(tmp_path / "forged.csv", index=False)
    run = import_file(other, tmp_path / "forged.csv")[0]
    counts = json.loads(store.get_run(other, run.run_id)["run_json"])["meta"]["rescored"]
    assert counts["only_operands"] == 3 and counts["rescored"] == n - 3
    assert counts["truth_differs"] == n - 3 and counts["claims_right_but_wrong"] == 0   # the solver's replies stand


def test_a_file_naming_too_many_models_is_one_error_line(tmp_path):
    from core.errors import ImportFileError
    from core.store.io import MAX_MODELS

    rows = "".join(json.dumps({"idx": i, "prompt": "p", "correct": True, "model": f"m{i}"}) + "\n"
                   for i in range(MAX_MODELS + 1))
    with pytest.raises(ImportFileError, match=f"more than {MAX_MODELS} models"):
        import_file(tmp_path / "s.duckdb", rows.encode(), "many.jsonl")
    with store.connect(tmp_path / "s.duckdb") as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0


def test_findings_report_names_each_run_with_its_provenance(tmp_path):
    """``report findings`` (JSON, Markdown, HTML) names every run it read as made here or uploaded."""
    from core.analysis import findings, findings_view

    db = tmp_path / "p.duckdb"
    cfg = {"task": "setops", "seed": 3, "samples": 2, "sizes": [2], "members": ["numbers"],
           "operations": ["union", "intersection"]}
    made = runner.run(cfg, "reference/solver", db_path=db).run_id
    export_run(db, made, tmp_path / "e.csv")
    text = (tmp_path / "e.csv").read_text().replace("reference/solver", "someone/else")
    (tmp_path / "u.csv").write_text(text)
    uploaded = import_file(db, tmp_path / "u.csv")[0].run_id
    with store.connect(db) as con:
        rep = findings.report(con, [made, uploaded])
        page = findings_view.to_html(con, rep, [made, uploaded])
    assert {(r["run_id"], r["provenance"]) for r in rep["provenance"]} == {(made, "made here"),
                                                                          (uploaded, "uploaded")}
    md = findings_view.to_markdown(rep)
    for text in (md, page):
        assert f"{made} (reference/solver, made here)" in text and f"{uploaded} (someone/else, uploaded)" in text

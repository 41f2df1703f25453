"""Every dashboard page under Streamlit's AppTest, through app.py's navigation: on an empty DB and on a DB with runs;
a run started from the Set operations page with reference/solver ends at 100 % accuracy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support import ROOT  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core import runner, store  # noqa: E402

PAGES = ["pages/home.py", "pages/set_operations.py", "pages/deceptive_sets.py", "pages/results.py",
         "pages/compare.py", "pages/runs.py"]
SMALL = {"task": "setops", "seed": 1, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
         "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture()
def db(tmp_path, monkeypatch):
    path = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", path)
    return path


def labels(elements) -> list[str]:
    return [e.label for e in elements]


@pytest.mark.slow
def test_every_page_on_an_empty_db(db, open_page):
    home = open_page("pages/home.py")
    assert any("reference solver" in b for b in labels(home.button))
    assert any("SmolLM2" in m.value for m in home.markdown)

    so = open_page("pages/set_operations.py")
    assert {"Operations", "Token type (members)", "Prompting approach", "Operand sizes |A| = |B|"} <= \
        set(labels(so.button_group))
    assert "Model" in labels(so.selectbox)
    assert "Run" in labels(so.button)
    assert {m.label for m in so.metric} >= {"Items", "Configurations", "Calls to make", "Cost (est.)"}

    dec = open_page("pages/deceptive_sets.py")
    assert dec.title[0].value == "Deceptive sets"
    assert dec.selectbox or dec.info  # the pair pickers, or a message that the groups are missing

    res = open_page("pages/results.py")
    assert any("No runs yet" in i.value for i in res.info)

    cmp_ = open_page("pages/compare.py")
    assert len(cmp_.get("file_uploader")) == 1
    runs = open_page("pages/runs.py")
    assert any("No runs yet" in i.value for i in runs.info)
    assert not store.list_runs(db).shape[0]


@pytest.mark.slow
def test_set_operations_run_with_the_solver_reaches_100_percent(db, open_page):
    at = open_page("pages/set_operations.py")
    at.selectbox(key="so_m_model").set_value("reference/solver")
    at.button_group(key="so_ops").set_value(["union", "intersection", "symmetric_difference"])
    at.button_group(key="so_sizes").set_value([2, 4])
    at.button_group(key="so_members").set_value(["numbers", "words"])
    at.number_input(key="so_samples").set_value(4)
    at.run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Items"] == "48"
    at.button(key="so_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state["so_run_id"]
    progress = runner.get_handle(run_id).wait(120)
    assert progress.status == "done" and progress.done == 48 and progress.correct == 48
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Accuracy"] == "100.0 %"
    assert metrics["Done"] == "48"
    # another browser tab (a new session) sees the same run's progress through the URL
    other = open_page("pages/set_operations.py", {"run": run_id})
    assert {m.label: m.value for m in other.metric}["Done"] == "48"
    # the run is in the DB and the Results page shows it at 100 %
    res = open_page("pages/results.py", {"runs": run_id})
    overview = res.dataframe[0].value
    assert float(overview["Accuracy %"].iloc[0]) == 100.0
    assert len(res.get("plotly_chart")) >= 1


@pytest.fixture()
def db_with_runs(db):
    a = runner.run(SMALL, "reference/solver", db_path=db)
    # a second run on the same items whose answers are partly wrong: an imported copy with flipped rows
    import pandas as pd

    from core.store.exports import export_run
    from core.store.io import import_results

    out = Path(db).with_name("a.csv")
    export_run(db, a.run_id, out)
    df = pd.read_csv(out)
    wrong = df.index % 3 == 0
    df.loc[wrong, "correct"] = False
    df.loc[wrong, "response"] = "<answer>{}</answer>"
    df.loc[wrong, "model"] = "flaky/model"
    df["model"] = "flaky/model"
    df.to_csv(out, index=False)
    b, _ = import_results(db, out.read_bytes(), "flaky.csv")
    return db, a.run_id, b


@pytest.mark.slow
def test_pages_with_runs(db_with_runs, open_page):
    db, a, b = db_with_runs
    res = open_page("pages/results.py", {"runs": f"{a},{b}"})
    # violins, then robustness (or, when no factor moves accuracy, the caveat that replaces an empty chart); one
    # view at a time, chosen by the radio (in the URL)
    assert len(res.get("plotly_chart")) == 1
    res.radio(key="res_view").set_value("robustness").run()
    assert len(res.get("plotly_chart")) == 1 or any("spread 0" in i.value for i in res.info)
    res.radio(key="res_view").set_value("violins").run()
    assert res.selectbox(key="res_x").value == "operation"
    overview = res.dataframe[0].value
    assert sorted(overview["Accuracy %"].round(1).tolist())[-1] == 100.0
    res.selectbox(key="res_color").set_value("members").run()
    assert not res.exception
    res.selectbox(key="res_ref").set_value("setlexsem_by_operation").run()
    assert not res.exception
    assert any("SetLexSem Challenge, Appendix Table 4" in c.value for c in res.caption)
    res.radio(key="res_view").set_value("errors").run()
    res.multiselect(key="res_by").set_value(["operation", "size_a"]).run()
    assert not res.exception
    assert res.query_params["by"] == "operation,size_a" and res.query_params["view"] == "errors"

    cmp_ = open_page("pages/compare.py", {"runs": f"{a},{b}"})
    m = {x.label: x.value for x in cmp_.metric}
    assert "B − A (points)" in m and "p" in m and "McNemar exact p" not in m   # tested over draws, not items
    assert m["Shared items"] == "24"

    runs = open_page("pages/runs.py", {"run": a})
    assert len(runs.get("download_button")) == 2  # data export + YAML
    assert any(b_.label == "Delete run" for b_ in runs.button)

    home = open_page("pages/home.py")
    so = open_page("pages/set_operations.py")
    assert not home.exception and not so.exception


REF_HEADER = "op_name,prompt,ground_truth,result_obj,llm_vs_gt,set_A,set_B\n"


def bad_files() -> list[tuple[str, bytes]]:
    import gzip
    import io
    import zipfile

    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("a.csv", "idx,prompt,correct\n1,x,true\n")
    huge_set = "{" + ", ".join(str(i) for i in range(40000)) + "}"
    return [
        ("wrong_columns.csv", b"a,b,c\n1,2,3\n"),
        ("empty.csv", b""),
        ("header_only.csv", REF_HEADER.encode()),
        ("binary.csv", bytes(range(256)) * 40),
        ("non_utf8.csv", "idx,prompt,correct\n1,caf\xe9,true\n".encode("latin-1")),
        ("formula_ref.csv", (REF_HEADER + "union,\"=cmd|' /C calc'!A0\",\"{1, 2}\",\"{1, 2}\",True,\"{1}\",\"{2}\"\n")
         .encode()),
        ("formula_ours.csv", b"idx,prompt,correct\n1,\"@SUM(A1:A2)\",true\n"),
        ("wrong_type_correct.csv", b"idx,prompt,correct\n1,x,maybe\n"),
        ("wrong_type_idx.csv", b"idx,prompt,correct\nabc,x,true\n"),
        ("huge_cell.csv", (REF_HEADER + f'union,p,"{{1}}","{{1}}",True,"{huge_set}","{{2}}"\n').encode()),
        ("code_in_set.csv", (REF_HEADER + "union,p,\"{1}\",\"{1}\",True,\"__import__('os').system('x')\",\"{2}\"\n")
         .encode()),
        ("truncated.parquet", b"PAR1garbage"),
        ("csv_as.parquet", b"idx,prompt,correct\n1,x,true\n"),
        ("bad.jsonl", b"{not json}\n"),
        ("array.jsonl", b"[1,2,3]\n"),
        ("page.csv", b"<html><body>hi</body></html>"),
        ("zipped.csv", z.getvalue()),
        ("gzipped.csv", gzip.compress(b"idx,prompt,correct\n1,x,true\n")),
        ("newlines.csv", b"\n\n\n"),
        ("semicolons.csv", b"idx;prompt;correct\n1;x;true\n"),
        ("ref_bad_bool.csv", (REF_HEADER + 'union,p,"{1}","{1}",perhaps,"{1}","{2}"\n').encode()),
        ("nul.csv", b"idx,prompt,correct\n1,a\x00b,true\n"),
        ("bad_set_literal.csv", (REF_HEADER + 'union,p,"{1; 2}","{1, 2}",True,"{1}","{2}"\n').encode()),
    ]


def snapshot(db: str) -> dict:
    with store.connect(db) as con:
        return {t: con.execute(f"SELECT count(*), sum(hash(x)) FROM {t} AS x").fetchone()
                for t in ("runs", "items", "calls", "results")}


@pytest.mark.slow
def test_compare_rejects_bad_uploads_and_leaves_the_db_unchanged(db_with_runs, open_page):
    db, a, _b = db_with_runs
    before = snapshot(db)
    files = bad_files()
    assert len(files) >= 20
    at = open_page("pages/compare.py")
    at.file_uploader(key="cmp_upload").set_value([(n, data, "application/octet-stream") for n, data in files])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == len(files)
    for (name, _), msg in zip(files, errors):
        assert msg.startswith(name), msg  # each message names the file and says what is wrong
        assert "Traceback" not in msg
    assert snapshot(db) == before

    good = (REF_HEADER + 'union,What is A u B,"{1, 2}","{1, 2}",True,"{1, 2}","{2}"\n'
            'intersection,What is A n B,"{2}","{3}",False,"{1, 2}","{2, 3}"\n').encode()
    at.file_uploader(key="cmp_upload").set_value([("good_ref.csv", good, "text/csv")])
    at.run()
    assert not at.exception
    assert any("good_ref.csv: imported as run" in s.value for s in at.success)
    assert snapshot(db)["runs"][0] == before["runs"][0] + 1


@pytest.mark.slow
def test_home_example_and_template_edit(db, open_page):
    home = open_page("pages/home.py")
    home.button(key="home_example_0").click().run()  # reference solver, 80 items
    assert not home.exception, [e.value for e in home.exception]
    p = runner.get_handle(home.session_state["home_run"]).wait(120)
    assert p.status == "done" and p.correct == p.done == 80

    so = open_page("pages/set_operations.py")
    text = so.text_area(key="so_templates").value
    assert "Write down the set union of A and B" in text
    so.text_area(key="so_templates").set_value(text.replace("Write down the set union of A and B",
                                                            "Please work out A ∪ B")).run()
    assert not so.exception, [e.value for e in so.exception]
    assert any("Edited parts: phrasings" in i.value for i in so.info)
    so.selectbox(key="so_m_model").set_value("reference/solver")
    so.button_group(key="so_ops").set_value(["union"])
    so.button_group(key="so_sizes").set_value([2])
    so.button_group(key="so_members").set_value(["numbers"])
    so.run()
    so.button(key="so_run").click().run()
    run_id = so.session_state["so_run_id"]
    assert runner.get_handle(run_id).wait(120).status == "done"
    import json

    row = store.get_run(db, run_id)
    assert "Please work out" in json.dumps(json.loads(row["config_json"])["templates"])
    with store.connect(db) as con:
        prompts = [r[0] for r in con.execute("SELECT prompt FROM items WHERE run_id = ?", [run_id]).fetchall()]
    assert prompts and all("Please work out A ∪ B" in p for p in prompts)

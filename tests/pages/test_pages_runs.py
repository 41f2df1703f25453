"""Runs page: resume an unfinished run, open / validate an uploaded YAML configuration, delete a run."""

from __future__ import annotations

import sys

import pytest
import yaml

from tests.support import ROOT  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core import runner, store  # noqa: E402

SMALL = {"task": "setops", "seed": 2, "samples": 3, "operations": ["union", "difference"], "sizes": [2, 4],
         "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture()
def db(tmp_path, monkeypatch):
    path = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", path)
    return path


def open_runs(run_id: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/runs.py")
    if run_id:
        at.query_params["run"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_resume_an_interrupted_run(db):
    p = runner.run(SMALL, "reference/solver", db_path=db)
    with store.connect(db) as con:  # simulate an interruption: half the answers missing, status cancelled
        con.execute("DELETE FROM results WHERE run_id = ? AND idx % 2 = 0", [p.run_id])
        con.execute("UPDATE runs SET status = 'cancelled' WHERE run_id = ?", [p.run_id])
        store.refresh_run_counts(con, p.run_id, status="cancelled")
    at = open_runs(p.run_id)
    at.button(key="runs_resume").click().run()
    assert not at.exception, [e.value for e in at.exception]
    handle = runner.get_handle(p.run_id)
    assert handle is not None
    done = handle.wait(120)
    assert done.status == "done" and done.done == done.total == 12 and done.correct == 12, done
    assert done.cached >= 6, done  # the six answers still stored come from the call cache, not the model


@pytest.mark.slow
def test_yaml_upload_opens_the_config_and_bad_yaml_is_explained(db):
    runner.run(SMALL, "reference/solver", db_path=db)
    at = open_runs()
    doc = {"config": dict(SMALL, samples=7), "model": "reference/solver"}
    at.file_uploader(key="runs_yaml").set_value(("study.yaml", yaml.safe_dump(doc).encode(), "application/x-yaml"))
    at.run()
    assert not at.exception
    assert any("Valid setops configuration: 28 items" in s.value for s in at.success)
    at.button(key="runs_open_yaml").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Set operations"
    assert at.number_input(key="so_samples").value == 7
    assert at.button_group(key="so_ops").value == ["union", "difference"]

    for name, data, expect in [("broken.yaml", b"a: [1, 2", "not valid YAML"),
                               ("list.yaml", b"- 1\n- 2\n", "must be a mapping"),
                               ("unknown.yaml", b"task: setops\nbogus_key: 3\n", "bogus_key"),
                               ("binary.yaml", b"\xff\xfe\x00\x01", "not UTF-8")]:
        at = open_runs()
        at.file_uploader(key="runs_yaml").set_value((name, data, "application/x-yaml"))
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(expect in e.value and name in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.slow
def test_a_reference_experiment_yaml_uploads_as_it_is(db):
    """The SetLexSem reference's anthr_haiku.yaml (unmodified copy): its 198,400 prompts, the translation notes, and
    the Set operations page opened with its values under our names."""
    from pathlib import Path

    data = (Path(__file__).resolve().parents[1] / "data" / "reference_configs" / "anthr_haiku.yaml").read_bytes()
    at = open_runs()
    at.file_uploader(key="runs_yaml").set_value(("anthr_haiku.yaml", data, "application/x-yaml"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Valid setops configuration: 198,400 items" in s.value for s in at.success)
    assert any("LOAD_GENERATED_DATA" in i.value for i in at.info)
    at.button(key="runs_open_yaml").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button_group(key="so_phrasings").value == ["formal", "plain"]
    assert at.button_group(key="so_approaches").value == ["baseline", "baseline_allow_empty", "composite",
                                                          "composite_allow_empty"]
    assert at.button_group(key="so_ops").value == ["union", "intersection", "difference", "symmetric_difference"]
    assert at.number_input(key="so_samples").value == 50


@pytest.mark.slow
def test_delete_a_run(db):
    p = runner.run(SMALL, "reference/solver", db_path=db)
    at = open_runs(p.run_id)
    assert at.button(key="runs_delete").disabled
    at.checkbox(key="runs_sure").check().run()
    at.button(key="runs_delete").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert store.get_run(db, p.run_id) is None


@pytest.mark.slow
def test_imported_run_opens_without_stored_parameters(db, tmp_path):
    """An imported run has no sampling parameters (NULL in the DB): its page shows it and offers no resume."""
    from core.store.exports import export_run
    from core.store.io import import_results

    p = runner.run(SMALL, "reference/solver", db_path=db)
    out = tmp_path / "exported.csv"
    export_run(db, p.run_id, out)
    import pandas as pd

    edited = pd.read_csv(out)   # an edited copy: our own export as it is would be the stored run itself (issue 22)
    edited.loc[0, "response"] = "<answer>{}</answer>"
    edited.to_csv(out, index=False)
    imported_id = import_results(db, str(out))[0]
    row = store.run_record(db, imported_id)
    assert row["imported"] and row["params"] == {} and row["params_json"] is None
    at = open_runs(imported_id)
    # the heading names the run (issue 22: "Run setops-324eba31e4-d0" for a run named "smollm2 24"); the id is in
    # the heading's tooltip
    assert at.subheader[0].value == "Run exported.csv (studio)" and imported_id in at.subheader[0].help
    assert any("Imported results cannot be resumed" in c.value for c in at.caption)
    assert "runs_resume" not in [b.key for b in at.button]

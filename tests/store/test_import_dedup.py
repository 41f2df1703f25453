"""Dedup on what a file claims: the same claims are one run whatever the line endings (LF, CRLF, CR alone), byte-order
marks (one or two), format or ``run_id`` column; a file claiming other verdicts is another run (its flag kept); four
processes importing the same content at once make one run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from core import runner, store
from core.store.exports import export_run
from core.store.io import import_file
from tests.support import ROOT

CFG = {"task": "setops", "seed": 4, "samples": 5, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dedup")
    db = tmp / "here.duckdb"
    run_id = runner.run(CFG, "reference/solver", db_path=db).run_id
    export_run(db, run_id, tmp / "export.csv")
    return {"db": db, "run_id": run_id, "tmp": tmp, "csv": (tmp / "export.csv").read_bytes()}


def _variants(data: bytes) -> dict[str, bytes]:
    no_run_id = pd.read_csv(__import__("io").BytesIO(data), dtype=str, keep_default_na=False)
    return {"lf.csv": data, "crlf.csv": data.replace(b"\n", b"\r\n"), "cr.csv": data.replace(b"\n", b"\r"),
            "bom.csv": b"\xef\xbb\xbf" + data, "bom2.csv": b"\xef\xbb\xbf\xef\xbb\xbf" + data,
            "crlf-bom2.csv": b"\xef\xbb\xbf\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"),
            "no-run-id.csv": no_run_id.drop(columns=["run_id"]).to_csv(index=False).encode()}


def test_the_same_claims_are_the_run_they_came_from(made):
    """In the store the run was made in: every variant of its export is that run."""
    for name, data in _variants(made["csv"]).items():
        runs = import_file(made["db"], data, name)
        assert [(r.run_id, r.rows) for r in runs] == [(made["run_id"], 0)], name


def test_the_same_claims_are_one_upload_elsewhere(made, tmp_path):
    db = tmp_path / "other.duckdb"
    first = import_file(db, made["csv"], "lf.csv")[0]
    assert first.rows == 10
    for name, data in _variants(made["csv"]).items():
        assert [(r.run_id, r.rows) for r in import_file(db, data, name)] == [(first.run_id, 0)], name
    with store.connect(db) as con:
        n, prompts_with_cr = con.execute("SELECT count(DISTINCT run_id), count(*) FILTER (WHERE contains(prompt, "
                                         "chr(13))) FROM v_results").fetchall()[0]
    assert (n, prompts_with_cr) == (1, 0)


def test_a_crlf_export_is_re_scored_like_the_original(made, tmp_path):
    """Its prompts read back with LF line breaks: they still render from their items (not claims only)."""
    db = tmp_path / "crlf.duckdb"
    run = import_file(db, made["csv"].replace(b"\n", b"\r\n"), "crlf.csv")[0]
    meta = json.loads(store.get_run(db, run.run_id)["run_json"])["meta"]["rescored"]
    assert meta["rescored"] == 10 and meta["claimed_only"] == 0


def test_other_claims_are_another_run_with_their_flag(made, tmp_path):
    db = tmp_path / "claims.duckdb"
    df = pd.read_csv(__import__("io").BytesIO(made["csv"]), dtype=str, keep_default_na=False)
    honest = import_file(db, df.to_csv(index=False).encode(), "honest.csv")[0]
    df["correct"] = "false"                       # the same responses, every verdict claimed wrong
    modest = import_file(db, df.to_csv(index=False).encode(), "modest.csv")[0]
    assert modest.run_id != honest.run_id and modest.rows == 10
    meta = json.loads(store.get_run(db, modest.run_id)["run_json"])["meta"]["rescored"]
    assert meta["claims_wrong_but_right"] == 10


def _import_cli(db, path):
    return subprocess.Popen([sys.executable, "-m", "core", "import", str(path), "--db", str(db)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.timeout(600)
def test_four_concurrent_imports_of_the_same_content_make_one_run(made, tmp_path):
    variants = _variants(made["csv"])
    files = []
    for name in ("lf.csv", "crlf.csv", "bom2.csv", "no-run-id.csv"):
        (tmp_path / name).write_bytes(variants[name])
        files.append(tmp_path / name)
    for trial in range(3):
        db = tmp_path / f"race{trial}.duckdb"
        procs = [_import_cli(db, f) for f in files]
        outs = [p.communicate(timeout=300) for p in procs]
        assert all(p.returncode == 0 for p in procs), [o[1][-800:] for o in outs]
        with store.connect(db) as con:
            assert con.execute("SELECT count(*), sum(n_items) FROM runs").fetchall()[0] == (1, 10), trial
        assert sum("imported 10 rows" in o[0] for o in outs) == 1, [o[0] for o in outs]

"""One CSV writer for everything the tool writes: replies, run names and sentences that a spreadsheet would run
(``=cmd|' /C calc'!A0``, ``@SUM(…)``, ``+1+cmd|x!A0``, a leading space before ``=``) leave every CSV the tool writes
neutralised — exports, ``report table``, ``report errors``, ``embeddings score --samples-out``, the tuples file,
generated items and page downloads — and our own CSV export imports back as exactly the text the model wrote."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from core import runner, store
from core.files import is_formula, neutralise, restore
from core.store.exports import export_run
from core.store.io import import_results
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

PAYLOADS = ["=cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "+1+cmd|x!A0", " =1+1", "  \t=HYPERLINK(\"x\")",
            "-2+3+cmd|' /C calc'!A0", "\r@x", "'=already quoted", " @SUM(1)"]
NAME = "=cmd|' /C calc'!A0"
CONFIG = {"task": "setops", "seed": 5, "samples": 3, "operations": ["union", "intersection"], "sizes": [2],
          "members": ["numbers", "words"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


def formula_cells(text: str) -> list[str]:
    """Every cell (header included) of a CSV text that a spreadsheet would run."""
    return [v for row in csv.reader(io.StringIO(text, newline="")) for v in row if is_formula(v)]


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """A run whose replies are spreadsheet formulas (each payload at least once) and whose name is one."""
    given: dict[str, str] = {}

    def respond(prompt, model):
        return given.setdefault(prompt, PAYLOADS[len(given) % len(PAYLOADS)])

    srv = LoopbackServer(0.0, responder=respond).start()
    try:
        db = str(tmp_path_factory.mktemp("csvw") / "studio.duckdb")
        p = runner.run(CONFIG, "openai-compatible/loop", base_url=srv.base_url, db_path=db, name=NAME)
        assert p.status == "done" and p.done == 12
    finally:
        srv.stop()
    with store.connect(db) as con:
        replies = [r for (r,) in con.execute("SELECT response FROM v_results WHERE run_id = ?", [p.run_id]).fetchall()]
    assert set(replies) == set(PAYLOADS)       # stored exactly as the model wrote them
    return db, p.run_id, replies


def test_the_rule_neutralises_a_leading_space_and_restores_exactly():
    for text in PAYLOADS + ["  =x", "\n=1", " \v@x", "' =x", "plain", " plain", "-1", ""]:
        out = neutralise(text)
        assert restore(out) == text and not is_formula(out), (text, out)
    assert neutralise(" =1+1") == "' =1+1" and neutralise(" plain") == " plain"


def test_our_csv_export_is_safe_and_imports_back_exactly(hostile_run, tmp_path):
    db, run_id, replies = hostile_run
    out = tmp_path / "run.csv"
    export_run(db, run_id, out)
    assert formula_cells(out.read_text(encoding="utf-8")) == []
    other = str(tmp_path / "other.duckdb")
    new_id, n = import_results(other, out)   # today: " =1+1" was written raw and this import refused it
    assert n == 12
    with store.connect(other) as con:
        back = [r for (r,) in con.execute("SELECT response FROM v_results WHERE run_id = ?", [new_id]).fetchall()]
        name = con.execute("SELECT name FROM runs WHERE run_id = ?", [new_id]).fetchall()[0][0]
    assert Counter(back) == Counter(replies) and name == NAME


@pytest.mark.parametrize("report, by", [("table", "name"), ("table", "model,name"), ("errors", "name")])
def test_reports_are_spreadsheet_safe(report, by, hostile_run, cli, tmp_path):
    db, run_id, _ = hostile_run
    out = tmp_path / f"{report}.csv"
    r = cli("report", report, "--db", db, "--run", run_id, "--by", by, "--out", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "'" + NAME in text                            # the run's name is there, as text
    assert formula_cells(text) == []


def test_downloads_samples_tuples_and_generated_items_are_spreadsheet_safe(hostile_run, tmp_path):
    from core.cli.commands.generate import write_csv as generate_csv
    from core.embeddings.report import write_samples_csv
    from core.embeddings.samples import SentenceTuple, load_tuples, write_tuples
    from core.files import csv_text
    from ui.db import df_download

    db, run_id, _ = hostile_run
    texts = {"download": df_download(store.results_df(db, run_id), "csv").decode("utf-8")}
    rows = [{"operator": "union", "a": p, "b": "plain", "target": p, "cos_ab": -0.5} for p in PAYLOADS]
    write_samples_csv(rows, tmp_path / "SAMPLES.csv")
    texts["samples"] = (tmp_path / "SAMPLES.csv").read_text(encoding="utf-8")
    texts["samples page"] = csv_text(rows)
    tuples = [SentenceTuple(f"t{i}", p.strip() + " one", "=two", "+three", "@four", p.strip() + " five", "topic")
              for i, p in enumerate(PAYLOADS)]
    write_tuples(tuples, tmp_path / "tuples.csv")
    texts["tuples"] = (tmp_path / "tuples.csv").read_text(encoding="utf-8")
    buf = io.StringIO()
    generate_csv([{"idx": i, "prompt": p, "truth": [1, 2]} for i, p in enumerate(PAYLOADS)], buf)
    texts["generate"] = buf.getvalue()
    for what, text in texts.items():
        assert formula_cells(text) == [], what
    assert [(t.s_curr, t.s1) for t in load_tuples(tmp_path / "tuples.csv")] == [(t.s_curr, t.s1) for t in tuples]


@pytest.mark.slow
def test_embeddings_score_samples_out_is_spreadsheet_safe(tmp_path):
    pytest.importorskip("sentence_transformers")
    data = tmp_path / "tuples.csv"
    data.write_text("id,topic,s_prev,s_curr,s_next,s1,s2\n"
                    "t1,x,=cmd|' /C calc'!A0 first,@SUM(1) second,+1+cmd|x!A0 third,-2+cmd|y!A0 fused,"
                    "\" =1+1 fused\"\n", encoding="utf-8")
    report, samples = tmp_path / "REPORT.json", tmp_path / "SAMPLES.csv"
    done = subprocess.run([sys.executable, "-m", "core", "embeddings", "score", "--encoder", "minilm", "--data",
                           str(data), "--out", str(report), "--samples-out", str(samples)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1",
                               "STUDIO_DB": str(tmp_path / "s.duckdb"), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    text = samples.read_text(encoding="utf-8")
    assert "'=cmd|' /C calc'!A0 first" in text and formula_cells(text) == []


def test_no_csv_is_written_outside_the_one_writer():
    """Every CSV the tool writes goes through core.files.write_csv/csv_text, or DuckDB's COPY in the export (which
    neutralises every text column): no other CSV writer in core/ or pages/."""
    pattern = re.compile(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(|FORMAT CSV")
    allowed = {"core/files.py", "core/store/exports.py"}
    found = []
    for folder in ("core", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in allowed and pattern.search(path.read_text(encoding="utf-8")):
                found.append(rel)
    assert found == []

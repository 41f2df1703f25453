"""Issue 17, items 4, 6, 7, 8: files that could stall, exhaust or crash an import — each is one ``error:`` line (or
a clean import), no traceback, under the hostile tests' memory limit (1.5 GB of address space for the child), and
nothing half-written. The files are made in tmp_path (no multi-GB fixtures); ``python bench/hostile_memory.py``
measures peak memory on the full-size cases.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from core import store
from core.store.readers import MAX_COLUMNS, MAX_LINE_BYTES
from tests.hostile.conftest import run_limited
from tests.support import ROOT

CFG_YAML = "task: setops\nsamples: 2\nsizes: [2]\nmembers: [numbers]\noperations: [union, intersection]\nseed: 4\n"
MODEL = "openai-compatible/hostile-vllm"


def _one_line(done, *needles):
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), (done.returncode,
                                                                                        done.stderr[-2000:])
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def exported_once(tmp_path_factory):
    """(config, db, request lines) of a small export-batch, made once for the file."""
    where = tmp_path_factory.mktemp("exported")
    cfg, db, req = where / "c.yaml", where / "s.duckdb", where / "requests.jsonl"
    cfg.write_text(CFG_YAML)
    done = run_limited(["-m", "core", "export-batch", "--config", str(cfg), "--model", MODEL, "--db", str(db),
                        "--out", str(req)])
    assert done.returncode == 0, done.stderr
    return cfg, db, [json.loads(x) for x in req.read_text().splitlines()]


@pytest.fixture()
def exported(exported_once, tmp_path):
    """(config, db, request lines) of the export-batch, with a copy of its store of the test's own."""
    cfg, db, reqs = exported_once
    copy = tmp_path / db.name
    shutil.copyfile(db, copy)
    assert not db.with_name(db.name + ".wal").exists()   # the export closed its store: the file is all of it
    return cfg, copy, reqs


def _output_line(cid, text="<answer>{1}</answer>", usage=None):
    return {"custom_id": cid, "error": None, "response": {"status_code": 200, "body": {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 5, "completion_tokens": 3}}}}


def _import_batch(cfg, db, path):
    return run_limited(["-m", "core", "import-batch", str(path), "--config", str(cfg), "--model", MODEL,
                        "--db", str(db)])


def _results(db) -> int:
    with store.connect(db) as con:
        return con.execute("SELECT count(*) FROM results").fetchall()[0][0]


def test_import_batch_a_line_past_the_cap_is_refused_without_reading_it_whole(exported, tmp_path):
    cfg, db, reqs = exported
    path = tmp_path / "long.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"custom_id": "' + b"x" * (MAX_LINE_BYTES + 1024) + b'"}\n')
    _one_line(_import_batch(cfg, db, path), "line 1 is longer than")
    assert _results(db) == 0


def test_import_batch_deep_nesting_is_one_line(exported, tmp_path):
    cfg, db, reqs = exported
    path = tmp_path / "deep.jsonl"
    path.write_text('{"custom_id": "a", "response": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    _one_line(_import_batch(cfg, db, path), "line 1")
    assert _results(db) == 0


def test_import_batch_a_huge_token_count_is_not_a_crash(exported, tmp_path):
    cfg, db, reqs = exported
    path = tmp_path / "big-count.jsonl"
    lines = [_output_line(r["custom_id"], usage={"prompt_tokens": 10 ** 30, "completion_tokens": -5})
             for r in reqs]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = _import_batch(cfg, db, path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    with store.connect(db) as con:
        assert con.execute("SELECT count(*), count(tokens_in), count(tokens_out) FROM calls").fetchall()[0] == (
            len(reqs), 0, 0)


def test_import_batch_duplicated_custom_ids_are_refused_with_their_lines(exported, tmp_path):
    cfg, db, reqs = exported
    path = tmp_path / "dup.jsonl"
    lines = [_output_line(r["custom_id"]) for r in reqs] + [_output_line(reqs[1]["custom_id"], "{7}")]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _one_line(_import_batch(cfg, db, path), "line 2", f"line {len(reqs) + 1}")
    assert _results(db) == 0


def test_import_batch_accepts_a_byte_order_mark(exported, tmp_path):
    cfg, db, reqs = exported
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(_output_line(r["custom_id"])) + "\n"
                                              for r in reqs).encode())
    done = _import_batch(cfg, db, path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _results(db) == len(reqs)


def _import(path, db, limited=True):
    if limited:
        return run_limited(["-m", "core", "import", str(path), "--db", str(db)])
    done = subprocess.run([sys.executable, "-m", "core", "import", str(path), "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done


def test_a_csv_with_a_million_columns_is_refused_quickly(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n" + ",".join("1" for _ in range(10)) + "\n")
    _one_line(_import(path, tmp_path / "s.duckdb"), f"limit is {MAX_COLUMNS:,}")


def test_an_idx_of_5000_digits_is_one_line(tmp_path):
    path = tmp_path / "idx.csv"
    path.write_text("idx,prompt,correct,response\n" + "9" * 5000 + ",p,true,<answer>{1}</answer>\n")
    _one_line(_import(path, tmp_path / "s.duckdb"), "5000-digit")


def test_a_190_mb_cell_is_refused_not_out_of_memory(tmp_path):
    path = tmp_path / "cell.jsonl"
    with open(path, "w") as fh:
        fh.write('{"idx": 0, "prompt": "p", "correct": true, "response": "' + "a" * 190_000_000 + '"}\n')
    _one_line(_import(path, tmp_path / "s.duckdb"))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_our_export_of_10_mb_replies_imports_back(tmp_path, fmt):
    """A run whose replies are 10 MB each exports and imports back in every format (CSV's field limit, JSONL
    read in chunks bounded by characters, not rows)."""
    db = tmp_path / "s.duckdb"
    big = "<answer>{" + ", ".join(["1"] * 5_000_000)[: 10_000_000] + "}</answer>"
    run_id = "big-replies"
    with store.connect(db) as con, store.transaction(con):
        con.execute("INSERT INTO runs (run_id, status, task, model, n_items) VALUES (?, 'done', 'setops', "
                    "'openai-compatible/x', 3)", [run_id])
        for idx in range(3):
            con.execute("INSERT INTO items (run_id, idx, prompt, truth, operation) VALUES (?, ?, 'p', '[1]', "
                        "'union')", [run_id, idx])
            con.execute("INSERT INTO calls (cache_key, model, response) VALUES (?, 'openai-compatible/x', ?)",
                        [f"k{idx}", big])
            con.execute("INSERT INTO results (run_id, idx, cache_key, correct, correct_strict) VALUES "
                        "(?, ?, ?, true, true)", [run_id, idx, f"k{idx}"])
    out = tmp_path / f"big.{fmt}"
    done = subprocess.run([sys.executable, "-m", "core", "export", "--run", run_id, "--out", str(out), "--db",
                           str(db)], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    db2 = tmp_path / "s2.duckdb"
    done = _import(out, db2, limited=False)   # DuckDB reserves more address space than the limit allows
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    with store.connect(db2) as con:
        lengths = con.execute("SELECT length(response) FROM v_results ORDER BY idx").fetchall()
    assert lengths == [(len(big),)] * 3


@pytest.mark.slow
def test_a_killed_import_leaves_nothing_after_the_next_open(tmp_path):
    """A kill -9 after the first stored part leaves a staging folder and invisible rows; the next process to open
    the database removes both, and importing the file again gives the whole run."""
    rows = [{"idx": i, "prompt": f"p{i}", "correct": True, "response": "<answer>{1}</answer>", "operation": "union"}
            for i in range(5000)]
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "s.duckdb"
    done = subprocess.run([sys.executable, "-m", "core", "import", str(src), "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "STUDIO_FAULT": "import-part-stored:kill"})
    assert done.returncode == -9, done.stderr[-2000:]
    assert list(tmp_path.glob(".import-*"))
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    left = con.execute("SELECT count(*) FROM items").fetchall()[0][0]
    con.close()
    assert left > 0                                    # rows of the killed import, with no run record
    with store.connect(db) as con:                     # the next open (another process would do the same)
        assert con.execute("SELECT count(*) FROM items").fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 0
    assert not list(tmp_path.glob(".import-*"))
    done = subprocess.run([sys.executable, "-m", "core", "import", str(src), "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM v_results").fetchall()[0][0] == 5000

"""Computed Embeddings results kept in the store (issue 22): a result saved under its settings' digest is read back
whole by another connection (another process would do the same); other settings, other samples or another filter
are other keys; the table comes from migration 7, also on a file written before it."""

from __future__ import annotations

import duckdb
import pytest

from core import store
from core.embeddings import results_store
from core.embeddings.pipeline import score
from core.embeddings.samples import build_samples, load_demo
from core.errors import UserError
from tests.embeddings.test_embeddings_pipeline import BagOfWords


@pytest.fixture(scope="module")
def scored():
    tuples = load_demo()[:4]
    samples = build_samples(tuples)
    enc = BagOfWords([t for s in samples for t in (s.a, s.b, s.target)])
    return tuples, samples, score(samples, enc, tuples=tuples, source="four tuples", use_cache=False)


def test_save_then_load_gives_the_same_report_and_rows(scored, tmp_path):
    tuples, samples, res = scored
    db = tmp_path / "s.duckdb"
    settings = results_store.settings_for("minilm", samples, tuples)
    key = results_store.save(settings, res.report, res.rows, data_label="four tuples", db_path=db)
    assert key == results_store.digest(settings) and len(key) == 64
    got = results_store.load(key, db_path=db)
    assert got is not None
    assert got["report"] == res.report and got["rows"] == res.rows      # whole, not a summary
    assert got["settings"] == settings and got["data_label"] == "four tuples" and got["created_at"] is not None
    listed = results_store.list_results(db)
    assert list(listed["digest"]) == [key] and listed["n_samples"].iloc[0] == len(samples) == 36
    # saved again (computed again): replaced, not duplicated
    results_store.save(settings, {**res.report, "dim": 7}, res.rows[:3], db_path=db)
    again = results_store.load(key, db_path=db)
    assert again["report"]["dim"] == 7 and len(again["rows"]) == 3 and len(results_store.list_results(db)) == 1
    assert results_store.delete(key, db_path=db) == 1 and results_store.load(key, db_path=db) is None


def test_the_key_is_what_decides_the_result(scored):
    tuples, samples, _ = scored
    base = results_store.digest(results_store.settings_for("minilm", samples, tuples))
    # the same content, however it came (a paste, an upload, the demo file): the same key
    again = build_samples(load_demo()[:4])
    assert results_store.digest(results_store.settings_for("minilm", again, load_demo()[:4])) == base
    others = [
        results_store.settings_for("local", samples, tuples),                        # another encoder
        results_store.settings_for("minilm", samples[:-1], tuples),                  # other samples
        results_store.settings_for("minilm", samples, tuples, diff_max_cos=0.25),    # the paper's filter
        results_store.settings_for("minilm", samples, tuples, eps=(0.0, 0.1)),       # another ε grid
        results_store.settings_for("minilm", samples, tuples, measures=("cosine",)),
        results_store.settings_for("minilm", samples, tuples, grid_size=20),
        results_store.settings_for("openai:text-embedding-3-large", samples, tuples),
    ]
    keys = {results_store.digest(s) for s in others}
    assert len(keys) == len(others) and base not in keys
    with pytest.raises(UserError, match="unknown encoder 'word2vec'"):
        results_store.settings_for("word2vec", samples, tuples)


def test_other_keys_are_not_found_and_a_damaged_row_reads_as_missing(scored, tmp_path):
    tuples, samples, res = scored
    db = tmp_path / "s.duckdb"
    key = results_store.save(results_store.settings_for("minilm", samples, tuples), res.report, res.rows, db_path=db)
    other = results_store.digest(results_store.settings_for("local", samples, tuples))
    assert results_store.load_many([key, other], db_path=db).keys() == {key}
    with store.connect(db) as con:
        con.execute("UPDATE embedding_results SET rows_json = '[{' WHERE digest = ?", [key])
    assert results_store.load(key, db_path=db) is None


def test_a_version_6_file_gains_the_table_and_keeps_its_rows(scored, tmp_path):
    """Migration 7 on a file written by the previous code (every migration but 7 applied, with a run in it)."""
    from core.store import schema

    tuples, samples, res = scored
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute(schema._VERSION_TABLE)
    for number, statements in schema.MIGRATIONS:
        if number >= 7:   # a version-6 file: migrations from 7 on are what opening it must apply
            break
        for sql in statements:
            con.execute(sql)
        con.execute("INSERT INTO schema_version (version) VALUES (?)", [number])
    con.execute("INSERT INTO runs (run_id, name, task) VALUES ('r1', 'kept', 'setops')")
    assert "embedding_results" not in {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    con.close()
    key = results_store.save(results_store.settings_for("minilm", samples, tuples), res.report, res.rows, db_path=db)
    assert results_store.load(key, db_path=db)["rows"] == res.rows
    with store.connect(db) as con:
        assert con.execute("SELECT name FROM runs").fetchall() == [("kept",)]
        assert con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] == schema.SCHEMA_VERSION >= 7

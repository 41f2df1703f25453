"""The store's functions that write a run's row and the embeddings tables, on a real DuckDB file: the runners and
core/embeddings write these tables through them only (tests/architecture/test_store_writes.py)."""

from __future__ import annotations

import pytest

from core import store
from core.store import analysis_cache, embedding_tables, runs


def _new_run(con, run_id: str, status: str = "running") -> None:
    store.insert_run(con, run_id=run_id, run_key="k-" + run_id, draw=1, task="setops", name="a run",
                     config_json="{}", run_json='{"a": 1}', model="reference/solver", base_url=None,
                     params_json="{}", status=status, source=None)


def test_a_new_run_row_and_its_updates(tmp_path):
    db = tmp_path / "s.duckdb"
    with store.connect(db) as con:
        _new_run(con, "r1")
        store.update_run(con, "r1", n_items=12)
        store.update_run(con, "r1", status="done", run_json='{"a": 2}')
    row = store.get_run(db, "r1")
    assert (row["status"], row["n_items"], row["run_json"], row["n_done"], row["schema_version"]) == (
        "done", 12, '{"a": 2}', 0, store.SCHEMA_VERSION)
    assert row["created_at"] is not None and row["updated_at"] >= row["created_at"]


def test_a_new_run_needs_every_field_and_no_other(tmp_path):
    with store.connect(tmp_path / "s.duckdb") as con, pytest.raises(TypeError, match="exactly"):
        store.insert_run(con, run_id="r", n_done=5)


def test_unfinished_runs_become_interrupted(tmp_path):
    db = tmp_path / "s.duckdb"
    with store.connect(db) as con:
        for run_id, status in (("a", "running"), ("b", "pending"), ("c", "done")):
            _new_run(con, run_id, status)
        assert runs.interrupt_unfinished(con) == ["a", "b"]
        analysis_cache.put(con, "g:1", "{}", group="g", keep=5)
        analysis_cache.clear(con)
        assert analysis_cache.get(con, "g:1") is None
    assert [store.get_run(db, r)["status"] for r in "abc"] == ["interrupted", "interrupted", "done"]


def test_the_embeddings_tables(tmp_path):
    with store.connect(tmp_path / "s.duckdb") as con:
        embedding_tables.add_vectors(con, "enc", ["s1", "s2"], ["one", "two"], [[1.0, 0.0], [0.0, 1.0]])
        embedding_tables.add_vectors(con, "enc", ["s1"], ["one"], [[9.0, 9.0]])   # kept as it was
        embedding_tables.add_vectors(con, "other", ["s1"], ["one"], [[0.5, 0.5]])
        assert con.execute("SELECT vector FROM embedding_cache WHERE encoder = 'enc' AND text_sha = 's1'"
                           ).fetchone()[0] == [1.0, 0.0]
        assert embedding_tables.drop_vectors(con, "enc") == 2
        assert embedding_tables.drop_vectors(con) == 1
        fields = dict(digest="d", encoder="minilm", encoder_label="MiniLM", data_label="demo", settings_json="{}",
                      n_samples=3, report_json="{}", rows_json="[]", created_at=store.now_utc())
        embedding_tables.put_result(con, **fields)
        embedding_tables.put_result(con, **{**fields, "n_samples": 4})   # replaces the one of the same digest
        assert con.execute("SELECT count(*), max(n_samples) FROM embedding_results").fetchone() == (1, 4)
        assert embedding_tables.drop_results(con, "d") == 1 and embedding_tables.drop_results(con) == 0

"""Store: schema + view contract, typed factor columns, upsert semantics, lock handling across real processes."""

import subprocess
import sys
import textwrap
import time

import duckdb
import pytest

from core import store
from core.store.schema import FACTOR_COLUMNS, SCHEMA_VERSION
from tests.support import version_1_store

CONTRACT_VIEW_COLUMNS = {
    "run_id", "idx", "config_id", "sample", "prompt", "truth", "parsed", "followed", "correct", "jaccard",
    "precision", "recall", "truth_len", "answer_len", "made_up", "empty_truth", "pred", "correct_gqg", "error",
    "model", "task", "name", "latency_ms", "tokens_in", "tokens_out", "cost_usd", "response",
}
SETOPS_FACTORS = {"operation", "size_a", "size_b", "members", "length", "decile", "decile_mode", "condition",
                  "hypernym_a", "hypernym_b", "member_hypernyms", "swap_count", "overlap", "phrasing", "approach",
                  "shots", "set_a", "set_b", "pos"}
QUANT_FACTORS = {"quantifier", "object", "noun_group", "total", "count_large", "count_small", "predicate",
                 "template", "label"}


def _item(i, **kw):
    base = {"idx": i, "config_id": f"c{i % 3}", "sample": i // 3, "seed": 7, "prompt": f"prompt {i}",
            "truth": [1, 2], "operation": "union", "size_a": 2, "size_b": 2, "members": "numbers", "length": None,
            "overlap": 1, "set_a": [2, 1], "set_b": [3], "member_hypernyms": None, "phrasing": "formal"}
    base.update(kw)
    return base


def test_schema_tables_view_and_version(tmp_path):
    db = tmp_path / "s.duckdb"
    with store.connect(db) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert {"runs", "items", "calls", "results", "embedding_cache", "schema_version", "v_results"} <= tables
        assert con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] == SCHEMA_VERSION
        view_cols = {r[0] for r in con.execute("DESCRIBE v_results").fetchall()}
        item_cols = {r[0]: r[1] for r in con.execute("DESCRIBE items").fetchall()}
    assert CONTRACT_VIEW_COLUMNS <= view_cols
    assert SETOPS_FACTORS | QUANT_FACTORS <= set(item_cols)
    assert set(FACTOR_COLUMNS) <= view_cols
    assert item_cols["size_a"] == "BIGINT" and item_cols["operation"] == "VARCHAR" and item_cols["overlap"] == "DOUBLE"
    # re-opening does not migrate twice
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM schema_version").fetchall()[0][0] == len(
            __import__("core.store.schema", fromlist=["MIGRATIONS"]).MIGRATIONS)


def test_a_version_1_database_gains_the_pos_column_and_keeps_its_rows(tmp_path):
    """Migration 2 adds items.pos (declared in core/tasks/setops/factors.py with since=2) to a file written by the
    previous version; its rows stay as they were, with no part of speech."""

    db = tmp_path / "old.duckdb"
    con = version_1_store(str(db))
    con.execute("INSERT INTO items (run_id, idx, config_id, prompt, operation, members) "
                "VALUES ('r', 0, 'c', 'p', 'union', 'words')")
    assert "pos" not in {r[0] for r in con.execute("DESCRIBE items").fetchall()}
    con.close()
    with store.connect(db) as con:
        assert con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0] == SCHEMA_VERSION >= 2
        assert con.execute("SELECT run_id, idx, operation, members, pos FROM items").fetchall() == [
            ("r", 0, "union", "words", None)]
        assert "pos" in {r[0] for r in con.execute("DESCRIBE v_results").fetchall()}


def _layout(con):
    """Every table's and view's columns in order with their types, and the versions recorded."""
    cols = con.execute("SELECT table_name, column_index, column_name, data_type FROM duckdb_columns() "
                       "WHERE database_name = current_database() ORDER BY table_name, column_index").fetchall()
    keys = con.execute("SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
                       "WHERE database_name = current_database() ORDER BY ALL").fetchall()
    versions = [r[0] for r in con.execute("SELECT version FROM schema_version ORDER BY version").fetchall()]
    return cols, keys, versions


def test_a_new_store_has_the_layout_of_one_migrated_from_version_1(tmp_path):
    """A new file skips the backfills (it has no row to re-score): its layout must still be exactly that of a file
    brought up from version 1 with rows in it, through every migration and backfill."""
    from core.store import schema

    old = tmp_path / "old.duckdb"
    con = version_1_store(str(old))
    con.execute("INSERT INTO items (run_id, idx, config_id, prompt, operation, members, truth) "
                "VALUES ('r', 0, 'c', 'p', 'union', 'numbers', '[1]')")
    con.execute("INSERT INTO results (run_id, idx, cache_key, parsed, correct) VALUES ('r', 0, 'k', '[1]', true)")
    con.close()
    with store.connect(old) as con:
        migrated = _layout(con)
    with store.connect(tmp_path / "new.duckdb") as con:
        fresh = _layout(con)
    assert fresh[2] == migrated[2] == [n for n, _ in schema.MIGRATIONS]
    assert fresh[0] == migrated[0]
    assert fresh[1] == migrated[1]


def test_items_bulk_insert_typed_and_extra(tmp_path):
    db = tmp_path / "s.duckdb"
    items = [_item(i, new_factor=i % 2) for i in range(500)]
    with store.connect(db) as con, store.transaction(con):
        store.insert_items(con, "r1", items)
        store.insert_items(con, "r1", items[:10])  # ignored, not duplicated
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM items").fetchall()[0][0] == 500
        row = con.execute("SELECT size_a + size_b, truth, set_a, overlap, extra_json FROM items WHERE idx = 5"
                          ).fetchall()[0]
        assert row == (4, "[1,2]", "[2,1]", 1.0, '{"new_factor":1}')
        groups = con.execute("SELECT config_id, count(*) FROM items GROUP BY ALL ORDER BY 1").fetchall()
    assert [g[1] for g in groups] == [167, 167, 166]


def test_cache_key_is_canonical():
    a = store.cache_key("m/x", None, {"top_p": 0.25, "temperature": 0.25}, "p", 0)
    b = store.cache_key("m/x", "", {"temperature": 0.25, "top_p": 0.25}, "p", 0)
    assert a == b and len(a) == 64
    assert a != store.cache_key("m/x", None, {"temperature": 0.25, "top_p": 0.25}, "p", 1)
    assert a != store.cache_key("m/x", "http://h/v1", {"temperature": 0.25, "top_p": 0.25}, "p", 0)
    assert a != store.cache_key("m/y", None, {"temperature": 0.25, "top_p": 0.25}, "p", 0)


def test_success_never_replaced_by_failure(tmp_path):
    db = tmp_path / "s.duckdb"
    ok = [{"run_id": "r", "idx": i, "cache_key": f"k{i}", "correct": True, "error": None} for i in range(4)]
    calls = [{"cache_key": f"k{i}", "model": "m", "response": "{1}", "at": store.now_utc()} for i in range(4)]
    bad = [{"run_id": "r", "idx": i, "cache_key": None, "error": "HTTP 500"} for i in range(2, 6)]
    with store.connect(db) as con, store.transaction(con):
        store.write_calls_results(con, calls, ok)
        store.write_calls_results(con, [], bad)
        store.write_calls_results(con, [], bad)  # idempotent
    with store.connect(db) as con:
        rows = con.execute("SELECT idx, error FROM results ORDER BY idx").fetchall()
        assert rows == [(0, None), (1, None), (2, None), (3, None), (4, "HTTP 500"), (5, "HTTP 500")]
        fixed = [{"run_id": "r", "idx": 4, "cache_key": "k0", "correct": False, "error": None}]
        store.write_calls_results(con, [], fixed)
        assert con.execute("SELECT error, correct FROM results WHERE idx = 4").fetchall() == [(None, False)]
        assert set(store.lookup_calls(con, ["k0", "k3", "nope"])) == {"k0", "k3"}


_HOLDER = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("CREATE TABLE IF NOT EXISTS hold(x INT)")
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
""")


def _hold(path, seconds):
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_connect_waits_for_another_process(tmp_path):
    db = tmp_path / "s.duckdb"
    with store.connect(db):
        pass
    holder = _hold(db, 1.0)
    try:
        # the file really is locked by the other process …
        with pytest.raises(duckdb.Error):
            duckdb.connect(str(db)).close()
        # … and connect() waits for it instead of failing
        t0 = time.monotonic()
        with store.connect(db, timeout=30) as con:
            assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0
        assert time.monotonic() - t0 > 0.2
    finally:
        holder.wait(10)


def test_connect_gives_up_with_clear_error(tmp_path):
    db = tmp_path / "s.duckdb"
    with store.connect(db):
        pass
    holder = _hold(db, 3.0)
    try:
        with pytest.raises(store.DatabaseBusy, match="busy"):
            with store.connect(db, timeout=0.3):
                pass
    finally:
        holder.wait(10)


def test_default_path_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "x.duckdb"))
    assert store.default_db_path() == tmp_path / "x.duckdb"
    monkeypatch.delenv("STUDIO_DB")
    assert store.default_db_path().name == "studio.duckdb" and store.default_db_path().parent.name == ".studio"

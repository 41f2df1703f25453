"""The store owns its tables: no SQL outside core/store writes a table of the store (its runs, items, calls, results,
batches, claims, caches …); every write goes through core.store's functions. The statements are parsed
(tests/support/sql_writes.py): any case, a ``WITH`` before the write, comments, quoting and f-strings do not hide
one. The store's tables are those of a new store file, as core.store makes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sql_writes import files_outside_the_store, store_tables, store_writes, writes_in_file

# file -> why it may write store tables itself
ALLOWED = {
    "bench/strict_backfill.py": "builds a version-1 file of a million answers for the migration to upgrade (the "
                                "store's functions write the current layout only)",
}


@pytest.fixture(scope="module")
def tables() -> set[str]:
    return store_tables()


def test_the_store_tables_are_read_from_a_real_store(tables):
    assert {"runs", "items", "calls", "results", "batches", "batch_requests", "claims", "analysis_cache",
            "embedding_cache", "embedding_results", "v_results"} <= tables


def test_no_sql_outside_the_store_writes_a_store_table(tables):
    found = [w for w in store_writes(files_outside_the_store(), tables) if w.path not in ALLOWED]
    assert not found, ("SQL writing a store table outside core/store (add a function to core.store and call it):\n"
                       + "\n".join(map(str, found)))


def test_every_allowed_file_still_writes_a_store_table(tables):
    root = Path(__file__).resolve().parents[2]
    for path in ALLOWED:
        assert writes_in_file(root / path, tables, root), f"{path} writes no store table any more: drop it"


PLANTED = '''\
def sneaky(con, sets, table):
    con.execute("delete from runs where run_id = ?", ["r"])                                      # 2
    con.execute("""WITH fresh AS (SELECT 1 AS idx)
                   INSERT INTO items (idx) SELECT idx FROM fresh""")                             # 3
    con.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", ["r"])                               # 5
    con.execute('Update "RESULTS" AS r SET correct = true')                                      # 6
    con.execute("DELETE /* only the old */ FROM main.calls WHERE at < now()")                   # 7
    con.execute("INSERT OR REPLACE INTO " "analysis_cache VALUES (?, ?, now())", ["k", "v"])    # 8
    con.execute("insert into " + "batches by name select * from t")                             # 9
    con.execute("merge into claims using t on claims.cache_key = t.k when matched then delete") # 10
    con.execute("SELECT 1; TRUNCATE batch_requests")                                            # 11
    con.execute("DROP TABLE IF EXISTS embedding_cache")                                         # 12
    con.execute("COPY embedding_results FROM 'x.parquet'")                                      # 13
    con.execute("ALTER TABLE runs ADD COLUMN x INT")                                            # 14
    # reads, and writes of tables that are not the store's: none of them is a finding
    con.execute("SELECT * FROM runs WHERE status = 'running'")                                  # 16
    con.execute("CREATE OR REPLACE TEMP TABLE _mine AS SELECT * FROM results")                  # 17
    con.execute("INSERT INTO _mine SELECT * FROM items")                                        # 18
    con.execute("COPY runs TO 'runs.csv'")                                                      # 19
    con.execute(f"DELETE FROM {table} WHERE x = 1")                                             # 20
    return "Delete a run with its items; figures update as results merge into runs."           # 21
'''


def test_the_scanner_catches_each_way_round_it(tmp_path, tables):
    (tmp_path / "core" / "runner").mkdir(parents=True)
    path = tmp_path / "core" / "runner" / "sneaky.py"
    path.write_text(PLANTED, encoding="utf-8")
    found = {(w.line, w.table) for w in writes_in_file(path, tables, tmp_path)}
    assert found == {(2, "runs"), (3, "items"), (5, "runs"), (6, "results"), (7, "calls"), (8, "analysis_cache"),
                     (9, "batches"), (10, "claims"), (11, "batch_requests"), (12, "embedding_cache"),
                     (13, "embedding_results"), (14, "runs")}
    assert [str(w).split(":")[0] for w in store_writes([path], tables, tmp_path)] == ["core/runner/sneaky.py"] * 12

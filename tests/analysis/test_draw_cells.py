"""``draw_contrasts.cells_table``: a cell's mean verdict is Σ s / Σ n over the items of its (group, stratum, draw,
level), whether every cell holds one configuration class (the cells are the classes' rows) or several classes share
a cell (their rows are summed) — checked against pandas on a real DuckDB connection."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from core.analysis.draw_contrasts import cells_table, key_sql

# classes: (class, series, operation, size_b); size_b changes inside (series, operation) for classes 3 and 4
CLASSES = [(1, "m1", "union", 2), (2, "m1", "intersection", 2), (3, "m2", "union", 2), (4, "m2", "union", 4),
           (5, "m2", "intersection", 2)]
# items summed per (class, draw): s = sum of verdicts (0 / 100), n = items
ITEMS = [(1, 10, 100, 1), (1, 11, 0, 1), (2, 10, 200, 3), (2, 11, 100, 1), (3, 10, 100, 2), (4, 10, 0, 1),
         (4, 11, 300, 4), (5, 10, 100, 1), (5, 11, 0, 2)]


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE configs (_cls BIGINT, model VARCHAR, operation VARCHAR, size_b BIGINT)")
    c.executemany("INSERT INTO configs VALUES (?, ?, ?, ?)", CLASSES)
    c.execute("CREATE TABLE items (_cls BIGINT, draw UBIGINT, s HUGEINT, n BIGINT)")
    c.executemany("INSERT INTO items VALUES (?, ?, ?, ?)", ITEMS)
    yield c
    c.close()


def _expected(strata: list[str]) -> pd.DataFrame:
    cls = pd.DataFrame(CLASSES, columns=["_cls", "model", "operation", "size_b"])
    items = pd.DataFrame(ITEMS, columns=["_cls", "draw", "s", "n"]).merge(cls, on="_cls")
    got = items.groupby(["model", *strata, "draw", "operation"])[["s", "n"]].sum().reset_index()
    got["y"] = got["s"] / got["n"]
    return got


@pytest.mark.parametrize("strata", [["size_b"], []], ids=["a class per cell", "classes share cells"])
def test_cells_are_the_mean_verdict_of_their_items(con, strata):
    gid = dict(con.execute(f"SELECT DISTINCT model, {key_sql(['model'])} FROM configs").fetchall())
    sid = {(): con.execute(f"SELECT {key_sql([])}").fetchone()[0]}
    if strata:
        sid = {(v,): k for v, k in con.execute(f"SELECT DISTINCT size_b, {key_sql(strata)} FROM configs").fetchall()}
    want = sorted((gid[r.model], sid[tuple(getattr(r, c) for c in strata)], r.draw, r.operation, pytest.approx(r.y))
                  for r in _expected(strata).itertuples())
    with cells_table(con, "items", "configs", "", [], "operation", ["model"], strata, []) as (cells, _):
        got = sorted((g, s, d, lvl, float(y)) for g, s, d, lvl, y in
                     con.execute(f"SELECT _gid, _s, draw, lvl, y FROM {cells}").fetchall())
    assert [w[:4] for w in want] == [g[:4] for g in got]
    assert [g[4] for g in got] == [w[4] for w in want]
    # sharing cells pools the classes' items: m2's union at draw 11 is class 4's alone, at draw 10 classes 3 and 4
    if not strata:
        pooled = {(d, lvl): y for g, _, d, lvl, y in got if g == gid["m2"]}
        assert pooled[10, "union"] == pytest.approx(100 / 3) and pooled[11, "union"] == pytest.approx(75)

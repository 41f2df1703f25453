"""`--limit N` takes N items spread over the grid (every level of every factor as soon as N allows), the same ones
for `generate` and `run`, deterministically."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from core.config import read_run_spec
from core.tasks import quantifiers as Q, select_items, setops
from core.tasks.base import spread_indices
from tests.support import ROOT

DECEPTIVE = ROOT / "data" / "configs" / "deceptive.yaml"


def test_limit_12_on_the_three_condition_deceptive_config_has_every_condition_and_operation():
    cfg = read_run_spec(DECEPTIVE).config
    items = list(select_items(setops, cfg, 12))
    assert len(items) == 12 and len({it["idx"] for it in items}) == 12
    assert Counter(it["condition"] for it in items) == {"not_swapped": 4, "swapped": 4, "random": 4}
    assert set(Counter(it["operation"] for it in items).values()) == {3}
    assert [it["idx"] for it in items] == sorted(it["idx"] for it in items)
    assert items == list(select_items(setops, cfg, 12))   # a pure function of the config and N
    first = list(select_items(setops, cfg, 12, pick="first"))   # what older runs picked: not spread
    assert {it["condition"] for it in first} == {"not_swapped"}


def test_every_level_of_every_factor_as_soon_as_n_allows():
    cfg = setops.load_config(setops.PRESETS["paper-main"])
    idx = setops.spread(cfg, 8)
    items = [setops.item(cfg, i) for i in idx]
    for factor, levels in (("operation", 4), ("size_a", 4), ("members", 2), ("phrasing", 2), ("approach", 4),
                           ("shots", 4)):
        assert len({it[factor] for it in items}) == levels, factor


def test_quantifier_limits_spread_over_quantifiers_nouns_predicates_and_counts():
    cfg = Q.load_config(Q.PRESETS["gqg-vanilla"])
    items = [Q.item(cfg, i) for i in Q.spread(cfg, 30)]
    assert len({it["quantifier"] for it in items}) == 15 and len({it["object"] for it in items}) == 12
    assert {it["predicate"] for it in items} == {"large", "small"}
    assert len({it["count_asked"] for it in items}) > 10   # not always the first count of a cell


@pytest.mark.parametrize("n", [0, 1, 5, 23, 24, 25, 100])
def test_spread_indices_are_distinct_and_within_the_grid(n):
    cells = [{"a": i % 3, "b": i % 4} for i in range(12)]
    out = spread_indices(cells, 2, n, seed=1, index_of=lambda c, s: c * 2 + s)
    assert len(out) == min(n, 24) and len(set(out)) == len(out) and all(0 <= i < 24 for i in out)


def test_more_items_than_cells_take_every_cell_before_any_twice():
    cells = [{"op": op} for op in "abcd"]
    out = spread_indices(cells, 5, 6, seed=0, index_of=lambda c, s: c * 5 + s)
    assert Counter(i // 5 for i in out).most_common(1)[0][1] == 2 and len({i // 5 for i in out}) == 4


def test_generate_and_run_pick_the_same_items(cli, tmp_path):
    out = tmp_path / "items.jsonl"
    assert cli("generate", "setops", "--config", DECEPTIVE, "--out", out, "--limit", "12").returncode == 0
    generated = [json.loads(line)["idx"] for line in out.read_text().splitlines()]
    db = tmp_path / "s.duckdb"
    r = cli("run", "--config", DECEPTIVE, "--model", "reference/solver", "--db", db, "--limit", "12", "--no-progress")
    assert r.returncode == 0, r.stderr
    from core import store

    with store.connect(db) as con:
        stored = con.execute("SELECT idx, condition FROM items ORDER BY idx").fetchall()
    assert [i for i, _ in stored] == generated
    assert {c for _, c in stored} == {"not_swapped", "swapped", "random"}

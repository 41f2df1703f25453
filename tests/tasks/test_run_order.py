"""Runs of deceptive grids call their items draw by draw (each sample's conditions together); other grids keep index
order. The order changes which items are answered first, never which items a run holds."""

from __future__ import annotations

from core.tasks import get_task, in_run_order

SETOPS = get_task("setops")
DECEPTIVE = {"task": "setops", "seed": 3, "samples": 3, "operations": ["intersection"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}


def test_a_deceptive_grid_runs_pair_by_pair():
    cfg = SETOPS.load_config(DECEPTIVE)
    items = list(SETOPS.items(cfg))
    ordered = in_run_order(SETOPS, cfg, items)
    assert [(it["sample"], it["condition"]) for it in ordered] == [
        (0, "not_swapped"), (0, "swapped"), (1, "not_swapped"), (1, "swapped"), (2, "not_swapped"), (2, "swapped")]
    assert sorted(it["idx"] for it in ordered) == [it["idx"] for it in items]


def test_other_grids_keep_index_order():
    cfg = SETOPS.load_config({**DECEPTIVE, "members": ["words"], "conditions": ["not_swapped"]})
    items = list(SETOPS.items(cfg))
    assert in_run_order(SETOPS, cfg, items) == items
    quant = get_task("quantifiers")
    assert not hasattr(quant, "run_order")

"""Items generated ahead (while the run is registered) are the same items, generated once; an error is raised
where the items are asked for."""

from __future__ import annotations

import pytest

from core.models import SamplingParams
from core.runner import plan as P

CFG = {"task": "setops", "samples": 3, "sizes": [2, 4], "members": ["numbers", "words"], "seed": 7}


def _plan():
    return P.make_plan(CFG, "openai-compatible/x", SamplingParams(), "http://localhost:1/v1", None, None, "cli")


def test_prefetched_items_are_the_items():
    plain = P.run_items(_plan())
    ahead = _plan()
    P.prefetch_items(ahead)
    assert P.run_items(ahead) == plain
    assert "_items_pending" not in ahead.__dict__   # taken once; asking again generates anew, the same items
    assert P.run_items(ahead) == plain


def test_a_generation_error_reaches_the_caller(monkeypatch):
    import core.tasks as tasks

    def broken(*a, **k):
        raise ValueError("no such grid")

    pl = _plan()
    monkeypatch.setattr(tasks, "select_items", broken)
    P.prefetch_items(pl)
    with pytest.raises(ValueError, match="no such grid"):
        P.run_items(pl)

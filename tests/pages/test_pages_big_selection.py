"""A selection too big for a marker per configuration (more than summaries.MAX_DRAWN_POINTS) opens Results and
Compare with static SVG violins — no Plotly chart, whose script costs a new browser tab ~0.9 s — and "Zoomable
chart" switches to the Plotly figure of the same violins. Small selections keep the clickable Plotly chart."""

from __future__ import annotations

import shutil

import pytest

from core.analysis import summaries
from tests.support import SMALL_GRID as GRID


@pytest.fixture(scope="module")
def two_runs_store(tmp_path_factory):
    """Two solver runs with some answers made wrong (violins with a spread), written once for the module."""
    import random

    from core import runner
    from tests.analysis.test_aggregates_equal_rows import _perturb

    db = str(tmp_path_factory.mktemp("two_runs") / "studio.duckdb")
    ids = [runner.run(GRID, "reference/solver", db_path=db).run_id,
           runner.run({**GRID, "seed": 1}, "reference/solver", db_path=db, name="second").run_id]
    _perturb(db, ids, random.Random(3))
    return db, ids


@pytest.fixture()
def two_runs(two_runs_store, page_db):
    """The module's two runs in a copy of their store for each test (what a page keeps in its store is never what
    the next test finds)."""
    template, ids = two_runs_store
    shutil.copyfile(template, page_db)
    return ids


def _svgs(at) -> list[str]:
    # one SVG, or one per panel in a <div> (two runs of one model: a panel each)
    return [m.value for m in at.markdown if m.value.startswith(("<svg", "<div><svg"))
            and "Violins of per-configuration" in m.value]


def _switch(at, key: str, value: bool):
    at.toggle(key=key).set_value(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.parametrize("page,key", [("pages/results.py", "res_interactive"), ("pages/compare.py", "cmp_interactive")])
def test_big_selection_opens_with_static_violins(open_page, two_runs, monkeypatch, page, key):
    monkeypatch.setattr(summaries, "MAX_DRAWN_POINTS", 3)     # these runs' 8 configurations count as many
    at = open_page(page, {"runs": ",".join(two_runs)})
    (svg,) = _svgs(at)
    assert not at.get("plotly_chart")
    assert "<polygon" in svg and "<title>" in svg              # outlines, and numbers to hover for
    assert any("evenly spaced quantiles" in c.value for c in at.caption)
    _switch(at, key, True)
    assert not _svgs(at) and len(at.get("plotly_chart")) == 1
    _switch(at, key, False)
    assert len(_svgs(at)) == 1 and not at.get("plotly_chart")


@pytest.mark.parametrize("page", ["pages/results.py", "pages/compare.py"])
def test_small_selection_keeps_the_plotly_chart(open_page, two_runs, page):
    at = open_page(page, {"runs": ",".join(two_runs)})
    assert not _svgs(at) and len(at.get("plotly_chart")) == 1
    assert not [t for t in at.toggle if t.label == "Zoomable chart"]

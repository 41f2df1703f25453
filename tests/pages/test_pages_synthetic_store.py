"""Every page opens without an exception on a store of synthetic runs (tests/support/synthetic.py): runs written
around the runner — no creation time, no parameters, deceptive items without word pairs — as a big benchmark store
holds them (bench/page_loads.py). The Deceptive sets page once failed on their missing time ("NaTType does not
support strftime")."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from core import store
from tests.support.synthetic import fill_synthetic
from ui.nav import PAGES


@pytest.fixture(scope="module")
def synthetic_store(tmp_path_factory):
    """The synthetic store, written once for the module."""
    db = str(tmp_path_factory.mktemp("synthetic") / "synthetic.duckdb")
    with store.connect(db):
        pass
    con = duckdb.connect(db)
    try:
        ids = fill_synthetic(con, 6_000, samples=10)
    finally:
        con.close()
    return db, ids


@pytest.fixture()
def synthetic_db(synthetic_store, tmp_path, monkeypatch):
    """A copy of the module's synthetic store for each page: what one page keeps in its store (the findings it
    computed) is never what the next page finds."""
    template, ids = synthetic_store
    db = str(tmp_path / "synthetic.duckdb")
    shutil.copyfile(template, db)
    monkeypatch.setenv("STUDIO_DB", db)
    return ids


@pytest.mark.parametrize("page", [path for _, path, _, _ in PAGES])
def test_page_opens_on_synthetic_runs(open_page, synthetic_db, page):
    query = {"runs": ",".join(synthetic_db)} if page.endswith(("results.py", "findings.py", "compare.py")) else {}
    at = open_page(page, query)            # fails on any exception
    assert not at.exception

"""Every page opens without an exception on a store of synthetic runs (tests/support/synthetic.py): runs written
around the runner — no creation time, no parameters, deceptive items without word pairs — as a big benchmark store
holds them (bench/page_loads.py). The Deceptive sets page once failed on their missing time ("NaTType does not
support strftime")."""

from __future__ import annotations

import duckdb
import pytest

from core import store
from tests.support.synthetic import fill_synthetic
from ui.nav import PAGES


@pytest.fixture()
def synthetic_db(tmp_path, monkeypatch):
    db = str(tmp_path / "synthetic.duckdb")
    with store.connect(db):
        pass
    con = duckdb.connect(db)
    try:
        ids = fill_synthetic(con, 6_000, samples=10)
    finally:
        con.close()
    monkeypatch.setenv("STUDIO_DB", db)
    return ids


@pytest.mark.parametrize("page", [path for _, path, _, _ in PAGES])
def test_page_opens_on_synthetic_runs(open_page, synthetic_db, page):
    query = {"runs": ",".join(synthetic_db)} if page.endswith(("results.py", "findings.py", "compare.py")) else {}
    at = open_page(page, query)            # fails on any exception
    assert not at.exception

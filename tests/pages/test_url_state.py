"""Settings that live in the URL (issue 22): a reload or a shared link opens the same view — the Results view
(tab), the Deceptive sets grid (seed, size, samples, part of speech) — and run headings show names, not ids."""

from __future__ import annotations

import shutil

import pytest

from core import runner

GRID = {"task": "setops", "seed": 0, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
        "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture(scope="module")
def solver_store(tmp_path_factory):
    """One solver run of GRID named "solver on numbers", written once for the module: (store, run id)."""
    db = tmp_path_factory.mktemp("url_state") / "studio.duckdb"
    return db, runner.run(GRID, "reference/solver", db_path=db, name="solver on numbers").run_id


@pytest.fixture()
def run_id(solver_store, tmp_path, monkeypatch):
    """The module's run, in a copy of its store for each test (STUDIO_DB): what a page keeps in its store is never
    what the next test finds."""
    template, run = solver_store
    db = tmp_path / "studio.duckdb"
    shutil.copyfile(template, db)
    monkeypatch.setenv("STUDIO_DB", str(db))
    return run


def _texts(at) -> str:
    return " ".join([*(str(m.value) for m in [*at.markdown, *at.caption, *at.subheader, *at.info]),
                     *(str(e.label) for e in at.expander)])


@pytest.mark.parametrize("tab, shows", [("errors", "Row definitions"), ("robustness", "Robustness score per model"),
                                        ("", "One configuration")])
def test_results_view_comes_from_the_url(open_page, run_id, tab, shows):
    at = open_page("pages/results.py", {"runs": run_id, **({"view": tab} if tab else {})})
    assert shows in _texts(at)
    assert (at.query_params.get("view") or "") == tab
    others = {"errors": "Row definitions", "robustness": "Robustness score per model", "": "One configuration"}
    assert not any(text in _texts(at) for t, text in others.items() if t != tab)   # only the chosen view is built


def test_results_view_change_goes_to_the_url(open_page, run_id):
    at = open_page("pages/results.py", {"runs": run_id})
    at.radio(key="res_view").set_value("drilldown").run()
    assert not at.exception
    assert at.query_params["view"] == "drilldown"


def test_deceptive_grid_comes_from_the_url(open_page, tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    at = open_page("pages/deceptive_sets.py", {"seed": "7", "size": "3", "samples": "4", "pos": "noun"})
    assert at.number_input(key="dec_seed").value == 7
    assert at.selectbox(key="dec_size").value == 3
    assert at.number_input(key="dec_samples").value == 4
    assert at.selectbox(key="dec_pos").value == "noun"
    assert at.query_params["seed"] == "7" and at.query_params["size"] == "3"
    assert not [w for w in at.warning if "Session State" in str(w.value)]
    at.number_input(key="dec_seed").set_value(9).run()
    assert at.query_params["seed"] == "9"


def test_run_heading_is_the_name(open_page, run_id):
    at = open_page("pages/runs.py", {"run": run_id})
    heads = [s.value for s in at.subheader]
    assert any("solver on numbers" in h for h in heads) and not any(run_id in h for h in heads)


def test_equal_set_sizes_are_one_factor(open_page, run_id):
    at = open_page("pages/results.py", {"runs": run_id})       # sizes [2, 4]: |A| = |B| in every item
    options = at.selectbox(key="res_x").options               # AppTest lists the labels shown
    assert "|A| = |B|" in options and "|B|" not in options and "|A|" not in options
    at.radio(key="res_view").set_value("robustness").run()
    assert not at.exception


def test_results_worst_configurations_are_listed_when_opened(open_page, run_id):
    """The list of configurations (and its query) is built only while its expander is open; opened, it lists them
    and a selected row shows its Wilson interval."""
    at = open_page("pages/results.py", {"runs": run_id})
    assert not [d for d in at.dataframe if "Configuration" in d.value.columns]
    at.session_state["res_one"] = True      # what opening the expander does (on_change="rerun")
    at.run()
    grids = [d for d in at.dataframe if "Configuration" in d.value.columns]
    assert len(grids) == 1 and len(grids[0].value) == 4     # 2 operations × 2 sizes, all answered by the solver
    assert (grids[0].value["accuracy"] == 100.0).all()

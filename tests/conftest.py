"""Fixtures shared by several test files."""

from __future__ import annotations

import functools
import gc
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# pages preload the embedded demo model while they render; a page test must not load 1 GB (a test that wants the
# preload sets it back to 1)
os.environ.setdefault("STUDIO_PRELOAD_MODEL", "0")

# Bytecode is cached for the test session even where PYTHONDONTWRITEBYTECODE is set: otherwise every test process
# rewrites the asserts of every test module it collects and compiles the project's modules again, and so does each
# child process the tests start (``python -m core …``, Streamlit servers, Ray workers). The caches go to
# __pycache__ (ignored by git); Python and pytest check them against the source's size and time.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


# Tests that must not share the machine with their own kind run in one pytest-xdist worker (``--dist loadgroup``):
# local Ray clusters (each starts a head and its workers), headless Chromium with a streamlit server, and the
# embedded 1.1 GB model. Keyed by the test file's name.
XDIST_GROUPS = {
    "ray": ("test_ray_engine.py", "test_ray_reliability.py", "test_ray_vllm.py", "test_ray_mapping.py",
            "test_page_ray.py"),
    "browser": ("test_browser_demo_first_screen.py", "test_browser_flow.py", "test_browser_forged_uploads.py",
                "test_browser_presenter.py",
                "test_browser_smoke.py", "test_browser_url_state.py", "test_tabs_race.py"),
    "real_model": ("test_demo_reproduce.py", "test_embedded_default.py", "test_demo_pairs.py", "test_warm_prefix.py"),
}
_GROUP_OF = {name: group for group, names in XDIST_GROUPS.items() for name in names}


def _uses_a_module_fixture_of_its_own(item) -> bool:
    """Whether the test uses a module-scoped fixture defined in its own file (a store built once for the file)."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        for d in defs:
            if d.scope == "module" and Path(getattr(d, "baseid", "") or "").name == item.path.name:
                return True
    return False


@pytest.hookimpl(tryfirst=True)       # before pytest-xdist reads the marks (it names each item by its group)
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = _GROUP_OF.get(item.path.name)
        if group is None and _uses_a_module_fixture_of_its_own(item):
            group = f"module:{item.path.name}"   # one worker builds the file's shared fixture, not each worker
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    items[:] = _slow_modules_first(items)


def _slow_modules_first(items):
    """The test files with a ``slow`` test first, each file's tests kept together and in order: pytest-xdist hands the
    tests out in this order (after the groups), so the long ones start early and the workers end on short ones
    together instead of one of them running a long test alone at the end."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    return sorted(items, key=lambda item: item.path not in slow_files)


def pytest_collection_finish(session):
    """Everything imported while collecting (torch, pandas, streamlit …) is moved out of the garbage collector's
    reach, so a full collection (Python's own, or the one statsmodels' ``multipletests`` runs on every call in the
    Holm test that uses it as the reference) does not walk that whole heap again. With Streamlit imported, its
    scan for installed components is made once for the process (``_scan_streamlit_components_once``)."""
    gc.freeze()
    if "streamlit" in sys.modules:
        _scan_streamlit_components_once()


def _scan_streamlit_components_once() -> None:
    """Streamlit's AppTest looks for installed custom components on the first run of every AppTest: it reads the
    metadata of every installed distribution (~650 here, about half a CPU second), and the page tests open a few
    hundred AppTests. What is installed does not change during a test session, so the scan runs once per process
    and every later AppTest gets the same list."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:      # a Streamlit without custom components v2 does not scan
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)   # (a Streamlit internal: absent, no memo)
    if scan is not None and not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.lru_cache(maxsize=None)(scan)


def pytest_runtest_teardown(item, nextitem):
    """After the last test of the "ray" group in this process, the local Ray those tests shared (``local_ray``) is
    shut down: the tests this worker runs next do not keep an idle cluster beside them. After the last of a row of
    tests that use ``chromium``, the browser they shared is closed (while Playwright's sync API is open, no other
    code of this thread may run an asyncio loop)."""
    group = _GROUP_OF.get(item.path.name)
    if group == "ray" and (nextitem is None or _GROUP_OF.get(nextitem.path.name) != group) and "ray" in sys.modules:
        from core.runner.ray_connect import shutdown

        shutdown()
    if "chromium" in getattr(item, "fixturenames", ()) and (
            nextitem is None or "chromium" not in getattr(nextitem, "fixturenames", ())):
        _close_chromium()


_CHROMIUM: dict = {}     # the browser the tests in a row that use ``chromium`` share, and its Playwright


@pytest.fixture()
def chromium():
    """Headless Chromium under Playwright, launched by the first of a row of tests that use it and closed after the
    last (``pytest_runtest_teardown``), instead of a launch per test. Each test opens its own context
    (``chromium.new_context()``, and closes it): cookies, storage and cache are the context's, so nothing passes from
    one test to the next. Skipped without Chromium, failed under STUDIO_REQUIRE_BROWSER=1."""
    from tests.pages.test_browser_smoke import CHROMIUM, FLAGS, _need_browser

    _need_browser()
    browser = _CHROMIUM.get("browser")
    if browser is not None and not browser.is_connected():      # the last test's browser died: a new one
        _close_chromium()
    if "browser" not in _CHROMIUM:
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
        try:
            _CHROMIUM["browser"] = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        finally:
            if "browser" not in _CHROMIUM:   # the launch failed: its Playwright stops with it
                playwright.stop()
        _CHROMIUM["playwright"] = playwright
    return _CHROMIUM["browser"]


def _close_chromium() -> None:
    browser, playwright = _CHROMIUM.pop("browser", None), _CHROMIUM.pop("playwright", None)
    try:
        if browser is not None and browser.is_connected():
            browser.close()
    finally:
        if playwright is not None:
            playwright.stop()


@pytest.fixture(scope="session")
def ray_session():
    """Shuts this process's Ray down (``core.runner.ray_connect.shutdown``) when the test session ends, if the end of
    the "ray" group did not (``pytest_runtest_teardown``): the Ray tests share one local cluster (``local_ray``; they
    run in one worker, the "ray" group) instead of starting one per module — a start and a shutdown take seconds."""
    yield
    if "ray" in sys.modules:
        from core.runner.ray_connect import shutdown

        shutdown()


@pytest.fixture()
def local_ray(ray_session):
    """This process's local Ray (``core.runner.ray_connect.start_ray``: started by the first test that needs it, kept
    for the others until the "ray" group's last test): its GCS address."""
    ray = pytest.importorskip("ray")
    from core.runner.ray_connect import start_ray

    start_ray(None)
    return ray.get_runtime_context().gcs_address


@pytest.fixture()
def no_ray(ray_session):
    """No Ray in this process when the test starts (one an earlier test left running is shut down); a local Ray the
    test starts stays for the session's other Ray tests."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        from core.runner.ray_connect import shutdown

        shutdown()


# the solver run the browser smoke test and the URL-state test read (their one shared store and server)
SOLVER_GRID = {"task": "setops", "seed": 0, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
               "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture(scope="session")
def solver_grid_app(tmp_path_factory):
    """``streamlit run app.py`` on a store holding one solver run of SOLVER_GRID named "solver grid": (base URL, run
    id), for the browser tests that only read it (each opens its own browser: no session state passes between
    them). Skipped without Chromium, failed under STUDIO_REQUIRE_BROWSER=1."""
    from tests.pages.test_browser_smoke import _need_browser, served

    _need_browser()
    from core import runner

    db = tmp_path_factory.mktemp("solver_grid") / "studio.duckdb"
    run = runner.run(SOLVER_GRID, "reference/solver", db_path=db, name="solver grid")
    with served(db) as base:
        yield base, run.run_id


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture()
def cli(capsys):
    """``python -m core …`` in-process (``core.cli.main``): exit code, stdout and stderr as a user sees them —
    much faster than a subprocess per command."""
    from core.cli import main

    def call(*args):
        capsys.readouterr()
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    return call


@pytest.fixture()
def open_page():
    """Open a dashboard page through app.py's navigation under Streamlit's AppTest, with query parameters; fails on
    any exception shown on the home page or the page."""
    from streamlit.testing.v1 import AppTest

    _scan_streamlit_components_once()
    app = str(Path(__file__).resolve().parent.parent / "app.py")

    def open_(page: str, query: dict | None = None) -> AppTest:
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        at.switch_page(page)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, f"{page}: {[e.value for e in at.exception]}"
        return at

    return open_


@pytest.fixture()
def page_db(tmp_path, monkeypatch):
    """A new store for the pages (STUDIO_DB), with Streamlit's data caches and the analysis memo (what the pages
    share, core/analysis/memo.py) cleared before and after."""
    import streamlit as st

    from core.analysis import memo

    path = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", path)
    st.cache_data.clear()
    memo.clear()
    yield path
    st.cache_data.clear()
    memo.clear()


@pytest.fixture(scope="session")
def curated_pool():
    """The curated word pool (``deceptive.vocabulary(pool="curated")``, kept by its cache for the process), built
    once per test process with each word's blocklist verdict computed once (``tests.support.lexicon.remembering``;
    the same pool, a quarter of the time): tests that draw from the curated pool request it first."""
    from core.lexicon import blocklist as B
    from core.tasks.setops.sets import deceptive as D
    from tests.support.lexicon import remembering

    load = B.load_blocklist
    shipped = remembering(load())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(B, "load_blocklist", lambda path=None: shipped if path is None else load(path))
        return D.vocabulary(None, None, "curated")


@pytest.fixture()
def remembered_blocklist(monkeypatch):
    """The shipped blocklist with each word's verdict computed once (``tests.support.lexicon.remembering``; the
    verdicts are ``Blocklist.blocks``'s own), in place of ``core.lexicon.blocklist.load_blocklist()`` for the test:
    for tests that check many items of the curated pool (the demo's re-asks, its vocabulary)."""
    from core.lexicon import blocklist as B
    from tests.support.lexicon import remembering

    load, shipped = B.load_blocklist, remembering(B.load_blocklist())
    monkeypatch.setattr(B, "load_blocklist", lambda path=None: shipped if path is None else load(path))
    return shipped

"""The page registry (the one list of pages: app.py builds its navigation from it) and links between pages."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st


def _leave_pages_directory_mode() -> None:
    """Streamlit treats an app that has a ``pages/`` folder as an old-style (v1) multipage app until the entry script
    has called st.navigation once in the server process: a first visit straight to e.g. /results?runs=… would run
    pages/results.py on its own (no app.py: no wide layout, the raw file list as navigation). Importing this module
    from any page flips that process-wide flag and reruns, so app.py's navigation takes over (shared URLs work)."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a future Streamlit without the v1 relic
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        # The rerun aborts the import of pages._ui that called this (its last line), and Python then drops the
        # module. Sessions of other tabs importing pages._ui at the same moment (several tabs opened right after the
        # server started) were handed that half-imported module and failed with "cannot import name '_ui' from
        # 'pages'" (issue 13). Every name of pages._ui is defined by now: publish the module on its package first,
        # so they get a complete one; the rerun of this session imports it afresh.
        module = sys.modules.get("pages._ui")
        package = sys.modules.get("pages")
        if module is not None and package is not None:
            package._ui = module
        st.rerun()


# (key, file, title, icon): the one list of pages, in navigation order; the first is the default (Home).
PAGES = (
    ("home", "pages/home.py", "Home", ":material/home:"),
    ("set_operations", "pages/set_operations.py", "Set operations", ":material/join_inner:"),
    ("deceptive_sets", "pages/deceptive_sets.py", "Deceptive sets", ":material/swap_horiz:"),
    ("quantifiers", "pages/quantifiers.py", "Quantifiers", ":material/rule:"),
    ("results", "pages/results.py", "Results", ":material/bar_chart:"),
    ("findings", "pages/findings.py", "Findings", ":material/fact_check:"),
    ("compare", "pages/compare.py", "Compare", ":material/compare_arrows:"),
    ("embeddings", "pages/embeddings.py", "Embeddings", ":material/scatter_plot:"),
    ("runs", "pages/runs.py", "Runs", ":material/history:"),
)
PAGE_FILES = {key: path for key, path, _, _ in PAGES}
APP_DIR = Path(__file__).resolve().parents[2]   # the checkout (app.py)


def page_exists(name: str) -> bool:
    return (APP_DIR / PAGE_FILES[name]).exists()


def navigation() -> None:
    """app.py's navigation over PAGES (Home first), run in the sidebar."""
    pages = [st.Page(path, title=title, icon=icon, default=i == 0) for i, (_, path, title, icon) in enumerate(PAGES)]
    st.navigation(pages, position="sidebar").run()

"""The page registry (the one list of pages: app.py builds its navigation from it) and links between pages."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import streamlit_compat

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
APP_DIR = Path(__file__).resolve().parents[1]   # the checkout (app.py)


def page_exists(name: str) -> bool:
    return (APP_DIR / PAGE_FILES[name]).exists()


def navigation() -> None:
    """app.py's navigation over PAGES (Home first), run in the sidebar."""
    streamlit_compat.mark_app_navigation()
    pages = [st.Page(path, title=title, icon=icon, default=i == 0) for i, (_, path, title, icon) in enumerate(PAGES)]
    st.navigation(pages, position="sidebar").run()

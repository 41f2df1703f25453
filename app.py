"""SetLexSem Studio — Streamlit entry point: navigation over the pages in pages/ (Home first).

Run with ``streamlit run app.py``. Pages are thin: widgets in, core calls, Plotly figures out. Shared helpers
(database handle, cached analysis, model picker, run progress, URL state) live in pages/_ui.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

APP_DIR = Path(__file__).resolve().parent
if str(APP_DIR) not in sys.path:  # so pages can `from pages._ui import …` and `import core`
    sys.path.insert(0, str(APP_DIR))

st.set_page_config(page_title="SetLexSem Studio", page_icon="∩", layout="wide")

PAGES = [
    ("pages/home.py", "Home", ":material/home:", True),
    ("pages/set_operations.py", "Set operations", ":material/join_inner:", False),
    ("pages/deceptive_sets.py", "Deceptive sets", ":material/swap_horiz:", False),
    ("pages/quantifiers.py", "Quantifiers", ":material/rule:", False),
    ("pages/results.py", "Results", ":material/bar_chart:", False),
    ("pages/compare.py", "Compare", ":material/compare_arrows:", False),
    ("pages/embeddings.py", "Embeddings", ":material/scatter_plot:", False),
    ("pages/runs.py", "Runs", ":material/history:", False),
]

pages = [st.Page(path, title=title, icon=icon, default=default) for path, title, icon, default in PAGES]
st.navigation(pages, position="sidebar").run()

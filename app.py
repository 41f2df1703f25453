"""SetLexSem Studio — Streamlit entry point: navigation over the pages in pages/ (Home first).

Run with ``streamlit run app.py``. Pages are thin: widgets in, core calls, Plotly figures out. The page list lives in
ui/nav.py; shared helpers (database handle, cached analysis, model picker, run progress, URL state) in
ui/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

APP_DIR = Path(__file__).resolve().parent
if str(APP_DIR) not in sys.path:  # so pages can `import ui` and `import core`
    sys.path.insert(0, str(APP_DIR))

st.set_page_config(page_title="SetLexSem Studio", page_icon="∩", layout="wide")

import core  # noqa: E402

# one session thread at a time: tabs opened together must not deadlock Python's imports (core's packages and the
# pages' shared helpers, which every page imports)
core.import_packages("ui")

from ui.nav import navigation  # noqa: E402  (after set_page_config and the path setup)

navigation()

"""The one place the dashboard touches a Streamlit internal (tests/architecture/test_streamlit_compat.py fails when
the pinned Streamlit changes it).

Streamlit treats an app whose entry script has a ``pages/`` folder beside it as an old-style (v1) multipage app until
the entry script has called ``st.navigation`` once in the server process (``PagesManager.uses_pages_directory``, a
class attribute). Until then a first visit straight to e.g. ``/results?runs=…`` runs pages/results.py on its own:
no app.py, so no wide layout and the raw file list as navigation. ``leave_pages_directory_mode`` clears that flag
process-wide and reruns the session, so app.py's navigation takes over and shared URLs work.
"""

from __future__ import annotations

import streamlit as st

try:
    from streamlit.runtime.pages_manager import PagesManager
except ImportError:  # a Streamlit without the v1 pages-directory mode
    PagesManager = None


def in_pages_directory_mode() -> bool:
    return PagesManager is not None and bool(getattr(PagesManager, "uses_pages_directory", False))


def leave_pages_directory_mode() -> None:
    """Clear Streamlit's pages-directory flag and rerun this session when it was set; nothing otherwise. Called at
    the end of ``import ui``: the rerun aborts that import, and Python drops the half-imported ``ui`` so the next
    import (this session's rerun, or another session waiting on the module's import lock) starts afresh with the
    flag already cleared."""
    if in_pages_directory_mode():
        PagesManager.uses_pages_directory = False
        st.rerun()

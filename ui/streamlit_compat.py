"""The one place the dashboard touches a Streamlit internal (tests/architecture/test_streamlit_compat.py fails when
the pinned Streamlit changes it).

Streamlit treats an app whose entry script has a ``pages/`` folder beside it as an old-style (v1) multipage app until
the entry script has called ``st.navigation`` once in the server process (``PagesManager.uses_pages_directory``, a
class attribute read at the start of each script run). Until then a visit straight to e.g. ``/results?runs=…`` runs
pages/results.py on its own: no app.py, so no wide layout and the raw file list as navigation.

Every page calls ``require_app_navigation()`` first. app.py's navigation marks the session
(``mark_app_navigation``); a page run in a session without that mark was started in pages-directory mode, so the
flag is cleared process-wide and the session reruns through app.py. Nothing reruns during an import.
"""

from __future__ import annotations

import streamlit as st

try:
    from streamlit.runtime.pages_manager import PagesManager
except ImportError:  # a Streamlit without the v1 pages-directory mode
    PagesManager = None

SESSION_KEY = "studio_app_navigation"


def in_pages_directory_mode() -> bool:
    return PagesManager is not None and bool(getattr(PagesManager, "uses_pages_directory", False))


def mark_app_navigation() -> None:
    """app.py's navigation ran in this session."""
    st.session_state[SESSION_KEY] = True


def require_app_navigation() -> None:
    """Rerun this session through app.py's navigation when the page was run without it (pages-directory mode);
    nothing otherwise."""
    if st.session_state.get(SESSION_KEY):
        return
    if PagesManager is not None:
        PagesManager.uses_pages_directory = False
    st.rerun()

"""ui/streamlit_compat.py relies on one Streamlit internal: the class attribute
``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory`` (an app with a ``pages/`` folder runs in the
v1 pages-directory mode until it is False; ``st.navigation`` sets it False). These fail when the installed Streamlit
drops or renames it, and check that every page asks for app.py's navigation first."""

from __future__ import annotations

import ast
import inspect

from tests.support import ROOT


def test_pages_manager_still_has_the_pages_directory_flag_and_navigation_still_clears_it():
    from streamlit.commands import navigation
    from streamlit.runtime.pages_manager import PagesManager

    assert "uses_pages_directory" in vars(PagesManager)
    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation.navigation)


def test_every_page_calls_require_app_navigation_before_anything_else():
    for path in sorted((ROOT / "pages").glob("*.py")):
        if path.name == "__init__.py":
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        first = next(n for n in body if not isinstance(n, (ast.Import, ast.ImportFrom))
                     and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)))
        assert ast.unparse(first) == "ui.require_app_navigation()", path.name

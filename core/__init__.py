"""SetLexSem Studio core: tasks, prompts, parsing, models, runner, store, analysis.

Everything here is usable without Streamlit; the dashboard pages only call into it.
"""

__version__ = "0.1.0"

import threading as _threading

_IMPORT_LOCK = _threading.Lock()


def import_packages() -> None:
    """Import core's packages, one thread at a time. Python's per-module import locks deadlock when threads import
    a package and its submodules in different orders at the same moment (``_DeadlockError``, then "cannot import
    name … from partially initialized module"): several browser tabs opened on a fresh server start their scripts
    together. The dashboard calls this first, so the packages are whole before any page imports them."""
    with _IMPORT_LOCK:
        import core.analysis  # noqa: F401
        import core.config  # noqa: F401
        import core.models  # noqa: F401
        import core.runner  # noqa: F401
        import core.store  # noqa: F401
        import core.tasks  # noqa: F401


# Under the dashboard, the first `import core` of any session thread imports the packages while it holds core's own
# module lock, so every other thread waits for whole packages (a page can be run before app.py: Streamlit's
# pages-directory mode on a fresh server). Elsewhere (CLI, tests) packages load as they are needed.
if "streamlit" in __import__("sys").modules:
    import_packages()

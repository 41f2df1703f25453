"""SetLexSem Studio core: tasks, prompts, parsing, models, runner, store, analysis.

Everything here is usable without Streamlit; the dashboard pages only call into it.
"""

__version__ = "0.1.0"

import threading as _threading

_IMPORT_LOCK = _threading.Lock()


def import_packages(*more: str) -> None:
    """Import core's packages (and the modules named in ``more``), one thread at a time. Python's per-module import
    locks deadlock when threads import a package and its submodules in different orders at the same moment
    (``_DeadlockError``, then "cannot import name … from partially initialized module"): a thread importing a
    submodule does not wait for a parent package another thread is still initialising. Several browser tabs opened
    on a fresh server start their scripts together; the dashboard calls this first (with its own ``ui``), so
    the packages are whole before any page imports them."""
    import importlib

    with _IMPORT_LOCK:
        import core.analysis  # noqa: F401
        import core.config  # noqa: F401
        import core.models  # noqa: F401
        import core.runner  # noqa: F401
        import core.store  # noqa: F401
        import core.tasks  # noqa: F401

        for name in more:
            importlib.import_module(name)


# Under the dashboard, the first `import core` of any session thread imports the packages while it holds core's own
# module lock, so every other thread waits for whole packages (a page can be run before app.py: Streamlit's
# pages-directory mode on a fresh server). Elsewhere (CLI, tests) packages load as they are needed.
if "streamlit" in __import__("sys").modules:
    import_packages()

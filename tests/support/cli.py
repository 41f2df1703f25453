"""``python -m core`` called in the test's own process, for fixtures that outlive one test (``capsys``, behind the
``cli`` fixture of tests/conftest.py, is per test)."""

from __future__ import annotations

import contextlib
import io


def cli_output(*args) -> str:
    """``python -m core ARGS`` (its main, in this process): what it printed; it must exit 0."""
    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    assert code == 0, err.getvalue()[-2000:]
    return out.getvalue()

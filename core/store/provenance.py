"""Where a run's answers came from — part of every result.

    MADE_HERE, UPLOADED              the two kinds
    of_source(source) -> kind        from a run's ``source`` column
    UPLOADED_SQL / MADE_HERE_SQL     the same as a SQL predicate over ``runs.source`` (bare column name)
    made_here_sql(alias) -> str      the predicate with a table alias (``ru`` → ``ru.source``)
    badge(kind) -> str               the short text pages and reports show

*Made here*: the answers are calls this tool made (the dashboard, ``run``, provider batches and the Ray engine,
whose results enter through the batch import of the tool's own requests): they are in the call cache under the
call's key and can be re-sent. *Uploaded*: the answers are a file's claims (``import``: our own export or a
SetLexSem reference CSV), re-scored or kept as claims row by row (core/store/rescore.py). A run's ``source`` says
which: uploads are stored with ``import:<file name>``.
"""

from __future__ import annotations

MADE_HERE, UPLOADED = "made here", "uploaded"
KINDS = (MADE_HERE, UPLOADED)


def of_source(source) -> str:
    s = str(source or "")
    return UPLOADED if s == "import" or s.startswith("import:") else MADE_HERE


def uploaded_sql(alias: str = "") -> str:
    col = f"{alias}.source" if alias else "source"
    return f"(coalesce({col}, '') = 'import' OR starts_with(coalesce({col}, ''), 'import:'))"


def made_here_sql(alias: str = "") -> str:
    return f"(NOT {uploaded_sql(alias)})"


UPLOADED_SQL = uploaded_sql()
MADE_HERE_SQL = made_here_sql()


def badge(kind: str) -> str:
    """``made here`` / ``uploaded · a file's claims``."""
    return "uploaded · a file's claims" if kind == UPLOADED else "made here"

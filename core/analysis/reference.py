"""The papers' published aggregates (data/reference_figures.json) as tables, to set beside a user's runs."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Iterable

import pandas as pd

from core.errors import UserError
from core.files import DATA_DIR

# --------------------------------------------------------------------------------------------------------------------
# the papers' published aggregates

REFERENCE_PATH = DATA_DIR / "reference_figures.json"


@lru_cache(maxsize=1)
def _reference() -> dict:
    with open(REFERENCE_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def reference_tables() -> list[dict]:
    """[{id, title, source, factors, rows}] — see data/reference_figures.json."""
    return [dict(t) for t in _reference()["tables"]]


def reference_table(table_id: str) -> pd.DataFrame:
    """One published table as a DataFrame (factor columns + mean, std, n), with ``source`` and ``title`` columns."""
    for t in _reference()["tables"]:
        if t["id"] == table_id:
            df = pd.DataFrame(t["rows"])
            df["source"] = t["source"]
            df["title"] = t["title"]
            return df
    raise UserError(f"no reference table {table_id!r}")


def reference_task(table_id: str) -> str:
    """The task a published table belongs to: GQG tables are quantifier results, the others set operations."""
    return "quantifiers" if table_id.startswith("gqg") else "setops"


def reference_for(factor: str, tasks: Iterable[str] | None = None) -> list[dict]:
    """Reference tables grouped by exactly this one factor (to overlay on a violin split by it); with ``tasks``,
    only the tables of those tasks (a set-operation paper's figures never beside quantifier runs, and back)."""
    keep = None if tasks is None else set(tasks)
    return [t for t in reference_tables() if t["factors"] == [factor]
            and (keep is None or reference_task(t["id"]) in keep)]

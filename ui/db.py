"""The database handle of the pages: the store's path, change tokens (of the file; of some runs), analysis calls
shared by every session, the run list, one-line errors, downloads. Never keeps a connection open."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import pandas as pd
import streamlit as st

from core import analysis, store
from core.analysis import memo
from core.errors import UserError
from core.files import csv_text
from ui.text import md

# ------------------------------------------------------------------------------------------------------ database

def db_path() -> str:
    return str(store.resolve_db_path())


def db_token(path: str | None = None) -> str:
    """Changes whenever the DB file or its WAL changes: a key for what reads the whole store (the run list); a view
    of some runs keys on ``runs_token`` instead."""
    return memo.file_token(path or db_path())


@contextmanager
def user_errors(prefix: str = "") -> Iterator[None]:
    """Show a UserError as one clear st.error line instead of a traceback."""
    try:
        yield
    except UserError as exc:
        st.error(f"{prefix}{md(exc)}")


def stop_on_damage(exc: store.DatabaseDamaged) -> None:
    """A damaged database file: one st.error saying which file and what to do, and the page stops there."""
    st.error(md(exc))
    st.stop()


def cached_analysis(name: str, run_ids: Sequence[str] | None, **kwargs):
    """core.analysis.<name>(con, run_ids, **kwargs), computed once for every session of this server per state of
    the runs it reads (core/analysis/memo.py ``view``: a write to another run keeps it; sessions asking at the same
    moment share one computation). The arguments reach it as JSON would give them back (``by`` and ``factors`` as
    tuples)."""
    kwargs = json.loads(json.dumps(kwargs, sort_keys=True, default=str))
    for k, v in list(kwargs.items()):
        if isinstance(v, list) and k in ("by", "factors"):
            kwargs[k] = tuple(v)
    try:
        return memo.view(db_path(), name, getattr(analysis, name), run_ids, **kwargs)
    except store.DatabaseDamaged as exc:
        stop_on_damage(exc)


def runs_token(run_ids: Sequence[str] | None) -> str:
    """A token of the state of these runs (every run for None) for a page's own ``st.cache_data`` key: it changes
    with every write to them and with no other write (core/analysis/memo.py ``store_states``)."""
    try:
        return memo.runs_token(db_path(), run_ids)
    except store.DatabaseDamaged as exc:
        stop_on_damage(exc)


@st.cache_data(show_spinner=False, max_entries=16, ttl=600)
def _runs(db: str, token: str) -> pd.DataFrame:
    return store.list_runs(db)


def runs_df() -> pd.DataFrame:
    """All runs (newest first), cached on the DB token. A database that cannot be read (damaged, or held by
    another process for too long) is one st.error and the page stops."""
    db = db_path()
    try:
        return _runs(db, db_token(db))
    except store.DatabaseDamaged as exc:
        stop_on_damage(exc)
    except UserError as exc:
        st.error(md(exc))
        st.stop()


def run_label(row: Any) -> str:
    """Readable one-line label of a run row (dict or Series): name, model, items, time — the id only when the run
    has no name (pickers use core.analysis.run_choice_labels, which also tells same-named runs apart)."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: getattr(row, k, d))
    name = get("name") or ""
    when = get("created_at")
    when_s = pd.Timestamp(when).strftime("%m-%d %H:%M") if when is not None and not pd.isna(when) else ""
    n = get("n_items")
    n_s = f"{int(n)} items" if n is not None and not pd.isna(n) else ""
    bits = [b for b in (name or get("run_id"), get("model") if get("model") not in name else "", n_s, when_s) if b]
    return " · ".join(str(b) for b in bits)


def df_download(df: pd.DataFrame, fmt: str) -> bytes:
    """A DataFrame as CSV / Parquet / JSONL bytes (for st.download_button)."""
    import io

    if fmt == "csv":   # the one CSV writer: text cells a spreadsheet would run are neutralised
        return csv_text(df).encode("utf-8")
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return buf.getvalue()
    if fmt == "jsonl":
        return df.to_json(orient="records", lines=True, date_format="iso", force_ascii=False).encode("utf-8")
    raise UserError(f"unknown export format {fmt!r}")


def run_batches(run_id: str) -> pd.DataFrame:
    """A run's provider batches (newest first), as the Runs page shows them; empty when it has none."""
    from core.runner.batch_collect import list_batches

    try:
        df = list_batches(db_path(), run_id)
    except UserError:
        return pd.DataFrame()
    if df.empty:
        return df
    df = df.drop(columns=["run_id", "model", "created_at"], errors="ignore")
    df["age"] = df["age"].map(lambda td: f"{td.total_seconds() / 3600:.1f} h" if td.total_seconds() >= 3600
                              else f"{td.total_seconds() / 60:.0f} min")
    return df

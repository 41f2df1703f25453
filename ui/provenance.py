"""Provenance on the pages: where each run's answers came from (core/store/provenance.py).

    provenance_badges(run_ids)    one line naming every run shown with its badge — "made here" (calls this tool
                                  made, in its cache) or "uploaded · a file's claims" — and, for an upload, what
                                  its re-scoring found; every page that names runs calls it once
    made_here_only(key) -> bool   the "Only runs made here" control (kept in the URL as ``here``)
    provenance_suffix(kind)       " · uploaded" for an upload's label in pickers, "" otherwise
"""

from __future__ import annotations

from typing import Sequence

import streamlit as st

from core.store.provenance import UPLOADED, badge
from ui.db import runs_df
from ui.text import md
from ui.url import qp_get, qp_set

_COLOUR = {UPLOADED: "orange"}


def provenance_suffix(kind) -> str:
    return " · uploaded" if kind == UPLOADED else ""


def made_here_only(key: str = "here", container=None) -> bool:
    """A checkbox "Only runs made here" (URL ``here=1``); True leaves uploaded runs out of the page's pickers."""
    box = container or st
    state = f"_only_here_{key}"
    if state not in st.session_state:
        st.session_state[state] = qp_get(key) == "1"
    on = box.checkbox("Only runs made here", key=state,
                      help="Leave out uploaded runs (a file's claims, re-scored here) and keep the runs whose answers "
                           "are calls this tool made.")
    qp_set(**{key: "1" if on else None})
    return bool(on)


def provenance_badges(run_ids: Sequence[str]) -> None:
    """One caption naming each run in ``run_ids`` with its provenance badge (nothing for no runs)."""
    from core import analysis
    from core.store.rescore import disagreements

    runs = runs_df()
    if runs.empty or not run_ids:
        return
    shown = runs[runs["run_id"].isin(list(run_ids))]
    labels = analysis.run_labels(shown)
    parts = []
    for row in shown.to_dict("records"):
        kind = row.get("provenance")
        text = f":{_COLOUR.get(kind, 'green')}-badge[{badge(kind)}] {md(labels.get(row['run_id'], row['run_id']))}"
        if kind == UPLOADED and (flags := disagreements(row.get("run_json"))):
            text += f" (its re-scoring flags {flags} row(s) or more: see Runs)"
        parts.append(text)
    st.caption("Provenance: " + " · ".join(parts))

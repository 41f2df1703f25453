"""Pickers shared by pages: stored runs (labelled, synced with the URL), slice filters on any factor, and the one
scoring switch (strict = the SetLexSem reference's answer rule, lenient = our parser) every page with set-operation
accuracy shows."""

from __future__ import annotations

from typing import Sequence

import streamlit as st

from core import analysis
from ui.db import cached_analysis, runs_df
from ui.provenance import made_here_only, provenance_suffix
from ui.text import md
from ui.url import filters_from_qp, filters_to_qp, qp_get, qp_list, qp_set


def run_picker(label: str, key: str, default: Sequence[str] | None = None, task: str | None = None,
               max_selections: int | None = None, help: str | None = None) -> list[str]:
    """Multiselect of stored runs (labelled; uploads marked), synced with the query parameter ``key``; above it the
    "Only runs made here" checkbox (URL ``<key>_here``)."""
    all_runs = runs = runs_df()
    if task is not None and not runs.empty:
        runs = runs[runs["task"] == task]
    if made_here_only(f"{key}_here") and not runs.empty:
        runs = runs[runs["provenance"] != "uploaded"]
    ids = runs["run_id"].tolist() if not runs.empty else []
    labels = analysis.run_choice_labels(runs) if not runs.empty else {}   # names, never hashes
    kinds = dict(zip(runs["run_id"], runs["provenance"])) if not runs.empty else {}
    labels = {r: f"{text}{provenance_suffix(kinds.get(r))}" for r, text in labels.items()}
    warn_unknown_runs(qp_list(key), ids, all_runs["run_id"].tolist() if not all_runs.empty else [], task)
    wanted = [r for r in qp_list(key) if r in ids] or [r for r in (default or []) if r in ids]
    if max_selections:
        wanted = wanted[:max_selections]
    state_key = f"_pick_{key}"
    _apply_pending_selection(key, state_key)
    if state_key in st.session_state:
        st.session_state[state_key] = [r for r in st.session_state[state_key] if r in ids]
    shown = st.session_state.get(state_key, wanted)
    ids_help = ("Run ids (as in the URL): " + "; ".join(f"{labels.get(r, r)} = {r}" for r in shown[:6])
                if shown else "")
    chosen = st.multiselect(label, ids, default=wanted if state_key not in st.session_state else None,
                            format_func=lambda r: labels.get(r, r), key=state_key, max_selections=max_selections,
                            help=" ".join(t for t in (help, ids_help) if t) or None,
                            placeholder="Choose one or more runs")
    qp_set(**{key: chosen})
    return chosen


def select_runs(key: str, run_ids: Sequence[str]) -> None:
    """Make ``run_ids`` the selection of the run picker ``key`` (call before the picker is drawn in this rerun):
    after a run is started its page shows that run, not whatever was picked before.

    The browser keeps its own copy of the picker's value and sends it with every rerun it asks for, fragment
    reruns included; one asked for before the browser saw this selection (a progress timer firing while the page
    is still drawing, or a click that interrupted this rerun) would put the old value back. So when the picker
    already showed something, the selection is also kept aside with the value it replaces: the next full rerun
    that still reports that old value gets the selection again, once; a rerun reporting anything else (the new
    selection, or the user's own choice) drops it."""
    state_key = f"_pick_{key}"
    replaces = st.session_state.get(state_key)
    if replaces is not None:   # no picker drawn yet: the browser has no old value to send back
        st.session_state[f"_pending_{key}"] = {"ids": list(run_ids), "replaces": list(replaces), "drawn": False}
    st.session_state[state_key] = list(run_ids)
    qp_set(**{key: list(run_ids)})


def _apply_pending_selection(key: str, state_key: str) -> None:
    pending = st.session_state.get(f"_pending_{key}")
    if pending is None:
        return
    current = st.session_state.get(state_key)
    if current == pending["replaces"]:                    # a stale copy from the browser: the selection stands
        st.session_state[state_key] = list(pending["ids"])   # (run_picker writes it to the URL as it draws)
        del st.session_state[f"_pending_{key}"]
    elif current == pending["ids"] and not pending["drawn"]:   # the rerun that made it: the browser has yet to see it
        pending["drawn"] = True
    else:                                                 # the browser has the selection, or the user chose another
        del st.session_state[f"_pending_{key}"]


def warn_unknown_runs(requested: Sequence[str], shown: Sequence[str], stored: Sequence[str],
                      task: str | None = None) -> None:
    """A shared link may name runs deleted since (or mistyped): say so instead of silently showing other runs."""
    gone = [r for r in requested if r not in stored]
    other = [r for r in requested if r in stored and r not in shown]
    if gone:
        st.warning(f"Not in the database (deleted, or a mistyped link): {md(', '.join(gone))}.")
    if other:
        st.warning(f"Not {task or 'selectable'} runs here: {md(', '.join(other))}.")


def slice_filters(run_ids: Sequence[str], key: str, exclude: Sequence[str] = (), expanded: bool = False
                  ) -> dict[str, list]:
    """An expander with one multiselect per varying factor; the slice is kept in the URL (``key``)."""
    initial = filters_from_qp(qp_get(key))
    facts = cached_analysis("selection_facts", run_ids)    # one connection for what the page asks first
    same = bool(facts["sizes_same"])                        # |A| = |B| everywhere: one factor
    factors = analysis.merge_sizes([f for f in facts["varying"]
                                    if f not in exclude and f not in ("run_id", "task", "name")], same)
    chosen: dict[str, list] = {}
    all_levels = facts["levels"]
    with st.expander("Slice (filter on any factor)", expanded=expanded or bool(initial)):
        if not factors:
            st.caption("No factor varies in these runs.")
        cols = st.columns(3)
        for i, f in enumerate(factors):
            levels = all_levels[f]
            as_text = {("none" if v is None else str(v)): v for v in levels}
            default = [t for t in initial.get(f, []) if t in as_text]
            sel = cols[i % 3].multiselect(analysis.factor_label(f, same), list(as_text), default=default,
                                          key=f"{key}_{f}", placeholder="all")
            if sel:
                chosen[f] = [as_text[t] for t in sel]
    qp_set(**{key: filters_to_qp({k: ["none" if v is None else v for v in vals] for k, vals in chosen.items()})})
    return chosen


SCORING_LABELS = {"strict": "Strict (the reference's rule)", "lenient": "Lenient (our parser)"}
SCORING_HELP = ("Strict scores an answer the way the SetLexSem reference code does: only the one <answer></answer> "
                "block counts (two blocks, or none and no set(), = did not follow), members exactly as written (case "
                "kept, spaces removed), ints vs. words never equal. Published figures were scored this way. Lenient "
                "is our parser: it also reads untagged sets, the last of several answer blocks and lower-cases words. "
                "Quantifier runs keep their own scoring under either choice.")
_SCORING_STATE = "_scoring_choice"   # the last choice in this browser session, carried from page to page


def current_scoring(default: str = "strict") -> str:
    """The scoring last chosen in this browser session (any page's switch), else ``default``."""
    choice = st.session_state.get(_SCORING_STATE)
    return choice if choice in SCORING_LABELS else default


def scoring_switch(key: str = "scoring", default: str = "strict", container=None) -> str:
    """Radio "Strict / Lenient", kept in the URL (``key``) and carried to the next page; returns the choice.

    Which value shows: the radio's own state (the user's last click, also carried over from the previous page),
    else the URL's, else this session's last choice, else ``default``."""
    widget_key = f"_scoring_{key}"
    value = st.session_state.get(widget_key)
    if value not in SCORING_LABELS:
        value = qp_get(key)
    if value not in SCORING_LABELS:
        value = current_scoring(default)
    st.session_state[widget_key] = value
    place = container if container is not None else st
    choice = place.radio("Scoring", list(SCORING_LABELS), format_func=SCORING_LABELS.get, horizontal=True,
                         key=widget_key, help=SCORING_HELP)
    choice = choice if choice in SCORING_LABELS else value
    st.session_state[_SCORING_STATE] = choice
    qp_set(**{key: choice})
    return choice

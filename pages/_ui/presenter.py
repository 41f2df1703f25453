"""Presenter mode of the Deceptive sets page (issue 19): the live run's accuracy per condition as big bars (N and
95 % interval drawn) with the paper's Claude Haiku figures beside, a "warming up" state before the first answer, and
the replay of any stored run at a chosen pace — always labelled a replay. The numbers come from
core/analysis/presenter.py; this module only arranges them."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from core import store
from core.analysis import presenter as P
from pages._ui.db import db_path, db_token
from pages._ui.progress import run_is_live
from pages._ui.text import md

REPLAY_STATE = "_presenter_replay"


def _stats(run_id: str, scoring: str, upto=None) -> pd.DataFrame:
    with store.connect(db_path()) as con:
        return P.condition_stats(con, run_id, scoring, upto=upto)


def live_bars(run_id: str, scoring: str, model: str | None = None) -> None:
    """The live run's bars, refreshed while it runs and at rest after."""

    @st.fragment(run_every=1.5 if run_is_live(run_id) else None)
    def _bars():
        stats = _stats(run_id, scoring)
        live = run_is_live(run_id)
        if live and int(stats["n"].sum()) == 0:
            st.info(f"⏳ The model is warming up{f' ({md(model)})' if model else ''}: loading and answering the "
                    "first item. Bars appear with the first answers.")
        st.plotly_chart(P.bars(stats, P.paper_conditions(), title="Live: accuracy per condition"),
                        key=f"presenter_live_{run_id}", config={"displaylogo": False})
        _format_note(stats)
        flag = f"_presenter_live_{run_id}"
        if live:
            st.session_state[flag] = True
        elif st.session_state.pop(flag, False):
            st.rerun(scope="app")   # ended: one last full render, then no timer

    _bars()


def _format_note(stats: pd.DataFrame) -> None:
    n = int(stats["n"].sum())
    if n:
        off = n - int(stats["followed"].sum())
        st.caption(f"{n} answer{'s' if n != 1 else ''}; {off} did not follow the answer format. Bars: accuracy with its 95 % Wilson "
                   "interval and N; grey: the paper's Claude Haiku mean (± std over its configurations).")


@st.cache_data(show_spinner=False, max_entries=16, ttl=600)
def _replayable_runs(db: str, token: str) -> pd.DataFrame:
    """The runs that can be replayed, cached on the DB change token: opening the store to ask cost ~40 ms on every
    script run of the page (each widget change too), and the list changes only when the store does."""
    with store.connect(db) as con:
        return P.replayable_runs(con)


def replay_section(scoring: str) -> None:
    """Pick a stored run and a pace; its answers come back item by item, in the order they were stored."""
    db = db_path()
    runs = _replayable_runs(db, db_token(db))
    if runs.empty:
        st.caption("No stored run with deceptive items to replay yet.")
        return
    labels = {r.run_id: " · ".join(b for b in (r.name or r.run_id, r.model, f"{r.answered} answers",
                                                "" if pd.isna(r.created_at) else
                                                f"{pd.Timestamp(r.created_at):%Y-%m-%d %H:%M}") if b)
              for r in runs.itertuples()}
    c1, c2, c3 = st.columns([3, 1, 1])
    run_id = c1.selectbox("Stored run to replay", list(labels), format_func=labels.get, key="presenter_replay_run")
    pace = c2.select_slider("Pace (answers/s)", [0.5, 1.0, 2.0, 4.0, 8.0], value=2.0, key="presenter_pace")
    if c3.button("▶ Replay", key="presenter_replay_go", use_container_width=True):
        with store.connect(db_path()) as con:
            order = P.replay_order(con, run_id)
        st.session_state[REPLAY_STATE] = {"run_id": run_id, "order": order, "started": time.time(), "pace": pace}
    replay = st.session_state.get(REPLAY_STATE)
    if not replay:
        return
    row = runs[runs["run_id"] == replay["run_id"]]
    meta = row.iloc[0] if len(row) else None
    done_at = replay["started"] + len(replay["order"]) / replay["pace"]

    @st.fragment(run_every=0.5 if time.time() < done_at else None)
    def _replay():
        k = P.replay_position(replay["started"], time.time(), replay["pace"], len(replay["order"]))
        who = (f"{md(meta['name'] or replay['run_id'])} — {md(meta['model'])}, recorded "
               f"{pd.Timestamp(meta['created_at']):%Y-%m-%d %H:%M} ({md(meta['source'] or 'app')})"
               if meta is not None else md(replay["run_id"]))
        st.warning(f"**REPLAY — not live.** Stored answers of {who}, shown {k} of {len(replay['order'])} at "
                   f"{replay['pace']:g} per second. No model is called.")
        stats = _stats(replay["run_id"], scoring, upto=replay["order"][:k])
        st.plotly_chart(P.bars(stats, P.paper_conditions(), title="Replay: accuracy per condition"),
                        key="presenter_replay_bars", config={"displaylogo": False})
        _format_note(stats)
        if k >= len(replay["order"]) and st.session_state.get("_presenter_replay_running"):
            st.session_state["_presenter_replay_running"] = False
            st.rerun(scope="app")    # finished: the timer stops
        st.session_state["_presenter_replay_running"] = k < len(replay["order"])

    _replay()

"""Presenter mode of the Deceptive sets page: the live run's accuracy per condition as big bars (N and 95 % interval
drawn) with the shipped recording and the paper's Claude Haiku figures beside, a "warming up" state before the first
answer, the pairs themselves (each draw as sampled and swapped, side by side, wrong answers diffed against the truth,
swapped members marked with their hypernym), the running paired tally with its exact test, and the replay of any
stored run at a chosen pace — always labelled a replay. The numbers come from core/analysis/presenter.py; this
module only arranges them."""

from __future__ import annotations

import html
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from core import store
from core.analysis import presenter as P
from ui.db import db_path, db_token
from ui.progress import run_is_live
from ui.text import md

REPLAY_STATE = "_presenter_replay"


def _stats(run_id: str, scoring: str, upto=None) -> pd.DataFrame:
    with store.connect(db_path()) as con:
        return P.condition_stats(con, run_id, scoring, upto=upto)


def live_bars(run_id: str, scoring: str, model: str | None = None, conditions=P.CONDITIONS,
              rec: dict | None = None) -> None:
    """The live run's bars (its ``conditions``; the recording beside them), refreshed while it runs and at rest
    after."""

    @st.fragment(run_every=1.5 if run_is_live(run_id) else None)
    def _bars():
        stats = _stats(run_id, scoring)
        live = run_is_live(run_id)
        if live and int(stats["n"].sum()) == 0:
            st.info(f"⏳ The model is warming up{f' ({md(model)})' if model else ''}: loading and answering the "
                    "first item. Bars appear with the first answers.")
        st.plotly_chart(P.bars(stats, P.paper_conditions(), title="Live: accuracy per condition",
                               conditions=conditions, recorded=rec),
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
                   "interval and N; hatched: the shipped recording (not live); grey: the paper's Claude Haiku mean "
                   "(± std over its configurations).")


@st.cache_data(show_spinner=False, max_entries=16, ttl=600)
def _replayable_runs(db: str, token: str) -> pd.DataFrame:
    """The runs that can be replayed, cached on the DB change token: the list changes only when the store does, and
    the page's script runs on every widget change."""
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


# ------------------------------------------------------------------------------------------------ presenter view
PRESENTER_CSS = """<style>
section.main .block-container, [data-testid="stMainBlockContainer"] {max-width: 100%; padding: 1rem 2.5rem;}
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {font-size: 1.35rem; line-height: 1.5;}
[data-testid="stCaptionContainer"] p {font-size: 1.1rem;}
h1 {font-size: 2.6rem !important;} h2, h3 {font-size: 2rem !important;}
</style>"""


def presenter_style(on: bool) -> None:
    """The presenter's width and type: the whole browser width and text that reads from the back of a room."""
    if on:
        st.markdown(PRESENTER_CSS, unsafe_allow_html=True)


SIDE_COLORS = {"A": "#2e6fd8", "B": "#e07b20"}


def _chip(word: str, color: str | None, title: str, mark: str = "", dashed: bool = False) -> str:
    style = ("border:2px dashed #777;color:#222" if dashed else f"background:{color};color:white")
    return (f'<span style="{style};border-radius:7px;padding:2px 9px;margin:2px;display:inline-block;'
            f'font-size:1.05em" title="{html.escape(title)}">{mark}{html.escape(word)}</span>')


def _set_chips(item: dict, side: str) -> str:
    """One set's members, each coloured by the hypernym it comes from (A's blue, B's orange); a member sitting in the
    other hypernym's set carries ⇄."""
    hyp = P.as_dict(item.get("member_hypernyms"))
    ha, hb = item.get("hypernym_a"), item.get("hypernym_b")
    own = ha if side == "A" else hb
    chips = []
    for m in P.as_list(item.get(f"set_{side.lower()}")):
        h = hyp.get(m)
        color = SIDE_COLORS["A"] if h == ha else SIDE_COLORS["B"] if h == hb else "#777"
        moved = h is not None and h != own
        chips.append(_chip(str(m), color, f"a {P.hypernym_name(h)}", "⇄ " if moved else ""))
    return " ".join(chips) or "∅"


def _answer_html(item: dict) -> str:
    """The model's answer: ✓ or ✗, and a wrong answer diffed against the truth (missing members, members that are
    not in the truth — from A, from B, or made up)."""
    if item is None or not isinstance(item.get("condition"), str):
        return '<span style="color:#888">⏳ waiting for the answer…</span>'
    d = P.answer_diff(item)
    truth = P.as_list(item.get("truth"))
    truth_txt = "{" + ", ".join(map(str, truth)) + "}" if truth else "∅"
    if d["answered"] is None:
        return ('<b style="color:#c0392b">✗ did not follow the answer format</b> — truth ' + html.escape(truth_txt))
    said = "{" + ", ".join(d["answered"]) + "}" if d["answered"] else "∅"
    if bool(item.get("correct")):
        return f'<b style="color:#1e8449">✓ right:</b> {html.escape(said)}'
    hyp = P.as_dict(item.get("member_hypernyms"))
    ha, hb = item.get("hypernym_a"), item.get("hypernym_b")
    parts = [f'<b style="color:#c0392b">✗ wrong:</b> {html.escape(said)} · truth {html.escape(truth_txt)}']
    if d["extra"]:
        chips = []
        for m, where in d["extra"]:
            h = hyp.get(m)
            color = SIDE_COLORS["A"] if h == ha else SIDE_COLORS["B"] if h == hb else None
            label = "made up (in neither set)" if where == "made up" else f"in {where} only"
            chips.append(_chip(m, color, label, dashed=where == "made up") + f'<small> ({label})</small>')
        parts.append("not in the truth: " + " ".join(chips))
    if d["missing"]:
        parts.append("missing: " + " ".join(_chip(m, "#555", "in the truth") for m in d["missing"]))
    return "<br>".join(parts)


def _moved_html(item: dict) -> str:
    moved = P.swapped_members(item)
    if not moved:
        return ""
    lines = [f"<i>{html.escape(m)}</i> — a <b>{html.escape(h)}</b> — now in the set of {html.escape(own)} ({side})"
             for m, h, side, own in moved]
    return '<div style="font-size:0.9em;color:#444">⇄ ' + "<br>⇄ ".join(lines) + "</div>"


def _side(item: dict | None, title: str) -> str:
    if item is None:
        return f"<b>{title}</b><br>" + _answer_html(None)
    return (f"<b>{title}</b><br>A = {_set_chips(item, 'A')}<br>B = {_set_chips(item, 'B')}"
            f"{_moved_html(item)}<div style='margin-top:6px'>{_answer_html(item)}</div>")


def _row_item(row, tag: str) -> dict | None:
    """The ``ns_``/``sw_`` half of a pair row as an item dict (None when that half is not answered yet)."""
    if pd.isna(row.get(f"{tag}order")):
        return None
    return {k[len(tag):]: v for k, v in row.items() if k.startswith(tag)}


def pair_cards(pair_table: pd.DataFrame, show: int = 4) -> None:
    """The newest ``show`` draws, each as sampled and swapped side by side with the model's answers."""
    if pair_table.empty:
        st.caption("The first pair appears with the first answers.")
        return
    for _, row in pair_table.iloc[::-1].head(show).iterrows():
        ns, sw = _row_item(row, "ns_"), _row_item(row, "sw_")
        any_item = ns or sw
        ha, hb = any_item.get("hypernym_a"), any_item.get("hypernym_b")
        verdict = ""
        if ns is not None and sw is not None:
            a, b = bool(ns.get("correct")), bool(sw.get("correct"))
            verdict = (" · <b style='color:#c0392b'>right as sampled, wrong when swapped</b>" if a and not b else
                       " · right when swapped, wrong as sampled" if b and not a else
                       " · both right" if a else " · both wrong")
        with st.container(border=True):
            st.markdown(f"<div>Draw {int(row['sample']) + 1}: A from "
                        f"<b style='color:{SIDE_COLORS['A']}'>{html.escape(P.hypernym_name(ha))}</b>, B from "
                        f"<b style='color:{SIDE_COLORS['B']}'>{html.escape(P.hypernym_name(hb))}</b> · "
                        f"{html.escape(str(row['operation']).replace('_', ' '))}{verdict}</div>",
                        unsafe_allow_html=True)
            c1, c2 = st.columns(2)
            c1.markdown(_side(ns, "As sampled"), unsafe_allow_html=True)
            c2.markdown(_side(sw, "Swapped"), unsafe_allow_html=True)


def tally_text(t: dict) -> str:
    """The running paired tally in words: the discordant pairs first (they decide the test)."""
    if not t.get("n"):
        return "No complete pair yet."
    return (f"**Right as sampled, wrong when swapped: {t['only_sampled']} draw{'s' * (t['only_sampled'] != 1)}**; "
            f"the reverse: {t['only_swapped']} · both right {t['both_right']} · both wrong {t['both_wrong']} "
            f"({t['n']} complete pair{'s' * (t['n'] != 1)}). Swapped − as sampled: {P.effect_words(t)}, exact "
            f"McNemar p = {t['p_value']:.3g}.")


@st.cache_data(show_spinner=False, max_entries=4)
def _recording(path: str, stamp: float) -> dict | None:
    return P.recording_summary(path)


def recording() -> dict | None:
    """The shipped recording's summary (None when the file is missing), cached on the file's time stamp."""
    path = P.recording_path()
    if not Path(path).is_file():
        return None
    return _recording(str(path), Path(path).stat().st_mtime)


def recording_card(rec: dict | None) -> None:
    """The recording beside the live bars — always labelled a recording."""
    with st.container(border=True):
        if rec is None:
            st.caption("No recording shipped (data/demo/recording.jsonl is missing).")
            return
        t = rec["tally"]
        st.markdown(f"**RECORDING — not live.** {md(rec['model'])} over **{t['n']} pairs**: "
                    f"**{P.effect_words(t)}** (swapped − as sampled; exact McNemar p = {t['p_value']:.2g})")
        st.caption(f"As sampled {t['sampled']:.0f} %, swapped {t['swapped']:.0f} %; right as sampled and wrong when "
                   f"swapped {t['only_sampled']}, the reverse {t['only_swapped']}; {t['off_format']} of "
                   f"{t['answers']} replies off the answer format. Grid: {md(rec.get('grid', '?'))}. Made by "
                   f"`python -m core run` on {md(rec.get('machine', '?'))}: {md(rec.get('made', '?'))} (as its "
                   "sidecar file says).")


def live_tally(run_id: str, scoring: str, rec: dict | None) -> None:
    """The live run's pairs and paired tally, refreshed while it runs."""

    @st.fragment(run_every=1.5 if run_is_live(run_id) else None)
    def _pairs():
        with store.connect(db_path()) as con:
            table = P.pairs(P.pair_rows(con, run_id, scoring))
        t = P.paired_tally(table)
        st.markdown(tally_text(t))
        if t.get("n") and not P.excludes_zero(t):
            said = f" — the recording above says {P.effect_words(rec['tally'])} over {rec['tally']['n']} pairs" \
                if rec else ""
            st.info(f"Too few pairs yet to tell: the live interval still includes 0{said}.")
        elif t.get("n"):
            st.success("The live interval excludes 0: these pairs alone show the swap effect.")
        if t.get("answers"):
            st.caption(f"{t['off_format']} of {t['answers']} replies did not follow the answer format (an off-format "
                       "reply to an intersection of disjoint sets would parse as ∅ and count as right; here it counts "
                       "as the strict scorer says).")
        pair_cards(table)

    _pairs()


# ------------------------------------------------------------------------------------------------------ the demo
DEMO_CONFIG = "data/configs/deceptive_demo.yaml"
DEMO_MODEL = "local/default"
DEMO_STARTED = "_demo_started"     # run id → (seed, time) of the demos started in this session


@st.cache_resource(show_spinner=False)
def _preload(spec: str) -> bool:
    from core.models.providers.local_llama import preload

    return preload(spec.split("/", 1)[1])


def preload_demo_model() -> None:
    """Load the demo's model in the background while the page renders (once per server process), so the first
    answer after the click does not wait for it. Nothing happens when the model is not installed, or when
    STUDIO_PRELOAD_MODEL is 0 (the tests' setting: a page test must not load 1 GB)."""
    import os

    if os.environ.get("STUDIO_PRELOAD_MODEL", "1").strip() != "0":
        _preload(DEMO_MODEL)


def demo_spec(seed: int):
    """The demo's grid (DEMO_CONFIG) with ``seed``: a RunSpec (config and sampling parameters)."""
    from core.config import run_spec
    from core.files import PROJECT_ROOT, read_yaml_file

    doc = read_yaml_file(PROJECT_ROOT / DEMO_CONFIG)
    doc["seed"] = int(seed)
    return run_spec(doc)


def start_demo(on_page: bool = False) -> None:
    """Start the demo on fresh pairs (a new seed, drawn here and shown) with the embedded default model and follow
    it on the Deceptive sets page (``on_page``: called from that page, which then shows it at once).
    STUDIO_DEMO_SEED fixes the seed instead (a rehearsal of known pairs, or a test)."""
    import os
    import secrets

    from ui.model_picker import ModelChoice
    from ui.progress import start_run
    from ui.url import qp_set

    fixed = os.environ.get("STUDIO_DEMO_SEED", "").strip()
    seed = int(fixed) if fixed.isdigit() else secrets.randbelow(1_000_000)
    spec = demo_spec(seed)
    handle = start_run(spec.config_dict(), ModelChoice(spec=DEMO_MODEL, params=dict(spec.params)),
                       name=f"live demo · deceptive sets · seed {seed}")
    if handle is None:
        return
    st.session_state.setdefault(DEMO_STARTED, {})[handle.run_id] = (seed, time.time())
    st.session_state["dec_run_id"] = handle.run_id
    if on_page:
        st.session_state["_dec_model_next"] = DEMO_MODEL   # the model picker exists already in this script run
        qp_set(run=handle.run_id)
        st.rerun()
    st.session_state["dec_m_model"] = DEMO_MODEL
    st.session_state["dec_presenter"] = True
    st.switch_page("pages/deceptive_sets.py", query_params={"run": handle.run_id})


def _run_header(run_id: str) -> None:
    """Whether this is live, and if not, that it is a stored run and when it was made."""
    record = store.run_record(db_path(), run_id) or {}
    seed = (record.get("config") or {}).get("seed")
    made = record.get("created_at")
    when = f"{pd.Timestamp(made):%Y-%m-%d %H:%M}" if made is not None else "?"
    name, model = record.get("name") or run_id, record.get("model") or "?"
    who = f"{md(name)} · {md(model)}" + ("" if f"seed {seed}" in str(name) else f" · seed {seed}")
    if run_is_live(run_id):
        fresh = run_id in st.session_state.get(DEMO_STARTED, {})
        st.error(f"**● LIVE** — {who}: {'fresh pairs drawn for this click' if fresh else 'running'}, started "
                 f"{when} UTC. The model answers on this machine now.")
    else:
        st.warning(f"**Stored run, not live now** — {who}, made {when} UTC. Its answers are read back from the "
                   "database; **▶ Live demo: fresh pairs** draws new ones.")


def live_panel(run_id: str, model: str | None = None) -> None:
    """The presenter's panel of a run: live or stored, the bars with the recording beside them, progress, the
    running paired tally and the pairs as they arrive."""
    from ui.pickers import scoring_switch
    from ui.progress import run_progress

    _run_header(run_id)
    record = store.run_record(db_path(), run_id) or {}
    conds = [c for c in P.CONDITIONS if c in ((record.get("config") or {}).get("conditions") or P.CONDITIONS)]
    rec = recording()
    scoring = scoring_switch()
    c1, c2 = st.columns([3, 2])
    with c1:
        live_bars(run_id, scoring, model=model, conditions=conds, rec=rec)
    with c2:
        recording_card(rec)
        run_progress(run_id, key="dec", every=1.5, scoring=scoring)
    live_tally(run_id, scoring, rec)

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
              rec: dict | None = None, paper: pd.DataFrame | None = None) -> None:
    """The live run's bars (its ``conditions``; the recording beside them), refreshed while it runs and at rest
    after."""

    @st.fragment(run_every=1.5 if run_is_live(run_id) else None)
    def _bars():
        stats = _stats(run_id, scoring)
        live = run_is_live(run_id)
        if live and int(stats["n"].sum()) == 0:
            st.info(f"⏳ The model is warming up{f' ({md(model)})' if model else ''}: loading and answering the "
                    "first item. Bars appear with the first answers.")
        st.plotly_chart(P.bars(stats, P.paper_conditions() if paper is None else paper,
                               title="This run: accuracy per condition",
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
                   "interval and N; hatched: the shipped recording (not live); grey: the paper's Claude Haiku mean of "
                   "the same operation (± std over its configurations).")


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
section.main .block-container, [data-testid="stMainBlockContainer"] {max-width: 100%; padding: 3.6rem 2.5rem 1rem;}
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
    return (f'<span style="{style};border-radius:7px;padding:0 8px;margin:2px;display:inline-block;'
            f'font-size:0.9em" title="{html.escape(title)}">{mark}{html.escape(word)}</span>')


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
        chips.append(_chip(str(m), color, f"under {P.hypernym_name(h)}", "⇄ " if moved else ""))
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
    lines = [f"<i>{html.escape(m)}</i> — under <b>{html.escape(h)}</b> — now in the set of {html.escape(own)} ({side})"
             for m, h, side, own in moved]
    return '<div style="font-size:0.9em;color:#444">⇄ ' + "<br>⇄ ".join(lines) + "</div>"


def _side(item: dict | None, title: str) -> str:
    if item is None:
        return f"<b>{title}</b><br>" + _answer_html(None)
    return (f"<b>{title}</b><br>A = {_set_chips(item, 'A')}<br>B = {_set_chips(item, 'B')}"
            f"<div style='margin:4px 0'>{_answer_html(item)}</div>{_moved_html(item)}")


def _row_item(row, tag: str) -> dict | None:
    """The ``ns_``/``sw_`` half of a pair row as an item dict (None when that half is not answered yet)."""
    if pd.isna(row.get(f"{tag}order")):
        return None
    return {k[len(tag):]: v for k, v in row.items() if k.startswith(tag)}


def _pair_card(row, verdict: str = "", recorded: bool = False) -> None:
    """One draw as sampled and swapped side by side with the model's answers; ``verdict`` in its header line."""
    ns, sw = _row_item(row, "ns_"), _row_item(row, "sw_")
    any_item = ns or sw
    ha, hb = any_item.get("hypernym_a"), any_item.get("hypernym_b")
    if not verdict and ns is not None and sw is not None:
        verdict = P.PAIR_VERDICTS[(bool(ns.get("correct")), bool(sw.get("correct")))]
    shown = (f" · <b style='color:#c0392b'>{html.escape(verdict)}</b>" if verdict.startswith("right as sampled")
             else f" · {html.escape(verdict)}" if verdict else "")
    where = " (a draw the recording saw fail)" if recorded else ""
    with st.container(border=True):
        st.markdown(f"<div>{draw_label(row['sample'])}{where}: A from "
                    f"<b style='color:{SIDE_COLORS['A']}'>{html.escape(P.hypernym_name(ha))}</b>, B from "
                    f"<b style='color:{SIDE_COLORS['B']}'>{html.escape(P.hypernym_name(hb))}</b> · "
                    f"{html.escape(str(row['operation']).replace('_', ' '))}{shown}</div>",
                    unsafe_allow_html=True)
        c1, c2 = st.columns(2)
        c1.markdown(_side(ns, "As sampled"), unsafe_allow_html=True)
        c2.markdown(_side(sw, "Swapped"), unsafe_allow_html=True)


def draw_label(sample) -> str:
    """A draw's name on a card, the same number as "sample N" in the answer list (the grid's sample index)."""
    return f"Draw {int(sample)}"


def pair_cards(pair_table: pd.DataFrame, show: int | None = None, recorded: bool = False) -> None:
    """Draws, newest first (all of them, or the newest ``show``), each as sampled and swapped side by side."""
    if pair_table.empty:
        st.caption("The first pair appears with the first answers.")
        return
    rows = pair_table.iloc[::-1]
    for _, row in (rows if show is None else rows.head(show)).iterrows():
        _pair_card(row, recorded=recorded)


def failure_cards(pair_table: pd.DataFrame, recorded: bool = False) -> None:
    """Every pair with a wrong answer, newest first — none is dropped as the run goes on — and, while the run has no
    failure yet, the newest pair so the room sees what is being asked."""
    fails = P.failures(pair_table)
    if fails.empty:
        if pair_table.empty:
            st.caption("The first pair appears with the first answers.")
        else:
            st.caption("No wrong answer yet. The newest pair:")
            _pair_card(pair_table.iloc[-1], recorded=recorded)
        return
    for _, row in fails.iterrows():
        _pair_card(row, row["verdict"], recorded=recorded)


def tally_html(t: dict, pending: int = 0) -> str:
    """The running paired tally as four large counts, the swap failures first (full labels, never truncated), with
    the test's line under them — or "too few pairs to test"."""
    cells = [("Right as sampled, wrong when swapped", t.get("only_sampled", 0), "#c0392b"),
             ("Wrong as sampled, right when swapped", t.get("only_swapped", 0), "#555"),
             ("Both right", t.get("both_right", 0), "#1e8449"),
             ("Both wrong", t.get("both_wrong", 0), "#555")]
    boxes = "".join(
        f'<div style="flex:1;border:2px solid {c};border-radius:10px;padding:6px 12px;min-width:0">'
        f'<div style="font-size:2.2rem;font-weight:700;color:{c};line-height:1.1">{int(v)}</div>'
        f'<div style="font-size:1rem;color:#333;line-height:1.25">{html.escape(label)}</div></div>'
        for label, v, c in cells)
    n = int(t.get("n") or 0)
    if not n:
        test = "No complete pair yet."
    elif not P.testable(t):
        test = f"{n} complete pair: too few pairs to test."
    else:
        test = (f"{n} complete pairs · swapped − as sampled: {html.escape(P.effect_words(t))}, exact McNemar "
                f"p = {t['p_value']:.2g}")
    if pending:
        test += f" · {pending} pair{'s' * (pending != 1)} half answered"
    return (f'<div style="display:flex;gap:10px;margin:4px 0">{boxes}</div>'
            f'<div style="font-size:1.05rem;color:#333">{test}</div>')


def tally_text(t: dict) -> str:
    """The running paired tally in words: the discordant pairs first (they decide the test)."""
    if not t.get("n"):
        return "No complete pair yet."
    test = (f"Swapped − as sampled: {P.effect_words(t)}, exact McNemar p = {t['p_value']:.3g}." if P.testable(t)
            else "Too few pairs to test.")
    return (f"**Right as sampled, wrong when swapped: {t['only_sampled']} draw{'s' * (t['only_sampled'] != 1)}**; "
            f"the reverse: {t['only_swapped']} · both right {t['both_right']} · both wrong {t['both_wrong']} "
            f"({t['n']} complete pair{'s' * (t['n'] != 1)}). {test}")


@st.cache_data(show_spinner=False, max_entries=4)
def _recording(path: str, stamp: float) -> dict | None:
    return P.recording_summary(path)


def recording() -> dict | None:
    """The shipped recording's summary (None when the file is missing), cached on the file's time stamp."""
    path = P.recording_path()
    if not Path(path).is_file():
        return None
    return _recording(str(path), Path(path).stat().st_mtime)


def evidence_line(rec: dict | None, paper: pd.DataFrame | None) -> str:
    """The recording's evidence in one line, with its direction, and the paper's figures of the same operation."""
    paper_txt = P.paper_words(paper)
    if rec is None or not rec["tally"].get("n"):
        return f"No recording shipped. {paper_txt}." if paper_txt else "No recording shipped."
    t = rec["tally"]
    how = P.direction_words(t)
    return (f"**Evidence (recording, not live):** {md(rec['model'])} on {t['n']} pairs answered "
            f"**{t['sampled']:.0f} % as sampled → {t['swapped']:.0f} % swapped** — {how}: "
            f"{P.effect_words(t)}, McNemar p = {t['p_value']:.2g}" + (f" · {paper_txt}" if paper_txt else ""))


WHY_EMPTY = ("**Why ∅ is the right answer:** A and B are drawn from two different categories and share no word, so "
             "A ∩ B = ∅ — every word the model names is a failure.")


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


def live_tally(run_id: str, scoring: str, rec: dict | None, recorded: bool = False) -> None:
    """The live run's paired tally and its failure cards (newest first, every one kept), refreshed while it runs."""

    @st.fragment(run_every=1.5 if run_is_live(run_id) else None)
    def _pairs():
        with store.connect(db_path()) as con:
            table = P.pairs(P.pair_rows(con, run_id, scoring))
        t = P.paired_tally(table)
        pending = int((~table["complete"]).sum()) if "complete" in table else 0
        if table.empty and run_is_live(run_id):
            st.info("⏳ The model is answering the first pair (two answers: as sampled, then swapped).")
        st.markdown(tally_html(t, pending), unsafe_allow_html=True)
        if t.get("answers") and t["off_format"]:
            st.caption(f"{t['off_format']} of {t['answers']} replies did not follow the answer format (counted as the "
                       "strict scorer says).")
        failure_cards(table, recorded=recorded)

    _pairs()


def all_pairs(run_id: str, scoring: str) -> None:
    """Every pair of the run, newest first (the failures are above; here the right answers too)."""
    with store.connect(db_path()) as con:
        table = P.pairs(P.pair_rows(con, run_id, scoring))
    pair_cards(table)


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


def _demo_seed() -> int:
    """STUDIO_DEMO_SEED when set (a rehearsal of known pairs, or a test), else a fresh random seed."""
    import os
    import secrets

    fixed = os.environ.get("STUDIO_DEMO_SEED", "").strip()
    return int(fixed) if fixed.isdigit() else secrets.randbelow(1_000_000)


def demo_choice(params: dict):
    """The model the demo runs: local/default, or STUDIO_DEMO_MODEL at STUDIO_DEMO_BASE_URL (a stand-in server for
    tests and benchmarks, e.g. ``openai-compatible/standin`` on a loopback endpoint)."""
    import os

    from ui.model_picker import ModelChoice

    spec = os.environ.get("STUDIO_DEMO_MODEL", "").strip() or DEMO_MODEL
    base = os.environ.get("STUDIO_DEMO_BASE_URL", "").strip() or None
    return ModelChoice(spec=spec, base_url=base, params=dict(params))


def _follow(handle, seed: int, on_page: bool, mode: str) -> None:
    """Remember when this run was opened (answers stored before then are read back, not live) and show it."""
    from ui.url import qp_set

    st.session_state.setdefault(DEMO_STARTED, {})[handle.run_id] = {"seed": seed, "since": store.now_utc(),
                                                                     "mode": mode}
    st.session_state["dec_run_id"] = handle.run_id
    if on_page:
        st.session_state["_dec_model_next"] = DEMO_MODEL   # the model picker exists already in this script run
        st.session_state["_dec_presenter_next"] = True     # and so does the presenter toggle
        qp_set(run=handle.run_id)
        st.rerun()
    st.session_state["dec_m_model"] = DEMO_MODEL
    st.session_state["dec_presenter"] = True
    st.switch_page("pages/deceptive_sets.py", query_params={"run": handle.run_id})


def start_demo(on_page: bool = False) -> None:
    """Start the demo on fresh pairs (a new seed, drawn here and shown) with the embedded default model and follow
    it on the Deceptive sets page (``on_page``: called from that page, which then shows it at once).
    STUDIO_DEMO_SEED fixes the seed instead (a rehearsal of known pairs, or a test): a seed already run reopens its
    stored run, and the page says so."""
    from ui.progress import start_run

    seed = _demo_seed()
    spec = demo_spec(seed)
    handle = start_run(spec.config_dict(), demo_choice(spec.params), name=f"live demo · deceptive sets · seed {seed}")
    if handle is not None:
        _follow(handle, seed, on_page, "fresh")


def start_reask(on_page: bool = False) -> None:
    """Ask the model again, now, pairs the recording saw fail (right as sampled, wrong when swapped): REASK_PAIRS of
    them chosen at random (STUDIO_DEMO_SEED fixes the choice), the recorded items exactly, never from the cache."""
    from core.config import run_spec
    from ui.progress import start_run

    rec = recording()
    if rec is None or not rec.get("failed_samples"):
        st.error("The shipped recording has no failed pair to re-ask (data/demo/recording.jsonl).")
        return
    seed = _demo_seed()
    spec = run_spec(P.reask_doc(rec["failed_samples"], seed))
    n = len(spec.config.only_samples)
    handle = start_run(spec.config_dict(), demo_choice(spec.params), fresh=True,
                       name=f"re-ask · {n} of the recording's {len(rec['failed_samples'])} failed pairs · seed {seed}")
    if handle is not None:
        _follow(handle, seed, on_page, "reask")


def _when(ts) -> str:
    return f"{pd.Timestamp(ts):%Y-%m-%d %H:%M}" if ts is not None and not pd.isna(ts) else "?"


def run_state(run_id: str) -> dict:
    """What the header says about a run: ``live`` (the model answers now), ``read_back`` (answers read from the
    store), their times, and ``reask`` (the recorded draws a re-ask asks again, or None)."""
    record = store.run_record(db_path(), run_id) or {}
    opened = st.session_state.get(DEMO_STARTED, {}).get(run_id)
    since = opened.get("since") if isinstance(opened, dict) else None
    with store.connect(db_path()) as con:
        prov = P.answer_provenance(con, run_id, since)
    running = run_is_live(run_id)
    # live only while the model answers now: a run whose answers all come back from the store is not, whatever it
    # was started as (STUDIO_DEMO_SEED on a seed already run reopens a stored run)
    if since is not None:
        live = running and (prov["now"] > 0 or prov["read_back"] == 0)
    else:
        live = running and prov["read_back"] < prov["answered"] or (running and prov["answered"] == 0)
    return {"record": record, "live": bool(live), "running": running, **prov,
            "mode": opened.get("mode") if isinstance(opened, dict) else None, "opened": since is not None,
            "reask": P.reask_of(record.get("config"))}


def _run_header(state: dict, rec: dict | None) -> None:
    """LIVE or stored (with the answers' time), and for a re-ask where its pairs come from."""
    record = state["record"]
    seed = (record.get("config") or {}).get("seed")
    name, model = record.get("name") or record.get("run_id") or "?", record.get("model") or "?"
    chosen = state["reask"]
    who = md(model) if chosen is not None or f"seed {seed}" in str(name) else f"{md(model)} · seed {seed}"
    if chosen is not None:
        fails, total = (len(rec["failed_samples"]), rec["tally"]["n"]) if rec else ("?", "?")
        rate = (f"{100 * fails / total:.0f} %" if isinstance(fails, int) and total else "?")
        source = (f"{len(chosen)} pairs chosen from the recording's failures (right as sampled, wrong when swapped "
                  f"in **{fails} of {total} pairs** recorded, {rate})")
    elif state["live"] and state["mode"] == "fresh":
        source = f"fresh pairs drawn for this click, seed {seed}"
    else:
        source = md(name)
    if state["live"]:
        back = (f" · {state['read_back']} answers read back from the store (made {_when(state['first'])} UTC)"
                if state["read_back"] else "")
        st.error(f"**● LIVE — the model answers on this machine now** · {who} · {source}{back}")
    elif state["read_back"] or state["answered"]:
        span = _when(state["made_first"])
        if state["made_last"] is not None and _when(state["made_last"]) != span:
            span += f" – {_when(state['made_last'])[-5:]}"
        if state["opened"] and state["now"] and not state["read_back"]:
            st.warning(f"**FINISHED — not live now.** {who} · {source}. Its {state['answered']} answers were made on "
                       f"this machine after the click ({span} UTC).")
        else:
            st.warning(f"**STORED — not live.** {who} · {source}. Its {state['answered']} answers were read back "
                       f"from the store (answered {span} UTC); no model answers now.")
    else:
        st.warning(f"**STORED — not live.** {who} · {source}. No answer stored.")


def live_panel(run_id: str, model: str | None = None) -> None:
    """The presenter's panel of a run. First screen: LIVE or stored, the recording's evidence in one line (and the
    paper's of the same operation), why ∅ is right, the running paired tally and every failure card, newest first.
    Folded below: bars, the recording's card, progress, scoring and every pair."""
    from ui.pickers import scoring_switch
    from ui.progress import run_progress

    state = run_state(run_id)
    config = state["record"].get("config") or {}
    conds = [c for c in P.CONDITIONS if c in (config.get("conditions") or P.CONDITIONS)]
    ops = config.get("operations") or []
    rec = recording()
    paper = P.paper_conditions(ops)
    top = st.container()
    more = st.expander("Bars per condition, the recording in full, progress and scoring", expanded=False)
    scoring = scoring_switch(container=more)
    with top:
        _run_header(state, rec)
        st.markdown(evidence_line(rec, paper))
        if ops == ["intersection"]:
            st.markdown(WHY_EMPTY)
        live_tally(run_id, scoring, rec, recorded=state["reask"] is not None)
    with more:
        c1, c2 = st.columns([3, 2])
        with c1:
            live_bars(run_id, scoring, model=model, conditions=conds, rec=rec, paper=paper)
        with c2:
            recording_card(rec)
        run_progress(run_id, key="dec", every=1.5, scoring=scoring, accuracy=False)
    with st.expander("Every pair, newest first (right answers too)", expanded=False):
        all_pairs(run_id, scoring)

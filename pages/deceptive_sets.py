"""Deceptive sets (live demo). First on the page, the presenter's panel of the run it follows: bars per condition
with the shipped recording beside them, the running paired tally, and the pairs themselves (each draw as sampled and
swapped, the model's answers as they arrive). Under it, folded away, the configuration: a pair of hypernyms (fixed or
drawn per sample), the conditions side by side with members coloured by hypernym, the model and the Run button."""

from __future__ import annotations

import html
import json

import streamlit as st

import ui
from core import analysis, store, urlstate
from core.analysis import figures
from core.config import run_spec  # noqa: E402
from core.errors import UserError
from ui import presenter
from ui.text import md

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

run_id = st.session_state.get("dec_run_id") or ui.qp_get("run")
if "_dec_model_next" in st.session_state:   # set by a demo started on this page, before the picker exists
    st.session_state["dec_m_model"] = st.session_state.pop("_dec_model_next")
if st.session_state.pop("_dec_presenter_next", False):   # a demo started on this page is presented
    st.session_state["dec_presenter"] = True
st.session_state.setdefault("dec_presenter", bool(run_id))
big = bool(st.session_state.get("dec_presenter"))
if not big:
    st.title("Deceptive sets")
    st.caption("A is drawn from the hyponyms of one hypernym and B from another. **Swapped** exchanges half the "
               "members between A and B, so each set looks like the other's category; the **random baseline** draws "
               "from all groups. The paper found swapped intersections hardest (Claude Haiku: 50 % vs 91 % as "
               "sampled).")
t1, t3, t2 = st.columns([5, 5, 3])
big = t2.toggle("Presenter view", key="dec_presenter",
                help="The whole browser width and large type, to read from the back of a room.")
presenter.presenter_style(big)
if t1.button("▶ Re-ask recorded failures, live", key="dec_reask", type="primary" if not run_id else "secondary",
             use_container_width=True,
             help=f"Asks local/default again, now, {presenter.P.REASK_PAIRS} pairs the shipped recording saw fail "
                  "(right as sampled, wrong when swapped), chosen at random from them — the recorded items exactly."):
    presenter.start_reask(on_page=True)
if t3.button("▶ Live demo: fresh pairs", key="dec_demo", use_container_width=True,
             help="Draws new pairs (a new seed) of the demo's grid and runs local/default on them, pair by pair."):
    presenter.start_demo(on_page=True)
# the presenter's view of a run goes first (above the fold)
if run_id:
    presenter.live_panel(run_id, model=st.session_state.get("dec_m_model"))


with st.expander("Configure a run: hypernyms, size, conditions, model", expanded=not run_id):
    @st.cache_resource(show_spinner="Loading hyponym groups…")
    def _groups():
        """The shipped hyponym groups and their index by synset (built once per server process)."""
        from core.lexicon.hyponyms import load_groups

        groups = load_groups()
        return groups, {g.synset: g for g in groups}


    try:
        groups, by_synset = _groups()
    except UserError as exc:
        st.info(f"The hyponym groups are not available: {exc}")
        st.stop()

    import random  # noqa: E402

    from core.tasks import setops  # noqa: E402
    from core.tasks.setops.sets import deceptive as D  # noqa: E402

    SIZES, POS = [2, 3, 4, 5, 6, 8], ["any", "noun", "verb"]
    APPROACHES = ["baseline", "baseline_allow_empty", "composite", "composite_allow_empty"]  # the reference's study
    # every setting is in the URL as its difference from where the page starts: the defaults, or — for a shared
    # ``run=`` link — that run's own settings (word pair, seed, size, samples, operations, approach, part of speech)
    DEFAULTS = {"size": 4, "seed": 0, "samples": 2, "pos": "any", "ops": ["intersection"], "approach": "baseline",
                "show": 0, "limit": 0, "conds": list(setops.CONDITIONS), "hyp": "fixed"}
    DRAWS = {"fixed": "the pair picked below, for every sample", "each": "a new pair for every draw"}


    @st.cache_data(show_spinner=False, max_entries=32, ttl=600)
    def _run_settings(db: str, token: str, run_id: str | None) -> dict:
        record = store.run_record(db, run_id) if run_id else None
        return urlstate.deceptive_settings(record["config"]) if record and record.get("config") else {}


    run_q = st.session_state.get("dec_run_id") or ui.qp_get("run")
    run_start = _run_settings(ui.db_path(), ui.db_token(), run_q)
    url_defaults = {**DEFAULTS, **{k: v for k, v in run_start.items() if k in DEFAULTS}}
    # a fresh page (a reload, a shared link), or a new run to follow (the demo's): the URL's or the run's settings
    if "dec_seed" not in st.session_state or st.session_state.get("_dec_follows") != run_q:
        st.session_state["_dec_follows"] = run_q
        start = {**url_defaults, **urlstate.decode(st.query_params.to_dict(), url_defaults)}
        start["size"] = start["size"] if start["size"] in SIZES else DEFAULTS["size"]
        start["pos"] = start["pos"] if start["pos"] in POS else "any"
        start["approach"] = start["approach"] if start["approach"] in APPROACHES else "baseline"
        start["samples"] = min(max(int(start["samples"]), 1), 50)
        start["show"] = min(max(int(start["show"]), 0), start["samples"] - 1)
        start["limit"] = min(max(int(start["limit"]), 0), 10_000)
        start["ops"] = [o for o in start["ops"] if o in setops.OPERATIONS]
        start["conds"] = [c for c in start["conds"] if c in setops.CONDITIONS] or list(setops.CONDITIONS)
        start["hyp"] = start["hyp"] if start["hyp"] in DRAWS else "fixed"
        st.session_state.update({f"dec_{k}": v for k, v in start.items()})
        if "a" in run_start and not (ui.qp_get("a") and ui.qp_get("b")):
            st.session_state["dec_a"], st.session_state["dec_b"] = run_start["a"], run_start["b"]
    c1, c2, c3, c4 = st.columns([1, 1, 1, 1])
    size = c1.selectbox("Set size |A| = |B|", SIZES, key="dec_size")
    seed = int(c2.number_input("Seed", step=1, key="dec_seed"))
    samples = int(c3.number_input("Samples per condition and operation", 1, 50, step=1, key="dec_samples",
                                  help="2 samples × 3 conditions × 1 operation = a 6-item demo (well under a minute with "
                                       "the embedded model)"))
    pos = c4.selectbox("Part of speech", POS, key="dec_pos",
                       help="The hyponym groups come from every WordNet synset with hyponyms, nouns and verbs (as in the "
                            "SetLexSem code); restrict them — and the random baseline's pool — to one part of speech.")


    @st.cache_resource(show_spinner=False, max_entries=32)
    def _eligible(size: int, pos: str) -> tuple[str, ...]:
        """The hypernyms a set of ``size`` can draw from for ``pos``, by name — the order random pairs are drawn in, so a
        seed keeps its pair (cached: filtering and sorting every group is not redone on each script run)."""
        return tuple(sorted((g.synset for g in groups if len(g.members) >= size and pos in ("any", g.pos)),
                            key=lambda s: by_synset[s].name))


    eligible = _eligible(size, pos)
    if len(eligible) < 2:
        st.warning(f"Fewer than two hyponym groups have {size} members.")
        st.stop()


    def _fmt(syn: str) -> str:
        """A picker's label: name, synset and hyponym count — without the gloss (shown for the picked pair below), so the
        labels stay short; the pickers list at most ~300 of them (the search reaches the rest)."""
        g = by_synset[syn]
        return f"{g.name} ({syn}, {len(g.members)})"


    def _feasible(a: str, b: str) -> bool:
        pa, pb = D.Vocabulary.exclusive_pools(by_synset[a], by_synset[b])
        return len(pa) >= size and len(pb) >= size


    def _random_pair(rng: random.Random) -> tuple[str, str]:
        for _ in range(500):
            a, b = rng.sample(eligible, 2)
            if _feasible(a, b):
                return a, b
        return eligible[0], eligible[1]


    if st.button("Draw a random pair", icon=":material/shuffle:", key="dec_draw"):
        n_draw = st.session_state.get("dec_draws", 0) + 1
        st.session_state["dec_draws"] = n_draw
        st.session_state["dec_a"], st.session_state["dec_b"] = _random_pair(random.Random(f"{seed}|{n_draw}"))

    qa, qb = ui.qp_get("a"), ui.qp_get("b")
    if "dec_a" not in st.session_state:
        pair = (qa, qb) if qa in eligible and qb in eligible and qa != qb else _random_pair(random.Random(seed))
        st.session_state["dec_a"], st.session_state["dec_b"] = pair
    for k in ("dec_a", "dec_b"):
        if st.session_state[k] not in eligible:
            st.session_state[k] = eligible[0 if k == "dec_a" else 1]


    @st.cache_resource(show_spinner=False, max_entries=64)
    def _choices(size: int, pos: str, text: str, pick: str):
        """A picker's options for the search ``text``, its current ``pick`` always among them (core's search, cached
        per size, part of speech, text and pick: a warm reload does not search again; a resource, cleared with the
        groups it was computed from)."""
        from core.lexicon.hyponyms import picker_choices

        return picker_choices((by_synset[s] for s in eligible), text, keep=(pick,))


    def _choices_caption(c) -> str:
        """How many of the eligible hypernyms the pickers list and how to reach the others."""
        if not c.text:
            return (f"The pickers list the {c.listed:,} largest of {c.total:,} hypernyms (and the current picks); "
                    "type in **Find a hypernym** to reach any other.")
        if not c.matched:
            return f"No hypernym matches “{c.text}” — the pickers keep their current picks; try a shorter word."
        if c.listed < c.matched:
            return f"“{c.text}”: the best {c.listed:,} of {c.matched:,} matches (of {c.total:,}) listed — type more to narrow."
        return f"“{c.text}”: {c.matched:,} of {c.total:,} hypernyms match, all listed in both pickers."


    f1, s1, s2 = st.columns([2, 3, 3])
    find = f1.text_input("Find a hypernym", key="dec_find", type="search", live=True,
                         placeholder="fish, vehicle, emotion…",
                         help="Filters both pickers by name or synset id (e.g. fish.n.02): whole names first, then names "
                              "starting with it, then any containing it.")
    choices_a = _choices(size, pos, find or "", st.session_state["dec_a"])
    choices_b = _choices(size, pos, find or "", st.session_state["dec_b"])
    hyp_a = s1.selectbox("Hypernym of A", choices_a.synsets, format_func=_fmt, key="dec_a")
    hyp_b = s2.selectbox("Hypernym of B", choices_b.synsets, format_func=_fmt, key="dec_b")
    st.caption(_choices_caption(choices_a))
    ui.qp_set(a=hyp_a, b=hyp_b, size=size, seed=seed, samples=samples, pos=None if pos == "any" else pos)
    info_box = st.container()  # glosses + the three conditions, filled once the config is known

    COLORS = {"a": "#4C72B0", "b": "#DD8452", "other": "#8C8C8C"}


    def _chips(members, hyp: dict, a: str | None = None, b: str | None = None) -> str:
        """Members as chips coloured by their hypernym (A's, B's, another); a member of neither set (made up) is a
        dashed outline."""
        a, b = a or hyp_a, b or hyp_b
        out = []
        for w in members:
            h = hyp.get(w)
            if h is None:
                style = f"border:2px dashed {COLORS['other']};color:#333"
                h = "not in A or B (made up)"
            else:
                color = COLORS["a"] if h == a else COLORS["b"] if h == b else COLORS["other"]
                style = f"background:{color};color:white"
            out.append(f'<span style="{style};border-radius:6px;padding:2px 8px;margin:2px;display:inline-block;'
                       f'font-size:0.95rem" title="{html.escape(str(h))}">{html.escape(str(w))}</span>')
        return " ".join(out) if out else "∅"


    def _loads(text, default):
        """A JSON column of the feed (NULL arrives as None or NaN) → its value, or ``default``."""
        if not isinstance(text, str):
            return default
        try:
            value = json.loads(text)
        except ValueError:
            return default
        return default if value is None else value


    def _answer_card(r) -> None:
        """One answer in full: the sets and the answer's members coloured by hypernym, the raw reply wrapped."""
        hyp = _loads(r.get("member_hypernyms"), {})
        parsed = _loads(r.get("parsed"), None)
        mark = ":green[**right**]" if bool(r.get("correct")) else ":red[**wrong**]"
        sym = {"union": "∪", "intersection": "∩", "difference": "∖", "symmetric_difference": "△"}.get(r["operation"], "?")
        a, b = r.get("hypernym_a"), r.get("hypernym_b")
        said = "did not follow the format" if parsed is None else "{" + ", ".join(map(str, parsed)) + "}"
        line = (f"{':green[✓ right]' if bool(r.get('correct')) else ':red[✗ wrong]'} · "
                f"{figures.CONDITION_LABELS.get(r['condition'], r['condition'])}"
                f" · {str(r['operation']).replace('_', ' ')} · draw {int(r['sample'])} · answered {said}")
        with st.expander(line[:180]):      # one line each; the sets, colours and the raw reply on click
            st.markdown(f"{mark} A = {_chips(_loads(r['set_a'], []), hyp, a, b)}  \n"
                        f"B = {_chips(_loads(r['set_b'], []), hyp, a, b)}", unsafe_allow_html=True)
            truth = _chips(_loads(r["truth"], []), hyp, a, b)
            answer = "did not follow the format" if parsed is None else _chips(parsed, hyp, a, b)
            st.markdown(f"A {sym} B = {truth} · answered: {answer}", unsafe_allow_html=True)
            st.code(str(r["response"]), language=None, wrap_lines=True)


    def _model_note() -> None:
        """What the embedded model can and cannot show here, and the one click to a stronger model."""
        chosen = str(st.session_state.get("dec_m_model", "local/default"))
        if chosen != "local/smollm2":
            if chosen == "local/default":
                st.caption("local/default is Qwen2.5-Coder-1.5B-Instruct, embedded (no key, no network): about 3–8 s "
                           "per answer on 2 cores. Deceptive A and B share no member, so their intersection is ∅: an "
                           "empty answer is right, and any member named is a failure.")
            return
        found = ui.found_servers()
        with st.container(border=True):
            st.markdown("**About local/smollm2.** SmolLM2-135M (no key, seconds per answer) is tiny: it often "
                        "writes a wrong set or none, so the three conditions tie near 0 %. Choose **local/default** "
                        "(Qwen2.5-Coder-1.5B, also embedded) to see the paper's effect without a key.")
            stronger = [*list(found)[:2]]
            for spec in ("openai/gpt-4o-mini", "anthropic/claude-haiku-4-5"):
                if ui.api_key_for(spec)[0]:
                    stronger.append(spec)
            if not stronger:
                st.caption("For a stronger model: start Ollama (`ollama run llama3.2`) or LM Studio on this machine — it "
                           "is listed in the model box by itself — or set OPENAI_API_KEY / ANTHROPIC_API_KEY.")
            cols = st.columns(max(1, len(stronger)))
            for col, option in zip(cols, stronger):
                col.button(f"Use {option}", key=f"dec_use_{option}", on_click=_use_model, args=(option,),
                           use_container_width=True)


    def _use_model(option: str) -> None:
        st.session_state["dec_m_model"] = option


    st.subheader("Run the conditions")
    o1, o2 = st.columns([2, 1])
    ops = o1.multiselect("Operations", list(setops.OPERATIONS), key="dec_ops",
                         format_func=lambda o: o.replace("_", " "))
    conds = o1.multiselect("Conditions", list(setops.CONDITIONS), key="dec_conds",
                           format_func=lambda c: figures.CONDITION_LABELS.get(c, c),
                           help="As sampled and swapped are the pairs of the paired test (the same draw); the random "
                                "baseline draws from all groups.")
    draw = o1.radio("Hypernyms", list(DRAWS), format_func=DRAWS.get, key="dec_hyp", horizontal=True)
    approach = o1.selectbox("Prompting approach", APPROACHES, key="dec_approach")
    ui.qp_set(**urlstate.encode({"size": size, "seed": seed, "samples": samples, "pos": pos, "ops": ops,
                                  "approach": approach, "show": int(st.session_state.get("dec_show", 0)),
                                  "limit": int(st.session_state.get("dec_limit", 0)), "conds": conds, "hyp": draw},
                                 url_defaults))
    cfg = None
    with ui.user_errors():
        if draw == "fixed" and hyp_a == hyp_b:
            raise UserError("choose two different hypernyms")
        if draw == "fixed" and not _feasible(hyp_a, hyp_b):
            raise UserError(f"these two groups do not each have {size} members of their own (members shared by both "
                            "are left out); pick another pair or a smaller size")
        doc = {
            "task": "setops", "seed": seed, "samples": samples, "operations": ops or ["intersection"],
            "sizes": [int(size)], "members": ["deceptive"], "conditions": conds or list(setops.CONDITIONS),
            "phrasings": ["formal"], "approaches": [approach], "shots": [0], "pos": [None if pos == "any" else pos]}
        if draw == "fixed":
            doc["hypernym_pairs"] = [[hyp_a, hyp_b]]
        cfg = run_spec(doc).config
        n_items = setops.count(cfg)
    if cfg is None:
        st.stop()

    ga, gb = by_synset[hyp_a], by_synset[hyp_b]
    if draw == "fixed":
        info_box.markdown(f'<span style="color:{COLORS["a"]}">■</span> **{html.escape(ga.name)}** — {html.escape(ga.gloss)}  \n'
                    f'<span style="color:{COLORS["b"]}">■</span> **{html.escape(gb.name)}** — {html.escape(gb.gloss)}  \n'
                    f'<span style="color:{COLORS["other"]}">■</span> other hypernyms (random baseline)',
                    unsafe_allow_html=True)
    if int(st.session_state.get("dec_show", 0)) > samples - 1:
        st.session_state["dec_show"] = max(0, samples - 1)
    sample_shown = int(info_box.columns(4)[0].number_input("Show sample", 0, max(0, samples - 1), step=1,
                                                           key="dec_show"))
    preview = {it["condition"]: it for it in setops.items(cfg)
               if it["sample"] == sample_shown and it["operation"] == cfg.operations[0]}
    if draw == "each":
        first = next(iter(preview.values()))
        info_box.caption(f"Sample {sample_shown} draws its own pair: A from **{md(first['hypernym_a'])}**, B from "
                         f"**{md(first['hypernym_b'])}** (each sample another pair; the pickers above are not used).")
    shown = [c for c in setops.CONDITIONS if c in preview]
    cols = info_box.columns(len(shown))
    for col, cond in zip(cols, shown):
        p = preview[cond]
        ca, cb = p.get("hypernym_a"), p.get("hypernym_b")
        with col.container(border=True):
            st.markdown(f"**{figures.CONDITION_LABELS[cond]}**")
            st.markdown(f"A = {_chips(p['set_a'], p['member_hypernyms'], ca, cb)}", unsafe_allow_html=True)
            st.markdown(f"B = {_chips(p['set_b'], p['member_hypernyms'], ca, cb)}", unsafe_allow_html=True)
            sym = {"union": "∪", "intersection": "∩", "difference": "∖", "symmetric_difference": "△"}[p["operation"]]
            truth = p["truth"]
            st.caption(f"A {sym} B = {{{', '.join(truth)}}}" if truth else f"A {sym} B = ∅")

    _model_note()
    choice = ui.model_picker("dec_m", show_params=True)
    ui.batch_toggle(choice, "dec_m")
    ui.ray_cluster_field(choice, "dec_m")
    o2.metric("Items", n_items)
    limit = int(o2.number_input("Only N of them, spread over the conditions (0 = all)", 0, 10_000, step=1,
                                key="dec_limit")) or None
    if st.button("Run", type="primary", key="dec_run", disabled=not ops):
        label = f"{ga.name} vs {gb.name}" if draw == "fixed" else f"a pair per draw, seed {seed}"
        handle = ui.start_run(cfg.to_dict(), choice, name=f"deceptive · {label}", limit=limit)
        if handle is not None:
            st.session_state["dec_run_id"] = handle.run_id
            ui.qp_set(run=handle.run_id)
            st.rerun()   # the presenter's panel of the new run, first on the page

if run_id:
    st.subheader("Answers as they arrive")

    @st.fragment(run_every=1.5 if ui.run_is_live(run_id) else None)
    def _answers():
        try:
            with store.connect(ui.db_path()) as con:
                feed = analysis.answers_feed(con, [run_id], limit=30)
        except UserError as exc:
            st.caption(str(exc))
            return
        if feed.empty:
            st.caption("No answers yet.")
            return
        for _, r in feed.iterrows():
            _answer_card(r)

    _answers()

st.subheader("Replay a stored run")
st.caption("Show a run made earlier — with a key, on another machine, or an imported result file — answer by answer "
           "at a chosen pace, labelled as a replay. No model is called.")
presenter.replay_section(ui.current_scoring())

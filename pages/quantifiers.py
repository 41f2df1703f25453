"""Quantifiers page: build a GQG-style quantifier scenario, preview it, run it live and see accuracy /
F1 by quantifier and by noun frequency group, and where along the count a model flips. Thin: every number comes from
core (tasks.quantifiers, quantifier_metrics, runner, store); this file only lays out widgets and figures."""

from __future__ import annotations

import json
import random

import streamlit as st
import yaml

import ui
from core import runner, store, urlstate
from core.analysis import quantifier_figures as QF
from core.config import run_spec  # noqa: E402
from core.errors import UserError
from core.tasks import quantifiers as Q
from core.tasks.quantifiers import metrics as QM
from core.tasks.quantifiers.catalogue import EXAMPLES, GQG_QUANTIFIERS, GRAMMAR, catalogue_table
from core.tasks.quantifiers.nouns import GROUP_ORDER, PILOT_GROUPS
from core.tasks.quantifiers.parse import ANSWER_RULES

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

KEY = "quant_"
PREVIEW_ROWS = 24


def _split(text: str, sep: str = ",") -> list[str]:
    return [t.strip() for t in (text or "").split(sep) if t.strip()]


# ------------------------------------------------------------------------------------------------------ build

LOADED = "(loaded config)"
DEFAULT_PRESET = "gqg-small"
# the config keys the widgets set; the URL holds those that differ from the preset (``preset=``) the page started from
URL_KEYS = ("quantifiers", "noun_groups", "objects", "nouns_per_group", "total", "count_range", "predicates",
            "template", "samples", "seed")


# what the widgets accept (urlstate.clamp): a link's value outside is brought inside, with a note on the page
URL_LIMITS = {"total": (1, Q.MAX_TOTAL), "samples": (0, Q.MAX_TOTAL + 1), "seed": (None, None),
              "nouns_per_group": (0, 1000), "count_range": ("range", 0, Q.MAX_TOTAL), "quantifiers": "texts",
              "noun_groups": "texts", "objects": "texts", "predicates": "pairs"}


def _url_defaults(preset: str) -> dict:
    return {k: Q.PRESETS[preset].get(k) for k in URL_KEYS}


def _url_start() -> None:
    """A fresh page (a reload, a shared link): the URL's preset and its edits, applied once per browser session (the
    widgets' defaults come from them, so they must not change while the page is open)."""
    if KEY + "url_edits" in st.session_state:
        return
    preset = ui.qp_get("preset")
    preset = preset if preset in Q.PRESETS else DEFAULT_PRESET
    edits = urlstate.decode(st.query_params.to_dict(), _url_defaults(preset), nullable=True)
    edits, notes = urlstate.clamp(edits, URL_LIMITS)      # a hostile link's values made safe for the widgets
    st.session_state[KEY + "url_edits"] = (preset, edits)
    st.session_state[KEY + "url_notes"] = notes
    st.session_state.setdefault(KEY + "preset", preset)
    limit = urlstate.decode(st.query_params.to_dict(), {"limit": 0}).get("limit", 0)
    st.session_state.setdefault(KEY + "limit", min(max(int(limit), 0), 10_000_000))


def _url_save(preset: str, config: dict) -> None:
    """The scenario in the URL: its preset and what differs from it (a loaded config: from the default preset)."""
    start = preset if preset in Q.PRESETS else DEFAULT_PRESET
    ui.qp_set(preset=start if start != DEFAULT_PRESET else None,
               **urlstate.encode({k: config.get(k) for k in URL_KEYS}, _url_defaults(start)))


def build_config() -> tuple[dict | None, Q.Config | None]:
    _url_start()
    loaded = st.session_state.pop("quantifiers_loaded_config", None)  # sent by the Runs page ("Open on … page")
    if loaded:
        for key in [key for key in st.session_state if str(key).startswith(f"{KEY}{LOADED}_")]:
            del st.session_state[key]
        st.session_state[KEY + "loaded"] = loaded
        st.session_state[KEY + "preset"] = LOADED
    presets = list(Q.PRESETS) + ([LOADED] if KEY + "loaded" in st.session_state else [])
    preset = st.selectbox("Start from a preset", presets, key=KEY + "preset",
                          help="gqg-small = GQG's prompt on a small grid (144 prompts, the default); gqg-vanilla = the "
                               "published GQG dataset (18,360 prompts); gqg-frequency-pilot = the paper's Figure 1 "
                               "setup; frequency-bands-sampled = our wordfreq bands + made-up nouns")
    url_preset, url_edits = st.session_state[KEY + "url_edits"]
    notes = st.session_state.get(KEY + "url_notes")
    if notes:
        st.info("The link's settings were adjusted to what this page accepts: "
                + "; ".join(ui.md(n) for n in notes) + ".")
    if preset == LOADED:
        base = st.session_state[KEY + "loaded"]
    elif preset == url_preset:
        base = {k: v for k, v in {**Q.PRESETS[preset], **url_edits}.items() if v is not None}
    else:
        base = Q.PRESETS[preset]
    k = f"{KEY}{preset}_"  # widget keys per preset: switching preset resets the widgets to its values

    c1, c2 = st.columns([3, 2])
    with c1:
        base_q = base.get("quantifiers") or list(GQG_QUANTIFIERS)
        options = list(dict.fromkeys([*GQG_QUANTIFIERS, *EXAMPLES, *base_q]))
        quants = st.multiselect("Quantifiers", options, default=base_q, key=k + "quants")
        extra = st.text_input("More quantifiers (comma-separated)", key=k + "extra",
                              placeholder="at least 7, between 3 and 8, at least 60%", help=GRAMMAR)
        groups_all = [*GROUP_ORDER, *PILOT_GROUPS, "gqg"]
        groups = st.multiselect("Noun groups", groups_all, key=k + "groups",
                                default=[g for g in base.get("noun_groups") or [] if g in groups_all],
                                help="common … rarest: wordfreq Zipf bands of the plural; made_up: pronounceable "
                                     "non-words; pilot_*: the GQG paper's lists; gqg: the 12 objects of the dataset")
        objects = st.text_input("Your own nouns (plural, comma-separated)", ", ".join(base.get("objects") or []),
                                key=k + "objects", placeholder="lanterns, teapots")
        per_group = st.number_input("Nouns per group (0 = all)", 0, 1000, int(base.get("nouns_per_group") or 0),
                                    key=k + "per_group")
    with c2:
        total = st.number_input("Total n", 1, Q.MAX_TOTAL, int(base.get("total", 50)), key=k + "total")
        rng = base.get("count_range") if int(total) == int(base.get("total", 50)) else None
        rng = sorted(min(max(int(v), 0), int(total)) for v in rng) if rng else None   # inside 0 … total
        lo, hi = st.slider("Counts of the asked predicate", 0, int(total), tuple(rng or (0, int(total))),
                           key=k + f"range_{total}")
        samples = st.number_input("Counts drawn per cell (0 = all)", 0, Q.MAX_TOTAL + 1,
                                  int(base.get("samples") or 0), key=k + "samples",
                                  help="per (quantifier, noun, asked predicate)")
        seed = st.number_input("Seed", value=int(base.get("seed", 0)), step=1, key=k + "seed")
        pairs = st.text_input("Predicate pairs (first/second; …)", key=k + "pairs",
                              value="; ".join("/".join(p) for p in base.get("predicates", [["large", "small"]])))
        names = [*Q.TEMPLATES, "custom"]
        base_t = base.get("template", "gqg")
        template = st.selectbox("Template", names, index=names.index(base_t if base_t in Q.TEMPLATES else "custom"),
                                key=k + "tpl")
        if template == "custom":
            template = st.text_area("Template text", base_t if base_t not in Q.TEMPLATES else Q.TEMPLATES["gqg"],
                                    key=k + "tpl_text",
                                    help="fields: " + ", ".join("{" + f + "}" for f in Q.TEMPLATE_FIELDS))
    d: dict = {"task": "quantifiers", "quantifiers": [*quants, *_split(extra)], "total": int(total),
               "template": template, "seed": int(seed)}
    if groups:
        d["noun_groups"] = groups
        if per_group:
            d["nouns_per_group"] = int(per_group)
    if _split(objects):
        d["objects"] = _split(objects)
    if (lo, hi) != (0, int(total)):
        d["count_range"] = [int(lo), int(hi)]
    if samples:
        d["samples"] = int(samples)
    d["predicates"] = [[w.strip() for w in p.split("/")] for p in _split(pairs, ";")]
    _url_save(preset, d)
    try:
        cfg = run_spec({**d, "task": "quantifiers"}).config
    except UserError as exc:
        st.error(ui.md(exc))
        return None, None
    return cfg.to_dict(), cfg


def show_preview(cfg: Q.Config) -> None:
    info = Q.describe(cfg)
    m = st.columns(4)
    m[0].metric("Prompts", f"{info['n_items']:,}")
    # shares and counts as plain text: a metric's delta would draw an up arrow, as if they were changes
    m[1].metric("True", f"{info['n_true']:,} ({info['n_true'] / max(info['n_items'], 1):.1%})")
    m[2].metric("False", f"{info['n_false']:,} ({info['n_false'] / max(info['n_items'], 1):.1%})")
    m[3].metric("Configurations", f"{info['n_configs']:,}", help=f"{info['counts_per_config']} counts each")
    n = info["n_items"]
    picks = sorted(random.Random(cfg.seed).sample(range(n), min(n, PREVIEW_ROWS)))  # a spread, not the first rows
    rows = [Q.item(cfg, i) for i in picks]
    st.dataframe([{k: r[k] for k in ("idx", "prompt", "label", "quantifier", "object", "noun_group", "predicate",
                                     "count_asked")} for r in rows],
                 hide_index=True, width="stretch")
    # built only while open (a closed expander's table and highlighted YAML were drawn on every visit)
    meanings = ui.lazy_expander("Quantifier meanings (A = the objects, B = those with the asked predicate)",
                                 key="q_meanings")
    if meanings.open:
        with meanings:
            st.dataframe(catalogue_table(cfg.quantifiers, cfg.total), hide_index=True, width="stretch")
    as_yaml = ui.lazy_expander("Config as YAML (for `python -m core run --config …`)", key="q_yaml")
    if as_yaml.open:
        with as_yaml:
            st.code(yaml.safe_dump(cfg.to_dict(), sort_keys=False, allow_unicode=True), language="yaml")


# ------------------------------------------------------------------------------------------------------ run

@st.cache_data(show_spinner=False, max_entries=32, ttl=300)
def _estimate(config_json: str, spec: str, params_json: str, base_url: str | None, limit: int | None, db: str,
              token: str, batch: bool = False) -> runner.Estimate:
    return runner.estimate(json.loads(config_json), spec, params=json.loads(params_json), base_url=base_url,
                           db_path=db, limit=limit, batch=batch)


def run_panel(config: dict) -> None:
    choice = ui.model_picker(KEY + "m", show_params=True)
    ui.batch_toggle(choice, KEY + "m")
    ui.ray_cluster_field(choice, KEY + "m")
    c1, c2 = st.columns(2)
    limit = c1.number_input("Only N prompts, spread over the scenario (0 = all)", 0, 10_000_000, key=KEY + "limit",
                            help="N prompts spread over the quantifiers, nouns and predicates (every one of them "
                                 "when N allows), the counts spread within each — not the first N in order.")
    ui.qp_set(limit=int(limit) or None)
    name = c2.text_input("Run name (optional)", key=KEY + "name")
    st.caption("One word is asked for: replies get a cap of 16 tokens (the answer's size; switch it off under "
               "Sampling parameters).")
    with ui.user_errors():
        db = ui.db_path()
        est = _estimate(json.dumps(config, sort_keys=True), choice.spec, json.dumps(choice.params, sort_keys=True),
                        choice.base_url, int(limit) or None, db, ui.db_token(db), choice.batch)
        cost = "free" if not est.cost_usd else f"≈ ${est.cost_usd:.4f}" + (" at the batch price" if choice.batch
                                                                           else "")
        st.caption(f"{est.n_items:,} prompts · {est.n_cached:,} already answered or cached · {est.n_calls:,} calls "
                   f"to make · {cost}")
        if choice.spec.startswith("local/") and est.n_calls > 500:
            st.warning(f"{est.n_calls:,} calls to the embedded model take roughly {est.n_calls / 3600:.1f}–"
                       f"{est.n_calls * 2 / 3600:.1f} h on this machine (1–2 s each). Draw a few counts per cell, "
                       "take fewer nouns, or set a limit.")
    if st.button("Run", type="primary", key=KEY + "start"):
        handle = ui.start_run(config, choice, name=name or None, limit=int(limit) or None)
        if handle is not None:
            st.session_state[KEY + "run_id"] = handle.run_id
            ui.select_runs("qruns", [handle.run_id])   # the results below show the run just made
    run_id = st.session_state.get(KEY + "run_id")
    if run_id:
        ui.run_progress(run_id, key=KEY + "prog")


# ------------------------------------------------------------------------------------------------------ results

@st.cache_data(show_spinner=False, max_entries=64, ttl=600)
def _metrics(db: str, token: str, run_ids: tuple[str, ...], color: str | None, bin_width: int,
             rule: str = "ours") -> dict:
    by_color = [color] if color else []
    with store.connect(db) as con:
        return {
            "overall": QM.quantifier_metrics(con, run_ids, by_color or None, rule=rule),
            "quantifier": QM.quantifier_metrics(con, run_ids, [*by_color, "quantifier"], rule=rule),
            "noun_group": QM.quantifier_metrics(con, run_ids, [*by_color, "noun_group"], rule=rule),
            "predicate": QM.quantifier_metrics(con, run_ids, [*by_color, "predicate"], rule=rule),
            "count": QM.accuracy_by_count(con, run_ids, [*by_color, "quantifier"], bin_width=bin_width, rule=rule),
        }


def results_panel() -> None:
    runs = ui.runs_df()
    runs = runs[runs["task"] == "quantifiers"] if not runs.empty else runs
    if runs.empty:
        st.info("No quantifier runs yet. Build a scenario above and press Run "
                "(or `python -m core run --config Q.yaml --model local/smollm2`).")
        return
    current = st.session_state.get(KEY + "run_id")
    default = [current] if current in set(runs["run_id"]) else [runs["run_id"].iloc[0]]
    chosen = ui.run_picker("Runs", key="qruns", default=default, task="quantifiers")
    if not chosen:
        st.info("Choose at least one run.")
        return
    color = "model" if runs[runs["run_id"].isin(chosen)]["model"].nunique() > 1 else None
    db = ui.db_path()
    with ui.user_errors():
        b1, b2 = st.columns(2)
        bins = [1, 2, 5, 10]
        bin_q = ui.qp_get("qbin")
        bin_width = b1.select_slider("Pool counts in bins of", bins, value=int(bin_q) if bin_q in ("2", "5", "10")
                                     else 1, key=KEY + "bin",
                                     help="Sampled runs ask only a few counts per cell: pooling smooths the curves")
        ui.qp_set(qbin=bin_width if bin_width != 1 else None)
        rules = list(ANSWER_RULES)
        rule_q = ui.qp_get("qrule")
        rule = b2.radio("Answer rule", rules, horizontal=True, key=KEY + "rule",
                        index=rules.index(rule_q) if rule_q in rules else 0,
                        format_func={"ours": "ours (first whole word; else unparsed)",
                                     "gqg": "GQG's evaluation script"}.get,
                        help=" · ".join(f"{k}: {v}" for k, v in ANSWER_RULES.items()))
        ui.qp_set(qrule=rule if rule != "ours" else None)
        m = _metrics(db, ui.db_token(db), tuple(chosen), color, int(bin_width), rule)
        by_color = [color] if color else []
        cols = ["n", "answered", "unparsed", "accuracy", "accuracy_gqg", "precision", "recall", "f1"]
        fmt = {c: st.column_config.NumberColumn(format="%.3f") for c in
               ("accuracy", "accuracy_gqg", "precision", "recall", "f1")}
        fmt["accuracy_gqg"] = st.column_config.NumberColumn(
            "accuracy (GQG)", format="%.3f", help="scored by GQG's own evaluation script (its answer rule), "
                                                  "whichever rule the other columns use")
        st.dataframe(m["overall"][[*by_color, *cols]], hide_index=True, width="stretch", column_config=fmt)
        c1, c2 = st.columns(2)
        c1.plotly_chart(QF.fig_metrics_by(m["quantifier"], "quantifier", color), width="stretch",
                        key=KEY + "fig_q")
        c2.plotly_chart(QF.fig_frequency(m["noun_group"], color), width="stretch", key=KEY + "fig_f")
        st.plotly_chart(QF.fig_by_count(m["count"], color=color), width="stretch", key=KEY + "fig_c")
        with st.expander("Tables by quantifier, noun group and predicate"):
            for title, key in (("quantifier", "quantifier"), ("noun group", "noun_group"),
                               ("predicate", "predicate")):
                st.markdown(f"**By {title}**")
                st.dataframe(m[key][[*by_color, key, *cols, "pred_true", "label_true"]], hide_index=True,
                             width="stretch", column_config=fmt)
        with st.expander("Published figures (GQG paper) for comparison"):
            pub = QM.GQG_PUBLISHED
            st.caption(f"Vanilla GQG: {pub['dataset']['prompts']:,} prompts, {pub['dataset']['true']:,} true "
                       f"({pub['dataset']['true_share']:.1%}) — always answering “false” scores "
                       f"{1 - pub['dataset']['true_share']:.3f}. Pythia models (Table 5; constrained decoding, "
                       "beam search) stay near chance:")
            st.dataframe(pub["pythia"], hide_index=True)
            st.caption("Figure 1 (Mistral-7B, “at least half”): accuracy drops as the nouns get rarer — the shape "
                       "the frequency chart above lets you check for your model.")
        if ui.page_exists("results"):
            st.page_link(ui.PAGE_FILES["results"], label="Prompts, responses and violins on the Results page →",
                         query_params={"runs": ",".join(chosen)})


st.title("Quantifiers")
st.caption("Generalized-quantifier probes after GQG (Wang & Steinert-Threlkeld, 2023): “There are 50 tables. 47 of "
           "the tables are large. 3 of the tables are small. Are at least 3 of the tables small?” — truth computed "
           "from each quantifier's set-theoretic meaning. Unparseable answers are kept apart and also scored the "
           "paper's way (as “false”).")
st.subheader("1 · Scenario")
config, cfg = build_config()
if cfg is not None:
    show_preview(cfg)
    st.subheader("2 · Run")
    run_panel(config)
st.subheader("3 · Results")
results_panel()

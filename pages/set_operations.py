"""Set operations: every engine hyperparameter as a widget (multi-select = grid axis), live item count and cost
estimate, a preview of prompts with truths, the prompt templates (view / edit), and a live background run."""

from __future__ import annotations

import json

import streamlit as st

import ui
from core import urlstate
from core.config import config_changes, run_spec
from core.errors import UserError
from core.tasks import setops
from core.tasks.setops.prompts.templates import (
    default_templates_yaml,
    load_templates,
    parse_templates_yaml,
    templates_diff,
)

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

st.title("Set operations")
st.caption("Each combination of the selected values is one *configuration* of the paper; each configuration gets "
           "`samples` different pairs of sets A, B. Accuracy per configuration is what the violins show.")

D = setops.Config()  # defaults
CUSTOM, LOADED = "(custom)", "(loaded config)"


def _none_label(v):
    return "none" if v is None else str(v)


def _templates_text(override) -> str:
    if not override:
        return default_templates_yaml()
    import yaml

    from core.tasks.setops.prompts.templates import merge_templates

    return yaml.safe_dump(merge_templates(override), sort_keys=False, allow_unicode=True)


def _widget_values(base: dict) -> dict:
    """The value of every configuration widget (by key) for a starting config ``base`` (defaults where it is silent)."""
    def d(key, default):
        v = base.get(key, default)
        return list(v) if isinstance(v, (list, tuple)) else v

    return {
        "so_ops": d("operations", D.operations), "so_members": d("members", D.members),
        "so_asym": "sizes_a" in base, "so_sizes": d("sizes", D.sizes), "so_sizes_a": d("sizes_a", [2, 4]),
        "so_sizes_b": d("sizes_b", [4, 8]), "so_lengths": d("lengths", D.lengths), "so_overlap": d("overlap", D.overlap),
        "so_samples": int(d("samples", 5)), "so_seed": int(d("seed", 0)), "so_number_max": int(d("number_max", D.number_max)),
        "so_deciles": d("deciles", D.deciles), "so_decile_mode": d("decile_mode", D.decile_mode),
        "so_freq": d("frequency_source", D.frequency_source), "so_conditions": d("conditions", D.conditions),
        "so_swap": d("swap_count", D.swap_count), "so_approaches": d("approaches", D.approaches),
        "so_phrasings": d("phrasings", D.phrasings), "so_shots": d("shots", D.shots),
        "so_fixed": bool(d("fixed_shots", True)), "so_templates": _templates_text(base.get("templates")),
    }


# settings of the "Before running" and "Run" sections, kept in the URL too (not part of a preset)
RUN_SETTINGS = {"so_limit": 0, "so_fresh": False, "so_name": ""}


def _url_defaults(base: dict) -> dict:
    """URL name -> value where the page starts from ``base``: every widget (``so_`` dropped), the templates as the
    override stored with a run (not the whole YAML text)."""
    vals = {k[3:]: v for k, v in {**_widget_values(base), **RUN_SETTINGS}.items() if k != "so_templates"}
    vals["templates"] = base.get("templates") or {}
    return vals


def _start_from(base: dict, name: str, edits: dict | None = None) -> None:
    """Put ``base``'s values into the widgets through the Session State API (the one way a widget's shown value and
    the browser's copy of it change together: deleting the keys and passing new defaults left the browser sending
    its old values back on the next edit) and remember what the page started from; ``edits`` (URL names, from a
    reload or a shared link) go on top."""
    st.session_state["so_base"], st.session_state["so_base_name"] = dict(base), name
    st.session_state.update(_widget_values(base))
    for key, value in (edits or {}).items():
        if key == "templates":
            st.session_state["so_templates"] = _templates_text(value or None)
        elif key == "samples":
            st.session_state["so_samples"] = min(max(int(value), 1), setops.MAX_SAMPLES)
        else:
            st.session_state[f"so_{key}"] = value


# where the page starts: a config sent by the Runs page, the preset in the URL (with the edits the URL holds), or
# the defaults (with the URL's edits)
loaded: dict = st.session_state.pop("setops_loaded_config", None) or {}
preset_q = ui.qp_get("preset")
if loaded:
    _start_from(loaded, LOADED)
    ui.qp_set(preset=None)
elif "so_base" not in st.session_state:
    start = setops.PRESETS.get(preset_q, {})
    _start_from(start, preset_q if preset_q in setops.PRESETS else CUSTOM,
                urlstate.decode(st.query_params.to_dict(), _url_defaults(start)))
for key, value in RUN_SETTINGS.items():
    st.session_state.setdefault(key, value)
base: dict = st.session_state["so_base"]
started = st.session_state["so_base_name"]

tpl = load_templates(base.get("templates"))
c_preset, c_info = st.columns([2, 3])
names = [CUSTOM, *setops.PRESETS] + ([LOADED] if started == LOADED else [])
if st.session_state.get("so_preset") not in names:
    st.session_state["so_preset"] = started
preset = c_preset.selectbox("Start from a preset", names, key="so_preset",
                            help="The SetLexSem reference's studies: " + "; ".join(
                                f"{k} = {v}" for k, v in setops.PRESET_SOURCES.items())
                            + ". Editing any value below keeps the rest of the preset.")
if preset not in (CUSTOM, LOADED) and preset != started:
    ui.qp_set(preset=preset)
    _start_from(setops.PRESETS[preset], preset)
    st.rerun()
elif preset == CUSTOM and started != CUSTOM:
    st.session_state["so_base_name"] = started = CUSTOM    # keep the values as they are, forget the name
    ui.qp_set(preset=None)


def _pills(where, label, options, key, **kw):
    """Multi-select pills (every option visible; each selected value is one grid axis level)."""
    options = list(options)
    st.session_state[key] = [v for v in st.session_state.get(key, []) if v in options]
    return where.pills(label, options, selection_mode="multi", key=key, **kw) or []


with st.container(border=True):
    st.markdown("**Sets** — every combination of the selected values is one configuration")
    a1, a2 = st.columns(2)
    ops = _pills(a1, "Operations", setops.OPERATIONS, "so_ops", format_func=lambda o: o.replace("_", " "))
    members = _pills(a2, "Token type (members)", setops.MEMBER_TYPES, "so_members",
                     help="numbers; words (web2 list); deciles = words by corpus frequency; deceptive = WordNet "
                          "hyponyms of two hypernyms")
    size_opts = sorted({1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, *(base.get("sizes") or []),
                        *(base.get("sizes_a") or []), *(base.get("sizes_b") or []),
                        *(v for k in ("so_sizes", "so_sizes_a", "so_sizes_b") for v in st.session_state.get(k) or []
                          if isinstance(v, int))})
    asym = st.toggle("|A| ≠ |B|", key="so_asym", help="Give the sizes of A and B separately (crossed).")
    if asym:
        sizes_a = _pills(st, "|A|", size_opts, "so_sizes_a")
        sizes_b = _pills(st, "|B|", size_opts, "so_sizes_b")
        sizes = None
    else:
        sizes = _pills(st, "Operand sizes |A| = |B|", size_opts, "so_sizes")
        sizes_a = sizes_b = None
    lengths = _pills(st, "Token length L", [None, 1, 2, 3, 4, 5, 6, 7, 8], "so_lengths",
                     format_func=_none_label, help="Digits for numbers, letters for words; none = any length.")
    overlap = _pills(st, "Overlap", [None, 0, 1, 2, 0.25, 0.5, 1.0], "so_overlap",
                     format_func=lambda v: "independent draws" if v is None else
                     (f"{v:g} of the smaller set" if isinstance(v, float) else f"{v} shared"))
    c1, c2, c3 = st.columns(3)
    samples = c1.number_input("Samples per configuration (N)", 1, setops.MAX_SAMPLES, step=1, key="so_samples",
                              help="The paper used 50.")
    seed = c2.number_input("Seed", step=1, key="so_seed")
    number_max = c3.number_input("Numbers: range [0, n)", 1, 10**12, step=1, key="so_number_max",
                                 help="Used when no token length is given.")
    if "deciles" in members:
        d1, d2, d3 = st.columns([2, 1, 1])
        deciles = _pills(d1, "Frequency deciles (1 = rarest)", range(1, 11), "so_deciles")
        decile_mode = _pills(d2, "Decile mode", setops.DECILE_MODES, "so_decile_mode",
                             help="log_width: the SetLexSem code; rank: equal-count deciles (paper text)")
        freq = d3.text_input("Frequency source", key="so_freq",
                             help="'wordfreq' (offline) or the path of a word,count file")
    else:
        deciles, decile_mode, freq = (st.session_state["so_deciles"], st.session_state["so_decile_mode"],
                                      st.session_state["so_freq"])
    if "deceptive" in members:
        e1, e2 = st.columns(2)
        conditions = _pills(e1, "Deceptive conditions", setops.CONDITIONS, "so_conditions",
                            format_func=lambda c: c.replace("_", " "))
        swap = _pills(e2, "Swapped members s", [None, 1, 2, 3, 4, 8], "so_swap",
                      format_func=lambda v: "⌊m/2⌋ (default)" if v is None else str(v))
    else:
        conditions, swap = st.session_state["so_conditions"], st.session_state["so_swap"]

    st.markdown("**Prompt**")
    approaches = _pills(st, "Prompting approach", tpl.approaches, "so_approaches",
                        format_func=lambda a: a.replace("_", " "))
    p1, p2, p3 = st.columns([2, 1, 1])
    phrasings = _pills(p1, "Task phrasing", tpl.phrasings, "so_phrasings",
                       help="How the task names or describes the operation (the reference's PROMPT_TYPE): formal "
                            "names it, plain defines it; functional, pythonic and iterative describe it as recipes.")
    shots = _pills(p2, "k (demonstrations)", [0, 1, 3, 5], "so_shots")
    fixed = p3.toggle("Fixed demonstrations", key="so_fixed",
                      help="On: the same demonstrations for every item of a configuration; off: drawn per item.")

with st.expander("Prompt templates (view / edit — edits are stored with the run)"):
    st.caption("Placeholders are written {name}; see the comments at the top. Only what you change is stored "
               "(as an override) in the run's config.")
    tpl_text = st.text_area("templates.yaml", height=360, key="so_templates", label_visibility="collapsed")
    templates_override = None
    with ui.user_errors("Templates: "):
        if tpl_text.strip() != default_templates_yaml().strip():
            templates_override = templates_diff(parse_templates_yaml(tpl_text)) or None
            if templates_override:
                st.info(f"Edited parts: {ui.md(', '.join(sorted(templates_override)))}")

config: dict = {"task": "setops", "seed": int(seed), "samples": int(samples), "operations": ops,
                "members": members, "lengths": lengths, "deciles": deciles, "decile_mode": decile_mode,
                "conditions": conditions, "swap_count": swap, "overlap": overlap, "number_max": int(number_max),
                "frequency_source": freq, "phrasings": phrasings, "approaches": approaches, "shots": shots,
                "fixed_shots": bool(fixed)}
if asym:
    config["sizes_a"], config["sizes_b"] = sizes_a, sizes_b
else:
    config["sizes"] = sizes
if templates_override:
    config["templates"] = templates_override
# every setting in the URL, as the edits of the preset it started from (or of the defaults): a reload or a shared
# link comes back to the same grid
url_base = setops.PRESETS.get(started, {})
_now = {k: st.session_state.get(f"so_{k}", v) for k, v in _url_defaults(url_base).items() if k != "templates"}
ui.qp_set(**urlstate.encode({**_now, "templates": templates_override or {}}, _url_defaults(url_base)))

cfg = None
try:
    cfg = run_spec(config, task="setops").config
    n_items = setops.count(cfg)
    warns = setops.warnings(cfg)
except UserError as exc:
    st.error(f"Configuration: {ui.md(exc)}")
    n_items, warns = 0, []
except Exception as exc:  # noqa: BLE001  (a sampler that cannot be built, e.g. a missing data file: say what)
    st.error(f"Configuration cannot be expanded: {ui.md(exc)}")
    cfg, n_items, warns = None, 0, []

if cfg is not None and started not in (CUSTOM,):
    try:
        edits = config_changes(run_spec(base, task="setops").config.to_dict(), cfg.to_dict())
    except UserError:
        edits = []
    src = setops.PRESET_SOURCES.get(started, "none")
    source = "" if src.startswith("none") else f" (reproduces {src})"
    c_info.caption(f"Started from **{started}**{source}" + (" — edited: " + "; ".join(edits) if edits else
                                                            ", unchanged"))

st.subheader("Model")
choice = ui.model_picker("so_m")
ui.batch_toggle(choice, "so_m")
ui.ray_cluster_field(choice, "so_m")


@st.cache_data(show_spinner=False, max_entries=32, ttl=300)
def _estimate(config_json: str, spec: str, params_json: str, base_url, fresh: bool, limit: int | None, token: str,
              batch: bool = False):
    from core import runner

    return runner.estimate(json.loads(config_json), spec, params=json.loads(params_json), base_url=base_url,
                           db_path=ui.db_path(), fresh=fresh, limit=limit, batch=batch)


def _short(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 10**6 else f"{n / 1e3:.1f}k" if n >= 1000 else f"{n:,}"


st.subheader("Before running")
o1, o2 = st.columns(2)
limit = int(o1.number_input("Only N items, spread over the grid (0 = all)", 0, 10_000_000, step=1, key="so_limit",
                            help="N items spread over the grid — every operation, size, token type, condition … "
                                 "as soon as N allows — instead of the first N in grid order.")) or None
fresh = o2.toggle("Fresh samples", key="so_fresh",
                  help="Off: identical (model, parameters, prompt) calls are answered from the cache. On: new draws "
                       "from the model for every item (the estimate counts them all).")
m1, m2, m3, m4, m5 = st.columns(5)
n_configs = (n_items // int(samples)) if cfg is not None and samples else 0
m1.metric("Items", f"{min(n_items, limit or n_items):,}",
          help=f"{limit:,} of the grid's {n_items:,} items" if limit and limit < n_items else None)
m2.metric("Configurations", f"{n_configs:,}")
est = None
if cfg is not None and n_items:
    auto = min(n_items, limit or n_items) <= 5000
    if auto or st.button("Estimate calls, tokens and cost", key="so_estimate"):
        with st.spinner("Estimating…"), ui.user_errors("Estimate: "):
            est = _estimate(json.dumps(cfg.to_dict(), sort_keys=True), choice.spec,
                            json.dumps(choice.params, sort_keys=True), choice.base_url, bool(fresh), limit,
                            ui.db_token(), choice.batch)
if est is not None:
    m3.metric("Calls to make", f"{est.n_calls:,}", help=f"{est.n_cached:,} items answered from the cache")
    m4.metric("Tokens in / out (est.)", f"{_short(est.tokens_in)} / {_short(est.tokens_out)}",
              help=f"{est.tokens_in:,} input and {est.tokens_out:,} output tokens (estimated)")
    m5.metric("Cost (est., batch price)" if choice.batch else "Cost (est.)",
              "unknown" if est.cost_usd is None else f"${est.cost_usd:.4f}")
else:
    m3.metric("Calls to make", "–")
    m4.metric("Tokens in / out (est.)", "–")
    m5.metric("Cost (est.)", "–")
for w in warns:
    st.warning(w)

if cfg is not None and n_items:
    preview = ui.lazy_expander("Preview: a few generated prompts with their truths", key="so_preview")
if cfg is not None and n_items and preview.open:   # generated and drawn only while open
    with preview, ui.user_errors():
        for it in setops.preview(cfg, 3):
            st.markdown(f"**item {it['idx']}** · {it['operation'].replace('_', ' ')} · |A|={it['size_a']}, "
                        f"|B|={it['size_b']} · {it['members']} · {it['phrasing']} · {it['approach']} · "
                        f"k={it['shots']}")
            st.code(it["prompt"], language=None, wrap_lines=True)
            truth = it["truth"]
            st.markdown(f"Truth: `{{{', '.join(map(str, truth))}}}`" if truth else "Truth: `∅` (empty set)")

st.subheader("Run")
r1, r3 = st.columns([3, 1])
name = r1.text_input("Run name (optional)", key="so_name")
if r3.button("Run", type="primary", disabled=cfg is None or not n_items, key="so_run", use_container_width=True):
    handle = ui.start_run(cfg.to_dict(), choice, name=name or None, fresh=fresh, limit=limit)
    if handle is not None:
        st.session_state["so_run_id"] = handle.run_id
        ui.qp_set(run=handle.run_id)

active = st.session_state.get("so_run_id") or ui.qp_get("run")
if active:
    ui.run_progress(active, key="so", scoring=ui.scoring_switch())

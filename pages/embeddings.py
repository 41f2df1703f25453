"""Embeddings — set-like compositionality of sentence encoders (SetLike paper, features E1–E5).

Thin page: all computation is in core.embeddings (pipeline.score, tables, figures)."""

from __future__ import annotations

import hashlib
import io
import json

import pandas as pd
import streamlit as st

import ui
from core.embeddings import figures, results_store, tables
from core.embeddings.criteria import DEFAULT_EPS, fmt
from core.embeddings.encoders import LABELS, available_encoders
from core.embeddings.measures import MEASURES
from core.embeddings.samples import build_samples, load_any, load_demo, load_triples, write_tuples
from core.errors import UserError
from core.files import csv_text

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

RESULTS = "emb_results"
OPENAI_SPEC = "openai/text-embedding-3-small"   # only used to find the OpenAI key the way every page does

st.title("Embeddings: set-like compositionality")
st.caption(
    "Do sentence embeddings compose like sets? From three consecutive sentences and two fusions we build TextOverlap, "
    "TextDifference and TextUnion samples and test the SetLike paper's criteria C1–C6 with five measures. "
    "MiniLM and the embedded SmolLM2 run offline; OpenAI embeddings need a key. "
    "SmolLM2-135M is a very small LLM — a stand-in for the paper's 3–9B LLM encoders."
)


# ------------------------------------------------------------------------------------------------ controls
@st.cache_data(show_spinner=False)
def _demo():
    tuples = load_demo()
    samples = build_samples(tuples)
    return tuples, samples, results_store.samples_sha(samples, tuples)


openai_key, key_source = ui.api_key_for(OPENAI_SPEC)
infos = {i.name: i for i in available_encoders(api_key=openai_key)}
default = [n for n in ("minilm",) if infos[n].available]   # one encoder to start with: the quick, offline one
CHIPS = {"minilm": "MiniLM", "local": "SmolLM2-135M", "openai": "OpenAI"}   # short: a chip shows them whole
from_url = [n for n in ui.qp_list("enc") if n in infos]
# every setting is in the URL (a reload or a shared link shows the same view; computed results come back from the
# store): enc=, src=, filter=1, and inside a result measure=, eps=, paper=0, angle=, op=
SOURCES = {"demo": "Demo set", "upload": "Upload CSV", "paste": "Paste CSV", "fuse": "Fuse triples with a model"}
SOURCE_Q = {v: k for k, v in SOURCES.items()}


def _from_url(key: str, name: str, options, default, parse=lambda v: v) -> None:
    """A fresh page (a reload, a shared link): the widget ``key`` starts at the URL's ``name``, if it is valid."""
    if key not in st.session_state:
        value = parse(ui.qp_get(name)) if ui.qp_get(name) is not None else default
        st.session_state[key] = value if value in options else default


_from_url("emb_source", "src", list(SOURCES.values()), "Demo set", SOURCES.get)
_from_url("emb_filter", "filter", [True, False], False, lambda v: v == "1")

left, right = st.columns([2, 3])
with left:
    chosen = st.multiselect("Encoders", list(infos), default=from_url or default, key="emb_encoders",
                            format_func=lambda n: CHIPS.get(n, n) + ("" if infos[n].available else " (unavailable)"),
                            help="; ".join(f"{CHIPS.get(n, n)} = {LABELS[n]}" for n in infos))
    for n, info in infos.items():
        if not info.available:
            st.caption(f"{LABELS[n]}: {info.reason}")
    if "openai" in chosen and not openai_key:
        st.text_input("OPENAI_API_KEY (kept in this browser session only, never stored)", type="password",
                      key="_key_OPENAI_API_KEY")
with right:
    source = st.radio("Data", list(SOURCES.values()), horizontal=True, key="emb_source")
    paper_filter = st.checkbox("Paper's filter: keep difference samples only when their source pair has cosine "
                               "< 0.25", key="emb_filter")

ui.qp_set(enc=chosen, src=SOURCE_Q[source] if source != "Demo set" else None, filter=1 if paper_filter else None)

raw: bytes | None = None
if source == "Upload CSV":
    up = st.file_uploader("Sentence tuples (s_prev, s_curr, s_next, s1, s2) or samples (operator, a, b, target)",
                          type=["csv", "tsv", "txt"], key="emb_upload")
    raw = up.getvalue() if up is not None else None
elif source == "Paste CSV":
    text = st.text_area("CSV text with a header row", key="emb_paste", height=150,
                        placeholder="s_prev,s_curr,s_next,s1,s2\n…")
    raw = text.encode("utf-8") if text.strip() else None



def _fusion_source() -> tuple[list, str, str]:
    """E2 on the page: paste triples, pick any chat model, fuse; returns (tuples, data key, label) or stops."""
    from core.embeddings.fusion import fuse_tuples, max_words

    st.caption("Paste consecutive-sentence triples; the model writes S1 = fuse(S_prev, S_curr) and S2 = fuse(S_curr, "
               "S_next) with the paper's paraphraser instruction (at most ½·(words A + words B) words, temperature "
               "0.5). Replies are cached like every model call. SmolLM2-135M fuses poorly — a cloud model does better.")
    text = st.text_area("Triples CSV: s_prev, s_curr, s_next (id, topic optional)", key="emb_triples", height=150)
    choice = ui.model_picker("emb_fuse", show_params=False)
    if not text.strip():
        st.info("Paste triples to fuse.")
        st.stop()
    triples = load_triples(text.encode("utf-8"))
    tkey = hashlib.sha256((choice.spec + "|" + text).encode("utf-8")).hexdigest()[:16]
    fused_store = st.session_state.setdefault("emb_fused", {})
    if st.button(f"Fuse {2 * len(triples)} sentence pairs with {choice.spec}", key="emb_fuse_go"):
        if choice.missing_key:
            st.error(f"{choice.spec} needs an API key ({choice.missing_key}).")
            st.stop()
        bar = st.progress(0.0, text="fusing…")
        fused = fuse_tuples(triples, choice.spec, base_url=choice.base_url, api_key=choice.api_key,
                            db_path=ui.db_path(),
                            progress=lambda d, n: bar.progress(d / n if n else 1.0, text=f"fused {d}/{n} pairs"))
        fused_store[tkey] = fused
    fused = fused_store.get(tkey)
    if not fused:
        st.info("Press the button to fuse.")
        st.stop()
    view = [{"id": t.tuple_id, "S1": t.s1, "S1 words / budget": f"{len(t.s1.split())}/{max_words(t.s_prev, t.s_curr)}",
             "S2": t.s2, "S2 words / budget": f"{len(t.s2.split())}/{max_words(t.s_curr, t.s_next)}"} for t in fused]
    st.dataframe(pd.DataFrame(view), hide_index=True, width="stretch")
    buf = io.StringIO()
    write_tuples(fused, buf)
    st.download_button("Download the tuples CSV", buf.getvalue(), file_name="fused_tuples.csv", mime="text/csv",
                       key="emb_fused_dl")
    usable = [t for t in fused if t.s1 and t.s2]
    if len(usable) < len(fused):
        st.warning(f"{len(fused) - len(usable)} tuple(s) left out: the model returned an empty fusion.")
    if not usable:
        st.stop()
    return usable, f"fused-{tkey}", f"{len(usable)} tuples fused by {choice.spec}"


try:
    data_sha = None
    if source == "Fuse triples with a model":
        tuples, _fused_key, data_label = _fusion_source()
        kind, samples = "tuples", build_samples(tuples)
    elif source == "Demo set":
        tuples, samples, data_sha = _demo()
        kind, data_label = "tuples", f"demo set ({len(tuples)} tuples)"
    elif raw is None:
        st.info("Upload or paste a CSV: sentence tuples with columns s_prev, s_curr, s_next, s1, s2 (id, topic "
                "optional), or ready-made samples with columns operator, a, b, target.")
        st.stop()
    else:
        kind, samples, tuples = load_any(raw)
        data_label = f"uploaded {kind} ({len(tuples) if tuples else len(samples)} rows)"
except UserError as exc:
    st.error(ui.md(exc))
    st.stop()

counts = {op: sum(1 for s in samples if s.operator == op) for op in ("overlap", "difference", "union")}
st.write(f"**{data_label}** → {len(samples)} samples: {counts['overlap']} overlap, {counts['difference']} "
         f"difference, {counts['union']} union" + (" (nine per tuple: one overlap, six difference, two union)"
                                                   if tuples else ""))

# a result is kept in the store under the digest of what decides it (encoder, the samples' content, the filter, the
# ε grid and measures: core/embeddings/results_store.py); this session keeps what it has read or computed
results: dict = st.session_state.setdefault(RESULTS, {})
diff_max_cos = 0.25 if paper_filter and tuples else None
data_sha = data_sha or results_store.samples_sha(samples, tuples)
settings = {enc: results_store.settings_for(enc, samples, tuples, diff_max_cos=diff_max_cos, data_sha=data_sha)
            for enc in chosen}
keys = {enc: results_store.digest(s) for enc, s in settings.items()}


def _key(enc: str) -> str:
    return keys[enc]


missing = [k for k in keys.values() if k not in results]
if missing:
    try:
        results.update(results_store.load_many(missing, ui.db_path()))
    except UserError as exc:     # a busy or damaged store: the page still computes, it only cannot show old results
        st.warning(f"Stored results could not be read: {ui.md(exc)}")


if st.button("Compute", type="primary", disabled=not chosen, key="emb_compute"):
    from core.embeddings.pipeline import score

    for enc in chosen:
        if not infos[enc].available:
            st.warning(f"{LABELS[enc]} skipped: {infos[enc].reason}")
            continue
        bar = st.progress(0.0, text=f"{LABELS[enc]}: loading…")

        def progress(done: int, total: int, bar=bar, enc=enc) -> None:
            bar.progress(done / total if total else 1.0, text=f"{LABELS[enc]}: {done}/{total} texts embedded")

        try:
            res = score(samples, enc, tuples=tuples, source=data_label, progress=progress, db_path=ui.db_path(),
                        diff_max_cos=0.25 if paper_filter and tuples else None,
                        api_key=openai_key if enc == "openai" else None)
        except UserError as exc:
            bar.empty()
            st.error(f"{LABELS[enc]}: {ui.md(exc)}")
            continue
        bar.progress(1.0, text=f"{LABELS[enc]}: done ({res.report['embedding']['embedded']} embedded, "
                               f"{res.report['embedding']['cached']} from cache)")
        results[_key(enc)] = {"report": res.report, "rows": res.rows, "data_label": data_label}
        try:
            results_store.save(settings[enc], res.report, res.rows, data_label=data_label, db_path=ui.db_path())
        except UserError as exc:
            st.warning(f"{LABELS[enc]}: computed, but not stored ({ui.md(exc)}); it is shown until this tab closes.")

done = {LABELS[e]: results[_key(e)] for e in chosen if _key(e) in results}
if not done:
    st.info("Pick one or more encoders and press **Compute**. Embeddings are cached, so a second run is instant.")
    st.stop()
stored = [f"{label} ({pd.Timestamp(v['created_at']).strftime('%Y-%m-%d %H:%M')} UTC)" for label, v in done.items()
          if v.get("created_at") is not None]
if stored:
    st.caption("Stored results of these settings: " + ui.md(", ".join(stored)) + ". Press **Compute** to compute "
               "them again.")
reports = {k: v["report"] for k, v in done.items()}
rows_by_enc = {k: v["rows"] for k, v in done.items()}


def _df(rows: list[dict]) -> pd.DataFrame:
    return tables.display_frame(rows)    # "—" where a row has no value (the paper's rows), never "None"


def _table(rows: list[dict]) -> None:
    """A full-height table (the paper's tables have up to 18 rows: ours + its 16 encoders)."""
    st.dataframe(_df(rows), hide_index=True, width="stretch", height=35 * (len(rows) + 1) + 3)


tab_crit, tab_proj, tab_norm, tab_samples, tab_dl = st.tabs(
    ["Criteria C1, C3, C4", "Projections C2, C5, C6", "Norm ratios", "Samples", "Downloads"])

with tab_crit:
    st.subheader("Headline (cosine)")
    st.dataframe(_df(tables.headline(reports)), hide_index=True, width="stretch")
    st.caption("Paper (grid-averaged, CNN-DailyMail, 37K–80K samples): SBERT-mini C1 28.96 · C3 34.8 · C4 76.14; "
               "LLM encoders C1 ≈ 24–25 · C3 ≈ 14–20 · C4 ≈ 49–62. ‘grid’ averages the share over a 132-value grid "
               "of margins ε spanning the observed range, as the paper did; ‘ε=0’ is the plain share.")
    c1, c2, c3 = st.columns(3)
    EPS_OPTIONS = ["grid"] + [fmt(e) for e in DEFAULT_EPS]
    _from_url("emb_measure", "measure", list(MEASURES), "cosine")
    _from_url("emb_eps", "eps", EPS_OPTIONS, "grid")
    _from_url("emb_paper", "paper", [True, False], True, lambda v: v != "0")
    measure = c1.selectbox("Measure", list(MEASURES), key="emb_measure",
                           format_func=lambda m: MEASURES[m].label)
    eps_choice = c2.selectbox("Margin ε", EPS_OPTIONS, key="emb_eps",
                              format_func=lambda e: "average over the ε grid (paper)" if e == "grid" else f"ε = {e}")
    with_paper = c3.checkbox("Show the paper's 16 encoders", key="emb_paper")
    ui.qp_set(measure=measure if measure != "cosine" else None, eps=eps_choice if eps_choice != "grid" else None,
               paper=0 if not with_paper else None)
    note = " (distances: inequalities flipped)" if MEASURES[measure].is_distance else ""
    st.markdown(f"**C1 — TextOverlap** ({{A,B}}, O): CO1 = S(A,O) − S(A,B) ≥ ε, CO2 = S(B,O) − S(A,B) ≥ ε{note}. "
                "Share of samples (%) per outcome.")
    _table(tables.criteria_table(reports, "C1", measure, eps_choice, with_paper))
    st.markdown(f"**C3 — TextDifference** ((A,B), D): CD1 = S(A,D) − S(B,D) ≥ ε, CD2 = S(A,B) − S(B,D) ≥ ε{note}.")
    _table(tables.criteria_table(reports, "C3", measure, eps_choice, with_paper))
    st.markdown(f"**C4 — TextDifference**: S(A − B, D) − S(A − B, B) ≥ ε{note}; share of samples (%).")
    _table(tables.criteria_table(reports, "C4", measure, eps_choice, with_paper))
    if with_paper and measure not in ("cosine", "ned"):
        st.caption("The paper's Tables 1–3 report cosine (and NED for C4) only.")

with tab_proj:
    st.markdown("Target embeddings projected onto the plane of A and B; angles normalised so that ∠(A, B) = 1. "
                "C2: overlap targets lie *between* A and B; C5: difference targets lie near A; C6: union targets lie "
                "between A and B when the norms are comparable, near the longer input otherwise.")
    st.dataframe(_df(tables.geometry_table(reports)), hide_index=True, width="stretch")
    _from_url("emb_angle", "angle", ["angle_b", "angle_a"], "angle_b")
    which = st.radio("Angle", ["angle_b", "angle_a"], horizontal=True, key="emb_angle",
                     format_func=lambda v: figures.VALUE_LABELS[v])
    ui.qp_set(angle=which if which != "angle_b" else None)
    st.plotly_chart(figures.histogram_grid(rows_by_enc, which), key="emb_fig_angle")

with tab_norm:
    st.markdown("Ratio of the input norms ‖A‖/‖B‖ per operator (C6 assumes it decides where a union lands).")
    st.plotly_chart(figures.histogram_grid(rows_by_enc, "norm_ratio"), key="emb_fig_norm")

with tab_samples:
    c1, c2 = st.columns([1, 1])
    enc_label = c1.selectbox("Encoder", list(rows_by_enc), key="emb_drill_enc")
    OPS = ["all", "overlap", "difference", "union"]
    _from_url("emb_drill_op", "op", OPS, "all")
    op = c2.selectbox("Operator", OPS, key="emb_drill_op")
    ui.qp_set(op=op if op != "all" else None)
    rows = [r for r in rows_by_enc[enc_label] if op == "all" or r["operator"] == op]
    view = pd.DataFrame(rows)
    cols = ["sample_id", "operator", "variant", "cos_ab", "cos_at", "cos_bt", "angle_b", "norm_ratio", "a", "b",
            "target"]
    st.dataframe(view[[c for c in cols if c in view.columns]].round(3), hide_index=True, width="stretch",
                 height=300)
    ids = [r["sample_id"] for r in rows]
    sid = st.selectbox("Sample", ids, key="emb_drill_sample") if ids else None
    row = next((r for r in rows if r["sample_id"] == sid), None)
    if row:
        left, right = st.columns([3, 2])
        with left:
            st.markdown(f"**{ui.md(row['operator'])}** {ui.md_code(row['variant'] or 'uploaded')} · tuple "
                        f"{ui.md_code(row['tuple_id'])}")
            st.markdown(f"**A:** {ui.md(row['a'])}\n\n**B:** {ui.md(row['b'])}\n\n**Target:** {ui.md(row['target'])}")
            pairs = [{"measure": MEASURES[m].label, "(A, B)": row.get(f"{p}_ab"), "(A, T)": row.get(f"{p}_at"),
                      "(B, T)": row.get(f"{p}_bt")}
                     for m, p in (("cosine", "cos"), ("dot", "dot"), ("l1", "l1"), ("l2", "l2"), ("ned", "ned"))]
            st.dataframe(_df(pairs), hide_index=True, width="stretch")
            checks = []
            if row["operator"] == "overlap":
                checks = [("CO1 (cosine, ε=0)", row.get("c1_co1_cosine")), ("CO2 (cosine, ε=0)",
                                                                            row.get("c1_co2_cosine"))]
            elif row["operator"] == "difference":
                checks = [("CD1 (cosine, ε=0)", row.get("c3_cd1_cosine")),
                          ("CD2 (cosine, ε=0)", row.get("c3_cd2_cosine")), ("C4 (cosine, ε=0)",
                                                                            row.get("c4_cosine"))]
            for name, margin in checks:
                ok, text = figures.margin_verdict(margin)
                verdict = {True: ":green[**met**]", False: ":red[**not met**]", None: ":gray[**not computable**]"}[ok]
                st.markdown(f"{name}: {verdict} ({text})")

            def r3(x):
                return "n/a" if x is None else f"{x:.3f}"
            st.markdown(f"∠(A, proj T)/∠(A, B) = {r3(row['angle_a'])} · ∠(B, proj T)/∠(A, B) = {r3(row['angle_b'])} "
                        f"· ∠(A, B) = {r3(row['angle_ab_deg'])}° · ‖A‖/‖B‖ = {r3(row['norm_ratio'])} · share of the "
                        f"target's norm inside the plane {r3(row['in_plane'])}")
        with right:
            st.plotly_chart(figures.projection_plane(row, "Plane of A and B"), key="emb_fig_plane")

with tab_dl:
    for label, v in done.items():
        enc = v["report"]["encoder"]
        c1, c2 = st.columns(2)
        c1.download_button(f"REPORT.json — {label}", json.dumps(v["report"], indent=1, allow_nan=False),
                           file_name=f"REPORT_{enc}.json", mime="application/json", key=f"emb_dl_r_{enc}")
        c2.download_button(f"SAMPLES.csv — {label}", csv_text(v["rows"]), file_name=f"SAMPLES_{enc}.csv",
                           mime="text/csv", key=f"emb_dl_s_{enc}")

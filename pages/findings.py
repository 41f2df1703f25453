"""Findings: each hypothesis and figure of the SetLexSem paper as a tested verdict on the selected runs — one
verdict per model (never pooled across models; runs of one model pooled and named), one sentence per contrast
(direction, size, interval, n in independent draws, matched strata, p and its Holm family, the paper's number), the
contrasts as a forest plot (static SVG; a row's numbers on hover), the violins on request, the reference's table
and the paper's numbers beside ours."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import ui
from core import analysis
from core.analysis import findings_view

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

st.title("Findings")
st.caption("The SetLexSem paper's questions, answered for your runs, one verdict per model: does swapping "
           "hyponyms lower accuracy? are words harder than numbers? does accuracy fall with set size? Each contrast "
           "is an estimate in accuracy points (first level minus second) over independent draws of (A, B) — the "
           "configurations that reuse a draw are averaged into it —, comparing levels only where every other "
           "factor and the model are equal (matched strata), with a permutation p and a 95 % bootstrap interval, "
           "p adjusted by Holm's method within each finding and model (or across the page). How: docs/FIDELITY.md, "
           "\"How verdicts are computed\".")

runs = ui.runs_df()
runs = runs[runs["task"] == "setops"] if not runs.empty else runs
if runs.empty:
    st.info("No set-operation runs yet. Start one on the Set operations or Deceptive sets page, or import a "
            "result CSV on the Runs page.")
    st.stop()

picked = ui.run_picker("Runs", key="runs", default=runs["run_id"].iloc[:1].tolist(), task="setops")
if not picked:
    st.info("Choose at least one run.")
    st.stop()
ui.provenance_badges(picked)
c1, c2 = st.columns([2, 1])
with c1:
    scoring = ui.scoring_switch()
alpha_text = ui.qp_get("alpha", "0.05")
try:
    alpha_default = float(alpha_text)
except (TypeError, ValueError):
    alpha_default = 0.05
alpha_default = alpha_default if 0 < alpha_default < 1 else 0.05
alpha = c2.number_input("Significance level α", min_value=0.001, max_value=0.5, value=alpha_default, step=0.01,
                        format="%.3f", key="find_alpha", help="After Holm's correction within each family.")
ui.qp_set(alpha=f"{alpha:g}")
families = {"finding": "each finding and model", "report": "every contrast on this page"}
family_q = ui.qp_get("family", "finding")
family = c1.radio("Holm family", list(families), format_func=families.get, horizontal=True, key="find_family",
                  index=list(families).index(family_q) if family_q in families else 0,
                  help="Holm's correction within each finding's pre-specified contrasts for one model (the "
                       "reference's hypotheses), or across every primary contrast on this page.")
ui.qp_set(family=family)

rep = ui.cached_analysis("findings_report", picked, scoring=scoring, alpha=alpha, family=family)
answerable = [f for f in rep["findings"] if f["applicable"]]
n_sig = sum(1 for f in answerable for c in f["contrasts"] if c.get("significant"))
models = sorted({m["model"] for f in rep["findings"] for m in f.get("models", [])})
st.markdown(f"**{len(answerable)} of {len(rep['findings'])} findings** can be answered from these runs; "
            f"**{n_sig}** contrast(s) significant at α = {alpha:g} after Holm ({ui.md(rep['correction'])}; "
            f"{scoring} scoring). Models, each with its own verdicts: "
            + ", ".join(ui.md_code(m) for m in models) + ".")
d1, d2, d3 = st.columns(3)
d1.download_button("Findings (JSON)", json.dumps(rep, indent=1, default=str), file_name="findings.json",
                   mime="application/json", key="find_dl_json")
d2.download_button("Findings (Markdown)", findings_view.to_markdown(rep), file_name="findings.md",
                   mime="text/markdown", key="find_dl_md")
show_all = d3.toggle("Show findings these runs cannot answer", value=False, key="find_all")

for fd in rep["findings"]:
    if not fd["applicable"] and not show_all:
        continue
    st.subheader(fd["title"])
    st.caption(f"`{fd['id']}` · paper: {ui.md(fd['source'])} — {ui.md(fd['claim'])}")
    runs_of = {m["model"]: m["runs"] for m in fd.get("models", [])}
    shown = None
    for line in fd.get("lines") or [{"model": None, "text": v} for v in fd["verdicts"]]:
        if not fd["applicable"]:
            st.info(ui.md(line["text"]))
            continue
        if line["model"] != shown and line["model"] is not None:   # one block of verdicts per model
            shown = line["model"]
            pooled = runs_of.get(shown, [])
            st.markdown(f"**{ui.md(shown)}**" + (f" · runs: {ui.md(', '.join(pooled))}" if pooled else ""))
        st.markdown("- " + ui.md(line["text"]))
    if not fd["applicable"]:
        continue
    if fd["contrasts"]:   # a static SVG (every text in it escaped): fifteen Plotly charts took a second to draw
        st.markdown(findings_view.forest_svg(fd), unsafe_allow_html=True)
    more = ui.lazy_expander("Violins, the reference's table and the paper's numbers", key=f"find_more_{fd['id']}")
    if not more.open:   # built only while open: fifteen closed expanders of tables were drawn on every visit
        continue
    with more:
        # the violins on request: fifteen of them over hundreds of thousands of configurations cost seconds
        if st.toggle("Draw the violins (accuracy per configuration)", key=f"find_show_{fd['id']}"):
            points = ui.cached_analysis("finding_points", picked, finding_id=fd["id"], scoring=scoring)
            st.plotly_chart(findings_view.violin_of(points, fd["id"], scoring), key=f"find_violin_{fd['id']}",
                            config={"displaylogo": False, "toImageButtonOptions": {"format": "png",
                                                                                   "filename": fd["id"]}})
        if fd.get("table"):
            st.markdown("Per-configuration accuracy (mean / std / min / max / N — the reference's `get_stats`)")
            st.dataframe(analysis.for_display(pd.DataFrame(fd["table"])), hide_index=True, width="stretch")
        if fd.get("paper"):
            st.markdown("The paper's numbers")
            st.dataframe(analysis.for_display(pd.DataFrame(fd["paper"])), hide_index=True, width="stretch")

"""Compare: stored runs and/or uploaded result files (our export or the SetLexSem reference CSV layout), aligned on
shared factors — side-by-side violins (description), then B against A tested at the independent draw
(core/analysis/comparison.py: paired by draw when the runs share draws, else matched between draws; per-level rows
with Holm), per-configuration statistics and item-by-item agreement as description. Each series is one run, never
pooled; an upload is labelled as a file's claims. Published figures can be set beside them."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import streamlit as st

import ui
from core import analysis, store
from core.analysis import figures, violin_svg
from core.errors import UserError

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

st.title("Compare")
st.caption("Each series is one run (an uploaded file becomes a run of its own; the same file is imported once). "
           "Configurations are aligned on the factors all series share.")

# ---------------------------------------------------------------------------------------------------- uploads
uploads = st.file_uploader("Upload result files (CSV / Parquet / JSONL — our export or the SetLexSem reference "
                           "layout)", type=["csv", "parquet", "jsonl", "ndjson"], accept_multiple_files=True,
                           key="cmp_upload")
imported: dict = st.session_state.setdefault("cmp_imported", {})  # sha256 -> [(run_id | None, message, check)]
uploaded_ids: list[str] = []
for f in uploads or []:
    data = f.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    if digest not in imported:
        try:
            from core.store import writing
            from core.store.io import import_file
            from core.store.rescore import import_check

            with writing(ui.db_path(), f"an import of {f.name}"):   # restore waits for it (store.writers)
                done = import_file(ui.db_path(), data, f.name)
            known = ui.runs_df()
            names = analysis.run_labels(known) if not known.empty else {}
            shown = []
            for run in done:
                name = names.get(run.run_id, run.run_id)
                who = f" (model {run.model})" if len(done) > 1 else ""
                if run.rows:   # named by the run's name (the file's own name column, else the file), id in brackets
                    message = f"{f.name}{who}: imported as run “{name}” ({run.rows} rows; id {run.run_id})"
                else:          # the same claims, maybe in another format: one run, not two
                    message = (f"{f.name}{who}: the same results as run “{name}” (id {run.run_id})"
                               " — already stored, not stored twice")
                # re-scored from its responses or kept as claims: what they say beside what the file claims
                shown.append((run.run_id, message, import_check(ui.db_path(), run.run_id)))
            imported[digest] = shown
        except UserError as exc:
            imported[digest] = [(None, str(exc), None)]
        except Exception as exc:  # noqa: BLE001 - never a traceback for a bad file
            imported[digest] = [(None, f"{f.name}: not a readable result file ({type(exc).__name__}: {exc})", None)]
    for run_id, message, check in imported[digest]:
        if run_id:
            st.success(ui.md(message))
            if check:
                (st.warning if check["disagreements"] else st.caption)(ui.md(check["text"]))
            uploaded_ids.append(run_id)
        else:
            st.error(ui.md(message if message.startswith(f.name) else f"{f.name}: {message}"))

runs = ui.runs_df()
if runs.empty and not uploaded_ids:
    st.info("No runs yet: upload result files above, or start runs on the Set operations page.")
    st.stop()

stored = ui.run_picker("Stored runs", key="runs", default=[], help="Pick two or more (uploads are added).")
run_ids = list(dict.fromkeys([*stored, *uploaded_ids]))
if not run_ids:
    st.info("Choose at least one stored run or upload a file.")
    st.stop()

all_runs = ui.runs_df()
ui.provenance_badges(run_ids)
labels = analysis.run_labels(all_runs[all_runs["run_id"].isin(run_ids)]) if not all_runs.empty else {}
series = [analysis.Series(labels.get(r, r), (r,)) for r in run_ids]
cmp_tasks = analysis.tasks_of(all_runs[all_runs["run_id"].isin(run_ids)]) if not all_runs.empty else []
if len(cmp_tasks) > 1:
    st.warning("These runs are of different tasks (" + ", ".join(cmp_tasks) + "): their accuracies measure "
               "different things. Compare runs of one task.")

facts = ui.cached_analysis("selection_facts", run_ids)   # factors, levels, overviews: one connection
sizes_same = bool(facts["sizes_same"])   # then |A| = |B| is one factor


def flabel(f: str) -> str:
    return analysis.factor_label(f, sizes_same)


factors = analysis.merge_sizes([f for f in facts["factors"] if f not in analysis.RUN_FACTORS], sizes_same)
scoring = ui.scoring_switch()
c1, c2, c3 = st.columns(3)
x_opts = factors or ["operation"]
x_q = ui.qp_get("x")
x = c1.selectbox("Split by", x_opts, index=x_opts.index(x_q) if x_q in x_opts else
                 (x_opts.index("operation") if "operation" in x_opts else 0), format_func=flabel,
                 key="cmp_x")
align = c2.toggle("Align on shared factors", value=True, key="cmp_align",
                  help="Keep only the factor combinations that every series has.")
tasks = set(facts["overview"]["lenient"]["task"].dropna())
refs = analysis.reference_for(x, tasks=tasks)
ref_titles = {t["id"]: t["title"] for t in refs}
ref_id = c3.selectbox("Published reference series", ["(none)", *ref_titles], key="cmp_ref",
                      format_func=lambda r: r if r == "(none)" else ref_titles[r])
ui.qp_set(x=x)
filters = ui.slice_filters(run_ids, key="slice")
ui.report_download(run_ids, key="cmp", filters=filters)


@st.cache_data(show_spinner=False, max_entries=32, ttl=600)
def _view(db, token, series_key, x, align, filters_key, scoring, ref_id, ref_name, x_title, interactive) -> dict:
    """Everything the page draws of the aligned series (analysis.compare_view: computed once per state of the runs
    and kept in the store), with the violins drawn: as Plotly when there are few enough configurations to mark each
    one (or ``interactive``), else as a static SVG (core/analysis/violin_svg.py: no 0.9 s of Plotly's script in a new
    browser tab). Built once per selection and store state and shared by sessions."""
    ser = [analysis.Series(n, tuple(ids)) for n, ids in json.loads(series_key)]
    with store.connect(db) as con:
        view = analysis.compare_view(con, ser, x=x, align=align, filters=json.loads(filters_key), scoring=scoring)
    colour = "series" if len(ser) > 1 else None
    ref_df = analysis.reference_table(ref_id) if ref_id != "(none)" else None
    empty = ("No combination of the shared factors is in every series" if view["aligned_away"]
             else "No answered items for this selection yet")
    points, shapes = view["points"], view["shapes"]
    view["static"] = points is None and not view["empty"] and not interactive
    if view["static"]:
        view["svg"] = violin_svg.violin_svg(shapes, x, colour, reference=ref_df, reference_name=ref_name,
                                            x_title=x_title, empty_message=empty)
    else:   # with its points when there are few, else from the shapes
        view["fig"] = figures.violin(points, x, colour, shapes if points is None or colour is None else None,
                                     reference=ref_df, reference_name=ref_name, x_title=x_title,
                                     empty_message=empty)
    view["warnings"] = figures.violin_warnings(None, x, colour, summary=shapes)
    return view


ref_df = analysis.reference_table(ref_id) if ref_id != "(none)" else None
view_key = (ui.db_path(), ui.runs_token(run_ids), json.dumps([[s.name, list(s.run_ids)] for s in series]), x, align,
            json.dumps(filters, default=str), scoring)
shown = _view(*view_key, ref_id, ref_titles.get(ref_id), flabel(x), st.session_state.get("cmp_interactive", False))
shared = shown["shared"]
if shared:
    st.caption("Aligned on: " + ", ".join(flabel(f) for f in analysis.merge_sizes(shared, sizes_same)))
if shown["aligned_away"]:
    st.info("No combination of the shared factors ("
            + ", ".join(flabel(f) for f in analysis.merge_sizes(shared, sizes_same)) + ") is in every series. "
            "Turn off “Align on shared factors” to see each series over its own configurations.")
elif shown["missing"] and not shown["empty"]:
    st.warning("No answered items in this selection for " + ui.md(", ".join(shown["missing"])) + " — left out of "
               "the figures and tests below.")
if shown["static"]:
    st.markdown(shown["svg"], unsafe_allow_html=True)
else:
    st.plotly_chart(shown["fig"], width="stretch", key="cmp_violin")
for warning in shown["warnings"]:
    st.warning(ui.md(warning))
if shown["points"] is None and not shown["empty"]:
    ui.sketch_note(shown["n_points"], "cmp_interactive", shown["static"])
if ref_df is not None:
    st.caption(f"Reference: {ref_df['source'].iloc[0]} (mean ± std over the paper's configurations).")
if not shown["empty"]:
    if tasks == {"setops"}:   # the SetLexSem LLMs did set operations, not quantifiers
        beside = ui.lazy_expander("Beside the paper's seven LLMs (overall mean ± std of per-configuration "
                                   "accuracy)", key="cmp_paper")   # its chart drawn only while open
        if beside.open:
            with beside:
                mine = shown["by_series"].rename(columns={"series": "model"})
                paper = analysis.reference_table("setlexsem_by_model")
                both = pd.concat([paper[["model", "mean", "std"]], mine[["model", "mean", "std"]]],
                                 ignore_index=True)
                st.plotly_chart(figures.reference_bars(both, "model", highlight=mine["model"].tolist()),
                                width="stretch", key="cmp_paper_models")
                st.caption(f"Grey: {paper['source'].iloc[0]} (all hyperparameters of the paper, scored by the "
                           "reference's rule). Coloured: your series over the configurations shown above, "
                           f"{scoring} scoring — a different grid, so compare with care.")
    st.caption("Description, not a test: per-configuration accuracy of each series (configurations that reuse a "
               "draw are repeated measures; B against A below is tested over draws).")
    summ = shown["summary"].rename(columns={
        "series": "Series", x: flabel(x), "mean": "Mean %", "std": "Std", "min": "Min", "max": "Max",
        "N": "N configs", "items": "Items"})
    st.dataframe(analysis.for_display(summ), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("Mean %", "Std", "Min",
                                                                                          "Max")})

# ---------------------------------------------------------------------------------------------------- B against A
if len(series) >= 2 and not shown["empty"]:
    from core.analysis import comparison

    st.subheader("B against A")
    names = [s.name for s in series]
    d1, d2 = st.columns(2)
    a_name = d1.selectbox("A (baseline)", names, index=0, key="cmp_a")
    b_name = d2.selectbox("B", names, index=1 if len(names) > 1 else 0, key="cmp_b")
    ra = next(s.run_ids[0] for s in series if s.name == a_name)
    rb = next(s.run_ids[0] for s in series if s.name == b_name)
    if ra == rb:
        st.info("Pick two different series as A and B.")
        st.stop()
    res = ui.cached_analysis("compare_pair", [ra, rb], scoring=scoring, filters=filters)
    h = res["headline"]
    for side, s, name in (("A", res["a"], a_name), ("B", res["b"], b_name)):
        if s["contradicted"]:   # never pooled: its own series, labelled as what it is
            st.warning(ui.md(f"{side} is a contradicted claim: " + comparison.series_line(s, name)))
    if res["differ_on"]:
        st.caption("The two runs differ in: " + ", ".join(f"{flabel(k)} ({v[0]} vs {v[1]})"
                                                          for k, v in res["differ_on"].items()))
    if h.get("estimate") is None:
        missing = [n for n, k in ((a_name, "a"), (b_name, "b")) if not res["items"][k]]
        if missing:
            st.info(f"No configurations of {ui.md(missing[0])} with answered items in this selection: pick two "
                    "series that both have answered items.")
        else:
            st.info(ui.md(h.get("reason") or "Nothing to compare."))
        st.stop()
    st.markdown("**" + ui.md(comparison.headline_text(h, a_name, b_name)) + "**")
    m1, m2, m3, m4, m5 = st.columns([1, 1, 1, 1.8, 1])   # the interval is the widest value: never cut
    m1.metric("Mean A", "–" if h.get("mean_a") is None else f"{h['mean_a']:.1f} %")
    m2.metric("Mean B", "–" if h.get("mean_b") is None else f"{h['mean_b']:.1f} %")
    m3.metric("B − A (points)", f"{h['estimate']:+.2f}")
    m4.metric("95 % interval", comparison.interval_text(h))
    m5.metric("p", comparison.p_words(h))
    unit = f"{h['n']:,} {h['unit']}" if h["design"].startswith("paired") else \
        f"{h['n_a']:,} and {h['n_b']:,} {h['unit']}"
    left = h.get("left_out") or {}
    st.caption(f"{h['test'][0].upper()}{h['test'][1:]}, {h['design']}: n = {unit} (the independent unit: the drawn "
               "pair of sets; configurations that reuse a draw are repeated measures, averaged within it)"
               + (f"; matched on {', '.join(flabel(c) for c in res['matched_on'])}" if res["matched_on"] else "")
               + (f"; draws only one run answered, left out: A {left['a']:,}, B {left['b']:,}"
                  if any(left.values()) else "") + ".")
    if res["factors"]:
        st.markdown(f"**Per level** — the same test within each level; {res['factors'][0]['family']}.")
        rows = pd.DataFrame([{
            "Factor": flabel(r["factor"]), "Level": analysis.readable_level(r["factor"], r["level"]),
            "B − A (points)": r["estimate"], "95 % interval": comparison.interval_text(r),
            "p": comparison.p_words(r), "p (Holm)": comparison.p_words(r, "p_holm"),
            "n": str(r["n"]) if r["design"].startswith("paired") else f"{r['n_a']} + {r['n_b']}",
            "Design": r["design"]} for r in res["factors"]])
        st.dataframe(rows, hide_index=True, width="stretch",
                     column_config={"B − A (points)": st.column_config.NumberColumn(format="%+.2f")})

    st.subheader("Description (not a test)")
    st.caption(comparison.DESCRIPTION_NOTE[0].upper() + comparison.DESCRIPTION_NOTE[1:] + ".")
    if res["description"]:
        desc = pd.DataFrame(res["description"]).drop(columns="note")
        desc["series"] = desc["series"].map({"A": a_name, "B": b_name})
        st.dataframe(desc.rename(columns={"series": "Series", "mean": "Mean %", "std": "Std", "min": "Min",
                                          "max": "Max", "configurations": "N configs", "items": "Items"}),
                     hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.2f")
                                    for c in ("Mean %", "Std", "Min", "Max")})
    ag = res.get("agreement") or {}
    if not ag.get("items"):
        st.caption("These two runs share no items (same configuration, sample and prompt).")
    else:
        p1, p2, p3, p4 = st.columns(4)
        p1.metric("Shared items", f"{ag['items']:,}")
        p2.metric("Agreement", f"{100 * ag['agreement']:.1f} %")
        p3.metric("Only A right", f"{ag['only_a']:,}")
        p4.metric("Only B right", f"{ag['only_b']:,}")
        agree = ui.lazy_expander("Agreement map: which run got each item right (first 60 shared "
                                  "configurations × samples)", key="cmp_agree_open")   # a chart: drawn when open
        if agree.open:
            with agree:
                paired = ui.cached_analysis("paired_comparison", [ra, rb], filters=filters, scoring=scoring)
                st.plotly_chart(figures.agreement_heatmap(paired["map"], a_name, b_name),
                                width="stretch", key="cmp_agree")
                st.caption("Rows: configurations (first 60 shared), columns: samples; colour = which run got "
                           "the item right.")

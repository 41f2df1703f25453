"""Results: violins of per-configuration accuracy split and coloured by any factor (with mean/std/min/max/N),
the error-analysis table for any slice, the robustness summary, and a drill-down to prompts and raw responses."""

from __future__ import annotations

import streamlit as st

import ui
from core import analysis, urlstate
from core.analysis import figures, violin_svg
from core.analysis.views import id_columns_hidden

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

st.title("Results")
MAX_LISTED = 2000   # configurations listed in "One configuration" (200,000 rows would take seconds to send)

runs = ui.runs_df()
if runs.empty:
    st.info("No runs yet. Start one on the Set operations page or with one click on Home.")
    st.page_link("pages/home.py", label="Go to Home →")
    st.stop()

latest = runs["run_id"].iloc[:1].tolist()
picked_runs = ui.run_picker("Runs", key="runs", default=latest)
if not picked_runs:
    st.info("Choose at least one run.")
    st.stop()

# views never pool two tasks: with runs of both, one task at a time
chosen_rows = runs[runs["run_id"].isin(picked_runs)]
tasks = analysis.tasks_of(chosen_rows)
task = tasks[0] if tasks else "setops"
if len(tasks) > 1:
    if st.session_state.get("res_task") not in tasks:
        st.session_state["res_task"] = ui.qp_get("task") if ui.qp_get("task") in tasks else tasks[0]
    task = st.radio("Task", tasks, horizontal=True, key="res_task",
                    format_func=lambda t: {"setops": "Set operations", "quantifiers": "Quantifiers"}.get(t, t),
                    help="Set-operation and quantifier runs measure different things; their accuracies are never "
                         "pooled into one figure.")
    others = chosen_rows[chosen_rows["task"] != task]
    st.caption(f"Showing the {task} runs; {len(others)} run(s) of another task: choose it above.")
ui.qp_set(task=task if len(tasks) > 1 else None)
run_ids = [r for r in picked_runs if r in set(chosen_rows.loc[chosen_rows["task"] == task, "run_id"])] or picked_runs
run_rows = runs[runs["run_id"].isin(run_ids)]
labels = analysis.run_labels(run_rows)
ui.provenance_badges(run_ids)

scoring = ui.scoring_switch()
facts = ui.cached_analysis("selection_facts", run_ids)   # factors, levels, overviews: one connection
overview = facts["overview"][scoring]
if not overview.empty:
    overview = overview.assign(label=overview["run_id"].map(labels))
    overview = overview[["label", *[c for c in overview.columns if c not in ("label", "run_id")], "run_id"]]
    show = overview.rename(columns={"label": "Label", "run_id": "Run", "model": "Model", "task": "Task", "items": "Items",
                                    "answered": "Answered", "failed": "Failed calls", "n_correct": "Correct",
                                    "accuracy": "Accuracy %",
                                    "configs": "Configurations", "cost_usd": "Cost $"})
    st.dataframe(analysis.for_display(show), hide_index=True, width="stretch",
                 column_config={"Accuracy %": st.column_config.NumberColumn(format="%.1f"),
                                "Cost $": st.column_config.NumberColumn(format="%.4f"),
                                "Run": None})   # the id stays in the data (downloads), not on screen: names do
    if overview["failed"].sum():
        st.caption("Accuracy is over the answered items; failed calls are left out (retry them with Resume on the "
                   "Runs page).")
    if scoring == "strict":
        unjudged = facts["overview"]["lenient"]["answered"].sum() - \
            overview["answered"].sum()
        if unjudged > 0:
            st.caption(f"{int(unjudged)} answered item(s) have no strict verdict (imported without their raw "
                       "response) and are left out under strict scoring; switch to lenient to include them.")
running = runs[runs["run_id"].isin(run_ids) & runs["status"].isin(["running", "pending"])]["run_id"].tolist()
if running:
    r1, r2 = st.columns([4, 1])
    r1.info(f"Still running: {ui.md(', '.join(labels.get(r, r) for r in running))} — figures include the answers "
            "stored so far.")
    if r2.button("Refresh", key="res_refresh_running", use_container_width=True):
        st.rerun()
waiting = runs[runs["run_id"].isin(run_ids) & (runs["status"] == "waiting")]["run_id"].tolist()
if waiting:
    st.info(f"Waiting on provider batches: {ui.md(', '.join(labels.get(r, r) for r in waiting))} — not failed; results arrive within 24 h and are "
            "collected from the Runs page (or the same CLI command). Figures include the answers stored so far.")
answered = int(overview["answered"].sum()) if not overview.empty else 0
if answered == 0:
    st.info("These runs have no answered items yet — if a run is in progress, this page updates as results arrive.")
    if st.button("Refresh", key="res_refresh"):
        st.rerun()
    st.stop()

sizes_same = bool(facts["sizes_same"])   # then |A| = |B| is one factor


def flabel(f: str) -> str:
    return analysis.factor_label(f, sizes_same)


factors = analysis.merge_sizes([f for f in facts["factors"] if f not in ("task", "name")], sizes_same)
varying = [f for f in facts["varying"] if f in factors]
filters = ui.slice_filters(run_ids, key="slice")
ui.report_download(picked_runs, key="res", filters=filters)

# the view is a radio (in the URL as ``view=``), not st.tabs: a tab cannot be selected from a link or kept over a
# reload, and only the chosen view is computed
VIEWS = {"violins": "Violins", "errors": "Error analysis", "robustness": "Robustness", "cost": "What thinking buys",
         "drilldown": "Drill-down"}
if st.session_state.get("res_view") not in VIEWS:
    st.session_state["res_view"] = ui.qp_get("view") if ui.qp_get("view") in VIEWS else "violins"
view = st.radio("View", list(VIEWS), format_func=VIEWS.get, horizontal=True, key="res_view",
                label_visibility="collapsed")
ui.qp_set(view=view if view != "violins" else None)

# defaults follow the selection: two models → colour by model, deceptive runs → split by condition; a shared link's
# x / colour hold until the selection changes
defaults = analysis.view_defaults(chosen_rows[chosen_rows["task"] == task], varying, factors)
split_opts = [f for f in factors if f not in ("run_id",)] or ["operation"]
selection = (task, tuple(sorted(run_ids)))
if st.session_state.get("res_selection") != selection:
    first = "res_selection" not in st.session_state
    want_x = ui.qp_get("x") if first and ui.qp_get("x") in split_opts else defaults["x"]
    want_x = want_x if want_x in split_opts else split_opts[0]
    want_c = ui.qp_get("color") if first and ui.qp_get("color") else defaults["color"]
    st.session_state["res_x"] = want_x
    st.session_state["res_color"] = want_c if want_c in factors and want_c != want_x else "(none)"
    st.session_state["res_selection"] = selection

# ---------------------------------------------------------------------------------------------------- violins
@st.cache_data(show_spinner=False, max_entries=32, ttl=600)
def _violin_figure(db: str, token: str, run_ids: tuple, x: str, color: str | None, filters: dict, scoring: str,
                   ref_id: str, ref_name: str | None, x_title: str, panel: str | None, panel_names: tuple):
    """The violin figure of a selection, built once per state of its runs (``token``) and shared by every session:
    0.3–0.7 s at 200,000 configurations, on every rerun before. ``panel``: one panel per model or run."""
    points, summary = ui.cached_analysis("violin_view", list(run_ids), x=x, color=color, filters=filters,
                                          scoring=scoring, panel=panel)
    ref_df = analysis.reference_table(ref_id) if ref_id != "(none)" else None
    return figures.violin(points, x, color, summary, reference=ref_df, reference_name=ref_name, x_title=x_title,
                          panel=panel, panel_names=dict(panel_names))


@st.cache_data(show_spinner=False, max_entries=32, ttl=600)
def _violin_svg(db: str, token: str, run_ids: tuple, x: str, color: str | None, filters: dict, scoring: str,
                ref_id: str, ref_name: str | None, x_title: str, panel: str | None, panel_names: tuple) -> str:
    """The same violins as one static SVG (core/analysis/violin_svg.py), for a selection too big for markers."""
    _, summary = ui.cached_analysis("violin_view", list(run_ids), x=x, color=color, filters=filters,
                                     scoring=scoring, panel=panel)
    ref_df = analysis.reference_table(ref_id) if ref_id != "(none)" else None
    return violin_svg.violin_svg(summary, x, color, reference=ref_df, reference_name=ref_name, x_title=x_title,
                                 panel=panel, panel_names=dict(panel_names))


def thinking_section(run_ids, filters, scoring) -> None:
    """What thinking buys: accuracy, spread, reasoning tokens and cost per effort level, and the paired contrasts
    between levels (core/analysis/effort.py: thinking_buys)."""
    buys = ui.cached_analysis("thinking_buys", run_ids, filters=filters, scoring=scoring)
    levels, contrasts = buys["levels"], buys["contrasts"]
    st.markdown("**What thinking buys** — per series (one model, one provenance: runs made here of a model pool "
                "and are named; an upload is a file's claims, a series of its own) and reasoning effort: accuracy "
                "with its spread across configurations, and what each item cost in reasoning tokens and dollars.")
    if levels.empty:
        st.info("No answered item of this selection has a reasoning effort.")
        return
    st.plotly_chart(analysis.thinking_figure(levels), width="stretch", key="res_thinking_fig")
    st.dataframe(analysis.for_display(levels.drop(columns=["model", "provenance"])).rename(columns={
        "series": "Series", "runs": "Runs pooled", "reasoning": "Effort", "configs": "Configurations", "answered": "Answered",
        "correct": "Correct", "accuracy": "Accuracy %", "spread": "Spread (std, points)", "calls": "Calls",
        "reasoning_tokens_per_item": "Reasoning tokens / item", "cost_per_item": "$ / item",
        "reasoning_tokens_per_correct": "Reasoning tokens / correct", "usd_per_correct": "$ / correct"}),
        hide_index=True, width="stretch", key="res_thinking_levels",
        column_config={"Accuracy %": st.column_config.NumberColumn(format="%.1f"),
                       "Spread (std, points)": st.column_config.NumberColumn(format="%.1f"),
                       "Reasoning tokens / item": st.column_config.NumberColumn(format="%.0f"),
                       "$ / item": st.column_config.NumberColumn(format="%.5f"),
                       "Reasoning tokens / correct": st.column_config.NumberColumn(format="%.0f"),
                       "$ / correct": st.column_config.NumberColumn(format="%.5f")})
    if contrasts.empty:
        st.caption("Contrasts between levels need two levels asked on the same draws (a config's "
                   "'reasoning: [low, max]'); set-operation items only.")
        return
    st.markdown("**Between levels, paired on the same draws** — each level against the next one asked, and the "
                "deceptive swap effect at each level (not swapped − swapped) with its change between levels.")
    st.dataframe(analysis.for_display(contrasts.drop(columns=["model", "provenance"])).rename(columns={
        "series": "Series", "runs": "Runs pooled", "contrast": "Contrast", "low": "From", "high": "To", "estimate": "Estimate (points)",
        "ci_low": "CI low", "ci_high": "CI high", "p": "p", "p_holm": "Holm p", "n_draws": "Draws",
        "testable": "Testable", "verdict": "Verdict", "caveat": "Caveat"}), hide_index=True, width="stretch",
        key="res_thinking_contrasts",
        column_config={c: st.column_config.NumberColumn(format="%+.1f") for c in
                       ("Estimate (points)", "CI low", "CI high")})
    st.caption("Per draw (the drawn pair of sets), the mean over its matched configurations; the estimate is the "
               "mean over draws, its 95 % interval a bootstrap over draws and p the sign-flip test over draws, "
               "Holm-adjusted within each kind of contrast. Fewer than two draws: too few to test. Spread = "
               "standard deviation of per-configuration accuracy at the level (the paper's robustness score).")


if view == "violins":
    c1, c2, c3 = st.columns([2, 2, 2])
    if st.session_state.get("res_x") not in split_opts:     # back from another view: the URL's, else the default
        x_q = ui.qp_get("x")
        st.session_state["res_x"] = x_q if x_q in split_opts else \
            defaults["x"] if defaults["x"] in split_opts else split_opts[0]
        c_q = ui.qp_get("color")
        st.session_state["res_color"] = c_q if c_q in factors and c_q != st.session_state["res_x"] else "(none)"
    x = c1.selectbox("Split by (x axis)", split_opts, format_func=flabel, key="res_x")
    color_opts = ["(none)"] + [f for f in factors if f not in (x, "run_id")]   # runs: one panel each (below)
    if st.session_state.get("res_color") not in color_opts:
        st.session_state["res_color"] = "(none)"
    color = c2.selectbox("Colour by", color_opts,
                         format_func=lambda f: f if f == "(none)" else flabel(f), key="res_color")
    color = None if color == "(none)" else color
    refs = analysis.reference_for(x, tasks=overview["task"].dropna().unique())
    ref_opts = ["(none)"] + [t["id"] for t in refs]
    ref_titles = {t["id"]: t["title"] for t in refs}
    if st.session_state.get("res_ref") not in ref_opts:
        st.session_state["res_ref"] = ui.qp_get("ref") if ui.qp_get("ref") in ref_opts else "(none)"
    ref_id = c3.selectbox("Published reference", ref_opts, key="res_ref",
                          format_func=lambda r: "(none)" if r == "(none)" else ref_titles[r],
                          help="The papers' published mean ± std for this factor (data/reference_figures.json).")
    ui.qp_set(x=x, color=color, ref=ref_id if ref_id != "(none)" else None)
    # the violins' data — per-configuration points only for a selection small enough to draw them; above that each
    # violin's shape (analysis.violin_view), so 200,000 configurations never leave DuckDB
    # several models (or runs of one model) are never pooled into a violin: one panel each unless x or the colour
    # already tells them apart (analysis.run_split)
    panel = analysis.run_split(run_rows, [x, color])
    panel_names = tuple(sorted(labels.items())) if panel == "run_id" else ()
    points, summary = ui.cached_analysis("violin_view", run_ids, x=x, color=color, filters=filters,
                                          scoring=scoring, panel=panel)
    n_configs = int(summary["N"].sum()) if not summary.empty else 0
    ref_df = analysis.reference_table(ref_id) if ref_id != "(none)" else None
    figure_args = (ui.db_path(), ui.runs_token(run_ids), tuple(run_ids), x, color, filters, scoring, ref_id,
                   ref_titles.get(ref_id), flabel(x), panel, panel_names)
    # a selection too big for markers has nothing to click: drawn as SVG unless asked for the zoomable chart (the
    # first Plotly chart of a browser tab costs ~0.9 s of compiling its script)
    static = points is None and n_configs > 0 and not st.session_state.get("res_interactive", False)
    event = None
    if static:
        st.markdown(_violin_svg(*figure_args), unsafe_allow_html=True)
    else:
        event = st.plotly_chart(_violin_figure(*figure_args), width="stretch", key="res_violin", on_select="rerun",
                                selection_mode=("points", "box", "lasso"))
    st.caption(("Each point is one configuration's accuracy over its samples" if points is not None else
                "Each violin is the spread of its configurations' accuracies, each over its samples")
               + " (as in the paper's Figure 4); N under "
               "each label = configurations in the violin. The white box shows the quartiles"
               + (" (thin line: the median)" if static else "") + ", the dark line across it the mean"
               + (" (dashed across the violin)" if color is None else "") + "."
               + (" Hover over a violin for its numbers." if static else
                  "" if points is None else " Click or lasso points to list their items."))
    split_text = analysis.split_note(run_rows, [x, color], panel, labels)
    if split_text:   # several runs: one panel per model / run, or pooled as the user grouped them
        st.caption(ui.md(split_text + (" One panel each." if panel else "")))
    for warning in figures.violin_warnings(points, x, color, summary=summary, panel=panel,
                                           panel_names=dict(panel_names)):
        st.warning(ui.md(warning))
    if points is None and n_configs:
        ui.sketch_note(n_configs, "res_interactive", static=False)
    picked = []
    for pt in (event.selection.points if event is not None and hasattr(event, "selection") else []) or []:
        cd = pt.get("customdata") if isinstance(pt, dict) else None
        if cd:
            picked.append(str(cd[0]))
    if picked:
        picked = list(dict.fromkeys(picked))[:50]
        st.markdown(f"**Items of the {len(picked)} selected configuration(s)**")
        sel_items = ui.cached_analysis("drilldown", run_ids, filters={**filters, "config_id": picked}, limit=500,
                                        scoring=scoring)
        st.dataframe(analysis.for_display(analysis.readable_items(sel_items.dropna(axis=1, how="all"), labels)),
                     hide_index=True, width="stretch", height=300)
    if not summary.empty:
        shown_summary = summary.drop(columns=["shape", "min_items"])
        if "run_id" in shown_summary.columns:   # a run's name, never its hash
            shown_summary["run_id"] = shown_summary["run_id"].map(lambda r: labels.get(r, r))
        st.dataframe(analysis.for_display(shown_summary).rename(columns={x: flabel(x), **({color: flabel(color)} if color
                                                                         else {}),
                                             "run_id": "Run", "model": "Model",
                                             "mean": "Mean %", "std": "Std", "min": "Min", "max": "Max",
                                             "N": "N configs", "items": "Items"}),
                     hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.2f")
                                    for c in ("Mean %", "Std", "Min", "Max")})
    if ref_df is not None:
        st.caption(f"Reference: {ref_df['source'].iloc[0]}.")

    # built only while open (ui/lazy.py): listing the worst 2,000 of 200,000 configurations is a query and a
    # data grid on every visit that most visits never look at
    one = ui.lazy_expander("One configuration — its Wilson interval and items (lowest accuracies listed first)",
                            key="res_one")
    if one.open:
        with one:
            st.caption("Select a row for its Wilson interval and items.")
            if n_configs:
                named_by = [f for f in varying if f not in analysis.RUN_FACTORS][:8]
                pts = ui.cached_analysis("config_accuracy", run_ids, by=list(dict.fromkeys([*named_by, x])),
                                          filters=filters, scoring=scoring, lowest=MAX_LISTED)
                n_all = int(pts["of"].iloc[0]) if len(pts) else 0
                if n_all > MAX_LISTED:   # the lowest accuracies first; a slice narrows the list
                    st.caption(f"The {MAX_LISTED:,} configurations with the lowest accuracy of {n_all:,}; narrow the slice "
                               "above to list others.")
                names = analysis.config_labels(pts, named_by or [x], sizes_same=sizes_same or None)
                pts = pts.assign(Run=pts["run_id"].map(labels), Configuration=names)
                pts = pts.sort_values(["accuracy", "Run", "Configuration"]).reset_index(drop=True)
                sel = st.dataframe(pts[["Run", "Configuration", "n", "n_correct", "accuracy"]], hide_index=True,
                                   width="stretch", height=240, on_select="rerun", selection_mode="single-row",
                                   key="res_points",
                                   column_config={"accuracy": st.column_config.NumberColumn("Accuracy %", format="%.1f"),
                                                  "n": "Items", "n_correct": "Correct"})
                rows = sel.selection.rows if sel is not None and hasattr(sel, "selection") else []
                if rows:
                    r = pts.iloc[rows[0]]
                    from core import store

                    with store.connect(ui.db_path()) as con:
                        ci = analysis.config_interval(con, r["run_id"], r["config_id"], scoring=scoring)
                        items = analysis.drilldown(con, [r["run_id"]], config_id=r["config_id"], limit=500)
                    st.markdown(f"**{ui.md(r['Configuration'])}** of {ui.md(r['Run'])}: **{ci['accuracy']:.1f} %** "
                                f"({ci['n_correct']}/{ci['n']}), 95 % Wilson interval "
                                f"[{ci['low']:.1f} %, {ci['high']:.1f} %]")
                    st.dataframe(items[[c for c in ("sample", "prompt", "truth", "response", "parsed", "correct",
                                                    "parsed_strict", "correct_strict", "answer_len", "truth_len")
                                        if c in items.columns]],
                                 hide_index=True, width="stretch")

# ---------------------------------------------------------------------------------------------------- error table
if view == "errors":
    default_by = [f for f in ui.qp_list("by") if f in factors] or \
        [f for f in ("members", "operation") if f in factors] or factors[:1]
    e1, e2 = st.columns([3, 2])
    by = e1.multiselect("Group by", factors, default=default_by, format_func=flabel, key="res_by")
    unparsed_q = ui.qp_get("unparsed")
    unparsed = e2.radio("Answers that did not follow count as", list(analysis.UNPARSED), horizontal=True,
                        index=list(analysis.UNPARSED).index(unparsed_q) if unparsed_q in analysis.UNPARSED else 0,
                        format_func={"reference": "the reference does (L1, one made-up)",
                                     "ours": "ours (L?, none made up)"}.get, key="res_unparsed",
                        help="The reference's error analysis sees a did-not-follow answer as its sentinel set "
                             "{-1}: one member (\"L1\") that is made up. Ours says no set was found (\"L?\").")
    ui.qp_set(by=by, unparsed=unparsed)
    table = ui.cached_analysis("error_table", run_ids, by=by, filters=filters, scoring=scoring, unparsed=unparsed)
    other_tasks = sorted(set(overview["task"].dropna()) - {analysis.ERROR_TABLE_TASK}) if not overview.empty else []
    if other_tasks:
        st.caption(f"This table is for set-operation items; {', '.join(other_tasks)} runs are left out "
                   "(their metrics are on their own page).")
    if table.empty:
        st.info("No answered set-operation items in this slice." if other_tasks else
                "No answered items in this slice.")
    else:
        paper = analysis.error_table_paper_layout(table, by, run_names=labels)
        split_text = analysis.split_note(run_rows, by, analysis.run_split(run_rows, by), labels)
        if split_text:   # several runs: say whether their rows are split (by model / run) or pooled, as chosen
            st.caption(ui.md(split_text))
        st.caption("Two non-empty accuracies: **Accuracy Non Empty** (the paper's row) counts the correct answers "
                   "whose truth is non-empty over *all* N — so Accuracy = Accuracy Non Empty + Pct Nullset Correct; "
                   "**Accuracy On Non-Empty Truths** divides them by the items whose truth is non-empty.")
        st.dataframe(analysis.for_display(paper), width="stretch", height=min(760, 36 * (len(paper) + 1)))
        with st.expander("How the rows are defined"):
            st.markdown(analysis.ERROR_TABLE_HELP)

# ---------------------------------------------------------------------------------------------------- robustness
if view == "robustness":
    rob, per_model = ui.cached_analysis(   # |A| = |B|: one factor, not two identical rows
        "robustness", run_ids, filters=filters, scoring=scoring,
        **({"factors": [f for f in varying if f not in analysis.RUN_FACTORS]} if sizes_same else {}))
    st.markdown("**Robustness score per model** — the standard deviation of per-configuration accuracy "
                "(lower = more consistent).")
    pooled_text = analysis.split_note(run_rows, ["model"], None, labels)
    if pooled_text:   # per model: runs of one model are pooled in its row — say which
        st.caption(ui.md(pooled_text))
    st.dataframe(per_model.rename(columns={"model": "Model", "configs": "Configurations", "mean": "Mean %",
                                           "score": "Robustness score (std)", "min": "Min", "max": "Max"}),
                 hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.2f")
                                for c in ("Mean %", "Robustness score (std)", "Min", "Max")})
    rob_caveat = analysis.robustness_caveat(rob)
    if rob_caveat:
        st.info(rob_caveat)
    else:
        st.plotly_chart(figures.robustness_bars(rob), width="stretch", key="res_rob")
    if not rob.empty:
        rob = rob.assign(**{k: [analysis.readable_level(f, v) for f, v in zip(rob["factor"], rob[k])]
                            for k in ("best_level", "worst_level") if k in rob.columns})
        st.dataframe(analysis.for_display(rob).assign(factor=rob["factor"].map(flabel)).rename(columns={
            "model": "Model", "factor": "Factor", "levels": "Levels", "spread": "Spread (points)",
            "eta_squared": "η² (variance explained)", "p_value": "ANOVA p", "best_level": "Best level",
            "worst_level": "Worst level"}), hide_index=True, width="stretch",
            column_config={"Spread (points)": st.column_config.NumberColumn(format="%.1f"),
                           "η² (variance explained)": st.column_config.NumberColumn(format="%.3f"),
                           "ANOVA p": st.column_config.NumberColumn(format="%.2g")})
    st.caption("Spread = highest minus lowest mean accuracy across the factor's levels; η² = share of the variance "
               "of per-configuration accuracy explained by the factor (one-way ANOVA).")

# ---------------------------------------------------------------------------------------------------- cost
if view == "cost":
    costs = ui.cached_analysis("effort_costs", run_ids, filters=filters, scoring=scoring)
    st.markdown("**Cost versus accuracy per reasoning effort** — what one correct answer cost at each effort, series "
                "by series (one model, one provenance; an upload is a file's claims, a series of its own).")
    per = st.radio("Cost as", ["tokens", "usd"], horizontal=True, key="res_cost_per",
                   format_func={"tokens": "tokens per correct answer", "usd": "US$ per correct answer"}.get)
    st.plotly_chart(analysis.cost_accuracy_figure(costs, per=per), width="stretch", key="res_cost_fig")
    st.dataframe(analysis.for_display(costs.drop(columns=["model", "provenance"])).rename(columns={
        "series": "Series", "runs": "Runs pooled", "reasoning": "Effort", "answered": "Answered", "correct": "Correct", "accuracy": "Accuracy %",
        "imported": "Imported answers", "calls": "Calls", "tokens_in": "Tokens in", "tokens_out": "Tokens out",
        "tokens_reasoning": "Reasoning tokens", "tokens_answer": "Answer tokens", "cost_usd": "Cost $",
        "cost_reasoning_usd": "Reasoning cost $", "tokens_per_correct": "Tokens / correct",
        "reasoning_tokens_per_correct": "Reasoning tokens / correct", "usd_per_correct": "$ / correct"}),
        hide_index=True, width="stretch",
        column_config={"Accuracy %": st.column_config.NumberColumn(format="%.1f"),
                       "Cost $": st.column_config.NumberColumn(format="%.4f"),
                       "Reasoning cost $": st.column_config.NumberColumn(format="%.4f"),
                       "$ / correct": st.column_config.NumberColumn(format="%.5f"),
                       "Tokens / correct": st.column_config.NumberColumn(format="%.1f"),
                       "Reasoning tokens / correct": st.column_config.NumberColumn(format="%.1f")})
    st.caption("Made by this tool: tokens and dollars are those of the distinct calls behind the answers (an answer "
               "served from the cache counts its call once), as the providers reported them; dollars are estimates "
               "from list prices. Answers imported from a file count in the accuracy only — a file's own token and "
               "cost figures are its claims. Blank: unknown (a self-hosted endpoint has no price; a reply that does "
               "not count its reasoning tokens leaves them unknown).")
    thinking_section(run_ids, filters, scoring)

# ---------------------------------------------------------------------------------------------------- drill-down
if view == "drilldown":
    c1, c2, c3 = st.columns([2, 1, 1])
    kinds = ["all", "wrong only", "right only"]
    if "res_which" not in st.session_state:     # a fresh page: the URL's choice
        st.session_state["res_which"] = {"wrong": "wrong only", "right": "right only"}.get(ui.qp_get("items"), "all")
        shown = urlstate.decode(st.query_params.to_dict(), {"show": 100, "page": 1})
        st.session_state["res_limit"] = min(max(shown.get("show", 100), 10), 2000)
        st.session_state["res_page"] = min(max(shown.get("page", 1), 1), 100000)
    which = c1.radio("Items", kinds, horizontal=True, key="res_which",
                     help=f"Right / wrong by the {scoring} verdict (both verdicts are listed).")
    limit = c2.number_input("Show", 10, 2000, step=10, key="res_limit")
    page = c3.number_input("Page", 1, 100000, step=1, key="res_page")
    ui.qp_set(items=which.split()[0] if which != "all" else None, show=int(limit) if limit != 100 else None,
               page=int(page) if page != 1 else None)
    correct = {"all": None, "wrong only": False, "right only": True}[which]
    items = ui.cached_analysis("drilldown", run_ids, filters=filters, correct=correct, limit=int(limit),
                                offset=int((page - 1) * limit), scoring=scoring)
    if items.empty:
        st.info("No items in this slice.")
    else:
        items = items.dropna(axis=1, how="all")
        sel = st.dataframe(analysis.for_display(analysis.readable_items(items, labels)), hide_index=True,
                           width="stretch", height=360, on_select="rerun", selection_mode="single-row",
                           key="res_items", column_config=id_columns_hidden(items.columns))
        rows = sel.selection.rows if sel is not None and hasattr(sel, "selection") else []
        if rows:
            it = analysis.item_detail(items.iloc[rows[0]])
            left, right = st.columns(2)
            run_label = ui.md(labels.get(it["run_id"], it["run_id"]))
            left.markdown(f"**Prompt** (run {run_label}, item {ui.md(it['idx'])})", help=f"Run id: {it['run_id']}")
            left.code(it["prompt"], language=None, wrap_lines=True)
            right.markdown("**Raw response**" + (" (the answer; the reasoning is kept apart below)"
                                                 if it["reasoning"] is not None else ""))
            right.code(it["response"], language=None, wrap_lines=True)
            if it["reasoning"] is not None:
                n = it["tokens_reasoning"]
                with right.expander("Reasoning" + (f" ({n:,} tokens)" if n is not None else "")
                                    + " — not scored"):
                    st.code(it["reasoning"], language=None, wrap_lines=True)
            right.markdown(f"**Parsed (lenient)**: {ui.md_code(it['parsed'])} · **Correct**: "
                           f"{ui.md(it['correct'])}  \n"
                           + (f"**Parsed (strict)**: {ui.md_code(it['parsed_strict'])} · **Correct**: "
                              f"{ui.md(it['correct_strict'])}  \n" if "correct_strict" in it else "")
                           + f"**Truth**: {ui.md_code(it['truth'])}")

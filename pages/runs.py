"""Runs: history with status; resume an unfinished run, delete, export (CSV / Parquet / JSONL), download the run
configuration as YAML or upload one to open it on the Set operations page; a batch run's provider batches (state,
counts; refresh, collect now, cancel)."""

from __future__ import annotations

import functools
import os
import tempfile

import pandas as pd
import streamlit as st

import ui
from core import analysis, store
from core.analysis.views import id_columns_hidden
from core.config import run_spec, run_yaml
from core.errors import UserError
from core.files import parse_yaml_mapping
from core.store.journal import quarantined
from core.tasks import get_task

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

st.title("Runs")

# ---------------------------------------------------------------------------------------------------- YAML upload
with st.expander("Open a run configuration (YAML)", expanded=False):
    up = st.file_uploader("Configuration YAML (ours, or a SetLexSem reference experiment YAML as it is)",
                          type=["yaml", "yml"], key="runs_yaml")
    if up is not None:
        try:
            spec = run_spec(parse_yaml_mapping(up.getvalue().decode("utf-8"), up.name))
            task, cfg = spec.task, spec.config
            n = get_task(task).count(cfg)
            st.success(f"Valid {task} configuration: {n:,} items.")
            for note in spec.notes:   # a SetLexSem reference experiment YAML: what is not honoured exactly
                st.info(note)
            target = {"setops": "set_operations", "quantifiers": "quantifiers"}.get(task)
            if target and ui.page_exists(target) and st.button(f"Open on the {target.replace('_', ' ')} page",
                                                                  key="runs_open_yaml"):
                st.session_state[f"{task}_loaded_config"] = cfg.to_dict()
                st.switch_page(ui.PAGE_FILES[target])
        except UnicodeDecodeError:
            st.error(f"{ui.md(up.name)}: not UTF-8 text")
        except UserError as exc:
            st.error(ui.md(exc if str(exc).startswith(up.name) else f"{up.name}: {exc}"))

runs = ui.runs_df()
set_aside = quarantined(ui.db_path())
if set_aside:
    st.warning(f"Damaged journal lines of killed runs were set aside (the rest was recovered): "
               f"{ui.md(', '.join(str(p) for p in set_aside[:3]))}{' …' if len(set_aside) > 3 else ''}")
if runs.empty:
    st.info("No runs yet. Start one on the Set operations page, with one click on Home, or from the CLI "
            "(`python -m core run …`) — CLI runs appear here too.")
    st.stop()

# one status per run on the whole page: a run executing in this process reports from its handle (the table, the
# header and the progress bar all read it); other runs from the database
runs = ui.with_live_status(runs)
if ui.made_here_only("here"):
    runs = runs[runs["provenance"] != "uploaded"]
    if runs.empty:
        st.info("No run made here yet: every stored run is an upload. Clear “Only runs made here” to see them.")
        st.stop()
scoring = ui.scoring_switch()   # one switch for the table and the chosen run below
overview = ui.cached_analysis("run_overview", None, scoring=scoring)
accuracy = dict(zip(overview["run_id"], overview["accuracy"])) if not overview.empty else {}
runs = runs.assign(accuracy=runs["run_id"].map(accuracy), label=runs["run_id"].map(analysis.run_labels(runs)))
cols = [c for c in ("label", "provenance", "status", "accuracy", "task", "model", "n_items", "n_done", "n_failed",
                    "n_cached", "cost_usd", "created_at", "source", "run_id") if c in runs.columns]
table = analysis.for_display(runs[cols])
sel = st.dataframe(table, hide_index=True, width="stretch", height=min(420, 36 * (len(table) + 1)),
                   on_select="rerun", selection_mode="single-row", key="runs_table",
                   column_config={"cost_usd": st.column_config.NumberColumn("cost $", format="%.4f"),
                                  "accuracy": st.column_config.NumberColumn(
                                      "accuracy %", format="%.1f",
                                      help=f"Correct answers over answered items (failed calls left out), {scoring} scoring"),
                                  "label": "run", "run_id": None,
                                  "provenance": st.column_config.TextColumn(
                                      "provenance", help="made here: calls this tool made (in its cache); uploaded: "
                                      "a file's claims, re-scored here row by row"), "n_items": "items", "n_done": "done",
                                  "n_failed": "failed", "n_cached": "cached"})
ids = table["run_id"].tolist()
rows = sel.selection.rows if sel is not None and hasattr(sel, "selection") else []
wanted = ids[rows[0]] if rows else ui.qp_get("run")
if wanted not in ids:
    if wanted:
        ui.warn_unknown_runs([wanted], ids, ids)
    wanted = ids[0]
choice_labels = analysis.run_choice_labels(runs)
run_id = st.selectbox("Run", ids, index=ids.index(wanted), format_func=lambda r: choice_labels.get(r, r),
                      key=f"runs_pick_{wanted}", help=f"Run id: {wanted}")
run_name = runs.loc[runs["run_id"] == run_id, "label"].iloc[0]
ui.qp_set(run=run_id)
row = store.run_record(ui.db_path(), run_id)
if row is None:   # deleted by another session since the table was read
    st.warning(f"Run {ui.md(run_id)} is no longer in the database.")
    st.stop()
row.update(runs[runs["run_id"] == run_id].iloc[0][["status", "n_done", "n_failed"]].to_dict())

st.subheader(f"Run {ui.md(run_name)}", help=f"Run id: {run_id}")
ui.provenance_badges([run_id])
c1, c2, c3 = st.columns(3)
c1.markdown(f"**Model** {ui.md_code(row.get('model'))}  \n**Task** {ui.md(row.get('task'))}  \n"
            f"**Status** {ui.md(row.get('status'))}")
# the same numbers as this run's own overview, from the scan the table above made (no query on the aggregates)
ov = ui.cached_analysis("run_overview_among", [run_id], scoring=scoring)
acc = ov["accuracy"].iloc[0] if not ov.empty else None
acc_text = f"{acc:.1f} % ({int(ov['n_correct'].iloc[0]):,} of {int(ov['answered'].iloc[0]):,})" \
    if acc is not None and pd.notna(acc) else "–"


def _count(v) -> str:
    """A run's count as the page shows it: thousands separated, "–" where the run has none (runs written around the
    runner, e.g. the synthetic filler, carry no counts)."""
    return "–" if v is None or pd.isna(v) else f"{int(v):,}"


c2.markdown(f"**Items** {_count(row.get('n_items'))} · **done** {_count(row.get('n_done'))} · **failed** "
            f"{_count(row.get('n_failed'))} · **cached** {_count(row.get('n_cached'))}  \n"
            f"**Accuracy ({scoring})** {acc_text}  \n"
            f"**Source** {ui.md(row.get('source'))}")
c3.page_link(ui.PAGE_FILES["results"], label="Open in Results →", query_params={"runs": run_id,
                                                                               "scoring": scoring})

if row.get("status") in ("running", "pending", "waiting"):
    ui.run_progress(run_id, key="runs", results_link=False, scoring=scoring)

# ---------------------------------------------------------------------------------------------- provider batches
def _batches_section(run_id: str, row: dict) -> None:
    """The run's provider batches with refresh, collect now and cancel; re-reads itself while this app follows
    the run (a fragment)."""
    from core import runner

    following = runner.get_handle(run_id)
    active = following is not None and not following.done   # this app already follows the run's batches

    @st.fragment(run_every=2.0 if active else None)
    def _show():
        batches = ui.run_batches(run_id)
        if batches.empty:
            return
        st.markdown("**Provider batches**")
        key, _where = ui.api_key_for(row.get("model"))
        st.dataframe(batches, hide_index=True, width="stretch", height=min(320, 35 * (len(batches) + 1) + 8),
                     column_config={"cost_usd": st.column_config.NumberColumn("cost $", format="%.4f"),
                                    "n_requests": "requests", "n_succeeded": "succeeded", "n_errored": "errored",
                                    "n_expired": "expired", "n_cancelled": "cancelled",
                                    "n_processing": "processing", "n_bytes": "bytes"})
        open_ids = batches.loc[batches["phase"] == "open", "batch_id"].tolist()
        h = runner.get_handle(run_id)
        busy = h is not None and not h.done
        b1, b2, b3 = st.columns([1, 1, 2])
        if b1.button("Refresh", key="runs_batch_refresh", disabled=not open_ids,
                     help="Ask the provider how the open batches stand (no results are read)."):
            with ui.user_errors("Refresh: "):
                from core.runner.batch_collect import refresh_batches

                refresh_batches(ui.db_path(), run_id, api_key=key)
                st.rerun()
        if b2.button("Collect now", key="runs_batch_collect", type="primary",
                     disabled=busy or not (open_ids or row.get("status") == "waiting"),
                     help="Re-attach once, like the same CLI command with --no-wait: collect the batches that have "
                          "ended, resubmit requests that errored, expired or were cancelled (up to the attempt "
                          "limit), submit anything not yet submitted. Batches still running are left to run."):
            with ui.user_errors("Collect: "):
                runner.resume_run(run_id, api_key=key, db_path=ui.db_path(), batch=True, wait=False)
                st.toast(f"Collecting the batches of {run_id}")
                st.rerun(scope="app")
        with b3:
            if open_ids:
                c_pick, c_go = st.columns([2, 1])
                victim = c_pick.selectbox("Batch to cancel", open_ids, key="runs_batch_pick",
                                          label_visibility="collapsed")
                if c_go.button("Cancel batch", key="runs_batch_cancel",
                               help="The provider stops the batch; requests it already ran are kept and collected. "
                                    "Running the run again resubmits the rest."):
                    with ui.user_errors("Cancel: "):
                        from core.runner.batch_collect import cancel_batch

                        cancel_batch(ui.db_path(), victim, api_key=key)
                        st.toast(f"Cancel requested for {victim}")
                        st.rerun()
            else:
                st.caption("No batch of this run is open.")

    _show()


_batches_section(run_id, row)

config, params, imported = row["config"], row["params"], row["imported"]
if imported:
    from core.store.rescore import disagreements, run_summary

    rescored = run_summary(row.get("run_json"))
    if rescored:
        (st.warning if disagreements(row.get("run_json")) else st.caption)(
            "Imported file " + ui.md(rescored) + " (its own verdicts are kept as claimed_correct / "
            "claimed_correct_strict; every view uses ours).")

a1, a2, a3 = st.columns(3)
# resume
with a1.container(border=True):
    st.markdown("**Resume**")
    unfinished = row.get("status") not in ("done", "imported") or (row.get("n_failed") or 0) > 0
    if row.get("batch") and not imported:
        st.caption("A provider batch run: resuming re-attaches to its batches and follows them until collected.")
    if imported:
        st.caption("Imported results cannot be resumed.")
    elif not unfinished:
        st.caption("This run is complete.")
    else:
        from core import runner

        handle = runner.get_handle(run_id)
        if handle is not None and not handle.done:
            st.caption("Running now.")
        else:
            st.caption("Continues where it stopped: finished calls are kept, failed ones retried.")
            if st.button("Re-attach to its batches" if row.get("batch") else "Resume run", key="runs_resume",
                         type="primary"):
                spec = row.get("model")
                key, _where = ui.api_key_for(spec)
                choice = ui.ModelChoice(spec=spec, base_url=row.get("base_url"), api_key=key, params=params,
                                         missing_key=None if key or not ui.key_env_for(spec) or
                                         spec.startswith("openai-compatible") else ui.key_env_for(spec),
                                         batch=bool(row.get("batch")))
                h = None
                if row.get("batch") and not choice.missing_key:
                    with ui.user_errors("Re-attach: "):   # exactly as stored (limit, draw …): the same batches
                        from core import runner

                        h = runner.resume_run(run_id, api_key=key, db_path=ui.db_path(), batch=True)
                else:
                    h = ui.start_run(config, choice, name=row.get("name"))
                if h is not None:
                    st.toast(f"Resumed {ui.md(h.run_id)}")
                    st.rerun()
# export
with a2.container(border=True):
    st.markdown("**Export**")
    fmt = st.radio("Format", ["csv", "parquet", "jsonl"], horizontal=True, key="runs_fmt")

    @st.cache_data(show_spinner=False, max_entries=8, ttl=300)
    def _export(db, token, run_id, fmt):
        from core.store.exports import export_run

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, f"{run_id}.{fmt}")
            export_run(db, run_id, out)
            with open(out, "rb") as fh:
                return fh.read()

    # written when the button is clicked (Streamlit calls ``data`` then, on a thread of its own), not on every visit:
    # a run of 5 million results took seconds to export before the page could show
    st.download_button(f"Download {fmt.upper()}",
                       functools.partial(_export, ui.db_path(), ui.db_token(), run_id, fmt),
                       file_name=f"{analysis.file_stem(run_name, run_id)}.{fmt}", key="runs_download",
                       mime={"csv": "text/csv", "parquet": "application/octet-stream",
                             "jsonl": "application/x-ndjson"}[fmt])
# config yaml + delete
with a3.container(border=True):
    st.markdown("**Configuration**")
    st.download_button("Download YAML", run_yaml(config, row.get("model"), params, row.get("base_url")),
                       file_name=f"{analysis.file_stem(run_name, run_id)}.yaml", mime="application/x-yaml",
                       key="runs_yaml_dl",
                       disabled=imported)
    if config.get("task", "setops") == "setops" and not imported and \
            st.button("Open on the Set operations page", key="runs_open"):
        st.session_state["setops_loaded_config"] = config
        st.switch_page(ui.PAGE_FILES["set_operations"])
    sure = st.checkbox("I want to delete this run", key="runs_sure")
    if st.button("Delete run", key="runs_delete", disabled=not sure):
        try:
            from core import runner

            h = runner.get_handle(run_id)
            if h is not None and not h.done:
                h.cancel()
                h.wait(10)
            store.delete_run(ui.db_path(), run_id)
            st.toast(f"Deleted {ui.md(run_name)} (its cached calls are kept).")
            ui.qp_set(run=None)
            st.rerun()
        except UserError as exc:
            st.error(ui.md(exc))

items_box = ui.lazy_expander("Items of this run (first 200)", key="runs_items")
if items_box.open:   # read and drawn only while open
    with items_box:
        items = ui.cached_analysis("drilldown", [run_id], limit=200, scoring=scoring)
        st.dataframe(analysis.for_display(analysis.readable_items(items.dropna(axis=1, how="all"),
                                                                  {run_id: run_name}))
                     if isinstance(items, pd.DataFrame) else items, hide_index=True, width="stretch",
                     column_config=id_columns_hidden(items.columns) if isinstance(items, pd.DataFrame) else None)

"""Runs: history with status; resume an unfinished run, delete, export (CSV / Parquet / JSONL), download the run
configuration as YAML or upload one to open it on the Set operations page."""

from __future__ import annotations

import os
import tempfile

import pandas as pd
import streamlit as st

from core import store
from core.config import load_task_config, run_yaml
from core.errors import UserError
from core.files import parse_yaml_mapping
from core.store.journal import quarantined
from core.tasks import get_task
from pages import _ui

st.title("Runs")

# ---------------------------------------------------------------------------------------------------- YAML upload
with st.expander("Open a run configuration (YAML)", expanded=False):
    up = st.file_uploader("Configuration YAML", type=["yaml", "yml"], key="runs_yaml")
    if up is not None:
        try:
            task, cfg = load_task_config(parse_yaml_mapping(up.getvalue().decode("utf-8"), up.name))
            n = get_task(task).count(cfg)
            st.success(f"Valid {task} configuration: {n:,} items.")
            target = {"setops": "set_operations", "quantifiers": "quantifiers"}.get(task)
            if target and _ui.page_exists(target) and st.button(f"Open on the {target.replace('_', ' ')} page",
                                                                  key="runs_open_yaml"):
                st.session_state[f"{task}_loaded_config"] = cfg.to_dict()
                st.switch_page(_ui.PAGE_FILES[target])
        except UnicodeDecodeError:
            st.error(f"{_ui.md(up.name)}: not UTF-8 text")
        except UserError as exc:
            st.error(_ui.md(exc if str(exc).startswith(up.name) else f"{up.name}: {exc}"))

runs = _ui.runs_df()
set_aside = quarantined(_ui.db_path())
if set_aside:
    st.warning(f"Damaged journal lines of killed runs were set aside (the rest was recovered): "
               f"{_ui.md(', '.join(str(p) for p in set_aside[:3]))}{' …' if len(set_aside) > 3 else ''}")
if runs.empty:
    st.info("No runs yet. Start one on the Set operations page, with one click on Home, or from the CLI "
            "(`python -m core run …`) — CLI runs appear here too.")
    st.stop()

cols = [c for c in ("run_id", "status", "task", "model", "name", "n_items", "n_done", "n_failed", "n_cached",
                    "cost_usd", "created_at", "source") if c in runs.columns]
table = runs[cols].copy()
sel = st.dataframe(table, hide_index=True, width="stretch", height=min(420, 36 * (len(table) + 1)),
                   on_select="rerun", selection_mode="single-row", key="runs_table",
                   column_config={"cost_usd": st.column_config.NumberColumn("cost $", format="%.4f"),
                                  "n_items": "items", "n_done": "done", "n_failed": "failed", "n_cached": "cached"})
ids = table["run_id"].tolist()
rows = sel.selection.rows if sel is not None and hasattr(sel, "selection") else []
wanted = ids[rows[0]] if rows else _ui.qp_get("run")
if wanted not in ids:
    if wanted:
        _ui.warn_unknown_runs([wanted], ids, ids)
    wanted = ids[0]
run_id = st.selectbox("Run", ids, index=ids.index(wanted), format_func=lambda r: _ui.run_label(
    runs[runs["run_id"] == r].iloc[0]), key=f"runs_pick_{wanted}")
_ui.qp_set(run=run_id)
row = store.run_record(_ui.db_path(), run_id)
if row is None:   # deleted by another session since the table was read
    st.warning(f"Run {_ui.md(run_id)} is no longer in the database.")
    st.stop()

st.subheader(f"Run {_ui.md(run_id)}")
c1, c2, c3 = st.columns(3)
c1.markdown(f"**Model** {_ui.md_code(row.get('model'))}  \n**Task** {_ui.md(row.get('task'))}  \n"
            f"**Status** {_ui.md(row.get('status'))}")
c2.markdown(f"**Items** {row.get('n_items')} · **done** {row.get('n_done')} · **failed** {row.get('n_failed')} · "
            f"**cached** {row.get('n_cached')}  \n**Source** {_ui.md(row.get('source'))}")
c3.page_link(_ui.PAGE_FILES["results"], label="Open in Results →", query_params={"runs": run_id})

if row.get("status") in ("running", "pending"):
    _ui.run_progress(run_id, key="runs", results_link=False)

config, params, imported = row["config"], row["params"], row["imported"]

a1, a2, a3 = st.columns(3)
# resume
with a1.container(border=True):
    st.markdown("**Resume**")
    unfinished = row.get("status") not in ("done", "imported") or (row.get("n_failed") or 0) > 0
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
            if st.button("Resume run", key="runs_resume", type="primary"):
                spec = row.get("model")
                key, _where = _ui.api_key_for(spec)
                choice = _ui.ModelChoice(spec=spec, base_url=row.get("base_url"), api_key=key, params=params,
                                         missing_key=None if key or not _ui.key_env_for(spec) or
                                         spec.startswith("openai-compatible") else _ui.key_env_for(spec))
                h = _ui.start_run(config, choice, name=row.get("name"))
                if h is not None:
                    st.toast(f"Resumed {_ui.md(h.run_id)}")
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

    try:
        data = _export(_ui.db_path(), _ui.db_token(), run_id, fmt)
        st.download_button(f"Download {fmt.upper()}", data, file_name=f"{run_id}.{fmt}", key="runs_download",
                           mime={"csv": "text/csv", "parquet": "application/octet-stream",
                                 "jsonl": "application/x-ndjson"}[fmt])
    except UserError as exc:
        st.error(_ui.md(exc))
# config yaml + delete
with a3.container(border=True):
    st.markdown("**Configuration**")
    st.download_button("Download YAML", run_yaml(config, row.get("model"), params, row.get("base_url")),
                       file_name=f"{run_id}.yaml", mime="application/x-yaml", key="runs_yaml_dl",
                       disabled=imported)
    if config.get("task", "setops") == "setops" and not imported and \
            st.button("Open on the Set operations page", key="runs_open"):
        st.session_state["setops_loaded_config"] = config
        st.switch_page(_ui.PAGE_FILES["set_operations"])
    sure = st.checkbox("I want to delete this run", key="runs_sure")
    if st.button("Delete run", key="runs_delete", disabled=not sure):
        try:
            from core import runner

            h = runner.get_handle(run_id)
            if h is not None and not h.done:
                h.cancel()
                h.wait(10)
            store.delete_run(_ui.db_path(), run_id)
            st.toast(f"Deleted {_ui.md(run_id)} (its cached calls are kept).")
            _ui.qp_set(run=None)
            st.rerun()
        except UserError as exc:
            st.error(_ui.md(exc))

with st.expander("Items of this run (first 200)"):
    items = _ui.cached_analysis("drilldown", [run_id], limit=200)
    st.dataframe(items.dropna(axis=1, how="all") if isinstance(items, pd.DataFrame) else items,
                 hide_index=True, width="stretch")

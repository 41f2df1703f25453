"""Starting runs from a page and following them: a self-refreshing progress fragment (bar, done/cached/failed,
running accuracy, cost, cancel) that finds a run again after a page switch or a closed tab."""

from __future__ import annotations

import json

import streamlit as st

from core import store
from core.errors import UserError
from ui.db import cached_analysis, db_path, runs_df
from ui.model_picker import ModelChoice
from ui.nav import PAGE_FILES
from ui.text import md

# ------------------------------------------------------------------------------------------------------ runs

def start_run(config: dict, choice: ModelChoice, *, name: str | None = None, fresh: bool = False,
              limit: int | None = None):
    """Start a background run (returns the RunHandle, or None after showing the error): live calls, provider
    batches (``choice.batch``) or Ray Data at ``choice.ray_address`` — each followed by the same progress display."""
    from core import runner

    if choice.missing_key:
        st.error(f"{choice.spec} needs an API key: set {choice.missing_key} in the environment or "
                 ".streamlit/secrets.toml, or type it above (kept for this session only).")
        return None
    try:
        if choice.ray_address:
            if fresh:
                st.error("Fresh samples are for runs from this app; a Ray run continues the run and its cache "
                         "(turn one of them off).")
                return None
            return runner.start_ray_run(config, choice.spec, choice.base_url, address=choice.ray_address,
                                        params=choice.params, api_key=choice.api_key, db_path=db_path(), name=name,
                                        limit=limit)
        return runner.start_run(config, choice.spec, params=choice.params, base_url=choice.base_url,
                                api_key=choice.api_key, db_path=db_path(), fresh=fresh, name=name,
                                limit=limit, source="app", batch=choice.batch)
    except UserError as exc:
        st.error(md(exc))
    except Exception as exc:  # noqa: BLE001  (model errors, a bad spec …, carry a readable reason)
        st.error(f"could not start the run: {md(getattr(exc, 'reason', None) or exc)}")
    return None


def with_live_status(runs):
    """The run list with status / done / failed of the runs executing in this process taken from their handles —
    so a table, a header and a progress bar never disagree (the database lags a running run by up to a merge)."""
    from core import runner

    live = {h.run_id: h.progress() for h in runner.active_runs()}
    if runs.empty or not live:
        return runs
    runs = runs.copy()
    for i, rid in runs["run_id"].items():
        p = live.get(rid)
        if p is not None:
            runs.loc[i, ["status", "n_done", "n_failed"]] = [p.status, p.done, p.failed]
    return runs


def _db_progress(run_id: str) -> dict | None:
    try:
        return store.get_run(db_path(), run_id)
    except UserError:
        return None


def run_is_live(run_id: str) -> bool:
    """A run this process is executing, or one the store says is running (another process: the CLI)."""
    from core import runner

    handle = runner.get_handle(run_id)
    if handle is not None and not handle.done:
        return True
    row = _db_progress(run_id)
    return bool(row) and row.get("status") in ("running", "pending")


def _overview_accuracy(ov) -> tuple[int, int, float | None]:
    """(answered, correct, accuracy %) of a one-run run_overview frame (NaN / empty → 0, 0, None)."""
    if ov.empty:
        return 0, 0, None
    answered, n, acc = ov["answered"].iloc[0], ov["n_correct"].iloc[0], ov["accuracy"].iloc[0]

    def known(v) -> bool:   # NaN (nothing answered yet) is the one value unequal to itself
        return v == v  # noqa: PLR0124

    return (int(answered) if known(answered) else 0), (int(n) if known(n) else 0), \
        (float(acc) if known(acc) else None)


def _db_batches(run_id: str) -> tuple[int | None, dict]:
    """(items waiting, provider status → batches) of a run from the store."""
    from core.runner.batch_collect import batch_overview

    try:
        return batch_overview(db_path(), run_id)
    except UserError:
        return None, {}


def _run_name(run_id: str) -> str:
    """The run's name as pickers show it (analysis.run_labels), for a progress line a person reads; the id if the
    run list does not have it yet."""
    from core import analysis

    runs = runs_df()
    if runs is None or runs.empty or run_id not in set(runs["run_id"]):
        return run_id
    return analysis.run_labels(runs).get(run_id, run_id)


def run_progress(run_id: str, key: str, results_link: bool = True, every: float = 1.0,
                 scoring: str | None = None, accuracy: bool = True) -> None:
    """Live progress of a run (auto-refreshing fragment while it runs): works after a page switch or a reload.
    The accuracy shown is that of ``scoring`` (default: the page's scoring switch as last set in this session, else
    strict); strict is read from the store (about a second behind the runner). ``accuracy=False`` leaves the pooled
    accuracy out (a page that shows its accuracy per condition, where pooling would mix them)."""
    from core import runner
    from core.analysis.figures import progress_accuracy
    from ui.pickers import current_scoring

    scoring = scoring or current_scoring()
    show_accuracy = accuracy

    # refresh only while the run is live: a finished run's page rests (no timer, no reruns, no CPU)
    @st.fragment(run_every=every if run_is_live(run_id) else None)
    def _show():
        handle = runner.get_handle(run_id)
        if handle is not None:
            p = handle.progress()
            total, done, cached, failed = p.total, p.done, p.cached, p.failed
            correct, cost, status, elapsed = p.correct, p.cost_usd, p.status, p.elapsed
            accuracy = None if p.accuracy is None else 100 * p.accuracy
            err = p.error
            waiting, batches = p.waiting, p.batches
            judged = done
            if scoring != "lenient":   # the runner counts our parser's verdict; the store has both
                judged, correct, accuracy = _overview_accuracy(
                    cached_analysis("run_overview", [run_id], scoring=scoring))
        else:
            row = _db_progress(run_id)
            if row is None:
                st.info(f"Run {md(run_id)} is not in the database (deleted?).")
                return
            total = int(row.get("n_items") or 0)
            done, cached = int(row.get("n_done") or 0), int(row.get("n_cached") or 0)
            failed, cost, status = int(row.get("n_failed") or 0), float(row.get("cost_usd") or 0), row.get("status")
            judged, correct, accuracy = _overview_accuracy(cached_analysis("run_overview", [run_id],
                                                                           scoring=scoring))
            elapsed, err = None, None
            waiting, batches = (None, {}) if status != "waiting" else _db_batches(run_id)
        frac = min(1.0, (done + failed) / total) if total else 0.0
        st.progress(frac, text=f"Run {md(_run_name(run_id))} — {status}: {done + failed} of {total or '?'} items")
        cols = st.columns(5 if show_accuracy else 4)
        cols[0].metric("Done", done)
        cols[1].metric("Cached", cached)
        cols[2].metric("Failed", failed)
        if show_accuracy:
            cols[3].metric("Accuracy", f"{accuracy:.1f} %" if accuracy is not None else "–",
                           help=f"Running accuracy so far ({scoring} scoring): " + progress_accuracy(judged, correct))
        cols[-1].metric("Cost", f"${cost:.4f}" if cost else "$0")
        if batches:
            states = ", ".join(f"{n} {state.replace('_', ' ')}" for state, n in sorted(batches.items()))
            st.caption(f"Provider batches: {states}" + (f" · {waiting:,} items waiting on them" if waiting else ""))
        if status == "waiting":
            st.info("Waiting on provider batches (results within 24 h) — not failed. “Collect now” on the Runs page "
                    "collects what has ended; the same CLI command re-attaches too.")
        if err:
            st.error(err)
        running = handle is not None and not handle.done
        live = running or status in ("running", "pending")
        flag = f"_running_{key}_{run_id}"
        if live:
            st.session_state[flag] = True
        elif st.session_state.pop(flag, False):
            st.rerun(scope="app")   # the run just finished: the page shows it whole, and its timer stops
        c1, c2 = st.columns([1, 4])
        if running:
            if c1.button("Cancel run", key=f"{key}_cancel_{run_id}", type="secondary"):
                handle.cancel()
                st.toast(f"Cancelling {md(run_id)}: finished calls are kept; resume it from the Runs page.")
            if elapsed:
                c2.caption(f"{elapsed:.0f} s elapsed — the run continues if you switch page or close the tab.")
        elif status in ("running",) and handle is None:
            c2.caption("Running in another process (CLI) or before a restart; figures update as results merge.")
        if results_link and (done or not running):
            st.page_link(PAGE_FILES["results"], label="Open its results →",
                         query_params={"runs": run_id, "scoring": scoring})

    _show()


def report_download(run_ids, *, key: str, filters: dict | None = None, title: str | None = None) -> None:
    """"Build the HTML report" → a download button for one self-contained HTML file of these runs (Plotly inline,
    no server; core.analysis.report). Built on request — it takes a second or two."""
    from core.analysis.report import html_report
    from ui.pickers import current_scoring

    run_ids = list(run_ids)
    scoring = current_scoring()
    token = json.dumps([run_ids, filters or {}, title, scoring], sort_keys=True, default=str)
    built = st.session_state.get(f"{key}_report")
    c1, c2 = st.columns([1, 2])
    if c1.button("Build HTML report", key=f"{key}_report_build", icon=":material/description:",
                 help="One self-contained HTML file (violins, error table, robustness, comparison) to mail or "
                      "attach to a paper — the same as `python -m core report html --run …`."):
        try:
            with st.spinner("Building the report…"), store.connect(db_path()) as con:
                html = html_report(con, run_ids, title=title, filters=filters or None, scoring=scoring)
            built = st.session_state[f"{key}_report"] = (token, html.encode("utf-8"))
        except UserError as exc:
            st.error(str(exc))
    if built and built[0] == token:
        c2.download_button("Download report (HTML)", built[1], file_name="setlexsem-report.html", mime="text/html",
                           key=f"{key}_report_dl", icon=":material/download:")

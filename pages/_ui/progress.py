"""Starting runs from a page and following them: a self-refreshing progress fragment (bar, done/cached/failed,
running accuracy, cost, cancel) that finds a run again after a page switch or a closed tab."""

from __future__ import annotations

import streamlit as st

from core import store
from core.errors import UserError
from pages._ui.db import cached_analysis, db_path
from pages._ui.model_picker import ModelChoice
from pages._ui.nav import PAGE_FILES
from pages._ui.text import md

# ------------------------------------------------------------------------------------------------------ runs

def start_run(config: dict, choice: ModelChoice, *, name: str | None = None, fresh: bool = False,
              limit: int | None = None):
    """Start a background run (returns the RunHandle, or None after showing the error)."""
    from core import runner

    if choice.missing_key:
        st.error(f"{choice.spec} needs an API key: set {choice.missing_key} in the environment or "
                 ".streamlit/secrets.toml, or type it above (kept for this session only).")
        return None
    try:
        return runner.start_run(config, choice.spec, params=choice.params, base_url=choice.base_url,
                                api_key=choice.api_key, db_path=db_path(), fresh=fresh, name=name,
                                limit=limit, source="app")
    except UserError as exc:
        st.error(md(exc))
    except Exception as exc:  # model errors (bad spec…) carry a readable reason
        st.error(f"could not start the run: {md(getattr(exc, 'reason', None) or exc)}")
    return None


def _db_progress(run_id: str) -> dict | None:
    try:
        return store.get_run(db_path(), run_id)
    except UserError:
        return None


def run_progress(run_id: str, key: str, results_link: bool = True, every: float = 1.0) -> None:
    """Live progress of a run (auto-refreshing fragment while it runs): works after a page switch or a reload."""
    from core import runner
    from core.analysis.figures import progress_accuracy

    @st.fragment(run_every=every)
    def _show():
        handle = runner.get_handle(run_id)
        if handle is not None:
            p = handle.progress()
            total, done, cached, failed = p.total, p.done, p.cached, p.failed
            correct, cost, status, elapsed = p.correct, p.cost_usd, p.status, p.elapsed
            accuracy = None if p.accuracy is None else 100 * p.accuracy
            err = p.error
        else:
            row = _db_progress(run_id)
            if row is None:
                st.info(f"Run {md(run_id)} is not in the database (deleted?).")
                return
            total = int(row.get("n_items") or 0)
            done, cached = int(row.get("n_done") or 0), int(row.get("n_cached") or 0)
            failed, cost, status = int(row.get("n_failed") or 0), float(row.get("cost_usd") or 0), row.get("status")
            ov = cached_analysis("run_overview", [run_id])
            correct = int(ov["n_correct"].iloc[0]) if not ov.empty and ov["n_correct"].iloc[0] == \
                ov["n_correct"].iloc[0] else 0
            accuracy = float(ov["accuracy"].iloc[0]) if not ov.empty and ov["accuracy"].iloc[0] == \
                ov["accuracy"].iloc[0] else None
            elapsed, err = None, None
        frac = min(1.0, (done + failed) / total) if total else 0.0
        st.progress(frac, text=f"Run {run_id} — {status}: {done + failed} of {total or '?'} items")
        m1, m2, m3, m4, m5 = st.columns(5)
        m1.metric("Done", done)
        m2.metric("Cached", cached)
        m3.metric("Failed", failed)
        m4.metric("Accuracy", f"{accuracy:.1f} %" if accuracy is not None else "–",
                  help="Running accuracy so far: " + progress_accuracy(done, correct))
        m5.metric("Cost", f"${cost:.4f}" if cost else "$0")
        if err:
            st.error(err)
        running = handle is not None and not handle.done
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
            st.page_link(PAGE_FILES["results"], label="Open its results →", query_params={"runs": run_id})

    _show()

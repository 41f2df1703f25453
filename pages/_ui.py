"""Shared UI helpers for every page (the only Streamlit-aware helper module; core never imports streamlit).

Conventions — reuse these in any page (Quantifiers, Embeddings, …):

* ``from pages._ui import …`` (the app's directory is on sys.path under ``streamlit run app.py`` and AppTest).
* **Database**: ``db_path()`` is the store file ($STUDIO_DB or .studio/studio.duckdb). Never keep a connection open:
  use ``with store.connect(db_path()) as con:`` for one short piece of work (other processes — a CLI run — wait
  while it is open). ``db_token()`` is a cheap change token (file sizes/mtimes) to key ``st.cache_data`` on.
* **Cached analysis**: ``cached_analysis(name, run_ids, **kwargs)`` calls ``core.analysis.<name>(con, run_ids,
  **kwargs)`` through ``st.cache_data`` keyed on the DB token, run ids and arguments (all must be hashable / JSON).
* **Models**: ``model_picker(key)`` → ``ModelChoice(spec, base_url, api_key, params)``. Keys come from the
  environment or ``.streamlit/secrets.toml``; a key typed in the UI is kept only in ``st.session_state`` (this
  browser session) and passed to the runner, never written anywhere.
* **Runs**: ``start_run(...)`` wraps ``core.runner.start_run`` (errors → ``st.error``); ``run_progress(run_id)``
  is a self-refreshing fragment (progress bar, done/cached/failed, running accuracy, cost, cancel) that finds a
  run again after a page switch or a closed tab (the runner's registry lives in the server process).
* **URL**: ``qp_get`` / ``qp_list`` / ``qp_set`` keep a page's main selection in the query string so a view can be
  shared; ``qp_set`` only writes when values change.
* **Errors**: ``user_errors()`` context manager shows ``UserError`` (and DuckDB busy) as one st.error line.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import pandas as pd
import streamlit as st

from core import analysis, store
from core.errors import UserError

def _leave_pages_directory_mode() -> None:
    """Streamlit treats an app that has a ``pages/`` folder as an old-style (v1) multipage app until the entry script
    has called st.navigation once in the server process: a first visit straight to e.g. /results?runs=… would run
    pages/results.py on its own (no app.py: no wide layout, the raw file list as navigation). Importing this module
    from any page flips that process-wide flag and reruns, so app.py's navigation takes over (shared URLs work)."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a future Streamlit without the v1 relic
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


_leave_pages_directory_mode()

PAGE_FILES = {
    "home": "pages/home.py",
    "set_operations": "pages/set_operations.py",
    "deceptive_sets": "pages/deceptive_sets.py",
    "quantifiers": "pages/quantifiers.py",
    "results": "pages/results.py",
    "compare": "pages/compare.py",
    "embeddings": "pages/embeddings.py",
    "runs": "pages/runs.py",
}
APP_DIR = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------------------------ database

def db_path() -> str:
    return str(store.resolve_db_path())


def db_token(path: str | None = None) -> str:
    """Changes whenever the DB file or its WAL changes (or journals of running processes grow)."""
    p = Path(path or db_path())
    parts = []
    for f in (p, p.with_name(p.name + ".wal")):
        try:
            s = f.stat()
            parts.append(f"{s.st_size}:{s.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return "|".join(parts)


@contextmanager
def user_errors(prefix: str = "") -> Iterator[None]:
    """Show a UserError as one clear st.error line instead of a traceback."""
    try:
        yield
    except UserError as exc:
        st.error(f"{prefix}{exc}")


@st.cache_data(show_spinner=False, max_entries=256, ttl=600)
def _cached(name: str, db: str, token: str, run_ids: tuple | None, kwargs_json: str):
    kwargs = json.loads(kwargs_json)
    for k, v in list(kwargs.items()):
        if isinstance(v, list) and k in ("by", "factors"):
            kwargs[k] = tuple(v)
    with store.connect(db) as con:
        return getattr(analysis, name)(con, list(run_ids) if run_ids is not None else None, **kwargs)


def cached_analysis(name: str, run_ids: Sequence[str] | None, **kwargs):
    """core.analysis.<name>(con, run_ids, **kwargs), cached on (DB change token, runs, arguments)."""
    db = db_path()
    key = json.dumps(kwargs, sort_keys=True, default=str)
    return _cached(name, db, db_token(db), tuple(run_ids) if run_ids is not None else None, key)


@st.cache_data(show_spinner=False, max_entries=16, ttl=600)
def _runs(db: str, token: str) -> pd.DataFrame:
    return store.list_runs(db)


def runs_df() -> pd.DataFrame:
    """All runs (newest first), cached on the DB token."""
    db = db_path()
    return _runs(db, db_token(db))


def run_label(row: Any) -> str:
    """Readable one-line label of a run row (dict or Series)."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: getattr(row, k, d))
    name = get("name") or ""
    when = get("created_at")
    when_s = pd.Timestamp(when).strftime("%m-%d %H:%M") if when is not None and not pd.isna(when) else ""
    n = get("n_items")
    n_s = f"{int(n)} items" if n is not None and not pd.isna(n) else ""
    bits = [b for b in (get("model"), name if name and get("model") not in name else "", n_s, when_s,
                        get("status")) if b]
    return f"{get('run_id')} · " + " · ".join(str(b) for b in bits)


def run_picker(label: str, key: str, default: Sequence[str] | None = None, task: str | None = None,
               max_selections: int | None = None, help: str | None = None) -> list[str]:
    """Multiselect of stored runs (labelled), synced with the query parameter ``key``."""
    all_runs = runs = runs_df()
    if task is not None and not runs.empty:
        runs = runs[runs["task"] == task]
    ids = runs["run_id"].tolist() if not runs.empty else []
    labels = {r["run_id"]: run_label(r) for _, r in runs.iterrows()} if not runs.empty else {}
    warn_unknown_runs(qp_list(key), ids, all_runs["run_id"].tolist() if not all_runs.empty else [], task)
    wanted = [r for r in qp_list(key) if r in ids] or [r for r in (default or []) if r in ids]
    if max_selections:
        wanted = wanted[:max_selections]
    state_key = f"_pick_{key}"
    if state_key in st.session_state:
        st.session_state[state_key] = [r for r in st.session_state[state_key] if r in ids]
    chosen = st.multiselect(label, ids, default=wanted if state_key not in st.session_state else None,
                            format_func=lambda r: labels.get(r, r), key=state_key, max_selections=max_selections,
                            help=help, placeholder="Choose one or more runs")
    qp_set(**{key: chosen})
    return chosen


def warn_unknown_runs(requested: Sequence[str], shown: Sequence[str], stored: Sequence[str],
                      task: str | None = None) -> None:
    """A shared link may name runs deleted since (or mistyped): say so instead of silently showing other runs."""
    gone = [r for r in requested if r not in stored]
    other = [r for r in requested if r in stored and r not in shown]
    if gone:
        st.warning(f"Not in the database (deleted, or a mistyped link): {', '.join(gone)}.")
    if other:
        st.warning(f"Not {task or 'selectable'} runs here: {', '.join(other)}.")


# ------------------------------------------------------------------------------------------------------ URL state

def qp_get(name: str, default: str | None = None) -> str | None:
    v = st.query_params.get(name)
    return v if v not in (None, "") else default


def qp_list(name: str) -> list[str]:
    v = st.query_params.get(name)
    if not v:
        return []
    return [x for x in str(v).split(",") if x]


def qp_set(**values: Any) -> None:
    """Write values to the URL (lists joined with commas); None / empty removes the key."""
    for k, v in values.items():
        if isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        elif v is not None:
            v = str(v)
        current = st.query_params.get(k)
        if not v:
            if k in st.query_params:
                del st.query_params[k]
        elif current != v:
            st.query_params[k] = v


def filters_to_qp(filters: dict[str, list]) -> str:
    return ";".join(f"{k}={','.join(str(x) for x in v)}" for k, v in filters.items() if v)


def filters_from_qp(text: str | None) -> dict[str, list[str]]:
    if not text:
        return {}
    return analysis.filters_from_pairs(text.split(";"))


def slice_filters(run_ids: Sequence[str], key: str, exclude: Sequence[str] = (), expanded: bool = False
                  ) -> dict[str, list]:
    """An expander with one multiselect per varying factor; the slice is kept in the URL (``key``)."""
    initial = filters_from_qp(qp_get(key))
    factors = [f for f in cached_analysis("factor_columns", run_ids, varying=True)
               if f not in exclude and f not in ("run_id", "task", "name")]
    chosen: dict[str, list] = {}
    with st.expander("Slice (filter on any factor)", expanded=expanded or bool(initial)):
        if not factors:
            st.caption("No factor varies in these runs.")
        cols = st.columns(3)
        for i, f in enumerate(factors):
            levels = cached_analysis("factor_levels", run_ids, column=f)
            as_text = {("none" if v is None else str(v)): v for v in levels}
            default = [t for t in initial.get(f, []) if t in as_text]
            sel = cols[i % 3].multiselect(analysis.label(f), list(as_text), default=default, key=f"{key}_{f}",
                                          placeholder="all")
            if sel:
                chosen[f] = [as_text[t] for t in sel]
    qp_set(**{key: filters_to_qp({k: ["none" if v is None else v for v in vals] for k, vals in chosen.items()})})
    return chosen


# ------------------------------------------------------------------------------------------------------ models

MODEL_CHOICES = ("local/smollm2", "reference/solver", "openai/gpt-4o-mini", "anthropic/claude-haiku-4-5",
                 "openai-compatible/…", "other…")


@dataclass
class ModelChoice:
    spec: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    params: dict = field(default_factory=dict)
    missing_key: str | None = None  # env var name when a cloud model has no key yet


def _secret(name: str) -> str | None:
    try:
        v = st.secrets.get(name)  # raises when there is no secrets file
    except Exception:
        return None
    return str(v) if v else None


def key_env_for(spec: str) -> str | None:
    provider = spec.split("/", 1)[0]
    return {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
            "openai-compatible": "OPENAI_COMPATIBLE_API_KEY"}.get(provider)


def api_key_for(spec: str) -> tuple[str | None, str]:
    """(key, where it came from) — environment, secrets.toml, or this browser session."""
    env = key_env_for(spec)
    if env is None:
        return None, "not needed"
    if os.environ.get(env):
        return os.environ[env], "environment"
    s = _secret(env)
    if s:
        return s, ".streamlit/secrets.toml"
    sess = st.session_state.get(f"_key_{env}")
    if sess:
        return sess, "this session only"
    return None, "missing"


def model_picker(key: str, default: str = "local/smollm2", show_params: bool = True) -> ModelChoice:
    """Model spec + base URL + key (session only) + sampling parameters (paper defaults)."""
    from core.models import SamplingParams

    c1, c2 = st.columns([2, 3])
    qp_model = qp_get("model")
    options = list(MODEL_CHOICES)
    initial = qp_model if qp_model in options else default
    if qp_model and qp_model not in options:
        initial = "other…"
    choice = c1.selectbox("Model", options, index=options.index(initial) if initial in options else 0,
                          key=f"{key}_model", help="local/smollm2 is embedded (SmolLM2-135M, no key). "
                          "reference/solver always answers correctly (checks the pipeline).")
    spec, base_url = choice, None
    if choice == "openai-compatible/…":
        name = c2.text_input("Model name on the server", value="smollm2", key=f"{key}_oc_name")
        base_url = c2.text_input("Base URL", value="http://127.0.0.1:8000/v1", key=f"{key}_oc_url")
        spec = f"openai-compatible/{name.strip() or 'model'}"
    elif choice == "other…":
        spec = c2.text_input("Model spec (provider/name)", value=qp_model or "openai/gpt-4.1-mini",
                             key=f"{key}_other").strip()
    else:
        info = {"local/smollm2": "SmolLM2-135M-Instruct in-process via llama.cpp — small (135M parameters), "
                                 "fails often and instructively. No key needed.",
                "reference/solver": "Always correct; not an LLM. Use it to check the pipeline end to end."}
        c2.caption(info.get(choice, "Cloud model: needs an API key (see below)."))
    if spec:
        qp_set(model=spec)
    api_key, where = api_key_for(spec)
    env = key_env_for(spec)
    missing = None
    if env:
        if api_key:
            st.caption(f"API key for {spec.split('/')[0]}: from {where}.")
        else:
            typed = st.text_input(f"{env} (kept in this browser session only, never stored)", type="password",
                                  key=f"_key_{env}", help="Better: set the environment variable or put it in "
                                  ".streamlit/secrets.toml.")
            api_key = typed or None
            if not api_key and not env.startswith("OPENAI_COMPATIBLE"):
                missing = env
    params = SamplingParams().to_dict()
    if show_params:
        with st.expander("Sampling parameters (paper defaults: temperature 0.25, top-p 0.25, top-k 20)"):
            p1, p2, p3, p4, p5 = st.columns(5)
            params["temperature"] = p1.number_input("temperature", 0.0, 2.0, float(params["temperature"]), 0.05,
                                                    key=f"{key}_temp")
            params["top_p"] = p2.number_input("top_p", 0.0, 1.0, float(params["top_p"]), 0.05, key=f"{key}_top_p")
            params["top_k"] = int(p3.number_input("top_k", 0, 1000, int(params["top_k"] or 0), 1, key=f"{key}_top_k"))
            params["max_tokens"] = int(p4.number_input("max_tokens", 1, 32000, int(params["max_tokens"]), 16,
                                                       key=f"{key}_max_tokens"))
            seed = p5.number_input("seed (optional)", -1, 2**31 - 1, -1, 1, key=f"{key}_seed",
                                   help="-1 = no seed")
            params["seed"] = None if seed < 0 else int(seed)
    return ModelChoice(spec=spec, base_url=base_url, api_key=api_key, params=params, missing_key=missing)


# ------------------------------------------------------------------------------------------------------ runs

def start_run(config: dict, choice: ModelChoice, *, name: str | None = None, fresh: bool = False,
              task_module=None, limit: int | None = None):
    """Start a background run (returns the RunHandle, or None after showing the error)."""
    from core import runner

    if choice.missing_key:
        st.error(f"{choice.spec} needs an API key: set {choice.missing_key} in the environment or "
                 ".streamlit/secrets.toml, or type it above (kept for this session only).")
        return None
    try:
        return runner.start_run(config, choice.spec, params=choice.params, base_url=choice.base_url,
                                api_key=choice.api_key, db_path=db_path(), fresh=fresh, name=name,
                                task_module=task_module, limit=limit, source="app")
    except UserError as exc:
        st.error(str(exc))
    except Exception as exc:  # model errors (bad spec…) carry a readable reason
        st.error(f"could not start the run: {getattr(exc, 'reason', None) or exc}")
    return None


def _db_progress(run_id: str) -> dict | None:
    try:
        return store.get_run(db_path(), run_id)
    except UserError:
        return None


def run_progress(run_id: str, key: str, results_link: bool = True, every: float = 1.0) -> None:
    """Live progress of a run (auto-refreshing fragment while it runs): works after a page switch or a reload."""
    from core import runner
    from core.figures import progress_accuracy

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
                st.info(f"Run {run_id} is not in the database (deleted?).")
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
                st.toast(f"Cancelling {run_id}: finished calls are kept; resume it from the Runs page.")
            if elapsed:
                c2.caption(f"{elapsed:.0f} s elapsed — the run continues if you switch page or close the tab.")
        elif status in ("running",) and handle is None:
            c2.caption("Running in another process (CLI) or before a restart; figures update as results merge.")
        if results_link and (done or not running):
            st.page_link(PAGE_FILES["results"], label="Open its results →", query_params={"runs": run_id})

    _show()


def page_exists(name: str) -> bool:
    return (APP_DIR / PAGE_FILES[name]).exists()


def df_download(df: pd.DataFrame, fmt: str) -> bytes:
    """A DataFrame as CSV / Parquet / JSONL bytes (for st.download_button)."""
    import io

    if fmt == "csv":
        return df.to_csv(index=False).encode("utf-8")
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return buf.getvalue()
    if fmt == "jsonl":
        return df.to_json(orient="records", lines=True, date_format="iso", force_ascii=False).encode("utf-8")
    raise UserError(f"unknown export format {fmt!r}")

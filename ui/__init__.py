"""Shared UI helpers for every page (the only Streamlit-aware helpers; core never imports streamlit), one module per
kind: ``nav`` (the page list), ``db`` (store handle, cached analysis, run list), ``url`` (query-string state),
``pickers`` (run picker, slice filters), ``model_picker``, ``progress`` (start and follow runs), ``lazy`` (expanders
built only when open), ``violins`` (the note and zoom toggle under sketched violins), ``provenance`` (badges and the made-here filter),
``streamlit_compat`` (the one Streamlit internal we touch: leaving its pages-directory mode).

Conventions — reuse these in any page (Quantifiers, Embeddings, …):

* **First call of a page**: ``ui.require_app_navigation()`` (right after the imports): a page Streamlit ran without
  app.py (its pages-directory mode, on a fresh server) reruns through app.py's navigation (ui/streamlit_compat.py).
* ``from ui import …`` (the app's directory is on sys.path under ``streamlit run app.py`` and AppTest).
* **Database**: ``db_path()`` is the store file ($STUDIO_DB or .studio/studio.duckdb). Never keep a connection open:
  use ``with store.connect(db_path()) as con:`` for one short piece of work (other processes — a CLI run — wait
  while it is open). ``runs_token(run_ids)`` is a cheap token of the state of some runs (it changes with a write to
  them, not to other runs) to key a page's own ``st.cache_data`` on; ``db_token()`` changes with any write (for
  what reads the whole store, like the run list).
* **Cached analysis**: ``cached_analysis(name, run_ids, **kwargs)`` is ``core.analysis.<name>(con, run_ids,
  **kwargs)`` computed once per state of the runs it reads for every session of the server (sessions asking at
  once share one computation; core/analysis/memo.py ``view``); the arguments must be JSON.
* **Models**: ``model_picker(key)`` → ``ModelChoice(spec, base_url, api_key, params)``. Keys come from the
  environment or ``.streamlit/secrets.toml``; a key typed in the UI is kept only in ``st.session_state`` (this
  browser session) and passed to the runner, never written anywhere.
* **Provider batches**: ``batch_toggle(choice, key)`` shows "Submit as batch (½ price, results within 24 h)" for
  openai/ and anthropic/ models and sets ``choice.batch`` (``start_run`` then submits batches); ``run_batches(run_id)``
  is a run's batches as the Runs page lists them.
* **Ray**: ``ray_cluster_field(choice, key)`` is the optional "Run on a Ray cluster" address for openai-compatible/
  models (sets ``choice.ray_address``; ``start_run`` then runs through ``core.runner.start_ray_run``).
* **Runs**: ``start_run(...)`` wraps ``core.runner.start_run`` (errors → ``st.error``); ``run_progress(run_id)``
  is a self-refreshing fragment (progress bar, done/cached/failed, running accuracy, cost, cancel) that finds a
  run again after a page switch or a closed tab (the runner's registry lives in the server process).
* **URL**: ``qp_get`` / ``qp_list`` / ``qp_set`` keep a page's main selection in the query string so a view can be
  shared; ``qp_set`` only writes when values change.
* **Scoring**: ``scoring_switch()`` is the one "Strict / Lenient" switch of a page that shows set-operation accuracy
  (kept in the URL as ``scoring``); pass its value as ``scoring=`` to the core.analysis calls.
* **Heavy, optional content**: ``lazy_expander(label, key)`` is an expander whose body the page builds only while
  it is open (``if exp.open: with exp: …``); a closed ``st.expander``'s elements are still sent and drawn.
* **Provenance**: ``provenance_badges(run_ids)`` is the one line that names each shown run with its badge ("made
  here" / "uploaded · a file's claims"); every page that names runs calls it once. ``run_picker`` offers "Only
  runs made here" (``made_here_only``) and marks uploads in its labels.
* **Errors**: ``user_errors()`` context manager shows ``UserError`` (and DuckDB busy) as one st.error line.
* **User text in Markdown**: wrap anything a user or a file supplied (imported cells, model names, run names, URL
  parameters, error messages quoting them) in ``md(text)`` or ``md_code(text)`` before st.markdown / st.error /
  st.info / st.caption / st.toast — they all render Markdown.
"""

from ui.db import (  # noqa: F401
    cached_analysis,
    db_path,
    db_token,
    df_download,
    run_batches,
    run_label,
    runs_df,
    runs_token,
    user_errors,
)
from ui.lazy import lazy_expander  # noqa: F401
from ui.model_picker import (  # noqa: F401
    MODEL_CHOICES,
    ModelChoice,
    api_key_for,
    batch_toggle,
    found_servers,
    key_env_for,
    model_picker,
    ray_cluster_field,
)
from ui.nav import APP_DIR, PAGE_FILES, PAGES, page_exists  # noqa: F401
from ui.pickers import current_scoring, run_picker, scoring_switch, select_runs, slice_filters, warn_unknown_runs  # noqa: F401
from ui.progress import report_download, run_is_live, run_progress, start_run, with_live_status  # noqa: F401
from ui.provenance import made_here_only, provenance_badges, provenance_suffix  # noqa: F401
from ui.streamlit_compat import require_app_navigation  # noqa: F401
from ui.text import md, md_code  # noqa: F401
from ui.url import filters_from_qp, filters_to_qp, qp_get, qp_list, qp_set  # noqa: F401
from ui.violins import sketch_note  # noqa: F401

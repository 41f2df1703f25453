"""Home: what the tool is for, the default model, one-click example runs, where API keys go."""

from __future__ import annotations

import streamlit as st

import ui
from ui import presenter

ui.require_app_navigation()   # a page Streamlit ran without app.py reruns through it

st.title("SetLexSem Studio")
st.markdown(
    "Does a language model do simple, exactly checkable reasoning — set operations, quantifiers, set-like "
    "sentence embeddings — **consistently**, whatever the surface of the input looks like? The studio generates "
    "such probes, runs them against real models, stores every call in DuckDB and shows the *spread* of accuracy "
    "across incidental features such as set size, token type, word frequency or prompt phrasing."
)

with st.container(border=True):
    st.subheader("Live demo: deceptive sets, no key")
    st.markdown(
        "**What to look for:** each draw of two sets is asked twice — as sampled, and with half of each set's "
        "members swapped for the other set's look-alikes (hyponyms of the other hypernym: *oak — a tree — now in the "
        "set of animals*). On intersections the embedded model (Qwen2.5-Coder-1.5B, on this CPU) answers the "
        "swapped draws wrongly more often; the pairs appear side by side as it answers, with a running paired "
        "tally and a recording of earlier pairs (labelled as such) beside the live bars.")
    if st.button("▶ Start the live demo (fresh pairs: 12 draws × 2 = 24 items, local/default)", type="primary",
                 key="home_live_demo", use_container_width=True):
        presenter.start_demo()
    st.caption("Each click draws new pairs (a new seed, shown on the next page).")
    presenter.preload_demo_model()

c1, c2 = st.columns([3, 2])
with c1:
    st.subheader("Try it — one click, no key needed")
    st.markdown(
        "The default model is **Qwen2.5-Coder-1.5B-Instruct** (`local/default`), embedded through llama.cpp: no "
        "key, no download, a few seconds per answer on this CPU. **SmolLM2-135M** (`local/smollm2`) is there for "
        "quick checks — small, fast, and wrong almost always. `reference/solver` always answers correctly and "
        "checks the pipeline end to end."
    )
    from core.models import SamplingParams
    from core.tasks import setops

    examples = [
        ("Set operations · reference solver (80 items)", "reference/solver", "demo-small", None),
        ("Set operations · SmolLM2, 16 items (1–2 min on CPU)", "local/smollm2", "demo-small", 16),
        ("Deceptive sets · SmolLM2, 12 items (1–2 min on CPU)", "local/smollm2", "paper-deceptive", 12),
    ]
    for i, (title, spec, preset, limit) in enumerate(examples):
        if st.button(title, key=f"home_example_{i}", use_container_width=True):
            cfg = setops.preset_config(preset).to_dict()
            if preset == "paper-deceptive":
                cfg.update({"samples": 2, "sizes": [4], "operations": ["intersection", "union"],
                            "approaches": ["baseline"], "shots": [0]})   # 12 items: the three conditions
            # short answers keep the CPU demo quick; otherwise the paper's sampling defaults
            params = dict(SamplingParams().to_dict(), max_tokens=160)
            handle = ui.start_run(cfg, ui.ModelChoice(spec=spec, params=params),
                                   name=f"example · {title.split(' · ')[0]}", limit=limit)
            if handle is not None:
                st.session_state["home_run"] = handle.run_id
    run_id = st.session_state.get("home_run")
    if run_id:
        ui.run_progress(run_id, key="home")
with c2:
    st.subheader("Pages")
    st.page_link("pages/set_operations.py", label="Set operations — configure a grid, preview, run live")
    st.page_link("pages/deceptive_sets.py", label="Deceptive sets — hypernym pairs, swapped vs not, live")
    if ui.page_exists("quantifiers"):
        st.page_link("pages/quantifiers.py", label="Quantifiers — generalized-quantifier scenarios")
    st.page_link("pages/results.py", label="Results — violins, error tables, robustness, drill-down")
    st.page_link("pages/findings.py", label="Findings — the paper's questions, tested on your runs")
    st.page_link("pages/compare.py", label="Compare — runs and uploaded result files side by side")
    if ui.page_exists("embeddings"):
        st.page_link("pages/embeddings.py", label="Embeddings — set-like compositionality of encoders")
    st.page_link("pages/runs.py", label="Runs — history, resume, delete, export, YAML configs")

    st.subheader("API keys")
    st.markdown(
        "Cloud models read their key from the **environment** (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, "
        "`OPENAI_COMPATIBLE_API_KEY`) or from **`.streamlit/secrets.toml`** (same names; git-ignored). "
        "A key typed into the app lives only in this browser session (`st.session_state`): it is passed to the "
        "model and never written to the database, exports or logs."
    )
    st.caption(f"Database: `{ui.db_path()}` (set `STUDIO_DB` to use another file).")

"""The model picker: spec, base URL, API key (environment, secrets.toml or this browser session only — never
stored), the answer format, and sampling parameters. OpenAI-compatible servers running on this machine (Ollama,
LM Studio, vLLM, llama.cpp, serve-local) are listed by their models (core.models.discover), one click each."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core.models import PROVIDERS, key_env_for  # key_env_for: re-exported for the pages
from ui.url import qp_get, qp_set

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------------------------ models

# what the picker offers: each provider's choices as it registers them (core/models/providers), those that run in
# this process first (the servers found on this machine are listed after them), then a spec typed by hand
IN_PROCESS_CHOICES = tuple(c for p in PROVIDERS.values() if p.in_process for c in p.choices)
MODEL_CHOICES = (IN_PROCESS_CHOICES + tuple(c for p in PROVIDERS.values() if not p.in_process for c in p.choices)
                 + ("other…",))


@dataclass
class ModelChoice:
    spec: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    params: dict = field(default_factory=dict)
    missing_key: str | None = None  # env var name when a cloud model has no key yet
    batch: bool = False             # submit through the provider's batch interface (see batch_toggle)
    ray_address: str | None = None  # send the run through Ray Data at this address (see ray_cluster_field)


def _secret(name: str) -> str | None:
    try:
        v = st.secrets.get(name)
    except (StreamlitSecretNotFoundError, FileNotFoundError) as exc:   # no secrets file, or one that is not TOML
        log.debug("no secret %s: %s", name, type(exc).__name__)   # the name only: never a value
        return None
    return str(v) if v else None


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


def found_servers(refresh: bool = False) -> dict[str, tuple[str, str]]:
    """Picker entries for the models of the OpenAI-compatible servers on this machine: label → (spec, base URL).
    At most ~0.5 s on a cache miss (core.models.discover), instant otherwise."""
    from core.models.discover import local_servers

    out: dict[str, tuple[str, str]] = {}
    for server in local_servers(refresh=refresh):
        for name in server.models:
            out[f"openai-compatible/{name} @ :{server.port}"] = (f"openai-compatible/{name}", server.base_url)
    return out


def _found_caption(where) -> None:
    from core.models.discover import local_servers

    servers = local_servers()
    if servers:
        where.caption("On this machine: " + "; ".join(
            f"{s.kind} at :{s.port} — " + (", ".join(s.models[:4]) + (" …" if len(s.models) > 4 else "")
                                           if s.models else s.note or "no models")
            for s in servers))


def model_picker(key: str, default: str = "local/default", show_params: bool = True) -> ModelChoice:
    """Model spec + base URL + key (session only) + answer format + sampling parameters (paper defaults)."""
    from core.models import SamplingParams

    c1, c2 = st.columns([2, 3])
    qp_model = qp_get("model")
    found = found_servers()
    options = [*IN_PROCESS_CHOICES, *found, *MODEL_CHOICES[len(IN_PROCESS_CHOICES):]]
    state = st.session_state.get(f"{key}_model")
    if state is not None and state not in options:   # a server that went away since: back to the default
        del st.session_state[f"{key}_model"]
    initial = qp_model if qp_model in options else default
    qp_found = [label for label, (spec_, url_) in found.items() if spec_ == qp_model and url_ == qp_get("base_url")]
    if qp_found:
        initial = qp_found[0]
    elif qp_model and qp_model not in options:
        initial = "other…"
    choice = c1.selectbox("Model", options, index=options.index(initial) if initial in options else 0,
                          key=f"{key}_model", help="local/default (Qwen2.5-Coder-1.5B) and local/smollm2 (SmolLM2-135M, for "
                          "quick checks) are embedded: no key, no download. "
                          "reference/solver always answers correctly (checks the pipeline). Models of "
                          "OpenAI-compatible servers running on this machine (Ollama, LM Studio, vLLM, llama.cpp, "
                          "serve-local) are listed as found.")
    spec, base_url = choice, None
    if choice in found:
        spec, base_url = found[choice]
        c2.caption(f"A server on this machine at {base_url}. No key needed unless the server asks for one.")
    elif choice == "openai-compatible/…":
        name = c2.text_input("Model name on the server", value="smollm2", key=f"{key}_oc_name")
        base_url = c2.text_input("Base URL", value="http://127.0.0.1:8000/v1", key=f"{key}_oc_url")
        spec = f"openai-compatible/{name.strip() or 'model'}"
    elif choice == "other…":
        spec = c2.text_input("Model spec (provider/name)", value=qp_model or "openai/gpt-4.1-mini",
                             key=f"{key}_other").strip()
    else:
        info = {"local/default": "Qwen2.5-Coder-1.5B-Instruct in-process via llama.cpp — strong enough to show "
                                 "the deceptive-set effect, ~3–8 s per item on 2 cores. No key needed.",
                "local/smollm2": "SmolLM2-135M-Instruct in-process via llama.cpp — small (135M parameters), "
                                 "fast, fails almost everything. No key needed.",
                "reference/solver": "Always correct; not an LLM. Use it to check the pipeline end to end."}
        c2.caption(info.get(choice, "Cloud model: needs an API key (see below)."))
    if spec:
        qp_set(model=spec, base_url=base_url if choice in found else None)
    _found_caption(c1)
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
            info = PROVIDERS.get(spec.split("/", 1)[0])
            if not api_key and not (info and info.key_optional):
                missing = env
    params = SamplingParams().to_dict()
    provider = PROVIDERS.get(spec.split("/", 1)[0])
    can_constrain = bool(provider and provider.constrained)
    fmt = st.radio("Answer format", ["free", "constrained", "members"], horizontal=True, key=f"{key}_format",
                   disabled=not can_constrain,
                   help="free: the model writes what it likes. constrained: decoding is restricted to the answer's "
                        "form (<answer>{…}</answer> for sets, true/false for quantifiers). members: only members of "
                        "A ∪ B may appear (set operations) — the model can choose wrongly but not invent. A llama.cpp "
                        "grammar for the embedded models, guided decoding on servers that offer it. Recorded with "
                        "the run and shown as a factor in every view.")
    params["answer_format"] = fmt if can_constrain else "free"
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
            q1, q2 = st.columns(2)
            params["answer_cap"] = q1.toggle(
                "Cap answer-only replies at the answer's size", value=True, key=f"{key}_answer_cap",
                help="Approaches that ask for the answer alone (baseline, domain expertise; quantifiers) get a reply "
                     "cap sized to the longest answer the item allows; off: max_tokens for every reply. The cap "
                     "sent is stored with each call.")
            if not q2.toggle("Stop at </answer>", value=True, key=f"{key}_stop",
                             help="Set-operation replies end at the closing answer tag (the task's stop sequence)."):
                params["stop"] = []
    return ModelChoice(spec=spec, base_url=base_url, api_key=api_key, params=params, missing_key=missing)


def batch_toggle(choice: ModelChoice, key: str) -> bool:
    """The "Submit as batch" choice for providers with a batch interface (openai/, anthropic/); sets and returns
    ``choice.batch`` (always False for other providers, where the toggle is not shown)."""
    from core.models.batch import supports_batch

    choice.batch = False
    if supports_batch(choice.spec):
        choice.batch = st.toggle(
            "Submit as batch (½ price, results within 24 h)", key=f"{key}_batch",
            help="The uncached prompts go to the provider's batch interface (OpenAI Batch, Anthropic Message "
                 "Batches) at half the list price. The batches are stored the moment they are created: closing "
                 "the app loses nothing — the run then waits on them, and the Runs page collects them.")
    return choice.batch


def ray_cluster_field(choice: ModelChoice, key: str) -> str | None:
    """The optional "Run on a Ray cluster" address for openai-compatible/ models (an expander; empty: the run goes
    from this app as always); sets and returns ``choice.ray_address``. A malformed address is said at once, in
    core's words, and starting the run refuses it with the same line."""
    from core.errors import UserError
    from core.runner import check_ray_address
    from ui.text import md

    choice.ray_address = None
    if not choice.spec.startswith("openai-compatible/"):
        return None
    with st.expander("Run on a Ray cluster"):
        text = st.text_input(
            "Ray cluster address (optional)", key=f"{key}_ray",
            placeholder="empty: run here · local · auto · head:6379",
            help="Empty: the run goes from this app, as always. local: a Ray started in the app's process. auto: "
                 "the Ray cluster this machine is a node of. head:6379: a cluster's GCS address (the app joins it "
                 "as a driver; the cluster must reach this machine). The run's uncached requests then go through a "
                 "Ray Data actor pool to the base URL above — which the cluster must reach too — and each block of "
                 "answers is stored as it completes: progress counts the items stored.")
        choice.ray_address = text.strip() or None
        if choice.ray_address:
            try:
                check_ray_address(choice.ray_address)
            except UserError as exc:
                st.error(md(exc))
            else:
                st.caption(f"Runs through Ray at {md(choice.ray_address)}: 2 HTTP actors, 32 requests in flight, "
                           "blocks of 64 (the CLI sets them: `--engine ray --ray-actors --concurrency "
                           "--ray-block-size`).")
    return choice.ray_address

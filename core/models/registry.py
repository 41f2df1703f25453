"""Model specs → model objects, built by the provider each spec names (every provider registers itself in its
module under core/models/providers/; ``PROVIDERS`` lists them):

    local/smollm2                 embedded SmolLM2-135M-Instruct (default; no key)       concurrency 1
    reference/solver              always-correct solver, not an LLM                       concurrency 64
    openai/<model>                OpenAI (OPENAI_API_KEY)                                 concurrency 16
    anthropic/<model>             Anthropic (ANTHROPIC_API_KEY)                           concurrency 8
    openai-compatible/<model>     any OpenAI-compatible server at --base-url              concurrency 8
    vllm/<hf-model-or-path>       Ray Data's vLLM processor on GPU nodes: run --engine ray only (no model object)

Default concurrencies: llama.cpp runs one context per process, so local calls are serialised; the solver is pure
CPU-cheap Python; cloud defaults stay well inside the lowest paid rate-limit tiers (the runner's RPM/TPM limits and
Retry-After handling absorb the rest); a self-hosted server is often a single GPU or CPU box.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from core.models.base import ModelError
from core.models.providers import PROVIDERS, ProviderInfo, builder, key_env_for  # noqa: F401  (re-exported)
from core.redaction import remember, remember_url

DEFAULT_MODEL = "local/default"   # Qwen2.5-Coder-1.5B-Instruct, embedded (core/models/providers/embedded.py)


def parse_spec(spec: str) -> tuple[str, str]:
    if not isinstance(spec, str) or "/" not in spec.strip():
        raise ModelError(f"model must look like provider/name (e.g. {DEFAULT_MODEL}), got {spec!r}")
    provider, _, name = spec.strip().partition("/")
    provider, name = provider.strip().lower(), name.strip()
    if not name:
        raise ModelError(f"model {spec!r} has no name after the provider")
    known = list(PROVIDERS)
    if provider not in known:
        raise ModelError(f"unknown model provider {provider!r} in {spec!r}; expected one of: {', '.join(known)}")
    return provider, name


def check_base_url(base_url: str) -> str:
    """The base URL stripped, or ModelError when it cannot be an HTTP endpoint (scheme, host, port 0–65535)."""
    url = base_url.strip() if isinstance(base_url, str) else ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(f"the base URL must look like http://host:port/v1, got {base_url!r}")
    try:
        parts.port
    except ValueError:
        raise ModelError(f"the base URL has an invalid port (0–65535): {base_url!r}") from None
    return url


def get_model(spec: str, *, base_url: str | None = None, api_key: str | None = None, timeout: float = 60,
              http_client=None):
    """Build the model for ``spec``. Cheap: no network, no model load (those happen on the first call).

    ``api_key`` overrides the environment (the app passes Streamlit secrets or a session value); it is kept in
    memory only. ``http_client`` (an ``httpx2``/``httpx`` ``AsyncClient``) is handed to the SDK (openai-compatible:
    used directly) — tests use it to replay payloads.
    """
    remember(api_key)   # every message, stored row, export and printed line is redacted of it (core/redaction.py)
    remember_url(base_url)   # and of a Basic password in the URL, with the token its header carries
    provider, name = parse_spec(spec)
    spec = f"{provider}/{name}"
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ModelError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not PROVIDERS[provider].live:
        raise ModelError(f"{spec} runs inside Ray Data's vLLM processor on the GPU nodes of a Ray cluster, not as a "
                         f"live model: python -m core run … --model {spec} --engine ray [--ray-address …] (a vLLM "
                         f"server is openai-compatible/{name} with --base-url)")
    if base_url:
        if PROVIDERS[provider].in_process:
            raise ModelError(f"a base URL does not apply to {spec} (it runs in this process); it is for "
                             "openai-compatible/<model> (or a proxy in front of openai/ or anthropic/)")
        base_url = check_base_url(base_url)
    return builder(provider)(spec, name, base_url=base_url, api_key=api_key, timeout=timeout,
                             http_client=http_client)

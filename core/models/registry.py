"""Model specs → model objects.

    local/smollm2                 embedded SmolLM2-135M-Instruct (default; no key)       concurrency 1
    reference/solver              always-correct solver, not an LLM                       concurrency 64
    openai/<model>                OpenAI (OPENAI_API_KEY)                                 concurrency 16
    anthropic/<model>             Anthropic (ANTHROPIC_API_KEY)                           concurrency 8
    openai-compatible/<model>     any OpenAI-compatible server at --base-url              concurrency 8

Default concurrencies: llama.cpp runs one context per process, so local calls are serialised; the solver is pure
CPU-cheap Python; cloud defaults stay well inside the lowest paid rate-limit tiers (the runner's RPM/TPM limits and
Retry-After handling absorb the rest); a self-hosted server is often a single GPU or CPU box.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from core.models.base import ModelError

DEFAULT_MODEL = "local/smollm2"


@dataclass(frozen=True)
class ProviderInfo:
    provider: str
    example: str
    default_concurrency: int
    supported_params: tuple[str, ...]
    key_env: str | None
    needs_base_url: bool
    note: str


def providers() -> tuple[ProviderInfo, ...]:
    """What the UI needs to describe the providers (no SDK import)."""
    return (
        ProviderInfo("local", "local/smollm2", 1, ("temperature", "top_p", "top_k", "max_tokens", "seed"), None, False,
                     "SmolLM2-135M-Instruct in-process via llama.cpp; no key, no download"),
        ProviderInfo("reference", "reference/solver", 64, (), None, False,
                     "computes the true answer; not an LLM; checks the pipeline"),
        ProviderInfo("openai", "openai/gpt-4o-mini", 16, ("temperature", "top_p", "max_tokens", "seed"),
                     "OPENAI_API_KEY", False,
                     "top_k dropped (not in the OpenAI API); temperature/top_p dropped for o1/o3/o4/gpt-5 models"),
        ProviderInfo("anthropic", "anthropic/claude-haiku-4-5", 8, ("temperature", "top_p", "top_k", "max_tokens"),
                     "ANTHROPIC_API_KEY", False,
                     "seed dropped; top_p dropped for Opus 4.1 and the 4.5/4.6 models (not with temperature); all "
                     "sampling parameters dropped for models after Opus 4.6 (deprecated by the API)"),
        ProviderInfo("openai-compatible", "openai-compatible/smollm2", 8,
                     ("temperature", "top_p", "top_k", "max_tokens", "seed"), "OPENAI_COMPATIBLE_API_KEY (optional)",
                     True, "vLLM, Ollama, llama.cpp server, LM Studio…; top_k sent in the body"),
    )


def parse_spec(spec: str) -> tuple[str, str]:
    if not isinstance(spec, str) or "/" not in spec.strip():
        raise ModelError(f"model must look like provider/name (e.g. {DEFAULT_MODEL}), got {spec!r}")
    provider, _, name = spec.strip().partition("/")
    provider, name = provider.strip().lower(), name.strip()
    if not name:
        raise ModelError(f"model {spec!r} has no name after the provider")
    known = [p.provider for p in providers()]
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
    provider, name = parse_spec(spec)
    spec = f"{provider}/{name}"
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ModelError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if base_url:
        if provider in ("local", "reference"):
            raise ModelError(f"a base URL does not apply to {spec} (it runs in this process); it is for "
                             "openai-compatible/<model> (or a proxy in front of openai/ or anthropic/)")
        base_url = check_base_url(base_url)
    if provider == "local":
        if name.lower() != "smollm2":
            raise ModelError(f"unknown local model {name!r}; the embedded model is local/smollm2")
        from core.models.local_llama import LocalLlamaModel

        return LocalLlamaModel("local/smollm2", "smollm2", timeout=timeout)
    if provider == "reference":
        if name.lower() != "solver":
            raise ModelError(f"unknown reference model {name!r}; use reference/solver")
        from core.models.solver import ReferenceSolver

        return ReferenceSolver("reference/solver", "solver")
    if provider == "openai":
        from core.models.openai_provider import OpenAIModel

        return OpenAIModel(spec, name, base_url=base_url, api_key=api_key, timeout=timeout, http_client=http_client)
    if provider == "openai-compatible":
        from core.models.openai_compatible import OpenAICompatibleModel

        return OpenAICompatibleModel(spec, name, base_url=base_url, api_key=api_key, timeout=timeout,
                                     http_client=http_client)
    from core.models.anthropic_provider import AnthropicModel

    return AnthropicModel(spec, name, base_url=base_url, api_key=api_key, timeout=timeout, http_client=http_client)

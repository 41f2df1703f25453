"""The model providers — one file each — and the facts about them that the UI, the CLI and the registry share
(key variable, default concurrency, parameters accepted). Importing this package imports every provider module
(none imports an SDK before its first call) and so fills ``PROVIDERS``.

    local_llama.py               the embedded models via llama.cpp (embedded.py: which files)
    solver.py                    the always-correct reference solver
    openai.py                    OpenAI (official SDK)
    anthropic.py                 Anthropic (official SDK)
    openai_compatible.py         any OpenAI-compatible HTTP server (vLLM, Ollama, llama.cpp, LM Studio …)
    vllm.py                      Ray Data's vLLM processor on GPU nodes (no live client: ``run --engine ray``)
    sdk_common.py                error mapping shared by the SDK-based providers

A provider registers where it is defined: its module describes it in a ``ProviderInfo`` and decorates its model
class with ``@register(INFO)`` (``register_engine_only(INFO)`` for one without a live client, as vllm). Adding a
provider is adding its file here; the registry (``core.models.registry.get_model``), the CLI's help and the model
picker read ``PROVIDERS``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderInfo:
    provider: str
    example: str
    default_concurrency: int
    supported_params: tuple[str, ...]
    key_env: str | None          # environment variable (or Streamlit secret) holding its API key
    needs_base_url: bool
    note: str
    key_optional: bool = False   # a key is sent only when one is set (self-hosted servers)
    constrained: bool = False    # offers answer_format "constrained" (a grammar / guided decoding)
    live: bool = True            # False: no live client; runs only through an engine (vllm/: run --engine ray)
    in_process: bool = False     # runs inside this process (no base URL, no key)
    choices: tuple[str, ...] = ()   # what the model picker offers of it ("…": the name is typed)


PROVIDERS: dict[str, ProviderInfo] = {}
_BUILDERS: dict[str, Callable] = {}   # provider -> from_spec(spec, name, *, base_url, api_key, timeout, http_client)


def _add(info: ProviderInfo) -> None:
    if info.provider in PROVIDERS and PROVIDERS[info.provider] != info:
        raise RuntimeError(f"two providers register as {info.provider!r}")
    PROVIDERS[info.provider] = info


def register(info: ProviderInfo):
    """Class decorator of a provider's model class: ``info`` joins ``PROVIDERS``, the class takes its ``provider``
    name and default concurrency from it, and ``get_model`` builds ``<provider>/<name>`` with its ``from_spec``."""
    def wrap(cls):
        _add(info)
        cls.provider, cls.default_concurrency = info.provider, info.default_concurrency
        _BUILDERS[info.provider] = cls.from_spec
        return cls
    return wrap


def register_engine_only(info: ProviderInfo) -> ProviderInfo:
    """A provider without a live client (``info.live`` False): listed, refused by ``get_model``."""
    if info.live:
        raise ValueError(f"{info.provider}: a provider with a live client registers its model class")
    _add(info)
    return info


def builder(provider: str) -> Callable:
    """The ``from_spec`` of ``provider``'s model class (KeyError: no live client)."""
    return _BUILDERS[provider]


def _ordered() -> None:
    """List order: what runs here, then the providers behind a key, then servers at a base URL, then engine-only;
    by name within each."""
    order = sorted(PROVIDERS.values(), key=lambda p: (not p.live, p.needs_base_url, not p.in_process, p.provider))
    PROVIDERS.clear()
    PROVIDERS.update((p.provider, p) for p in order)


def key_env_for(spec: str) -> str | None:
    """The environment variable holding the API key of ``spec``'s provider (None: no key is used)."""
    info = PROVIDERS.get(str(spec).split("/", 1)[0].strip().lower())
    return info.key_env if info else None


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
_ordered()

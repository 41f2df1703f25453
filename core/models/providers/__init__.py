"""The model providers — one file each — and the facts about them that the UI, the CLI and the registry share
(key variable, default concurrency, parameters accepted). Nothing here imports an SDK.

    local_llama.py               the embedded models via llama.cpp (embedded.py: which files)
    solver.py                    the always-correct reference solver
    openai.py                    OpenAI (official SDK)
    anthropic.py                 Anthropic (official SDK)
    openai_compatible.py         any OpenAI-compatible HTTP server (vLLM, Ollama, llama.cpp, LM Studio …)
    sdk_common.py                error mapping shared by the SDK-based providers

``vllm/<hf-model-or-path>`` has no file here: it is not a live client but a model for Ray Data's vLLM processor on
GPU nodes (``run --engine ray``, core/runner/ray_engine.py); ``get_model`` refuses it with that advice.
"""

from __future__ import annotations

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


def providers() -> tuple[ProviderInfo, ...]:
    """What the UI needs to describe the providers (no SDK import)."""
    return (
        ProviderInfo("local", "local/default", 1,
                     ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "answer_format"), None, False,
                     "embedded via llama.cpp: local/default = Qwen2.5-Coder-1.5B-Instruct, local/smollm2 = "
                     "SmolLM2-135M-Instruct; no key, no download; constrained answers through a llama.cpp grammar",
                     constrained=True),
        ProviderInfo("reference", "reference/solver", 64, (), None, False,
                     "computes the true answer; not an LLM; checks the pipeline", constrained=True),
        ProviderInfo("openai", "openai/gpt-4o-mini", 16, ("temperature", "top_p", "max_tokens", "seed", "stop"),
                     "OPENAI_API_KEY", False,
                     "top_k dropped (not in the OpenAI API); temperature/top_p/stop dropped for o1/o3/o4/gpt-5 "
                     "models; no constrained answers"),
        ProviderInfo("anthropic", "anthropic/claude-haiku-4-5", 8,
                     ("temperature", "top_p", "top_k", "max_tokens", "stop"), "ANTHROPIC_API_KEY", False,
                     "seed dropped; top_p dropped for Opus 4.1 and the 4.5/4.6 models (not with temperature); all "
                     "sampling parameters dropped for models after Opus 4.6 (deprecated by the API); a reasoning "
                     "effort is adaptive thinking or a budget as the model's description says; no constrained "
                     "answers"),
        ProviderInfo("openai-compatible", "openai-compatible/smollm2", 8,
                     ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "answer_format"),
                     "OPENAI_COMPATIBLE_API_KEY", True, "vLLM, Ollama, llama.cpp server, LM Studio…; top_k sent in "
                     "the body; constrained answers where the server offers a grammar or guided decoding",
                     key_optional=True, constrained=True),
        ProviderInfo("vllm", "vllm/Qwen/Qwen2.5-0.5B-Instruct", 1,
                     ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop"), None, False,
                     "Ray Data's vLLM engine on the GPU nodes of a Ray cluster (run --engine ray; "
                     "--vllm-replicas, --vllm-tp); no live calls: a vLLM server is openai-compatible/<model>",
                     live=False),
    )


PROVIDERS: dict[str, ProviderInfo] = {p.provider: p for p in providers()}


def key_env_for(spec: str) -> str | None:
    """The environment variable holding the API key of ``spec``'s provider (None: no key is used)."""
    info = PROVIDERS.get(str(spec).split("/", 1)[0].strip().lower())
    return info.key_env if info else None

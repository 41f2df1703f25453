"""``vllm/<hf-model-or-path>``: a model for Ray Data's vLLM processor on the GPU nodes of a Ray cluster
(``run --engine ray``, core/runner/ray_engine.py). No live client: ``get_model`` refuses it with that advice; a vLLM
server answering over HTTP is ``openai-compatible/<model>`` with a base URL."""

from __future__ import annotations

from core.models.providers import ProviderInfo, register_engine_only

INFO = register_engine_only(ProviderInfo(
    "vllm", "vllm/Qwen/Qwen2.5-0.5B-Instruct", 1, ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop"),
    None, False, "Ray Data's vLLM engine on the GPU nodes of a Ray cluster (run --engine ray; --vllm-replicas, "
    "--vllm-tp); no live calls: a vLLM server is openai-compatible/<model>", live=False))

"""Provider batch interfaces beside the live calls: OpenAI Batch (``openai.py``) and Anthropic Message Batches
(``anthropic.py``), through the official SDKs; ``jsonl.py`` is the OpenAI batch file format, which ``vllm run-batch``
reads and writes too.

A back end turns prompts into batch requests with the same sampling parameters (and the same drops) as the live
provider, submits them, reports a batch's state, streams its outcomes and cancels it. It never retries and never
touches the store: core/runner/batch.py owns the lifecycle (kill-safe bookkeeping in DuckDB, resubmission).

    backend = batch_backend(model, limits=None)     # model: an OpenAIModel or AnthropicModel (core.models.registry)
    body, dropped = backend.request_body(params)    # sampling part, shared by every request of a batch
    entry = backend.entry(custom_id, prompt, body)  # one request; backend.entry_bytes(entry) counts toward the limit
    state = backend.submit(batch_id, entries)       # BatchState (provider id, status, counts)
    state = backend.retrieve(provider_batch_id) ; backend.cancel(provider_batch_id)
    for outcome in backend.outcomes(state): ...     # Outcome per request once state.ended
    backend.find(batch_id, since, n_requests)       # a batch the provider created for us but we never heard of
"""

from __future__ import annotations

from core.models.base import ModelError
from core.models.batch.common import BATCH_PROVIDERS, DEFAULT_LIMITS, BatchLimits, BatchState, Outcome

__all__ = ["BATCH_PROVIDERS", "DEFAULT_LIMITS", "BatchLimits", "BatchState", "Outcome", "batch_backend",
           "supports_batch"]


def supports_batch(spec: str) -> bool:
    return str(spec).split("/", 1)[0].strip().lower() in BATCH_PROVIDERS


def batch_backend(model, limits: BatchLimits | None = None):
    """The batch back end for a live ``openai/`` or ``anthropic/`` model object (its key, base URL and sampling
    rules are shared); ModelError for any other provider."""
    provider = getattr(model, "provider", "")
    if provider == "openai":
        from core.models.batch.openai import OpenAIBatch

        return OpenAIBatch(model, limits or DEFAULT_LIMITS["openai"])
    if provider == "anthropic":
        from core.models.batch.anthropic import AnthropicBatch

        return AnthropicBatch(model, limits or DEFAULT_LIMITS["anthropic"])
    raise ModelError(f"{getattr(model, 'spec', model)}: batch submission is for openai/ and anthropic/ models "
                     "(for a vLLM box use export-batch / import-batch, or the live openai-compatible/ path)")


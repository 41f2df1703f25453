"""Estimated cost of a call in USD, from a small dated table of list prices per 1M tokens.

Prices are standard (non-batch, non-cached) list prices as published by OpenAI and Anthropic, collected for
PRICES_AS_OF; they change — check the providers' pricing pages before relying on an estimate for a large study.
A model name matches the longest table prefix (so dated snapshots such as ``gpt-4o-mini-2024-07-18`` or
``claude-sonnet-4-5-20250929`` find their family). Unknown cloud models and self-hosted ``openai-compatible``
endpoints return None (unknown), never a made-up number. The embedded model and the reference solver cost 0.

Batch interfaces (OpenAI Batch, Anthropic Message Batches) bill input and output tokens at half the list price
(``BATCH_DISCOUNT``, both providers, as published for PRICES_AS_OF); ``estimate_cost(..., batch=True)`` applies it.
"""

from __future__ import annotations

PRICES_AS_OF = "2026-03"

# provider -> model-name prefix -> (USD per 1M input tokens, USD per 1M output tokens)
PRICES: dict[str, dict[str, tuple[float, float]]] = {
    "openai": {
        "gpt-5.4": (2.50, 15.00),
        "gpt-5.1": (1.25, 10.00),
        "gpt-5-pro": (15.00, 120.00),
        "gpt-5-mini": (0.25, 2.00),
        "gpt-5-nano": (0.05, 0.40),
        "gpt-5": (1.25, 10.00),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-4.1": (2.00, 8.00),
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4o": (2.50, 10.00),
        "gpt-4-turbo": (10.00, 30.00),
        "gpt-4": (30.00, 60.00),
        "gpt-3.5-turbo": (0.50, 1.50),
        "o4-mini": (1.10, 4.40),
        "o3-mini": (1.10, 4.40),
        "o3": (2.00, 8.00),
        "o1-mini": (1.10, 4.40),
        "o1": (15.00, 60.00),
    },
    "anthropic": {
        "claude-opus-4-6": (5.00, 25.00),
        "claude-opus-4-5": (5.00, 25.00),
        "claude-opus-4-1": (15.00, 75.00),
        "claude-opus-4": (15.00, 75.00),
        "claude-sonnet-4": (3.00, 15.00),       # 4, 4.5, 4.6
        "claude-haiku-4": (1.00, 5.00),         # 4.5
        "claude-3-7-sonnet": (3.00, 15.00),
        "claude-3-5-sonnet": (3.00, 15.00),
        "claude-3-5-haiku": (0.80, 4.00),
        "claude-3-opus": (15.00, 75.00),
        "claude-3-haiku": (0.25, 1.25),
    },
}

FREE_PROVIDERS = ("local", "reference")

# provider -> share of the list price charged for calls made through its batch interface
BATCH_DISCOUNT: dict[str, float] = {"openai": 0.5, "anthropic": 0.5}


def split_spec(spec: str) -> tuple[str, str]:
    provider, sep, name = (spec or "").partition("/")
    return provider.strip().lower(), name.strip()


def price_per_million(spec: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for a model spec, (0, 0) for free providers, None if unknown."""
    provider, name = split_spec(spec)
    if provider in FREE_PROVIDERS:
        return (0.0, 0.0)
    table = PRICES.get(provider)
    if not table:
        return None
    name = name.lower()
    best = max((p for p in table if name.startswith(p)), key=len, default=None)
    return table[best] if best else None


def batch_factor(spec: str) -> float | None:
    """Share of the list price a batch call of ``spec`` costs; None when its provider has no batch interface."""
    return BATCH_DISCOUNT.get(split_spec(spec)[0])


def estimate_cost(spec: str, tokens_in: int | None, tokens_out: int | None, *, batch: bool = False
                  ) -> float | None:
    """Estimated USD for one call (``batch``: made through the provider's batch interface); None if the price, the
    token counts or (for ``batch``) a batch price is unknown."""
    price = price_per_million(spec)
    if batch and price not in (None, (0.0, 0.0)):
        factor = batch_factor(spec)
        if factor is None:
            return None
        price = (price[0] * factor, price[1] * factor)
    if price is None:
        return None
    if price == (0.0, 0.0):
        return 0.0
    if tokens_in is None or tokens_out is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000

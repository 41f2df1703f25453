"""Models behind one small interface. See ``registry`` for the specs and ``base`` for the
protocol. Importing this package is cheap: SDKs and llama.cpp load only when a model of theirs is built."""

from core.models.base import Completion, Model, ModelError, Request, RetryableError
from core.models.params import SamplingParams
from core.models.pricing import PRICES_AS_OF, estimate_cost, price_per_million
from core.models.registry import DEFAULT_MODEL, PROVIDERS, get_model, key_env_for, parse_spec

__all__ = [
    "Completion", "Model", "ModelError", "Request", "RetryableError", "SamplingParams", "PRICES_AS_OF",
    "estimate_cost", "price_per_million", "DEFAULT_MODEL", "PROVIDERS", "get_model", "key_env_for", "parse_spec",
]

"""Sampling parameters: one explicit, stored object per call (SPEC M2).

Defaults follow the SetLexSem paper: temperature 0.25, top-p 0.25, top-k 20. A provider that cannot honour a
parameter drops it and says so in ``Completion.dropped_params`` (see each provider's ``supported_params``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from core.errors import ConfigError


@dataclass(frozen=True)
class SamplingParams:
    temperature: float | None = 0.25
    top_p: float | None = 0.25
    top_k: int | None = 20
    max_tokens: int = 512
    seed: int | None = None

    def __post_init__(self) -> None:
        t, p, k, m, s = self.temperature, self.top_p, self.top_k, self.max_tokens, self.seed
        if t is not None and not (_is_number(t) and 0.0 <= t <= 2.0):
            raise ConfigError(f"temperature must be a number in [0, 2], got {t!r}")
        if p is not None and not (_is_number(p) and 0.0 < p <= 1.0):
            raise ConfigError(f"top_p must be a number in (0, 1], got {p!r}")
        if k is not None and not (_is_int(k) and k >= 1):
            raise ConfigError(f"top_k must be a whole number >= 1, got {k!r}")
        if not (_is_int(m) and 1 <= m <= 100_000):
            raise ConfigError(f"max_tokens must be a whole number in [1, 100000], got {m!r}")
        if s is not None and not (_is_int(s) and 0 <= s < 2**31):
            raise ConfigError(f"seed must be a whole number in [0, 2^31), got {s!r}")

    def to_dict(self) -> dict:
        """Plain dict with every field (None kept), in a fixed key order — stable for cache keys."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict | None) -> "SamplingParams":
        """Validate a mapping (e.g. from YAML / JSON / the UI). Unknown keys are an error, missing keys default."""
        if d is None:
            return cls()
        if isinstance(d, SamplingParams):
            return d
        if not isinstance(d, dict):
            raise ConfigError("sampling parameters must be a mapping")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"unknown sampling parameter(s): {', '.join(unknown)}; expected {', '.join(sorted(known))}")
        return cls(**d)

    def replace(self, **changes) -> "SamplingParams":
        return SamplingParams(**{**asdict(self), **changes})


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)

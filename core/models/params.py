"""Sampling parameters: one explicit, stored object per call.

Defaults follow the SetLexSem paper: temperature 0.25, top-p 0.25, top-k 20. A provider that cannot honour a
parameter drops it and says so in ``Completion.dropped_params`` (see each provider's ``supported_params``).

Beyond sampling, three fields shape how a reply ends and looks; they are stored with the run and with every call
(and are part of the cache key), so a view can always tell which answers were produced how:

* ``max_tokens`` — the reply cap (default 512).
* ``answer_cap`` — when on (default), an item whose prompting approach asks for the answer only gets a smaller
  cap sized to its answer (``task.reply_cap``); the cap actually sent is stored with each call. Off: every reply
  gets ``max_tokens``.
* ``stop`` — stop sequences. None (default) means "the task's own" (set operations: ``</answer>``, so a reply
  ends when its answer is complete); ``[]`` sends none. A run records the resolved list.
* ``answer_format`` — ``free`` (default) or ``constrained``: the model's decoding is restricted to the answer's
  form (a llama.cpp grammar for the embedded model; guided decoding on servers that offer it).
* ``reasoning_effort`` — how much a reasoning model thinks before it answers: ``none`` (default: nothing is sent,
  the provider's own default behaviour), ``off`` (ask for no reasoning where the provider can say so),
  ``minimal``, ``low``, ``medium``, ``high``, ``xhigh`` or ``max``. Each provider maps it its own way
  (data/reasoning/efforts.yaml, read by core/models/reasoning.py; what was sent is stored with every call). ``to_dict``
  leaves it out while it is ``none``, so parameters without it keep the cache keys and run keys they always had;
  a stored parameter set without the key means ``none``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from core.errors import ConfigError
from core.tasks.base import REASONING_EFFORTS, is_int

ANSWER_FORMATS = ("free", "constrained", "members")   # members: only members of A ∪ B (set operations)
MAX_STOP = 4   # the OpenAI API takes at most four stop sequences


@dataclass(frozen=True)
class SamplingParams:
    temperature: float | None = 0.25
    top_p: float | None = 0.25
    top_k: int | None = 20
    max_tokens: int = 512
    seed: int | None = None
    answer_cap: bool = True
    stop: tuple[str, ...] | None = None
    answer_format: str = "free"
    reasoning_effort: str = "none"

    def __post_init__(self) -> None:
        t, p, k, m, s = self.temperature, self.top_p, self.top_k, self.max_tokens, self.seed
        if t is not None and not (_is_number(t) and 0.0 <= t <= 2.0):
            raise ConfigError(f"temperature must be a number in [0, 2], got {t!r}")
        if p is not None and not (_is_number(p) and 0.0 < p <= 1.0):
            raise ConfigError(f"top_p must be a number in (0, 1], got {p!r}")
        if k is not None and not (is_int(k) and k >= 1):
            raise ConfigError(f"top_k must be a whole number >= 1, got {k!r}")
        if not (is_int(m) and 1 <= m <= 100_000):
            raise ConfigError(f"max_tokens must be a whole number in [1, 100000], got {m!r}")
        if s is not None and not (is_int(s) and 0 <= s < 2**31):
            raise ConfigError(f"seed must be a whole number in [0, 2^31), got {s!r}")
        if not isinstance(self.answer_cap, bool):
            raise ConfigError(f"answer_cap must be true or false, got {self.answer_cap!r}")
        if self.answer_format not in ANSWER_FORMATS:
            raise ConfigError(f"answer_format must be one of {', '.join(ANSWER_FORMATS)}, got {self.answer_format!r}")
        effort = self.reasoning_effort
        if effort is None:
            object.__setattr__(self, "reasoning_effort", "none")
        elif not isinstance(effort, str) or effort.strip().lower() not in REASONING_EFFORTS:
            raise ConfigError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, got {effort!r}")
        else:
            object.__setattr__(self, "reasoning_effort", effort.strip().lower())
        stop = self.stop
        if stop is not None:
            if isinstance(stop, str):
                stop = (stop,)
            if not isinstance(stop, (list, tuple)) or not all(isinstance(x, str) and x for x in stop) \
                    or len(stop) > MAX_STOP or any(len(x) > 64 for x in stop):
                raise ConfigError(f"stop must be a list of at most {MAX_STOP} non-empty texts (each at most 64 "
                                  f"characters), got {self.stop!r}")
            object.__setattr__(self, "stop", tuple(dict.fromkeys(stop)))

    def to_dict(self) -> dict:
        """Plain dict with every field (None kept), in a fixed key order — stable for cache keys.
        ``reasoning_effort`` is left out while it is ``none`` (see the module docstring)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        if d["stop"] is not None:
            d["stop"] = list(d["stop"])
        if d["reasoning_effort"] == "none":
            del d["reasoning_effort"]
        return d

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



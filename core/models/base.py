"""The model interface every provider implements, and the two error kinds the runner acts on.

A model is named by a string spec ``provider/model`` (see ``registry.get_model``). ``await model.complete(request)``
returns a ``Completion`` or raises:

* ``RetryableError(reason, retry_after, connection=…)`` — worth trying again later (429, 5xx, timeouts, connection
  errors, a malformed or empty reply). ``retry_after`` is the server's hint in seconds, or None; ``connection`` marks
  an endpoint that could not be reached at all.
* ``ModelError(reason)`` — trying again will not help (bad key, unknown model, bad request, prompt too long).

Models never retry themselves: SDK clients are built with ``max_retries=0`` and the runner owns the retry policy.
API keys are held privately, never appear in ``repr``/``str``, exceptions, logs or stored data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

from core.errors import UserError
from core.models.params import SamplingParams
from core.models.retry_policy import parse_retry_after  # noqa: F401  (providers import it from here)
from core.redaction import redact  # noqa: F401  (the one redaction function; providers import it from here)


@dataclass(frozen=True)
class AnswerShape:
    """The form an answer must take when ``answer_format`` is ``constrained``: the same language twice."""

    gbnf: str    # a llama.cpp grammar (the embedded model; llama.cpp / llama-cpp-python servers)
    regex: str   # a regular expression (vLLM's guided decoding; checking that a server honoured the constraint)

    def matches(self, text: str) -> bool:
        return re.fullmatch(self.regex, text.strip(), flags=re.S) is not None


@dataclass(frozen=True)
class Request:
    prompt: str
    params: SamplingParams = field(default_factory=SamplingParams)
    item: dict | None = None   # the task item (the reference solver needs it; LLMs ignore it)
    task: str | None = None    # task name, e.g. "setops"
    shape: AnswerShape | None = None   # set when params.answer_format is "constrained"


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int | None
    tokens_out: int | None
    latency_ms: float
    cost_usd: float | None          # None = unknown price (e.g. a self-hosted openai-compatible endpoint)
    finish_reason: str | None
    dropped_params: tuple[str, ...] = ()   # sampling parameters the provider could not honour for this call
    # the reply's reasoning, apart from its answer (``text`` is the answer only; core/models/reasoning.py)
    reasoning: str | None = None           # the reasoning text (None: the reply had none, or it was not readable)
    tokens_reasoning: int | None = None    # of tokens_out, the reasoning tokens (None: not counted apart)
    cost_reasoning_usd: float | None = None   # of cost_usd, the reasoning tokens' share
    reasoning_sent: str | None = None      # canonical JSON of what was sent for the reasoning effort (None: nothing)

    def to_dict(self) -> dict:
        return {"text": self.text, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "latency_ms": self.latency_ms, "cost_usd": self.cost_usd, "finish_reason": self.finish_reason,
                "dropped_params": list(self.dropped_params), "reasoning": self.reasoning,
                "tokens_reasoning": self.tokens_reasoning, "cost_reasoning_usd": self.cost_reasoning_usd,
                "reasoning_sent": self.reasoning_sent}


class ModelError(UserError):
    """A failure that retrying will not fix. The message is safe to show and store (never holds a key)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class RetryableError(Exception):
    """A transient failure; the runner retries with backoff, waiting at least ``retry_after`` seconds if given.
    ``connection``: the endpoint could not be reached at all (refused, reset, unknown host) — the runner then pauses
    the whole run until it answers again (core/runner/breaker.py) instead of using up the call's attempts."""

    def __init__(self, reason: str, retry_after: float | None = None, *, connection: bool = False):
        super().__init__(reason if retry_after is None else f"{reason} (retry after {retry_after:g} s)")
        self.reason = reason
        self.retry_after = retry_after
        self.connection = connection


@runtime_checkable
class Model(Protocol):
    spec: str
    provider: str
    default_concurrency: int
    supported_params: tuple[str, ...]

    async def complete(self, request: Request) -> Completion: ...


class BaseModel:
    """Shared plumbing: spec/provider fields, a key-free repr, key redaction for messages."""

    provider: ClassVar[str] = ""
    default_concurrency: ClassVar[int] = 1
    supported_params: ClassVar[tuple[str, ...]] = ()
    constrained: ClassVar[bool] = False   # can restrict decoding to an AnswerShape (answer_format: constrained)

    def __init__(self, spec: str, name: str):
        self.spec = spec
        self.name = name  # the model name inside the provider, e.g. "gpt-4o-mini"

    def __repr__(self) -> str:  # never shows a key
        return f"<{type(self).__name__} {self.spec}>"

    __str__ = __repr__

    @classmethod
    def from_spec(cls, spec: str, name: str, *, base_url: str | None = None, api_key: str | None = None,
                  timeout: float = 60, http_client=None) -> BaseModel:
        """The model ``spec`` (``name`` its part after the provider) as ``get_model`` builds it (a provider that
        takes fewer arguments, or checks the name, overrides this)."""
        return cls(spec, name, base_url=base_url, api_key=api_key, timeout=timeout, http_client=http_client)

    def validate(self) -> None:
        """Raise ModelError if the model cannot be used at all (e.g. no key). No network call."""

    def prepare(self) -> None:
        """Optional, blocking, thread-safe: pay one-off costs of the first call now (e.g. import an HTTP library).
        The runner calls it in a worker thread during its setup. No network call."""

    async def aclose(self) -> None:
        """Release network resources (no-op for in-process models)."""


_CLOSING_TAG = re.compile(r"</([A-Za-z][\w-]*)>")


def restore_stop(text: str, stop, finish_reason: str | None, matched: str | None = None) -> str:
    """The reply as the model wrote it, stop sequence included: APIs cut a matched stop sequence from the text.

    ``matched`` (Anthropic reports which one) is put back as it is. The OpenAI API says only ``finish_reason
    "stop"`` — for a stop sequence and for the model's own end alike — so a closing tag such as ``</answer>`` is put
    back when the reply left its opening tag open (the tag was what ended it). Anything else is left unchanged.
    """
    if matched:
        return text + matched
    if finish_reason != "stop" or not stop:
        return text
    for s in stop:
        m = _CLOSING_TAG.fullmatch(s)
        if m and text.rfind(f"<{m.group(1)}>") > text.rfind(s):
            return text + s
    return text

"""Anthropic Claude via the official SDK (Messages API).

Spec ``anthropic/<model>``, e.g. ``anthropic/claude-haiku-4-5``. Key: explicit or ANTHROPIC_API_KEY.

Sampling parameters (checked 2026-11 against the SDK's MIGRATION.md and public reports of API errors):

* anthropic>=1 removed ``temperature``/``top_p``/``top_k`` from ``messages.create()``; the API still honours them
  for models that predate the change, passed in the JSON body (``extra_body``). There is no ``seed`` (dropped).
* Claude 3.x and the 4.0 models (claude-sonnet-4, claude-opus-4) take all three.
* Opus 4.1 and the 4.5/4.6 generation refuse temperature and top_p together ("`temperature` and `top_p` cannot
  both be specified for this model"): top_p is dropped, temperature and top_k kept.
* Models released after Opus 4.6 (4.7+, 5.x) deprecate the sampling parameters ("`temperature` is deprecated for
  this model"): all three are dropped.
* For any other model name, everything is sent; if the API answers with one of those two errors, the named
  parameter is dropped and the call re-sent at once (remembered for this model object).

Every drop is listed in ``Completion.dropped_params`` and so stored with the call.

Reasoning effort (other than ``none``) turns extended thinking on: ``thinking={"type": "enabled", "budget_tokens":
B}`` with the level's budget and ``max_tokens`` raised by B; temperature, top_p and top_k are then not sent (the API
takes no sampling change with thinking: temperature stays 1) and are listed as dropped. The reply's ``thinking``
blocks are stored apart from its text (core/models/reasoning.py states the budgets).

Stop sequences go as ``stop_sequences``; the API cuts the matched one from the text and names it
(``stop_sequence``), and it is put back so the reply reads as written. The Messages API cannot force the
``<answer>{…}</answer>`` form, so ``answer_format: constrained`` is refused before a run starts.
"""

from __future__ import annotations

import os
import re
import time

import anthropic

from core.models import reasoning as R
from core.models.base import BaseModel, Completion, ModelError, Request, RetryableError, redact, restore_stop
from core.models.pricing import estimate_cost
from core.models.providers import PROVIDERS
from core.models.providers.sdk_common import ClientPerLoop, describe_status, map_sdk_error

SAMPLING = ("temperature", "top_p", "top_k")
_VERSION = re.compile(r"^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?(?:-.*)?$")
_BOTH_REJECTED = re.compile(r"temperature.{0,20}top_p.{0,40}cannot both", re.I | re.S)
_DEPRECATED = re.compile(r"`?(temperature|top_p|top_k)`? (?:is|are) (?:deprecated|not supported)", re.I)


def claude_version(name: str) -> tuple[int, int] | None:
    """(major, minor) of a ``claude-<family>-<major>[-<minor>][-<date>]`` name; None for other names."""
    m = _VERSION.match(name.lower())
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


def known_unsupported(name: str) -> frozenset[str]:
    """Sampling parameters this Claude model is known to refuse (see the module docstring)."""
    v = claude_version(name)
    if v is None or v < (4, 1):
        return frozenset()
    if v <= (4, 6):
        return frozenset({"top_p"})
    return frozenset(SAMPLING)


KEY_ENV = PROVIDERS["anthropic"].key_env


def split_blocks(blocks) -> tuple[str, str | None]:
    """(answer text, reasoning text or None) of a Message's content blocks: ``text`` blocks are the answer,
    ``thinking`` blocks the reasoning; a ``redacted_thinking`` block (encrypted by the API) is noted as such."""
    text, thought = [], []
    for b in blocks:
        kind = getattr(b, "type", None) if not isinstance(b, dict) else b.get("type")
        get = b.get if isinstance(b, dict) else (lambda k, b=b: getattr(b, k, None))
        if kind == "text":
            text.append(get("text") or "")
        elif kind == "thinking":
            thought.append(get("thinking") or "")
        elif kind == "redacted_thinking":
            thought.append("[redacted thinking]")
    joined = "\n\n".join(t for t in thought if t)
    return "".join(text), joined or None


def thinking_tokens(usage) -> int | None:
    """``usage.output_tokens_details.thinking_tokens`` (the reasoning share of ``output_tokens``), or None."""
    details = getattr(usage, "output_tokens_details", None) if usage is not None else None
    return R.int_count(getattr(details, "thinking_tokens", None)) if details is not None else None


def sent_json(body: dict) -> str | None:
    """What was sent for the reasoning effort (the thinking object), as stored."""
    return R.sent_json({"thinking": body["thinking"]} if "thinking" in body else None)


class AnthropicModel(BaseModel):
    provider = "anthropic"
    default_concurrency = PROVIDERS["anthropic"].default_concurrency
    supported_params = ("temperature", "top_p", "top_k", "max_tokens", "stop", "reasoning_effort")

    def __init__(self, spec: str, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60, http_client=None):
        super().__init__(spec, name)
        self.base_url = base_url or None
        self.timeout = float(timeout)
        self.__key = api_key or os.environ.get(KEY_ENV) or None
        self._unsupported = set(known_unsupported(name))
        self._clients = ClientPerLoop(self._make_client, http_client)

    def validate(self) -> None:
        self._key()

    def _key(self) -> str:
        if not self.__key:
            raise ModelError(f"{self.spec}: no API key — set {KEY_ENV} or enter a key for this session")
        return self.__key

    def _make_client(self, http_client):
        kwargs = dict(api_key=self._key(), max_retries=0, timeout=self.timeout)
        if self.base_url:
            kwargs["base_url"] = self.base_url
        if http_client is not None:
            kwargs["http_client"] = http_client
        return anthropic.AsyncAnthropic(**kwargs)

    def _sampling(self, p) -> tuple[dict, list[str]]:
        body: dict = {"max_tokens": p.max_tokens}
        sampling: dict = {}
        dropped: list[str] = []
        thinking = R.anthropic_thinking(p)
        if thinking is not None:
            body["thinking"] = thinking
            body["max_tokens"] = p.max_tokens + thinking["budget_tokens"]
        for field in SAMPLING:
            value = getattr(p, field)
            if value is None:
                continue
            if field in self._unsupported or (thinking is not None and field in R.ANTHROPIC_DROPPED):
                dropped.append(field)
            else:
                sampling[field] = value
        if p.seed is not None:
            dropped.append("seed")
        if p.stop:
            body["stop_sequences"] = list(p.stop)
        if sampling:
            body["extra_body"] = sampling
        return body, dropped

    def _refused_sampling(self, exc, body: dict) -> str | None:
        """The sampling parameter a 400 complains about, if it is one we sent."""
        return self._refused_in_text(describe_status(exc), body.get("extra_body", {}))

    @staticmethod
    def _refused_in_text(text: str, sent: dict) -> str | None:
        text = text or ""
        if "top_p" in sent and _BOTH_REJECTED.search(text):
            return "top_p"
        m = _DEPRECATED.search(text)
        if m and m.group(1).lower() in sent:
            return m.group(1).lower()
        return None

    async def complete(self, request: Request) -> Completion:
        for _ in range(len(SAMPLING) + 1):
            body, dropped = self._sampling(request.params)
            try:
                return await self._send(request, body, dropped)
            except anthropic.BadRequestError as exc:
                field = self._refused_sampling(exc, body)
                if field is None:
                    raise self._mapped(exc) from None
                self._unsupported.add(field)  # re-sent at once without it
            except (anthropic.AnthropicError, ValueError) as exc:
                raise self._mapped(exc) from None
        raise ModelError(f"{self.spec}: the API refused every sampling parameter combination")

    def _mapped(self, exc):
        err = map_sdk_error(exc, anthropic, label=self.spec, key_env=KEY_ENV, secret=self.__key)
        if err is None:
            err = RetryableError(f"{self.spec}: {redact(type(exc).__name__ + ': ' + str(exc), self.__key)[:300]}")
        return err

    async def _send(self, request: Request, body: dict, dropped: list[str]) -> Completion:
        client = self._clients.get()
        started = time.perf_counter()
        resp = await client.messages.create(
            model=self.name,
            messages=[{"role": "user", "content": request.prompt}],
            timeout=self.timeout,
            **body,
        )
        latency_ms = (time.perf_counter() - started) * 1000.0
        blocks = getattr(resp, "content", None)
        if not isinstance(blocks, list):
            raise RetryableError(f"{self.spec}: malformed response (no content list)")
        text, thought = split_blocks(blocks)
        if getattr(resp, "stop_reason", None) == "stop_sequence":
            matched = getattr(resp, "stop_sequence", None)
            text = restore_stop(text, body.get("stop_sequences"), "stop",
                                matched if isinstance(matched, str) else None)
        if not text.strip():
            raise RetryableError(f"{self.spec}: empty completion (stop_reason={getattr(resp, 'stop_reason', None)})")
        usage = getattr(resp, "usage", None)
        t_in = getattr(usage, "input_tokens", None) if usage is not None else None
        t_out = getattr(usage, "output_tokens", None) if usage is not None else None
        t_reason = thinking_tokens(usage)
        return Completion(
            text=text,
            tokens_in=t_in,
            tokens_out=t_out,
            latency_ms=latency_ms,
            cost_usd=estimate_cost(self.spec, t_in, t_out),
            finish_reason=getattr(resp, "stop_reason", None),
            dropped_params=tuple(dict.fromkeys(dropped)),
            reasoning=thought,
            tokens_reasoning=t_reason,
            cost_reasoning_usd=R.reasoning_cost(self.spec, t_reason),
            reasoning_sent=sent_json(body),
        )

    # -- what the batch back end (core.models.batch.anthropic) shares with live calls ------------------------
    def sync_client(self, timeout: float | None = None):
        """A blocking SDK client with this model's key and base URL; it never retries by itself."""
        kwargs = dict(api_key=self._key(), max_retries=0, timeout=timeout or self.timeout)
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return anthropic.Anthropic(**kwargs)

    def request_body(self, params) -> tuple[dict, list[str]]:
        """The sampling part of a Messages request for ``params`` (flat: a batch request's ``params`` take them as
        they are) and the parameters dropped from it."""
        body, dropped = self._sampling(params)
        return {**{k: v for k, v in body.items() if k != "extra_body"}, **body.get("extra_body", {})}, dropped

    def error_for(self, exc) -> Exception:
        """The RetryableError / ModelError (redacted) for an SDK exception."""
        return self._mapped(exc)

    def learn_refusal(self, text: str, body: dict) -> str | None:
        """If an error text refuses a sampling parameter of ``body``, drop it from later requests; returns it."""
        field = self._refused_in_text(text, body)
        if field is not None:
            self._unsupported.add(field)
        return field

    async def aclose(self) -> None:
        await self._clients.aclose()

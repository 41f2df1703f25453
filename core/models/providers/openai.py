"""OpenAI via the official SDK.

Spec ``openai/<model>`` (api.openai.com unless a base URL is given). Sampling parameters: temperature, top_p,
max_tokens (sent as ``max_completion_tokens``), seed, stop. ``top_k`` is not part of the OpenAI API and is dropped.
Reasoning models (o1/o3/o4*, gpt-5*) accept neither temperature, top_p nor stop, so those are dropped for them.
``reasoning_effort`` (other than ``none``) goes in the body as data/reasoning/efforts.yaml names it (``off`` as
``"none"``; ``max``, which OpenAI lacks, as the nearest level), with the reply cap raised by the level's allowance;
a refused value whose error lists the values the model takes is re-sent once at the nearest of them (a refused
``off`` is re-sent without an effort, recorded as dropped: never as a thinking level); the reply's
reasoning tokens (``usage.completion_tokens_details.reasoning_tokens``) are stored apart with their cost, and a ``reasoning_content`` beside the answer (some OpenAI-style gateways return one) is
kept as the call's reasoning (core/models/reasoning.py).
A stop sequence is cut from the reply by the API; a closing ``</answer>`` is put back when the reply's answer tag
was left open (``base.restore_stop``). The API has no way to force the ``<answer>{…}</answer>`` form, so
``answer_format: constrained`` is refused before a run starts (``constrained = False``). If the
server still rejects a sampling parameter as unsupported, it is dropped and the call is re-sent once at once
(remembered for this model object); every drop is listed in ``Completion.dropped_params``.

``openai-compatible/<model>`` (vLLM, Ollama, llama.cpp server, LM Studio…) lives in ``core.models.providers.openai_compatible``:
it speaks the OpenAI HTTP API directly.

Key: the explicit key or OPENAI_API_KEY. The SDK's own retries are off (``max_retries=0``): the runner retries.
"""

from __future__ import annotations

import os
import re
import time

from core.models import reasoning as R
from core.models.base import BaseModel, Completion, ModelError, Request, RetryableError, redact, restore_stop
from core.models.pricing import estimate_cost
from core.models.providers import ProviderInfo, register
from core.models.providers.sdk_common import ClientPerLoop, describe_status, map_sdk_error

_REASONING = re.compile(r"^(o1|o3|o4|gpt-5)")
_UNSUPPORTED = re.compile(r"unsupported (parameter|value)|not supported|does not support", re.I)


INFO = ProviderInfo("openai", "openai/gpt-4o-mini", 16, ("temperature", "top_p", "max_tokens", "seed", "stop"),
                    "OPENAI_API_KEY", False,
                    "top_k dropped (not in the OpenAI API); temperature/top_p/stop dropped for o1/o3/o4/gpt-5 "
                    "models; no constrained answers", choices=("openai/gpt-4o-mini",))
KEY_ENV = INFO.key_env


def sdk():
    """The openai SDK, imported at the first use (listing the providers imports this module, not the SDK)."""
    import openai

    return openai


@register(INFO)
class OpenAIModel(BaseModel):
    supported_params = ("temperature", "top_p", "max_tokens", "seed", "stop", "reasoning_effort")

    def __init__(self, spec: str, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60, http_client=None):
        super().__init__(spec, name)
        self.base_url = base_url or None
        self.timeout = float(timeout)
        self.__key = api_key or os.environ.get(KEY_ENV) or None
        self._learned_drops: set[str] = set()
        self._accepted: set[str] | None = None   # reasoning_effort values the model listed when it refused one
        self._clients = ClientPerLoop(self._make_client, http_client)

    # -- configuration ---------------------------------------------------------------------------------------
    @property
    def _label(self) -> str:
        return self.spec

    def _key_for_client(self) -> str:
        if not self.__key:
            raise ModelError(f"{self.spec}: no API key — set {KEY_ENV} or enter a key for this session")
        return self.__key

    def validate(self) -> None:
        self._key_for_client()

    def _make_client(self, http_client):
        openai = sdk()
        kwargs = dict(api_key=self._key_for_client(), base_url=self.base_url, max_retries=0, timeout=self.timeout)
        if http_client is not None:
            kwargs["http_client"] = http_client
        return openai.AsyncOpenAI(**kwargs)

    def _sampling(self, p) -> tuple[dict, list[str]]:
        body: dict = {}
        dropped: list[str] = []
        reasoning = bool(_REASONING.match(self.name.lower()))
        for field in ("temperature", "top_p"):
            value = getattr(p, field)
            if value is None:
                continue
            if reasoning or field in self._learned_drops:
                dropped.append(field)
            else:
                body[field] = value
        if p.top_k is not None:
            dropped.append("top_k")
        body["max_completion_tokens"] = p.max_tokens
        if p.seed is not None:
            body["seed"] = p.seed
        if p.stop:
            if reasoning:
                dropped.append("stop")
            else:
                body["stop"] = list(p.stop)
        if R.active(p):
            level = R.openai_level(p.reasoning_effort, "openai", self._accepted)
            if "reasoning_effort" in self._learned_drops or level is None:
                dropped.append("reasoning_effort")
            else:
                body["reasoning_effort"] = R.openai_value(level, "openai")
                body["max_completion_tokens"] = p.max_tokens + R.budget(level)
                dropped.extend(R.changed(p.reasoning_effort, level))
        return body, dropped

    # -- the call --------------------------------------------------------------------------------------------
    async def complete(self, request: Request) -> Completion:
        openai = sdk()
        body, dropped = self._sampling(request.params)
        try:
            return await self._send(request, body, dropped)
        except openai.BadRequestError as exc:
            if self._learn_values(describe_status(exc), body):   # an effort value refused: the nearest, once
                body, dropped = self._sampling(request.params)
                try:
                    return await self._send(request, body, dropped)
                except openai.OpenAIError as exc2:
                    raise self._mapped(exc2) from None
            field = self._rejected_sampling_field(exc, body)
            if field is None:
                raise self._mapped(exc) from None
            self._learned_drops.add(field)
            body = {k: v for k, v in body.items() if k != field}
            if field == "reasoning_effort":
                body["max_completion_tokens"] = request.params.max_tokens
            try:
                return await self._send(request, body, dropped + [field])
            except openai.OpenAIError as exc2:
                raise self._mapped(exc2) from None
        except (openai.OpenAIError, ValueError) as exc:
            raise self._mapped(exc) from None

    def _mapped(self, exc):
        openai = sdk()
        err = map_sdk_error(exc, openai, label=self._label, key_env=KEY_ENV, secret=self.__key)
        if err is None:
            err = RetryableError(f"{self._label}: {redact(type(exc).__name__ + ': ' + str(exc), self.__key)[:300]}")
        return err

    def _learn_values(self, text: str, body: dict) -> bool:
        """Whether a 400 refused the ``reasoning_effort`` value sent and listed the values the model takes (then
        remembered: later bodies carry the nearest of them)."""
        values = R.accepted_values(text) if "reasoning_effort" in body else None
        if not values or body["reasoning_effort"] in values:
            return False
        self._accepted = values
        return True

    def _rejected_sampling_field(self, exc, body) -> str | None:
        return self._refused_in_text(describe_status(exc), body)

    @staticmethod
    def _refused_in_text(text: str, body) -> str | None:
        if not _UNSUPPORTED.search(text or ""):
            return None
        for field in ("temperature", "top_p", "reasoning_effort"):
            if field in body and field in text:
                return field
        return None

    async def _send(self, request: Request, body: dict, dropped: list[str]) -> Completion:
        client = self._clients.get()
        started = time.perf_counter()
        resp = await client.chat.completions.create(
            model=self.name,
            messages=[{"role": "user", "content": request.prompt}],
            timeout=self.timeout,
            **body,
        )
        latency_ms = (time.perf_counter() - started) * 1000.0
        sent = {"reasoning_effort": body["reasoning_effort"]} if "reasoning_effort" in body else None
        return self._completion(resp, latency_ms, dropped, body.get("stop"), R.sent_json(sent))

    def _completion(self, resp, latency_ms: float, dropped: list[str], stop=None, sent: str | None = None
                    ) -> Completion:
        choices = getattr(resp, "choices", None)
        if not choices:
            raise RetryableError(f"{self._label}: response without choices")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None) if message is not None else None
        if not isinstance(text, str) or not text.strip():
            raise RetryableError(f"{self._label}: empty completion (finish_reason={choice.finish_reason})")
        usage = getattr(resp, "usage", None)
        t_in = getattr(usage, "prompt_tokens", None) if usage is not None else None
        t_out = getattr(usage, "completion_tokens", None) if usage is not None else None
        details = getattr(usage, "completion_tokens_details", None) if usage is not None else None
        t_reason = R.int_count(getattr(details, "reasoning_tokens", None)) if details is not None else None
        thought = getattr(message, "reasoning_content", None) or (getattr(message, "model_extra", None) or {}).get(
            "reasoning_content")
        return Completion(
            text=restore_stop(text, stop, choice.finish_reason),
            tokens_in=t_in,
            tokens_out=t_out,
            latency_ms=latency_ms,
            cost_usd=estimate_cost(self.spec, t_in, t_out),
            finish_reason=choice.finish_reason,
            dropped_params=tuple(dict.fromkeys(dropped)),
            reasoning=thought if isinstance(thought, str) and thought else None,
            tokens_reasoning=t_reason,
            cost_reasoning_usd=R.reasoning_cost(self.spec, t_reason),
            reasoning_sent=sent,
        )

    # -- what the batch back end (core.models.batch.openai) shares with live calls ---------------------------
    def sync_client(self, timeout: float | None = None):
        """A blocking SDK client with this model's key and base URL; it never retries by itself."""
        openai = sdk()
        return openai.OpenAI(api_key=self._key_for_client(), base_url=self.base_url, max_retries=0,
                             timeout=timeout or self.timeout)

    def request_body(self, params) -> tuple[dict, list[str]]:
        """The sampling part of a chat completion body for ``params`` and the parameters dropped from it."""
        return self._sampling(params)

    def error_for(self, exc) -> Exception:
        """The RetryableError / ModelError (redacted) for an SDK exception."""
        return self._mapped(exc)

    def learn_refusal(self, text: str, body: dict) -> str | None:
        """If an error text refuses a sampling parameter of ``body`` (or the value of its reasoning effort), drop it
        (or take the nearest value listed) in later requests; returns the field."""
        if self._learn_values(text, body):
            return "reasoning_effort"
        field = self._refused_in_text(text, body)
        if field is not None:
            self._learned_drops.add(field)
        return field

    async def aclose(self) -> None:
        await self._clients.aclose()

"""Anthropic Claude via the official SDK (Messages API).

Spec ``anthropic/<model>``, e.g. ``anthropic/claude-haiku-4-5``. Key: explicit or ANTHROPIC_API_KEY.

Sampling parameters: the Messages API takes temperature, top_p and top_k; it has no seed (dropped). Newer Claude
models (Opus 4.1, the 4.5 generation and later) reject temperature and top_p in the same request ("`temperature`
and `top_p` cannot both be specified for this model"); for those top_p is dropped and temperature kept (the
paper's primary knob). For any other model that answers with that error, top_p is dropped and the call re-sent
once at once (remembered for this model object). Every drop is listed in ``Completion.dropped_params``.
"""

from __future__ import annotations

import os
import re
import time

import anthropic

from core.models.base import BaseModel, Completion, ModelError, Request, RetryableError, redact
from core.models.pricing import estimate_cost
from core.models.sdk_common import ClientPerLoop, describe_status, map_sdk_error

_VERSION = re.compile(r"^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?(?:-.*)?$")
_BOTH_REJECTED = re.compile(r"temperature.{0,20}top_p.{0,40}cannot both", re.I | re.S)


def rejects_temperature_with_top_p(name: str) -> bool:
    """True for Claude models known to refuse temperature and top_p together (Opus 4.1, 4.5+ generation)."""
    m = _VERSION.match(name.lower())
    if not m:
        return False
    major, minor = int(m.group(1)), int(m.group(2) or 0)
    return (major, minor) >= (4, 1)


class AnthropicModel(BaseModel):
    provider = "anthropic"
    default_concurrency = 8
    supported_params = ("temperature", "top_p", "top_k", "max_tokens")

    def __init__(self, spec: str, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60, http_client=None):
        super().__init__(spec, name)
        self.base_url = base_url or None
        self.timeout = float(timeout)
        self.__key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        self._drop_top_p = rejects_temperature_with_top_p(name)
        self._clients = ClientPerLoop(self._make_client, http_client)

    def validate(self) -> None:
        self._key()

    def _key(self) -> str:
        if not self.__key:
            raise ModelError(f"{self.spec}: no API key — set ANTHROPIC_API_KEY or enter a key for this session")
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
        dropped: list[str] = []
        if p.temperature is not None:
            body["temperature"] = p.temperature
        if p.top_p is not None:
            if self._drop_top_p and p.temperature is not None:
                dropped.append("top_p")
            else:
                body["top_p"] = p.top_p
        if p.top_k is not None:
            body["top_k"] = p.top_k
        if p.seed is not None:
            dropped.append("seed")
        return body, dropped

    async def complete(self, request: Request) -> Completion:
        body, dropped = self._sampling(request.params)
        try:
            return await self._send(request, body, dropped)
        except anthropic.BadRequestError as exc:
            if "top_p" not in body or not _BOTH_REJECTED.search(describe_status(exc)):
                raise self._mapped(exc) from None
            self._drop_top_p = True
            body = {k: v for k, v in body.items() if k != "top_p"}
            try:
                return await self._send(request, body, dropped + ["top_p"])
            except (anthropic.AnthropicError, ValueError) as exc2:
                raise self._mapped(exc2) from None
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self._mapped(exc) from None

    def _mapped(self, exc):
        err = map_sdk_error(exc, anthropic, label=self.spec, key_env="ANTHROPIC_API_KEY", secret=self.__key)
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
        text = "".join(getattr(b, "text", "") or "" for b in blocks if getattr(b, "type", None) == "text")
        if not text.strip():
            raise RetryableError(f"{self.spec}: empty completion (stop_reason={getattr(resp, 'stop_reason', None)})")
        usage = getattr(resp, "usage", None)
        t_in = getattr(usage, "input_tokens", None) if usage is not None else None
        t_out = getattr(usage, "output_tokens", None) if usage is not None else None
        return Completion(
            text=text,
            tokens_in=t_in,
            tokens_out=t_out,
            latency_ms=latency_ms,
            cost_usd=estimate_cost(self.spec, t_in, t_out),
            finish_reason=getattr(resp, "stop_reason", None),
            dropped_params=tuple(dict.fromkeys(dropped)),
        )

    async def aclose(self) -> None:
        await self._clients.aclose()

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

Reasoning effort: how the model takes thinking comes from its own description — the Models API's capabilities,
asked once per model and kept in the store (core/models/capabilities.py) — else from its name, corrected by the
first refusal. A model that takes adaptive thinking gets ``thinking={"type": "adaptive"}`` and ``output_config=
{"effort": …}`` (a level it lacks goes as the nearest it has, recorded in ``dropped_params``); one that takes only
budgets gets ``thinking={"type": "enabled", "budget_tokens": B}``; ``off`` sends ``thinking={"type": "disabled"}``.
``max_tokens`` is raised by the level's allowance. While thinking is on, temperature, top_p and top_k are not sent
(the API takes no sampling change with thinking: temperature stays 1) and are listed as dropped. A 400 that refuses
the thinking form or the effort level (a budget on an adaptive-only model, adaptive thinking on an older one)
corrects the model's mode and the call is re-sent once; while the mode is only a guess from the name (no
description), the first thinking call goes alone and the others wait for it, and a batch is preceded by one small
live call, so a refusal is met once, not once per call in flight. The
reply's ``thinking`` blocks are stored apart from its text (core/models/reasoning.py states the mapping).

Stop sequences go as ``stop_sequences``; the API cuts the matched one from the text and names it
(``stop_sequence``), and it is put back so the reply reads as written. The Messages API cannot force the
``<answer>{…}</answer>`` form, so ``answer_format: constrained`` is refused before a run starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import threading
import time
import weakref

from core.models import capabilities as C, reasoning as R
from core.models.base import BaseModel, Completion, ModelError, Request, RetryableError, redact, restore_stop
from core.models.pricing import estimate_cost
from core.models.providers import ProviderInfo, register
from core.models.providers.sdk_common import ClientPerLoop, describe_status, map_sdk_error

log = logging.getLogger(__name__)

SAMPLING = ("temperature", "top_p", "top_k")
claude_version = C.claude_version
_BOTH_REJECTED = re.compile(r"temperature.{0,20}top_p.{0,40}cannot both", re.I | re.S)
_DEPRECATED = re.compile(r"`?(temperature|top_p|top_k)`? (?:is|are) (?:deprecated|not supported)", re.I)


def known_unsupported(name: str) -> frozenset[str]:
    """Sampling parameters this Claude model is known to refuse (see the module docstring)."""
    v = claude_version(name)
    if v is None or v < (4, 1):
        return frozenset()
    if v <= (4, 6):
        return frozenset({"top_p"})
    return frozenset(SAMPLING)


INFO = ProviderInfo("anthropic", "anthropic/claude-haiku-4-5", 8,
                    ("temperature", "top_p", "top_k", "max_tokens", "stop"), "ANTHROPIC_API_KEY", False,
                    "seed dropped; top_p dropped for Opus 4.1 and the 4.5/4.6 models (not with temperature); all "
                    "sampling parameters dropped for models after Opus 4.6 (deprecated by the API); a reasoning "
                    "effort is adaptive thinking or a budget as the model's description says; no constrained "
                    "answers", choices=("anthropic/claude-haiku-4-5",))
KEY_ENV = INFO.key_env


def sdk():
    """The anthropic SDK, imported at the first use (listing the providers imports this module, not the SDK)."""
    import anthropic

    return anthropic


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
    """What was sent for the reasoning effort (the thinking object and the effort), as stored."""
    return R.sent_json({k: body[k] for k in ("thinking", "output_config") if k in body})


@register(INFO)
class AnthropicModel(BaseModel):
    supported_params = ("temperature", "top_p", "top_k", "max_tokens", "stop", "reasoning_effort")

    def __init__(self, spec: str, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60, http_client=None):
        super().__init__(spec, name)
        self.base_url = base_url or None
        self.timeout = float(timeout)
        self.__key = api_key or os.environ.get(KEY_ENV) or None
        self._unsupported = set(known_unsupported(name))
        self._clients = ClientPerLoop(self._make_client, http_client)
        self._mode: C.ThinkingMode | None = C.recall(self.base_url, name)
        self._mode_lock = threading.Lock()
        self._gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # event loop -> asyncio.Lock
        self._db_path = None
        self._attached = False

    def use_store(self, db_path) -> None:
        """Keep what the Models API says of this model in the store at ``db_path`` (None: the default store) and
        read it from there."""
        self._db_path, self._attached = db_path, True

    def validate(self) -> None:
        self._key()

    def _key(self) -> str:
        if not self.__key:
            raise ModelError(f"{self.spec}: no API key — set {KEY_ENV} or enter a key for this session")
        return self.__key

    def _make_client(self, http_client):
        anthropic = sdk()
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
        fields, extra, notes = R.anthropic_fields(p.reasoning_effort, self.thinking_mode())
        body.update(fields)
        body["max_tokens"] = p.max_tokens + extra
        dropped.extend(notes)
        thinking = fields.get("thinking", {}).get("type") in ("enabled", "adaptive")
        for field in SAMPLING:
            value = getattr(p, field)
            if value is None:
                continue
            if field in self._unsupported or (thinking and field in R.ANTHROPIC_DROPPED):
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

    # -- how the model takes thinking (core/models/capabilities.py) ----------------------------------------------
    def thinking_mode(self) -> C.ThinkingMode:
        """The mode known for this model (settled or a guess from its name)."""
        return self._mode or C.ThinkingMode.from_name(self.name)

    def _set_mode(self, mode: C.ThinkingMode, keep: bool) -> None:
        with self._mode_lock:
            self._mode = mode
        C.remember(self.base_url, self.name, mode)
        if keep and self._attached:
            self._store_mode(mode)

    def _store_mode(self, mode: C.ThinkingMode) -> None:
        from core import store
        from core.store import model_info

        try:
            with store.connect(self._db_path) as con:
                model_info.put(con, self.spec, C.endpoint_key(self.base_url), mode.to_json(), mode.source)
        except store.STORE_ERRORS as exc:
            log.info("%s: the thinking mode was not kept in the store (%s)", self.spec, type(exc).__name__)

    def _stored_mode(self) -> C.ThinkingMode | None:
        if not self._attached:
            return None
        from core import store
        from core.store import model_info

        try:
            with store.connect(self._db_path) as con:
                return C.ThinkingMode.from_json(model_info.get(con, self.spec, C.endpoint_key(self.base_url)))
        except store.STORE_ERRORS as exc:
            log.info("%s: the store's thinking modes are not readable (%s)", self.spec, type(exc).__name__)
            return None

    def _settled(self) -> bool:
        mode = self._mode or C.recall(self.base_url, self.name)
        if mode is not None and mode.settled:
            self._mode = mode
            return True
        return False

    def _described(self, info) -> None:
        """Take the Models API's answer (an SDK ModelInfo, or None when it did not answer usefully)."""
        mode = C.ThinkingMode.from_model_info(info) if info is not None else None
        if mode is not None:
            self._set_mode(mode, keep=True)
        elif self._mode is None:
            self._mode = C.ThinkingMode.from_name(self.name)

    async def _resolve_mode(self) -> None:
        """Settle the mode from this process, the store or the Models API (once); else keep the name's guess."""
        anthropic = sdk()
        if self._settled() or self._mode is not None:   # settled, or already asked: the guess stands until a call
            return
        kept = await asyncio.to_thread(self._stored_mode)
        if kept is not None:
            self._set_mode(kept, keep=False)
            return
        try:
            info = await self._clients.get().models.retrieve(self.name, timeout=self.timeout)
        except (anthropic.AnthropicError, ValueError) as exc:
            log.info("%s: no model description from the Models API (%s); guessing from the name", self.spec,
                     type(exc).__name__)
            info = None
        await asyncio.to_thread(self._described, info)   # keeping it in the store is blocking I/O

    def resolve_mode_sync(self, params=None) -> C.ThinkingMode:
        """The same as the first thinking call does, blocking (for batch bodies built before any call): the store,
        else the Models API, else the name; a provisional guess is tried with one small live call at ``params``'
        effort (a refusal corrects it) so that a batch is never refused request by request."""
        anthropic = sdk()
        if not self._settled() and self._mode is None:
            kept = self._stored_mode()
            if kept is not None:
                self._set_mode(kept, keep=False)
            else:
                try:
                    with self.sync_client() as client:
                        info = client.models.retrieve(self.name)
                except (anthropic.AnthropicError, ValueError) as exc:
                    log.info("%s: no model description from the Models API (%s); guessing from the name",
                             self.spec, type(exc).__name__)
                    info = None
                self._described(info)
        if not self._settled() and params is not None and R.thinks(params):
            self._probe_sync(params)
        return self.thinking_mode()

    def _probe_sync(self, params) -> None:
        """One short live call with ``params``' thinking: it settles the guess, or its refusal corrects it."""
        anthropic = sdk()
        probe = params.replace(max_tokens=16, stop=None, temperature=None, top_p=None, top_k=None, seed=None)
        body, _ = self._sampling(probe)
        try:
            with self.sync_client() as client:
                client.messages.create(model=self.name, messages=[{"role": "user", "content": "Reply with OK."}],
                                       **body)
        except anthropic.BadRequestError as exc:
            if self.learn_refusal(describe_status(exc), body) != "thinking":
                log.info("%s: the thinking probe was refused for another reason (%s)", self.spec,
                         redact(describe_status(exc), self.__key)[:200])
            return
        except (anthropic.AnthropicError, ValueError) as exc:
            log.info("%s: the thinking probe failed (%s); keeping the guess from the name", self.spec,
                     type(exc).__name__)
            return
        self._set_mode(dataclasses.replace(self.thinking_mode(), settled=True), keep=False)

    def _gate(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._mode_lock:
            gate = self._gates.get(loop)
            if gate is None:
                gate = self._gates[loop] = asyncio.Lock()
            return gate

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
        if not R.active(request.params) or self._settled():
            return await self._complete(request)
        async with self._gate():   # one call at a time until the thinking mode is settled
            if not self._settled():
                await self._resolve_mode()
                if not self._settled():   # only a guess from the name: this call finds out for all of them
                    done = await self._complete(request)
                    if not self._settled():
                        # the guess held (kept in this process; only a description or a refusal goes to the store)
                        self._set_mode(dataclasses.replace(self.thinking_mode(), settled=True), keep=False)
                    return done
        return await self._complete(request)

    async def _complete(self, request: Request) -> Completion:
        anthropic = sdk()
        relearned = False
        for _ in range(len(SAMPLING) + 2):
            body, dropped = self._sampling(request.params)
            try:
                return await self._send(request, body, dropped)
            except anthropic.BadRequestError as exc:
                field = self._refused_sampling(exc, body)
                if field is not None:
                    self._unsupported.add(field)  # re-sent at once without it
                    continue
                if not relearned and self.learn_refusal(describe_status(exc), body) == "thinking":
                    relearned = True   # the thinking form or level was refused: re-sent once, corrected
                    continue
                raise self._mapped(exc) from None
            except (anthropic.AnthropicError, ValueError) as exc:
                raise self._mapped(exc) from None
        raise ModelError(f"{self.spec}: the API refused every sampling parameter combination")

    def _mapped(self, exc):
        anthropic = sdk()
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
        anthropic = sdk()
        kwargs = dict(api_key=self._key(), max_retries=0, timeout=timeout or self.timeout)
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return anthropic.Anthropic(**kwargs)

    def request_body(self, params) -> tuple[dict, list[str]]:
        """The sampling part of a Messages request for ``params`` (flat: a batch request's ``params`` take them as
        they are) and the parameters dropped from it. With an effort, the model's thinking mode is settled first
        (the store, else the Models API, else its name)."""
        if R.active(params):
            self.resolve_mode_sync(params)
        body, dropped = self._sampling(params)
        return {**{k: v for k, v in body.items() if k != "extra_body"}, **body.get("extra_body", {})}, dropped

    def error_for(self, exc) -> Exception:
        """The RetryableError / ModelError (redacted) for an SDK exception."""
        return self._mapped(exc)

    def learn_refusal(self, text: str, body: dict) -> str | None:
        """If an error text refuses a sampling parameter of ``body``, drop it from later requests and return it; if
        it refuses the thinking form or effort level of ``body``, correct the model's mode (kept in the store) and
        return ``"thinking"``; else None."""
        field = self._refused_in_text(text, body.get("extra_body", body))
        if field is not None:
            self._unsupported.add(field)
            return field
        mode = self.thinking_mode().learn_from_refusal(text, body)
        if mode is not None:
            self._set_mode(mode, keep=True)
            return "thinking"
        return None

    async def aclose(self) -> None:
        await self._clients.aclose()

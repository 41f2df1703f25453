"""Any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, LM Studio, ``python -m core serve-local``…).

Spec ``openai-compatible/<model>`` with a base URL (``--base-url http://host:8000/v1`` or ``OPENAI_BASE_URL``).

The contract of these servers is the OpenAI HTTP API itself — ``POST {base_url}/chat/completions`` with a JSON body,
a JSON ``chat.completion`` back — so this provider speaks it directly over a pooled ``aiohttp`` session instead of
going through the OpenAI SDK (the paid ``openai/`` and ``anthropic/`` paths keep the official SDKs): ``aiohttp``'s C
HTTP parser costs the event loop a tenth of the SDK's CPU per call and skips the SDK's import (figures:
docs/RUNNER.md; ``bench/runner_throughput.py --sdk-ceiling`` measures them). An injected ``http_client`` (an ``httpx2`` or ``httpx``
``AsyncClient``, e.g. with a ``MockTransport`` replaying payloads in tests) is used instead of the session.

Errors map exactly like the SDK paths (``core.models.providers.sdk_common``): 408/409/425/429/5xx → RetryableError with the
server's ``retry-after-ms`` / ``Retry-After``; timeouts and connection/protocol errors → RetryableError; a 2xx body
that is not JSON, has no choices or an empty message → RetryableError; 401/403/404/other 4xx → ModelError. Messages are
redacted (the key never appears in them).

Sampling parameters: temperature, top_p, top_k, max_tokens, seed, stop — all in the JSON body (servers that do not
know ``top_k`` ignore it). A stop sequence is cut from the reply by the server; a closing ``</answer>`` is put back
when the reply's answer tag was left open (``base.restore_stop``). ``answer_format: constrained`` sends the answer's
form the ways servers understand it: ``grammar`` (GBNF: llama.cpp's server, llama-cpp-python's server and so
``serve-local``), ``guided_regex`` and ``structured_outputs.regex`` (vLLM, older and newer). A server that knows none
of them ignores them; a reply that does not have the form (and was not cut by max_tokens) shows it, and the call
then lists ``answer_format`` in ``Completion.dropped_params``. If the server rejects temperature or top_p as unsupported (HTTP 400), that parameter is dropped
and the call re-sent once at once (remembered for this model object); drops are listed in
``Completion.dropped_params``.

Reasoning: ``reasoning_effort`` (other than ``none``) is sent as ``reasoning_effort`` (as data/reasoning/efforts.yaml
names it; a refused value whose error lists the values taken is re-sent once at the nearest of them) and as the
chat-template switch ``chat_template_kwargs: {"enable_thinking": true}`` (``false`` and no effort for ``off``), with
the reply cap raised by the level's allowance and no stop sequences while it thinks (they would end the reply inside
its reasoning: an ``</answer>`` the model writes while thinking); a server that refuses either (HTTP 400 naming it) has it dropped and the call re-sent. The reply's ``reasoning_content`` (or
``reasoning``, newer vLLM) is stored apart from the answer, as is an inline ``<think>…</think>`` block, and
``usage.completion_tokens_details.reasoning_tokens`` is stored as the reasoning tokens (core/models/reasoning.py).

Key: the explicit key or OPENAI_COMPATIBLE_API_KEY, sent as ``Authorization: Bearer``. Never OPENAI_API_KEY (it must not
travel to a third-party server). Without a key no Authorization header is sent at all.

Credentials in the base URL (``http://user:password@host:8000/v1``, e.g. a reverse proxy with basic auth) are the
most specific statement about that endpoint, so they win: they are sent as ``Authorization: Basic`` and no key is
sent then (an environment-wide OPENAI_COMPATIBLE_API_KEY meant for another server never reaches this one); the URL
itself is used without them. The password joins the secrets every message is redacted of (core/redaction.py).

Connection pool: up to ``POOL_LIMIT`` connections, all kept alive, so every concurrency slot of the runner keeps its
connection (a pool or keep-alive limit below the concurrency would queue calls or reopen connections all the time).
HTTP(S)_PROXY / NO_PROXY from the environment are honoured, as by the SDKs.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import logging
import os
import re
import time
import urllib.request
from importlib import import_module
from urllib.parse import unquote, urlsplit, urlunsplit

from core.models import reasoning as R
from core.models.base import BaseModel, Completion, ModelError, Request, RetryableError, redact, restore_stop
from core.models.pricing import estimate_cost
from core.models.providers import ProviderInfo, register
from core.models.providers.sdk_common import ClientPerLoop, error_text, map_status
from core.models.retry_policy import reply_problem
from core.redaction import redact_url, remember, remember_basic

log = logging.getLogger(__name__)

INFO = ProviderInfo("openai-compatible", "openai-compatible/smollm2", 8,
                    ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "answer_format"),
                    "OPENAI_COMPATIBLE_API_KEY", True, "vLLM, Ollama, llama.cpp server, LM Studio…; top_k sent in "
                    "the body; constrained answers where the server offers a grammar or guided decoding",
                    key_optional=True, constrained=True, choices=("openai-compatible/…",))
KEY_ENV = INFO.key_env
KEYLESS_PLACEHOLDER = None   # kept for old imports: a keyless endpoint now gets no Authorization header at all
POOL_LIMIT = 1024            # connections (open and idle kept alive); the runner's concurrency is far below
_UNSUPPORTED = re.compile(r"unsupported (parameter|value)|not supported|does not support|unrecognized|"
                          r"extra (inputs|fields) are not permitted", re.I)
# body fields a server may refuse by name (HTTP 400): dropped and the call re-sent without them
_REFUSABLE = ("temperature", "top_p", "reasoning_effort", "chat_template_kwargs")


class _Revalued(Exception):
    """HTTP 400 refusing the reasoning_effort value and listing the values taken (internal: nearest, re-sent)."""

    def __init__(self, values: set[str]):
        self.values = values


class _Rejected(Exception):
    """HTTP 400 naming a sampling parameter as unsupported (internal: triggers drop-and-resend)."""

    def __init__(self, field: str):
        self.field = field


REPLY_CAP_ENV = "STUDIO_MAX_REPLY_BYTES"
DEFAULT_REPLY_CAP = 4 * 1024 * 1024   # bytes of one reply body; a set-operation answer is a few hundred


def max_reply_bytes() -> int:
    """The cap on one reply body, in bytes ($STUDIO_MAX_REPLY_BYTES, default 4 MiB)."""
    raw = os.environ.get(REPLY_CAP_ENV, "")
    return int(raw) if raw.strip().isdigit() and int(raw) > 0 else DEFAULT_REPLY_CAP


def _http_lib(client):
    """The httpx-family module an (injected) client belongs to: ``httpx2`` (ours, the SDKs') or classic ``httpx``."""
    root = type(client).__module__.split(".", 1)[0]
    if root not in ("httpx", "httpx2"):
        raise ModelError(f"http_client must be an httpx2 or httpx AsyncClient, got {type(client).__name__}")
    return import_module(root)


def _label_url(base_url: str) -> str:
    """The base URL without user:password@ (for messages)."""
    return redact_url(base_url)


def _split_credentials(base_url: str) -> tuple[str, tuple[str, str] | None]:
    """(the URL without ``user:password@``, (user, password) or None). Percent-escapes in them are decoded."""
    parts = urlsplit(base_url)
    if parts.username is None and parts.password is None:
        return base_url, None
    netloc = parts.netloc.rpartition("@")[2]
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    remember_basic(user, password)   # the password and the token of the header it makes
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), (user, password)


@register(INFO)
class OpenAICompatibleModel(BaseModel):
    supported_params = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "answer_format",
                        "reasoning_effort")
    constrained = True

    def __init__(self, spec: str, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60, http_client=None):
        super().__init__(spec, name)
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if not base_url:
            raise ModelError(f"{spec}: an openai-compatible model needs a base URL (e.g. --base-url "
                             "http://127.0.0.1:8080/v1)")
        if not re.match(r"^https?://", base_url):
            raise ModelError(f"{spec}: base URL must start with http:// or https://, got {base_url!r}")
        base_url, basic = _split_credentials(base_url)
        self.base_url = base_url
        self._url = base_url.rstrip("/") + "/chat/completions"
        self.timeout = float(timeout)
        # Never fall back to OPENAI_API_KEY here: that key must not be sent to a third-party endpoint.
        self.__key = api_key or os.environ.get(KEY_ENV) or None
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if basic is not None:      # credentials in the URL win (see the module docstring)
            self.__key = basic[1] or basic[0]
            token = base64.b64encode(f"{basic[0]}:{basic[1]}".encode("utf-8")).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        elif self.__key:
            self._headers["Authorization"] = f"Bearer {self.__key}"
        remember(self.__key)
        self._learned_drops: set[str] = set()
        self._accepted: set[str] | None = None   # reasoning_effort values the server listed when it refused one
        self._lib = _http_lib(http_client) if http_client is not None else None
        self._clients = ClientPerLoop(self._make_client, http_client)
        self._closer = None          # async generator tying the aiohttp session to its event loop (see _tie_to_loop)
        self._closer_for = None

    @property
    def _label(self) -> str:
        return f"{self.spec} at {_label_url(self.base_url)}"

    def __repr__(self) -> str:   # the headers hold the key: never part of the repr
        return f"<{type(self).__name__} {self.spec}>"

    __str__ = __repr__

    def _make_client(self, http_client):
        if http_client is not None:
            return http_client
        import aiohttp

        connector = aiohttp.TCPConnector(limit=POOL_LIMIT, limit_per_host=0, keepalive_timeout=30)
        return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=self.timeout),
                                     auto_decompress=True, raise_for_status=False)

    def prepare(self) -> None:
        """Import aiohttp and look up the proxy now (the runner calls this in a thread during its setup)."""
        if self._lib is None:
            import aiohttp  # noqa: F401
        self._proxy_for_url()

    def _proxy_for_url(self) -> str | None:
        """HTTP(S)_PROXY for the base URL unless NO_PROXY excludes its host (looked up once, not per call)."""
        if not hasattr(self, "_proxy"):
            parts = urlsplit(self.base_url)
            proxies = urllib.request.getproxies()
            proxy = proxies.get(parts.scheme)
            if proxy and urllib.request.proxy_bypass(parts.hostname or ""):
                proxy = None
            self._proxy = proxy or None
        return self._proxy

    def _sampling(self, p) -> tuple[dict, list[str]]:
        body: dict = {}
        dropped: list[str] = []
        for field in ("temperature", "top_p"):
            value = getattr(p, field)
            if value is None:
                continue
            if field in self._learned_drops:
                dropped.append(field)
            else:
                body[field] = value
        if p.top_k is not None:
            body["top_k"] = p.top_k
        body["max_tokens"] = p.max_tokens
        if p.seed is not None:
            body["seed"] = p.seed
        if p.stop:
            if R.thinks(p):   # a stop sequence would also end the reply inside its reasoning
                dropped.append("stop")
            else:
                body["stop"] = list(p.stop)
        if R.active(p):
            off = p.reasoning_effort == "off"   # said by the chat-template switch alone
            level = None if off else R.openai_level(p.reasoning_effort, "openai-compatible", self._accepted)
            body["max_tokens"] = p.max_tokens + R.budget(level or p.reasoning_effort)
            if level is not None and "reasoning_effort" not in self._learned_drops:
                body["reasoning_effort"] = R.openai_value(level, "openai-compatible")
                dropped.extend(R.changed(p.reasoning_effort, level))
            elif not off:
                dropped.append("reasoning_effort")
            if "chat_template_kwargs" in self._learned_drops:
                dropped.append("chat_template_kwargs")
            else:
                body["chat_template_kwargs"] = R.template_switch(p)
        return body, dropped

    @staticmethod
    def _constraint(request: Request) -> dict:
        if request.params.answer_format not in ("constrained", "members"):
            return {}
        if request.shape is None:
            raise ModelError("answer format 'constrained' needs the answer's form (the task gives it)")
        return {"grammar": request.shape.gbnf, "guided_regex": request.shape.regex,
                "structured_outputs": {"regex": request.shape.regex}}

    # -- the call --------------------------------------------------------------------------------------------
    async def complete(self, request: Request) -> Completion:
        body, dropped = self._sampling(request.params)
        body.update(self._constraint(request))
        revalued = False
        for _ in range(len(_REFUSABLE) + 1):
            try:
                return await self._send(request, body, dropped, revalued=revalued)
            except _Revalued as exc:
                self._accepted, revalued = exc.values, True
                body, dropped = self._sampling(request.params)
                body = {k: v for k, v in body.items() if k not in self._learned_drops}
                body.update(self._constraint(request))
            except _Rejected as exc:
                self._learned_drops.add(exc.field)
                body = {k: v for k, v in body.items() if k != exc.field}
                dropped = dropped + [exc.field]
        return await self._send(request, body, dropped, resend=True)

    async def _send(self, request: Request, body: dict, dropped: list[str], resend: bool = False,
                    revalued: bool = False) -> Completion:
        payload = {"model": self.name, "messages": [{"role": "user", "content": request.prompt}], **body}
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        started = time.perf_counter()
        if self._lib is None:
            status, headers, raw, reason = await self._post_aiohttp(data)
        else:
            status, headers, raw, reason = await self._post_httpx(data)
        latency_ms = (time.perf_counter() - started) * 1000.0
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            doc = None
        if status >= 300:
            text = error_text(doc, raw[:300].decode("utf-8", "replace") or reason)
            if status == 400 and not resend and not revalued and "reasoning_effort" in body:
                values = R.accepted_values(text)
                if values and body["reasoning_effort"] not in values:
                    raise _Revalued(values)
            if status == 400 and not resend:
                field = self._rejected_sampling_field(text, body)
                if field is not None:
                    raise _Rejected(field)
            raise map_status(status, headers, text, label=self._label, key_env=KEY_ENV, secret=self.__key)
        if not isinstance(doc, dict):
            raise RetryableError(f"{self._label}: malformed JSON in response body")
        done = self._completion(doc, latency_ms, dropped, request.params.stop,
                                R.sent_json({k: body[k] for k in R.EFFORT_FIELDS if k in body}))
        if request.shape is not None and request.params.answer_format in ("constrained", "members") \
                and done.finish_reason != "length" and not request.shape.matches(done.text):
            # the server ignored the constraint (it knows none of the fields sent): say so with the call
            done = dataclasses.replace(done, dropped_params=tuple(dict.fromkeys([*done.dropped_params,
                                                                                  "answer_format"])))
        return done

    async def _post_aiohttp(self, data: bytes):
        """POST through the pooled aiohttp session → (status, headers, body bytes, reason)."""
        import aiohttp

        session = self._clients.get()
        if self._closer_for is not session:
            await self._tie_to_loop(session)
        try:
            async with session.post(self._url, data=data, headers=self._headers,
                                    proxy=self._proxy_for_url()) as resp:
                raw = await self._read_capped(resp.content.iter_chunked(65536), resp.headers)
                return resp.status, resp.headers, raw, resp.reason or ""
        except asyncio.TimeoutError:   # aiohttp's total/connect/read timeouts (the runner's own is a cancel)
            raise RetryableError(f"{self._label}: request timed out") from None
        except aiohttp.ClientConnectionError as exc:
            raise RetryableError(f"{self._label}: connection error ({type(exc).__name__})", connection=True) from None
        except aiohttp.ClientPayloadError as exc:
            raise RetryableError(f"{self._label}: connection error ({type(exc).__name__})") from None
        except aiohttp.InvalidURL:
            raise ModelError(f"{self._label}: invalid base URL") from None
        except aiohttp.ClientError as exc:   # a malformed status line or headers and the like
            raise RetryableError(f"{self._label}: {type(exc).__name__}: "
                                 f"{redact(str(exc), self.__key)[:200]}") from None

    async def _post_httpx(self, data: bytes):
        """POST through an injected httpx2/httpx AsyncClient → (status, headers, body bytes, reason)."""
        client, lib = self._clients.get(), self._lib
        try:
            async with client.stream("POST", self._url, content=data, headers=self._headers,
                                     timeout=self.timeout) as resp:
                raw = await self._read_capped(resp.aiter_bytes(), resp.headers)
                return resp.status_code, resp.headers, raw, resp.reason_phrase
        except lib.TimeoutException:
            raise RetryableError(f"{self._label}: request timed out") from None
        except lib.TransportError as exc:   # connect/read/write errors, protocol errors, proxy errors
            raise RetryableError(f"{self._label}: connection error ({type(exc).__name__})",
                                 connection=isinstance(exc, lib.NetworkError)) from None
        except lib.HTTPError as exc:        # decoding errors and the like
            raise RetryableError(f"{self._label}: {type(exc).__name__}: "
                                 f"{redact(str(exc), self.__key)[:200]}") from None

    async def _read_capped(self, chunks, headers) -> bytes:
        """The body, read as it streams and refused past ``max_reply_bytes()`` (an endless or huge body must not
        fill the memory: a few endless streams reach gigabytes). Not retried: the server would send it again."""
        cap = max_reply_bytes()
        declared = headers.get("Content-Length") if headers is not None else None
        if declared and declared.isdigit() and int(declared) > cap:
            raise ModelError(f"{self._label}: reply of {int(declared):,} bytes is over the cap of {cap:,} bytes "
                             f"(${REPLY_CAP_ENV})")
        parts, size = [], 0
        async for chunk in chunks:
            size += len(chunk)
            if size > cap:
                raise ModelError(f"{self._label}: reply over the cap of {cap:,} bytes (${REPLY_CAP_ENV}); "
                                 "stopped reading it")
            parts.append(chunk)
        return b"".join(parts)

    @staticmethod
    def _rejected_sampling_field(text: str, body: dict) -> str | None:
        if not _UNSUPPORTED.search(text):
            return None
        for field in _REFUSABLE:
            if field in body and field in text:
                return field
        return None

    def _completion(self, doc: dict, latency_ms: float, dropped: list[str], stop=None, sent: str | None = None
                    ) -> Completion:
        problem = reply_problem(doc)   # the retry policy's test, shared with the Ray engine's HTTP actors
        if problem is not None:
            raise RetryableError(f"{self._label}: {problem}")
        choice = doc["choices"][0]
        message = choice["message"]
        text = message["content"]
        finish = choice.get("finish_reason")
        finish = finish if isinstance(finish, str) else None
        thought = message.get("reasoning_content") or message.get("reasoning")
        thought = thought if isinstance(thought, str) and thought.strip() else None
        if thought is None:
            text, thought = R.split_inline(text)
            if not text.strip():
                raise RetryableError(f"{self._label}: empty answer after the reasoning (finish_reason={finish})")
        usage = doc.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        t_in, t_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
        details = usage.get("completion_tokens_details")
        t_reason = R.int_count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
        return Completion(
            text=restore_stop(text, stop, finish),
            tokens_in=t_in if isinstance(t_in, int) and not isinstance(t_in, bool) else None,
            tokens_out=t_out if isinstance(t_out, int) and not isinstance(t_out, bool) else None,
            latency_ms=latency_ms,
            cost_usd=estimate_cost(self.spec, t_in, t_out),   # None: a self-hosted endpoint has no price
            finish_reason=finish,
            dropped_params=tuple(dict.fromkeys(dropped)),
            reasoning=thought,
            tokens_reasoning=t_reason,
            cost_reasoning_usd=R.reasoning_cost(self.spec, t_reason),
            reasoning_sent=sent,
        )

    async def _tie_to_loop(self, session) -> None:
        """Close the session when its event loop shuts down, for callers that never call ``aclose``.

        ``asyncio.run`` closes every unfinished async generator of its loop (``shutdown_asyncgens``) before closing
        the loop, so the ``finally`` below closes the session and its connections there; without it a caller doing
        ``asyncio.run(model.complete(...))`` would leave an unclosed session behind."""
        async def close_with_loop():
            try:
                yield
            finally:
                if not session.closed:
                    await session.close()

        closer = close_with_loop()
        await closer.__anext__()
        self._closer, self._closer_for = closer, session   # a strong reference: the loop only holds a weak one

    async def aclose(self) -> None:
        closer, self._closer, self._closer_for = self._closer, None, None
        if closer is not None:
            try:
                await closer.aclose()
            except Exception as exc:  # noqa: BLE001 — a session of a loop that is gone: nothing left to release
                log.debug("closing the HTTP session failed (%s)", type(exc).__name__)
        await self._clients.aclose()

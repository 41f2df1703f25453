"""``local/default`` (Qwen2.5-Coder-1.5B-Instruct) and ``local/smollm2`` (SmolLM2-135M-Instruct): the embedded GGUF
models (core/models/providers/embedded.py says which file each is) run in-process by llama-cpp-python. No key, no
download.

The model is loaded once per process behind a lock and shared by every LocalLlamaModel. llama.cpp contexts are not
thread-safe, so one call runs at a time (default concurrency 1); each call runs in a worker thread
(``asyncio.to_thread``) so the event loop stays free. Prompts go through the chat template stored in the GGUF file.
All sampling parameters are honoured (temperature, top_p, top_k, max_tokens, seed); llama.cpp's extra min_p filter
is switched off so that the stored parameters are the whole sampling setup (a parameter left as None takes
llama-cpp-python's default). Stop sequences end the reply *after* the sequence (``</answer>`` stays in the text, as
the answer parsers expect it), and ``answer_format: constrained`` decodes under the request's llama.cpp grammar
(``AnswerShape.gbnf``). A call that is cancelled (e.g.
by the runner's per-call timeout) stops generating within one token and raises RetryableError, so it never keeps
the shared model busy in the background. A call that uses up the model's ``timeout`` (seconds, from get_model) ends
like one that hits max_tokens: the text so far, with finish_reason "timeout" — retrying would only repeat the same
slow generation (a 135M model often rambles to max_tokens; on a busy 2-core machine that can take minutes).

Threads: STUDIO_LLAMA_THREADS (default: every physical core for local/default, half of them for local/smollm2). On a shared or
oversubscribed machine more threads than free cores makes llama.cpp's busy-waiting OpenMP workers collapse (a few
tokens take minutes instead of seconds; docs/RUNNER.md), so the default is conservative and OMP_WAIT_POLICY=PASSIVE is set unless the environment says otherwise.
Context: STUDIO_LLAMA_CTX (default 4096 tokens).
Warm-up: when the model loads (in the background while a page renders, or in the runner's setup) the chat template's
opening, which every prompt shares, is evaluated into the KV cache, so the first call pays only for its own part;
STUDIO_LLAMA_WARM=0 turns that off.
Reasoning effort is not supported (neither embedded model thinks): it is dropped and listed in ``dropped_params``.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import os
import threading
import time
import weakref

from core.models.base import BaseModel, Completion, ModelError, Request, RetryableError
from core.models.providers import ProviderInfo, embedded, register

log = logging.getLogger(__name__)

DEFAULT_CTX = 4096

_load_lock = threading.Lock()   # guards loading
_call_locks: dict[str, threading.Lock] = {}   # one inference at a time on each shared context
# loaded models by key: a registry under ``_load_lock`` (a model file is never loaded twice), each freed at exit
_llamas: dict[str, object] = {}
_clock = time.monotonic  # the time budget's clock (a test replaces it with a fake one)


def model_path(name: str = "smollm2") -> str:
    """Path of an embedded model's GGUF file (core/models/providers/embedded.py)."""
    return embedded.model_path(name)


def physical_cores() -> int:
    """The physical cores this process may run on: the CPUs of its affinity mask, hyper-thread siblings counted once
    (Linux topology files; elsewhere, or when they cannot be read, every logical CPU counts)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 2
    cores = set()
    for cpu in cpus:
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as fh:
                cores.add(fh.read().strip())
        except OSError:
            cores.add(str(cpu))
    return max(1, len(cores))


def n_threads(name: str = "smollm2") -> int:
    """STUDIO_LLAMA_THREADS, else the model's default: every physical core for local/default (one model on a machine
    is the demo's case; half the cores nearly doubles its time per item, hyper-threads add nothing to llama.cpp's
    matrix work), half of them for the small model."""
    raw = os.environ.get("STUDIO_LLAMA_THREADS", "")
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    cores = physical_cores()
    return cores if embedded.resolve(name).threads == "all" else max(1, cores // 2)


def n_ctx() -> int:
    raw = os.environ.get("STUDIO_LLAMA_CTX", "")
    return int(raw) if raw.isdigit() and int(raw) >= 256 else DEFAULT_CTX


def call_lock(name: str = "smollm2") -> threading.Lock:
    key = embedded.resolve(name).key
    with _load_lock:
        return _call_locks.setdefault(key, threading.Lock())


def get_llama(name: str = "smollm2"):
    """The process-wide llama_cpp.Llama instance of an embedded model (loaded on first use)."""
    key = embedded.resolve(name).key
    llama = _llamas.get(key)
    if llama is not None:
        return llama
    with _load_lock:
        if key not in _llamas:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read by the OpenMP runtime when it loads
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ModelError(f"local/{key} needs llama-cpp-python (pip install llama-cpp-python)") from None
            path = model_path(key)
            llama = Llama(model_path=path, n_ctx=n_ctx(), n_threads=n_threads(key),
                          n_threads_batch=n_threads(key), n_batch=512, verbose=False)
            atexit.register(close_llama_at_exit, llama)
            if warm_enabled():
                warm_chat_prefix(llama)
            _llamas[key] = llama      # published only once warm: no call runs on it before
    return _llamas[key]


def warm_enabled() -> bool:
    """STUDIO_LLAMA_WARM (default on; ``0`` turns it off): evaluate the chat template's opening when the model loads."""
    return os.environ.get("STUDIO_LLAMA_WARM", "1").strip() != "0"


_SENTINEL = "\x00prompt\x00"


def chat_prefix_tokens(llama) -> list[int]:
    """The tokens every prompt starts with once the model's chat template wraps it as the user's message (for
    Qwen2.5: the default system message and the user turn's header, 24 tokens), tokenized as a call tokenizes its
    whole prompt. Empty when the template cannot be rendered or puts nothing before the message."""
    import jinja2

    try:
        rendered = chat_formatter(llama)(messages=[{"role": "user", "content": _SENTINEL}])
    except (ModelError, jinja2.TemplateError, TypeError, ValueError) as exc:
        log.info("the chat template could not be rendered for warming: %s", exc)
        return []
    head, found, _ = rendered.prompt.partition(_SENTINEL)
    if not found or not head:
        return []
    return llama.tokenize(head.encode("utf-8"), add_bos=not rendered.added_special, special=True)


def warm_chat_prefix(llama) -> int:
    """Evaluate the chat template's opening into the KV cache, so the first call evaluates only its own part of the
    prompt: llama-cpp-python reuses the cached prefix a prompt shares with what the context holds (as it does
    between consecutive calls). The tokens and positions are those of every call, but llama.cpp's arithmetic can
    depend on how a prompt is cut into batches, so that the first replies stay as they are cold is checked, not
    assumed (tests/models/test_warm_prefix.py). Returns the number of tokens evaluated."""
    tokens = chat_prefix_tokens(llama)
    if tokens:
        llama.reset()
        llama.eval(tokens)
    return len(tokens)


def preload(name: str = "default") -> bool:
    """Start loading an embedded model in a background thread (a page calls this while it renders, so the first
    call does not wait for the load). False when its files are not installed (nothing is started)."""
    if not embedded.installed(embedded.resolve(name)):
        return False

    def load():
        try:
            get_llama(name)
        except ModelError as exc:     # said again, to the user, by the first call that needs the model
            log.warning("preloading local/%s failed: %s", name, exc)

    threading.Thread(target=load, name=f"preload-{name}", daemon=True).start()
    return True


def close_llama_at_exit(llama) -> None:
    """Free a llama.cpp instance while the interpreter is still whole. Left to ``Llama.__del__`` at shutdown, the
    native library may already be unloaded and Python prints an ignored TypeError on every exit."""
    try:
        llama.close()
    except Exception as exc:  # noqa: BLE001 — best effort at exit
        log.debug("freeing a llama.cpp instance at exit failed (%s)", type(exc).__name__)


class _Interrupt:
    """A llama.cpp stopping criterion that ends generation once the call is cancelled, its time budget is spent, or
    the text so far contains a stop sequence — so a timed-out or cancelled call frees the shared model within one
    token instead of running to max_tokens in the background, and a stop sequence stays in the reply.

    A stopping criterion (checked after every token) rather than forcing end-of-sequence through the logits: under an
    answer grammar the end of sequence may not be allowed yet, and a sampler left without any allowed token aborts
    the process."""

    def __init__(self, timeout: float | None, cancel: threading.Event | None, stop: tuple[str, ...] = (),
                 detokenize=None):
        self.deadline = None if timeout is None else _clock() + timeout
        self.cancel = cancel
        self.stop = tuple(s.encode("utf-8") for s in stop)
        self.detokenize = detokenize
        self.n_prompt: int | None = None
        self.why: str | None = None

    def _stopped(self, input_ids) -> bool:
        if not self.stop or self.detokenize is None:
            return False
        if self.n_prompt is None:          # the first check comes before any generated token is in input_ids
            self.n_prompt = len(input_ids)
            return False
        tail = [int(t) for t in input_ids[max(self.n_prompt, len(input_ids) - 24):]]
        text = self.detokenize(tail) if tail else b""
        return any(s in text for s in self.stop)

    def __call__(self, input_ids, logits) -> bool:
        if self.why is None:
            if self.cancel is not None and self.cancel.is_set():
                self.why = "cancelled"
            elif self.deadline is not None and _clock() > self.deadline:
                self.why = "timeout"
            elif self._stopped(input_ids):
                self.why = "stop"
        return self.why is not None


class _FormatterWithInterrupt:
    """The GGUF's own chat template (what ``create_chat_completion`` uses for this model), with the call's
    ``_Interrupt`` added to the template's stopping criteria — ``create_chat_completion`` takes no stopping
    criteria of its own, a chat formatter can bring them."""

    def __init__(self, base, interrupt: _Interrupt):
        self.base, self.interrupt = base, interrupt

    def __call__(self, **kwargs):
        from llama_cpp import StoppingCriteriaList
        from llama_cpp.llama_chat_format import ChatFormatterResponse

        r = self.base(**kwargs)
        return ChatFormatterResponse(prompt=r.prompt, stop=r.stop, added_special=r.added_special,
                                     stopping_criteria=StoppingCriteriaList([*(r.stopping_criteria or []),
                                                                             self.interrupt]))


_FORMATTERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # Llama -> its chat formatter


def _token_text(llama, token: int) -> str:
    """The text of a special token (through the public ``detokenize``: for BOS/EOS the vocabulary's own text)."""
    return llama.detokenize([token], special=True).decode("utf-8", "replace") if token != -1 else ""


def chat_formatter(llama):
    """The model's chat template as a llama-cpp-python formatter, built as ``Llama`` builds it (once per model; the
    formatters are kept by a weak mapping, so a freed model takes its formatter with it)."""
    hit = _FORMATTERS.get(llama)
    if hit is not None:
        return hit
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise ModelError("the model file carries no chat template")
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(template=template, stop_token_ids=[eos],
                                    eos_token=_token_text(llama, eos), bos_token=_token_text(llama, bos))
    _FORMATTERS[llama] = formatter
    return formatter


@functools.lru_cache(maxsize=256)
def grammar_for(gbnf: str):
    """The compiled llama.cpp grammar of ``gbnf``, cached by text: parsing one costs milliseconds (ModelError for a
    grammar llama.cpp refuses; a refusal is not cached)."""
    from llama_cpp import LlamaGrammar

    try:
        return LlamaGrammar.from_string(gbnf, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise ModelError(f"the answer grammar was refused by llama.cpp: {exc}") from None


INFO = ProviderInfo("local", "local/default", 1,
                    ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "answer_format"), None, False,
                    "embedded via llama.cpp: local/default = Qwen2.5-Coder-1.5B-Instruct, local/smollm2 = "
                    "SmolLM2-135M-Instruct; no key, no download; constrained answers through a llama.cpp grammar",
                    constrained=True, in_process=True, choices=("local/default", "local/smollm2"))


@register(INFO)
class LocalLlamaModel(BaseModel):
    supported_params = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "answer_format")
    constrained = True

    def __init__(self, spec: str = "local/smollm2", name: str = "smollm2", *, timeout: float | None = None):
        super().__init__(spec, name)
        self.key = embedded.resolve(name).key
        self.timeout = timeout  # generation budget in seconds (None = no limit); checked after every token
        self.last_interrupt: str | None = None  # "timeout" / "cancelled" if the last call was cut short

    @classmethod
    def from_spec(cls, spec: str, name: str, *, timeout: float | None = None, **_ignored) -> LocalLlamaModel:
        key = embedded.resolve(name).key
        return cls(f"local/{key}", key, timeout=timeout)

    def validate(self) -> None:
        m = embedded.resolve(self.key)
        if not embedded.installed(m):
            model_path(self.key)      # says which package is missing

    def prepare(self) -> None:
        """Assemble (first use) and load the model now — the runner calls this in a thread during its setup, so
        the first item does not pay for it and a run says "warming up" meanwhile."""
        get_llama(self.key)

    def complete_sync(self, request: Request, cancel: threading.Event | None = None) -> Completion:
        """Blocking call (used by ``complete`` in a worker thread, and by the benchmark)."""
        from llama_cpp.llama_chat_format import chat_formatter_to_chat_completion_handler

        llama = get_llama(self.key)
        p = request.params
        # only the stored parameters shape sampling: min_p=0 (llama-cpp-python would add min_p=0.05) and no penalties
        # (the chat handler called below defaults to repeat_penalty=1.1, create_chat_completion to 1.0)
        kwargs = dict(max_tokens=p.max_tokens, min_p=0.0, repeat_penalty=1.0, presence_penalty=0.0,
                      frequency_penalty=0.0)
        if p.temperature is not None:
            kwargs["temperature"] = p.temperature
        if p.top_p is not None:
            kwargs["top_p"] = p.top_p
        if p.top_k is not None:
            kwargs["top_k"] = p.top_k
        if p.seed is not None:
            kwargs["seed"] = p.seed
        if p.answer_format in ("constrained", "members"):
            if request.shape is None:
                raise ModelError(f"{self.spec}: answer format 'constrained' needs the answer's grammar")
            kwargs["grammar"] = grammar_for(request.shape.gbnf)
        messages = [{"role": "user", "content": request.prompt}]
        with call_lock(self.key):
            if cancel is not None and cancel.is_set():
                self.last_interrupt = "cancelled"
                raise RetryableError(f"{self.spec}: call cancelled before it started")
            started = time.perf_counter()
            interrupt = _Interrupt(self.timeout, cancel, tuple(p.stop or ()), llama.detokenize)
            handler = chat_formatter_to_chat_completion_handler(_FormatterWithInterrupt(chat_formatter(llama),
                                                                                        interrupt))
            try:
                out = handler(llama=llama, messages=messages, **kwargs)
            except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
                raise ModelError(f"{self.spec}: {exc}") from None
            latency_ms = (time.perf_counter() - started) * 1000.0
        self.last_interrupt = interrupt.why if interrupt.why != "stop" else None
        if interrupt.why == "cancelled":
            raise RetryableError(f"{self.spec}: call cancelled")
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        if not text.strip():
            raise RetryableError(f"{self.spec}: empty completion (finish_reason={choice.get('finish_reason')})")
        usage = out.get("usage") or {}
        return Completion(
            text=text,
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
            latency_ms=latency_ms,
            cost_usd=0.0,
            finish_reason="timeout" if interrupt.why == "timeout" else choice.get("finish_reason"),
            dropped_params=("reasoning_effort",) if p.reasoning_effort != "none" else (),
        )

    async def complete(self, request: Request) -> Completion:
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self.complete_sync, request, cancel)
        except asyncio.CancelledError:  # e.g. the runner's wait_for timeout or a cancelled run
            cancel.set()                # the worker thread ends generation at the next token
            raise

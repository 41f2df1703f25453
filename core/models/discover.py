"""OpenAI-compatible servers running on this machine, found rather than typed.

``local_servers()`` asks ``GET /v1/models`` on loopback at the usual ports — Ollama 11434, LM Studio 1234, vLLM 8000,
llama.cpp's server and ``python -m core serve-local`` 8080 (more in ``STUDIO_LOCAL_PORTS``, comma-separated) — all
at once, each with a short timeout, and returns what answered: base URL, what usually listens there, model names.
It never takes longer than ``budget`` seconds (default 0.5): a port that has not answered by then is left out. The
answer is kept for ``ttl`` seconds (default 10), so a page that asks on every rerun pays once.

No key is sent (a server that wants one is still listed, with no models, and says so). Proxies are bypassed:
this is loopback only.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

HOST = "127.0.0.1"
KNOWN_PORTS: dict[int, str] = {11434: "Ollama", 1234: "LM Studio", 8000: "vLLM", 8080: "llama.cpp / serve-local"}
BUDGET = 0.5
TTL = 10.0
MAX_MODELS = 50


@dataclass(frozen=True)
class LocalServer:
    port: int
    kind: str                 # what usually listens on that port (a guess by port: servers do not say)
    base_url: str
    models: tuple[str, ...]
    note: str = ""            # e.g. "needs a key" when /v1/models answered 401


def ports() -> dict[int, str]:
    """The ports asked: the usual ones plus STUDIO_LOCAL_PORTS."""
    out = dict(KNOWN_PORTS)
    for raw in os.environ.get("STUDIO_LOCAL_PORTS", "").split(","):
        raw = raw.strip()
        if raw.isdigit() and 0 < int(raw) < 65536:
            out.setdefault(int(raw), "OpenAI-compatible server")
    return out


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _probe(port: int, kind: str, timeout: float) -> LocalServer | None:
    base = f"http://{HOST}:{port}/v1"
    try:
        with _OPENER.open(urllib.request.Request(f"{base}/models", headers={"Accept": "application/json"}),
                          timeout=timeout) as resp:
            doc = json.loads(resp.read(1_000_000).decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return LocalServer(port, kind, base, (), "needs a key (OPENAI_COMPATIBLE_API_KEY)")
        return None
    except (OSError, ValueError):   # refused, timed out, not HTTP, not JSON
        return None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return None
    names = [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]
    return LocalServer(port, kind, base, tuple(dict.fromkeys(names))[:MAX_MODELS])


_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="local-servers")
# (when, ports asked, servers found): hand-made because it expires after ``ttl`` seconds (lru_cache has no expiry)
_cache: tuple[float, tuple, list[LocalServer]] | None = None
_lock = threading.Lock()


def local_servers(*, budget: float = BUDGET, ttl: float = TTL, refresh: bool = False) -> list[LocalServer]:
    """The OpenAI-compatible servers answering on loopback (see the module docstring), by port."""
    global _cache
    asked = tuple(sorted(ports().items()))
    now = time.monotonic()
    with _lock:
        if not refresh and _cache is not None and _cache[1] == asked and now - _cache[0] < ttl:
            return list(_cache[2])
    futures = [_POOL.submit(_probe, port, kind, budget * 0.8) for port, kind in asked]
    done, _ = wait(futures, timeout=budget)
    found = sorted((f.result() for f in done if f.result() is not None), key=lambda s: s.port)
    with _lock:
        _cache = (time.monotonic(), asked, found)
    return list(found)

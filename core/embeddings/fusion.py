"""Sentence fusion (E2): S1 = fuse(S_prev, S_curr), S2 = fuse(S_curr, S_next) by any configured chat model.

The instruction follows the SetLike paper's paraphraser prompt in our own words, with its word budget:
max words = ½·(words in A + words in B), rounded down. The paper used gpt-3.5-turbo at temperature 0.5.
Calls go through ``core.models.get_model`` (any provider: local/smollm2, openai/…, anthropic/…, openai-compatible/…)
and the store's response cache (``calls`` table, same cache key as the runner: model, base_url, params, prompt, draw),
so fusing the same pair twice never calls the model twice. Retryable failures are retried with backoff.
"""

from __future__ import annotations

import asyncio
import math
import re
from datetime import datetime, timezone
from typing import Callable, Sequence

from core.embeddings.samples import SentenceTuple
from core.errors import UserError

FUSION_TEMPERATURE = 0.5
MAX_ATTEMPTS = 4


def max_words(a: str, b: str) -> int:
    return math.floor(0.5 * (len(a.split()) + len(b.split())))


def fusion_prompt(a: str, b: str) -> str:
    n = max_words(a, b)
    return (f"You are a paraphraser. Merge the two sentences below into one fluent sentence of no more than {n} "
            f"words that keeps the information of both. Reply with the merged sentence only.\n"
            f"Sentence 1: {a}\nSentence 2: {b}")


_PREFIX = re.compile(r"^(merged|fused|combined)?\s*(sentence|version)?\s*[:\-]\s*", re.I)


_ECHO = re.compile(r"^(sentence\s*[12]|input|a|b)\s*[:\-]", re.I)


def clean_fusion(text: str) -> str:
    """The fused sentence from a reply: the first line that is not a preamble ending in ':' nor an echo of the
    inputs ('Sentence 1: …'), without a 'Merged sentence:' label or wrapping quotes."""
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    body = [ln for ln in lines if not ln.endswith(":") and not _ECHO.match(ln)]
    if not body:
        return ""
    line = _PREFIX.sub("", body[0]).strip()
    if len(line) >= 2 and line[0] == line[-1] and line[0] in "\"'“”":
        line = line[1:-1].strip()
    return line.strip("“”\"").strip()


async def _complete(model, request, attempts: int = MAX_ATTEMPTS):
    from core.models.base import RetryableError

    delay = 1.0
    for k in range(attempts):
        try:
            return await model.complete(request)
        except RetryableError as exc:
            if k == attempts - 1:
                raise UserError(f"fusion failed after {attempts} attempts: {exc.reason}") from None
            await asyncio.sleep(max(delay, exc.retry_after or 0))
            delay *= 2


async def fuse_pairs_async(pairs: Sequence[tuple[str, str]], model_spec: str, *, params=None, base_url=None,
                           api_key=None, db_path=None, use_cache: bool = True, concurrency: int | None = None,
                           progress: Callable[[int, int], None] | None = None, http_client=None) -> list[str]:
    from core import store
    from core.models import get_model
    from core.models.base import Request
    from core.models.params import SamplingParams

    params = params or SamplingParams(temperature=FUSION_TEMPERATURE, top_p=None, top_k=None, max_tokens=128)
    kwargs = {"base_url": base_url, "api_key": api_key}
    if http_client is not None:
        kwargs["http_client"] = http_client
    model = get_model(model_spec, **kwargs)
    prompts = [fusion_prompt(a, b) for a, b in pairs]
    keys = [store.cache_key(model.spec, base_url, params.to_dict(), p, 0) for p in prompts]
    cached: dict[str, dict] = {}
    if use_cache:
        with store.connect(db_path) as con:
            cached = store.lookup_calls(con, keys)
    out: list[str | None] = [clean_fusion(cached[k]["response"]) if k in cached else None for k in keys]
    todo = [i for i, v in enumerate(out) if v is None]
    done = len(keys) - len(todo)
    if progress:
        progress(done, len(keys))
    sem = asyncio.Semaphore(concurrency or getattr(model, "default_concurrency", 1) or 1)
    new_calls: list[dict] = []

    async def one(i: int) -> None:
        nonlocal done
        async with sem:
            comp = await _complete(model, Request(prompts[i], params, None, "fusion"))
        out[i] = clean_fusion(comp.text)
        new_calls.append({
            "cache_key": keys[i], "model": model.spec, "base_url": base_url, "params_json": store.canonical_json(
                params.to_dict()), "prompt_sha": store.sha256(prompts[i]), "draw": 0, "response": comp.text,
            "latency_ms": comp.latency_ms, "tokens_in": comp.tokens_in, "tokens_out": comp.tokens_out,
            "cost_usd": comp.cost_usd, "finish_reason": comp.finish_reason,
            "dropped_params": ",".join(comp.dropped_params), "error": None, "attempts": 1,
            "at": datetime.now(timezone.utc).replace(tzinfo=None)})
        done += 1
        if progress:
            progress(done, len(keys))

    try:
        await asyncio.gather(*(one(i) for i in todo))
    finally:
        if use_cache and new_calls:
            with store.connect(db_path) as con:
                with store.transaction(con):
                    store.write_calls_results(con, new_calls, [])
    return [v or "" for v in out]


def fuse_tuples(triples: Sequence[SentenceTuple], model_spec: str, **kwargs) -> list[SentenceTuple]:
    """Fill S1 and S2 of each tuple (its s1/s2 are replaced) with the model's fusions."""
    pairs = []
    for t in triples:
        pairs += [(t.s_prev, t.s_curr), (t.s_curr, t.s_next)]
    fused = asyncio.run(fuse_pairs_async(pairs, model_spec, **kwargs))
    out = []
    for k, t in enumerate(triples):
        s1, s2 = fused[2 * k], fused[2 * k + 1]
        out.append(SentenceTuple(t.tuple_id, t.s_prev, t.s_curr, t.s_next, s1, s2, t.topic))
    return out

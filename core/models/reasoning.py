"""Reasoning effort — how each provider is asked to think — and the reply's reasoning kept apart from its answer.

``SamplingParams.reasoning_effort`` is ``none`` (send nothing: the provider's default behaviour), ``minimal``,
``low``, ``medium`` or ``high``. What each provider is sent for it — stored with every call as ``calls.reasoning_sent``,
the fields that carry the effort as canonical JSON (NULL when nothing was sent; ``sent_for`` for batch calls):

* ``openai/`` — ``reasoning_effort`` in the body, as the API names the levels. Reasoning tokens count against
  ``max_completion_tokens``, so the reply cap sent is ``max_tokens`` + the level's allowance (``BUDGETS``) and the
  answer keeps the cap it was given. A model that refuses the parameter (a non-reasoning model) has it dropped and
  the call re-sent once; the drop is listed in the call's ``dropped_params``.
* ``openai-compatible/`` — the same ``reasoning_effort`` (vLLM, llama.cpp's server and others accept it) and the
  chat-template switch ``chat_template_kwargs: {"enable_thinking": true}`` (Qwen3-style templates on vLLM / SGLang).
  A server that refuses either (HTTP 400 naming it) has it dropped and the call re-sent, listed in
  ``dropped_params``. The cap sent is ``max_tokens`` + the allowance, as for OpenAI.
* ``anthropic/`` — extended thinking, ``thinking={"type": "enabled", "budget_tokens": B}`` with B from ``BUDGETS``
  (the API's minimum is 1,024) and ``max_tokens`` = the answer's ``max_tokens`` + B (the API wants it above the
  budget). Thinking does not go with sampling changes: temperature stays at the API's default of 1 and top_k and
  top_p are not sent — all three are listed in ``dropped_params`` when the run set them. Claude models after
  Opus 4.6 no longer take a fixed budget (the API answers 400; the call fails with that message).
* ``local/`` (the embedded llama.cpp model) — not supported: the effort is dropped and listed in ``dropped_params``.

A reply's reasoning is stored apart from its answer (``calls.reasoning``): OpenAI-compatible servers return it as
``message.reasoning_content`` (or ``message.reasoning``), Anthropic as ``thinking`` blocks (``redacted_thinking``
blocks hold no readable text and are noted as such), and models that think inline write ``<think>…</think>``
before their answer, which ``split_inline`` cuts off. Only the answer is scored: a decoy ``<answer>`` inside the
reasoning never counts. Reasoning tokens are the provider's own count (OpenAI's
``usage.completion_tokens_details.reasoning_tokens``, Anthropic's ``usage.output_tokens_details.thinking_tokens``);
where a reply does not count them apart they stay unknown (NULL) and only the total is known. Both providers bill
them as output tokens, inside ``tokens_out``: their cost (``reasoning_cost``) is that count at the output price,
part of the call's ``cost_usd``; answer tokens are ``tokens_out`` minus them.
"""

from __future__ import annotations

import json
import re

from core.models.params import REASONING_EFFORTS
from core.models.pricing import estimate_cost

# tokens of reasoning allowed per level: Anthropic's thinking budget, and what is added to the reply cap elsewhere
BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
if set(BUDGETS) != set(REASONING_EFFORTS) - {"none"}:
    raise RuntimeError("every reasoning effort but 'none' needs a budget")

ANTHROPIC_DROPPED = ("temperature", "top_p", "top_k")   # not sent while thinking is on
EFFORT_FIELDS = ("reasoning_effort", "chat_template_kwargs", "thinking")   # body fields that carry the effort

_THINK = re.compile(r"^\s*(?:<think>(?P<a>.*?)</think>|(?P<b>(?:(?!<think>).)*?)</think>)", re.S)


def active(params) -> bool:
    """Whether ``params`` ask for a reasoning effort (anything but ``none``)."""
    return getattr(params, "reasoning_effort", "none") != "none"


def budget(effort: str) -> int:
    return BUDGETS[effort]


def openai_fields(params) -> dict:
    """What the OpenAI and OpenAI-compatible bodies get for the effort (nothing for ``none``)."""
    return {"reasoning_effort": params.reasoning_effort} if active(params) else {}


def anthropic_thinking(params) -> dict | None:
    """The Messages API ``thinking`` object for the effort (None for ``none``)."""
    return {"type": "enabled", "budget_tokens": BUDGETS[params.reasoning_effort]} if active(params) else None


def sent_json(fields: dict | None) -> str | None:
    """Canonical JSON of what was sent for the effort (stored with the call); None when nothing was."""
    if not fields:
        return None
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sent_for(spec: str, params) -> str | None:
    """What a request of ``spec`` carries for ``params``' effort, as stored (``reasoning_sent``) — for calls made
    through a provider batch or a batch file, whose body is not at hand when their outcomes come back."""
    if not active(params):
        return None
    provider = spec.split("/", 1)[0].strip().lower()
    if provider == "anthropic":
        return sent_json({"thinking": anthropic_thinking(params)})
    if provider == "openai-compatible":
        return sent_json({**openai_fields(params), "chat_template_kwargs": {"enable_thinking": True}})
    if provider in ("openai", "vllm"):
        return sent_json(openai_fields(params))
    return None


def split_inline(text: str) -> tuple[str, str | None]:
    """(answer, reasoning) of a reply that thinks inline: a leading ``<think>…</think>`` block (or, when the chat
    template opened the block itself, everything up to the first ``</think>``) is the reasoning, the rest the
    answer. A reply without a closing ``</think>`` is all answer (reasoning None). ``<thinking>`` tags (which some
    prompting approaches ask for in the answer itself) are not touched."""
    if "</think>" not in text:
        return text, None
    m = _THINK.match(text)
    if m is None:
        return text, None
    reasoning = m.group("a") if m.group("a") is not None else m.group("b")
    return text[m.end():].lstrip("\n"), reasoning.strip()


def reasoning_cost(spec: str, tokens_reasoning: int | None, *, batch: bool = False) -> float | None:
    """USD of the reasoning tokens (billed as output tokens); None when the count or the price is unknown."""
    if tokens_reasoning is None:
        return None
    return estimate_cost(spec, 0, tokens_reasoning, batch=batch)


def int_count(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 53 else None

"""Reasoning effort — how each provider is asked to think — and the reply's reasoning kept apart from its answer.

``SamplingParams.reasoning_effort`` is ``none`` or a level of the scale ``off < minimal < low < medium < high <
xhigh < max``. The scale and what each provider is sent for each level are one data table,
``data/reasoning/efforts.yaml`` (documented in ``data/reasoning/README.md``); this module reads it. Two readings of
"no reasoning" are both expressible:

* ``none`` — send nothing for the effort: the provider's (or the model's) own default, whatever it is. Parameters
  without an effort mean this; it keeps the cache keys and run keys such parameters always had.
* ``off`` — ask for no reasoning where the provider has a way to say so: OpenAI ``reasoning_effort: "none"``,
  Anthropic ``thinking: {"type": "disabled"}``, an OpenAI-compatible server's chat-template switch
  ``enable_thinking: false``.

What was sent is stored with every call as ``calls.reasoning_sent`` — the fields that carry the effort as canonical
JSON (NULL when nothing was sent; ``sent_for`` for batch calls):

* ``openai/`` — ``reasoning_effort`` in the body. Reasoning tokens count against ``max_completion_tokens``, so the
  reply cap sent is ``max_tokens`` + the level's allowance and the answer keeps the cap it was given. A model that
  refuses the parameter (a non-reasoning model) has it dropped and the call re-sent once; one that refuses the
  value and lists the values it takes is re-sent once at the nearest of those (remembered for the model: calls
  already in flight meet the refusal too, each re-sent once; later calls carry the learnt value — calls are not held
  back for it, as waiting would count against each call's timeout).
* ``openai-compatible/`` — the same ``reasoning_effort`` and the chat-template switch ``chat_template_kwargs:
  {"enable_thinking": true}`` (``false`` for ``off``; Qwen3-style templates on vLLM / SGLang). A server that refuses
  either (HTTP 400 naming it) has it dropped and the call re-sent; a refused value is handled as for OpenAI.
* ``anthropic/`` — by the model's own description (the Models API's capabilities, asked once per model and kept in
  the store; core/models/capabilities.py): ``thinking: {"type": "adaptive"}`` with ``output_config: {"effort": …}``
  where the model takes it (Opus 4.6 and later, Claude 5), else ``thinking: {"type": "enabled", "budget_tokens":
  B}``. ``max_tokens`` is the answer's ``max_tokens`` + the level's allowance either way. Thinking does not go with
  sampling changes: temperature stays at the API's default of 1 and top_k and top_p are not sent — listed in
  ``dropped_params`` when the run set them.
* ``local/`` (the embedded llama.cpp models) — they do not think: the effort is dropped.

A thinking level a model lacks is sent as the nearest level it has (a tie goes to the lower level) and recorded:
``dropped_params`` lists ``reasoning_effort=<level sent>``; a provider that cannot express the effort at all has it
dropped (``reasoning_effort`` in ``dropped_params``). ``off`` has no nearest: a model that cannot be asked for no
reasoning has it dropped, never sent as a thinking level. The item's ``reasoning`` factor keeps the level asked.

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
from pathlib import Path

import yaml

from core.models.capabilities import ThinkingMode, listed_values, recall
from core.models.params import REASONING_EFFORTS
from core.models.pricing import estimate_cost

TABLE_PATH = Path(__file__).resolve().parents[2] / "data" / "reasoning" / "efforts.yaml"
TABLE: dict = yaml.safe_load(TABLE_PATH.read_text(encoding="utf-8"))
SCALE: tuple[str, ...] = tuple(TABLE["scale"])
if ("none", *SCALE) != tuple(REASONING_EFFORTS):
    raise RuntimeError(f"{TABLE_PATH}: the scale must be the reasoning efforts after 'none' ({REASONING_EFFORTS})")
ALLOWANCE: dict[str, int] = {k: int(v) for k, v in TABLE["allowance"].items()}
# tokens of reasoning per thinking level: Anthropic's fixed budget, and what is added to the reply cap elsewhere
BUDGETS: dict[str, int] = {k: v for k, v in ALLOWANCE.items() if v > 0}
if set(ALLOWANCE) != set(SCALE) or set(BUDGETS) != set(SCALE) - {"off"}:
    raise RuntimeError(f"{TABLE_PATH}: every level needs an allowance (0 only for 'off')")
_PROVIDERS: dict = TABLE["providers"]

ANTHROPIC_DROPPED = ("temperature", "top_p", "top_k")   # not sent while thinking is on
EFFORT_FIELDS = ("reasoning_effort", "chat_template_kwargs", "thinking", "output_config")   # carry the effort

_THINK = re.compile(r"^\s*(?:<think>(?P<a>.*?)</think>|(?P<b>(?:(?!<think>).)*?)</think>)", re.S)


def active(params) -> bool:
    """Whether ``params`` ask for anything about reasoning (every level but ``none``)."""
    return getattr(params, "reasoning_effort", "none") != "none"


def thinks(params) -> bool:
    """Whether ``params`` ask the model to reason (neither ``none`` nor ``off``)."""
    return getattr(params, "reasoning_effort", "none") not in ("none", "off")


def budget(effort: str) -> int:
    """The level's allowance in tokens (0 for ``none`` and ``off``)."""
    return ALLOWANCE.get(effort, 0)


def nearest(level: str, available) -> str | None:
    """The level of ``available`` nearest to ``level`` on the scale (a tie goes to the lower); None if none."""
    have = [x for x in SCALE if x in set(available)]
    if not have or level not in SCALE:
        return None
    i = SCALE.index(level)
    return min(have, key=lambda x: (abs(SCALE.index(x) - i), SCALE.index(x)))


def changed(asked: str, used: str | None) -> list[str]:
    """What ``dropped_params`` records for a level sent as another (or not at all)."""
    if used is None:
        return ["reasoning_effort"]
    return [] if used == asked else [f"reasoning_effort={used}"]


def openai_level(level: str, provider: str = "openai", accepted=None) -> str | None:
    """The level of the scale sent for ``level`` through ``provider``'s ``reasoning_effort`` (``openai`` or
    ``openai-compatible``): the level itself when the table has it (and the model accepts its value, when
    ``accepted`` — the values a refusal listed — is known), else the nearest that qualifies; None when none does.
    ``off`` has no nearest: a model that cannot be asked for no reasoning is not asked to reason (None: dropped)."""
    send = _PROVIDERS[provider]["send"]
    ok = [x for x in SCALE if x in send and (accepted is None or send[x] in accepted)]
    if level == "off":
        return level if level in ok else None
    return level if level in ok else nearest(level, ok)


def openai_value(level: str, provider: str = "openai") -> str:
    return _PROVIDERS[provider]["send"][level]


def openai_fields(params, provider: str = "openai", accepted=None) -> dict:
    """What an OpenAI (or OpenAI-compatible) body gets in ``reasoning_effort`` (nothing for ``none``, nor for a
    level the provider cannot express)."""
    if not active(params) or (params.reasoning_effort == "off" and provider != "openai"):
        return {}
    used = openai_level(params.reasoning_effort, provider, accepted)
    return {"reasoning_effort": openai_value(used, provider)} if used is not None else {}


def template_switch(params) -> dict | None:
    """The chat-template switch an OpenAI-compatible body gets (None for ``none``)."""
    if not active(params):
        return None
    kw = _PROVIDERS["openai-compatible"]["chat_template_kwargs"]
    return dict(kw["off"] if params.reasoning_effort == "off" else kw["thinks"])


def accepted_values(text: str, field: str = "reasoning_effort") -> set[str] | None:
    """The levels an API error says a field takes ("Supported values are: 'low', 'medium' and 'high'"; pydantic's
    "Input should be 'low', 'medium' or 'high'"), or None when the text names none of the scale's."""
    return listed_values(text, field, {*SCALE, "none"})


def anthropic_fields(level: str, mode: ThinkingMode) -> tuple[dict, int, list[str]]:
    """(the Messages API fields for ``level`` on a model of ``mode`` — ``thinking`` and, for adaptive thinking,
    ``output_config`` —, the tokens to add to ``max_tokens``, what ``dropped_params`` records)."""
    if level == "none":
        return {}, 0, []
    table = _PROVIDERS["anthropic"]
    if level == "off":
        if not mode.disabled:
            return {}, 0, ["reasoning_effort"]
        return {"thinking": dict(table["off"])}, 0, []
    if mode.form == "adaptive":
        if not mode.efforts:   # a model that takes no effort: adaptive thinking at its own depth, the level dropped
            return {"thinking": {"type": "adaptive"}}, ALLOWANCE[level], ["reasoning_effort"]
        send = table["adaptive"]["send"]
        ok = [x for x in SCALE if x in send and send[x] in set(mode.efforts)]
        used = level if level in ok else nearest(level, ok)
        if used is None:
            return {}, 0, ["reasoning_effort"]
        return ({"thinking": {"type": "adaptive"}, "output_config": {"effort": send[used]}}, ALLOWANCE[used],
                changed(level, used))
    if mode.form == "budget":
        return {"thinking": {"type": "enabled", "budget_tokens": BUDGETS[level]}}, BUDGETS[level], []
    return {}, 0, ["reasoning_effort"]


def anthropic_thinking(params, mode: ThinkingMode | None = None) -> dict | None:
    """The Messages API ``thinking`` object for the effort (None for ``none``); a fixed budget unless ``mode``
    says otherwise."""
    fields, _, _ = anthropic_fields(params.reasoning_effort, mode or ThinkingMode.budget_only())
    return fields.get("thinking")


def sent_json(fields: dict | None) -> str | None:
    """Canonical JSON of what was sent for the effort (stored with the call); None when nothing was."""
    if not fields:
        return None
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sent_in(body: dict) -> str | None:
    """What a request ``body`` (flat: as a provider batch request carries it) sends for the reasoning effort, as
    stored (``reasoning_sent``): its fields that carry the effort (``EFFORT_FIELDS``); None when it has none."""
    return sent_json({k: body[k] for k in EFFORT_FIELDS if k in body})


def sent_for(spec: str, params, base_url: str | None = None) -> str | None:
    """What a request of ``spec`` would carry for ``params``' effort, rebuilt from the table (``reasoning_sent``)
    — for a batch file written by hand, or a provider batch request submitted before what each request carried was
    recorded with it (core/store/batches.py); a request whose body is at hand is described by ``sent_in``. For an
    Anthropic model, the thinking form this process learnt for it (else the one its name implies)."""
    if not active(params):
        return None
    provider, _, name = spec.partition("/")
    provider = provider.strip().lower()
    if provider == "anthropic":
        mode = recall(base_url, name.strip()) or ThinkingMode.from_name(name.strip())
        return sent_json(anthropic_fields(params.reasoning_effort, mode)[0])
    if provider == "openai-compatible":
        return sent_json({**openai_fields(params, "openai-compatible"),
                          "chat_template_kwargs": template_switch(params)})
    if provider in ("openai", "vllm"):
        return sent_json(openai_fields(params, "openai" if provider == "openai" else "openai-compatible"))
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

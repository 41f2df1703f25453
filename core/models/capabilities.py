"""How a Claude model takes thinking: adaptive thinking with an effort level, or a fixed budget — from the model's
own description, learnt once per model and kept.

Where it comes from, best first:

1. **the Models API** (``GET /v1/models/{id}``, ``client.models.retrieve``): ``capabilities.thinking.types`` says
   which ``thinking.type`` values the model accepts (``adaptive``, ``enabled``, ``disabled``) and
   ``capabilities.effort`` which effort levels (``low`` … ``max``, ``xhigh`` where the SDK has the key).
   ``from_model_info`` reads it. Asked once per (endpoint, model): the answer is kept in this process
   (``remember``/``recall``) and in the store (table ``model_capabilities``, core/store/model_info.py), so a later
   process asks nothing.
2. **the model's name**, when the description is missing (an older gateway, a proxy without ``/v1/models``, a
   description without ``capabilities``): Opus 4.6 and later and the Claude 5 models think adaptively (4.6 still
   takes budgets, deprecated), Opus 4.5, Haiku 4.5 and older models take only budgets; a name that says nothing
   (an alias, a family this code does not know) is guessed to take budgets. A guess from the name is always
   *provisional* (the endpoint may serve another model under the name): the model's first thinking call is sent
   alone (the others wait for it) — for a batch, one small live call before the batch is built — and a refusal
   (``learn_from_refusal``) corrects the form before the call is re-sent once. So many calls in flight never meet
   the same refusal: one learns for all. A refusal of the thinking form later corrects the mode the same way.

A mode is plain data (``to_json``/``from_json``); nothing here imports the SDK or the store.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, replace

ADAPTIVE_EFFORTS = ("low", "medium", "high", "xhigh", "max")   # output_config.effort's values
_VERSION = re.compile(r"^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?(?:-.*)?$")

# 400 texts: a budget refused by an adaptive-only model; adaptive thinking or the effort refused by an older one
_BUDGET_REFUSED = re.compile(r"thinking\.type\.enabled\W.{0,40}not supported|budget_tokens.{0,60}not supported|"
                             r"use thinking\.type\.adaptive", re.I | re.S)
_ADAPTIVE_REFUSED = re.compile(r"thinking\.type\.adaptive\W.{0,40}not supported|'adaptive'.{0,80}(?:does not match|"
                               r"not supported|expected)|output_config.{0,60}(?:not supported|not permitted|extra "
                               r"inputs|unknown)|effort.{0,40}(?:is not supported for this model|not permitted)",
                               re.I | re.S)
_EFFORT_LEVEL_REFUSED = re.compile(r"effort.{0,80}(?:'|`|\")(low|medium|high|xhigh|max)(?:'|`|\").{0,60}not "
                                   r"supported|output_config\.effort.{0,40}(?:input should be|must be one of)",
                                   re.I | re.S)


def claude_version(name: str) -> tuple[int, int] | None:
    """(major, minor) of a ``claude-<family>-<major>[-<minor>][-<date>]`` name; None for other names."""
    m = _VERSION.match(name.lower())
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


@dataclass(frozen=True)
class ThinkingMode:
    """How a model is asked to think. ``form``: ``adaptive`` (``thinking: {type: adaptive}`` + ``output_config.
    effort`` from ``efforts``; no effort when ``efforts`` is empty), ``budget`` (``thinking: {type: enabled, budget_tokens}``) or ``none`` (the model
    does not think). ``disabled``: it accepts ``thinking: {type: disabled}``. ``source``: ``models-api``, ``name``
    (a guess) or ``refusal`` (corrected by a 400). ``settled``: no probing needed (the description said so, or a
    call has succeeded or been corrected)."""

    form: str
    efforts: tuple[str, ...] = ()
    disabled: bool = True
    source: str = "name"
    settled: bool = False

    @classmethod
    def budget_only(cls, source: str = "name") -> "ThinkingMode":
        return cls("budget", (), True, source, source != "name")

    @classmethod
    def from_name(cls, name: str) -> "ThinkingMode":
        """The mode the model's name implies (the API's published rules for a ``claude-<family>-<version>`` name,
        budgets for any other name), always provisional: a guess, until a call succeeds or a refusal corrects it."""
        v = claude_version(name)
        if v is not None and v >= (4, 7):
            return cls("adaptive", ADAPTIVE_EFFORTS)
        if v is not None and v >= (4, 6):
            return cls("adaptive", ("low", "medium", "high", "max"))
        return cls("budget")

    @classmethod
    def from_model_info(cls, info) -> "ThinkingMode | None":
        """The mode a Models API ``ModelInfo`` (SDK object or dict) describes; None when it has no capabilities."""
        caps = _get(info, "capabilities")
        thinking = _get(caps, "thinking")
        if caps is None or thinking is None:
            return None
        types = _get(thinking, "types")

        def yes(obj, key) -> bool:
            return bool(_get(_get(obj, key), "supported"))

        effort = _get(caps, "effort")
        efforts = tuple(e for e in ADAPTIVE_EFFORTS if yes(effort, e)) if effort is not None and \
            bool(_get(effort, "supported")) else ()
        disabled = yes(types, "disabled") if types is not None else True
        if not bool(_get(thinking, "supported")):
            return cls("none", (), disabled, "models-api", True)
        if types is not None and yes(types, "adaptive") and efforts:
            return cls("adaptive", efforts, disabled, "models-api", True)
        if types is None or yes(types, "enabled"):
            return cls("budget", (), disabled, "models-api", True)
        if yes(types, "adaptive"):   # adaptive without an effort capability: no effort sent, the model's own depth
            return cls("adaptive", (), disabled, "models-api", True)
        return cls("none", (), disabled, "models-api", True)

    def learn_from_refusal(self, text: str, sent: dict) -> "ThinkingMode | None":
        """The corrected mode when a 400's text refuses the thinking form (or effort level) in ``sent`` (a body
        without thinking: the form the text names); None when the text is about something else."""
        thinking = (sent or {}).get("thinking") or {}
        kind = thinking.get("type")
        text = text or ""
        if kind is None:   # a body other than the refused one (a batch's run-wide body): the text alone says
            kind = "enabled" if _BUDGET_REFUSED.search(text) else "adaptive" if _ADAPTIVE_REFUSED.search(text) \
                else None
        if kind == "enabled" and _BUDGET_REFUSED.search(text):
            efforts = self.efforts or ADAPTIVE_EFFORTS
            return replace(self, form="adaptive", efforts=efforts, source="refusal", settled=True)
        if kind == "adaptive":
            effort = ((sent or {}).get("output_config") or {}).get("effort")
            if _EFFORT_LEVEL_REFUSED.search(text) and effort and not _ADAPTIVE_REFUSED.search(text):
                listed = listed_values(text, "effort", set(ADAPTIVE_EFFORTS))
                left = tuple(e for e in self.efforts if (e in listed if listed else e != effort))
                return replace(self, efforts=left, source="refusal", settled=True) if left else \
                    replace(self, form="budget", efforts=(), source="refusal", settled=True)
            if _ADAPTIVE_REFUSED.search(text):
                return replace(self, form="budget", efforts=(), source="refusal", settled=True)
        return None

    def to_json(self) -> str:
        return json.dumps({"form": self.form, "efforts": list(self.efforts), "disabled": self.disabled,
                           "source": self.source}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> "ThinkingMode | None":
        """A kept mode (always settled); None for text that is not one."""
        try:
            d = json.loads(text) if text else None
        except ValueError:
            return None
        if not isinstance(d, dict) or d.get("form") not in ("adaptive", "budget", "none"):
            return None
        efforts = tuple(e for e in d.get("efforts") or () if e in ADAPTIVE_EFFORTS)
        return cls(d["form"], efforts, bool(d.get("disabled", True)), str(d.get("source") or "models-api"), True)


_QUOTED = re.compile(r"['\"`]([a-z]+)['\"`]")
_LISTING = re.compile(r"\b(?:supported values?|should be|must be one of|expected|allowed values?)\b(.*)", re.I | re.S)


def listed_values(text: str, field: str, vocab: set[str]) -> set[str] | None:
    """The words of ``vocab`` an API error lists as the values ``field`` takes, or None when it lists none."""
    text = text or ""
    m = _LISTING.search(text)
    if not m or field.split(".")[-1] not in text:
        return None
    return set(_QUOTED.findall(m.group(1))) & vocab or None


def _get(obj, key):
    if obj is None:
        return None
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def endpoint_key(base_url: str | None) -> str:
    """How an endpoint is named where modes are kept: '' for the provider's own, else a digest of the URL (a URL
    may hold a password; the store never sees it)."""
    return hashlib.sha256(base_url.encode("utf-8")).hexdigest()[:16] if base_url else ""


_known: dict[tuple[str, str], ThinkingMode] = {}
_lock = threading.Lock()


def remember(base_url: str | None, name: str, mode: ThinkingMode) -> None:
    """Keep ``mode`` for (endpoint, model) in this process."""
    with _lock:
        _known[(endpoint_key(base_url), name)] = mode


def recall(base_url: str | None, name: str) -> ThinkingMode | None:
    """The mode this process knows for (endpoint, model), or None."""
    with _lock:
        return _known.get((endpoint_key(base_url), name))


def forget_all() -> None:
    """Forget every mode this process knows (tests)."""
    with _lock:
        _known.clear()

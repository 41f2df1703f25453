"""Page settings as query-string values (no Streamlit here): a page keeps in the URL only what differs from where it
started (a preset, or the defaults), one parameter per setting, values as compact JSON — ``samples=3``,
``sizes=[2,4,8]``, ``lengths=[null,1]``. A reload or a shared link decodes them back onto the same start.

    encode(values, defaults)  -> {name: json text, or None where the value is the default (the key is removed)}
    decode(params, defaults)  -> {name: value} for the names of ``defaults`` present in ``params`` whose JSON parses
                                 and has the default's kind (a mistyped or hostile link changes nothing)
    clamp(values, limits)     -> (values inside their limits, one note per value changed or dropped): a link's
                                 ``total=-1`` or ``seed=1e30`` becomes the nearest allowed value, and the page says so
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def encode(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, str | None]:
    """One entry per name of ``defaults``: the JSON text of ``values[name]`` where it differs from the default, else
    None (so that a setting put back to its default leaves the URL)."""
    out: dict[str, str | None] = {}
    for name, default in defaults.items():
        if name not in values:
            continue
        value = values[name]
        out[name] = None if _text(value) == _text(default) else _text(value)
    return out


def _same_kind(value: Any, default: Any) -> bool:
    if default is None:
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return False


def decode(params: Mapping[str, Any], defaults: Mapping[str, Any], nullable: bool = False) -> dict[str, Any]:
    """The settings a URL holds, for the names of ``defaults`` only; values that do not parse or are not of the
    default's kind are dropped (``nullable``: ``null`` is kept, meaning "not set"). Integers stay integers where the
    default is one."""
    out: dict[str, Any] = {}
    for name, default in defaults.items():
        text = params.get(name)
        if text in (None, ""):
            continue
        try:
            value = json.loads(str(text))
        except ValueError:
            if isinstance(default, str):      # a plain word for a text setting: take it as written
                out[name] = str(text)
            continue
        if value is None and nullable:
            out[name] = None
            continue
        if value is None or not _same_kind(value, default):
            continue
        if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float):
            if not value.is_integer():
                continue
            value = int(value)
        out[name] = value
    return out


JS_SAFE = 2 ** 53 - 1     # the largest integer a browser's number widget holds exactly


def clamp(values: Mapping[str, Any], limits: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``values`` (decoded from a URL) made safe for the page's widgets, and a note for each value changed.

    ``limits[name]`` is ``(lo, hi)`` for a number (brought inside it; ``None`` for either end means ±JS_SAFE),
    ``"texts"`` for a list of strings, ``"pairs"`` for a list of two-string lists, ``("range", lo, hi)`` for a
    ``[lo, hi]`` pair of integers (each brought inside, in order). A value of the wrong shape is dropped (the page's
    own default applies). Names without limits pass through."""
    out: dict[str, Any] = {}
    notes: list[str] = []
    for name, value in values.items():
        limit = limits.get(name)
        if limit is None or value is None:
            out[name] = value
            continue
        if limit == "texts":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                out[name] = value
            else:
                notes.append(f"{name} in the link is not a list of words; ignored")
        elif limit == "pairs":
            if isinstance(value, list) and all(isinstance(v, list) and len(v) == 2
                                               and all(isinstance(w, str) for w in v) for v in value):
                out[name] = value
            else:
                notes.append(f"{name} in the link is not a list of word pairs; ignored")
        elif isinstance(limit, tuple) and limit and limit[0] == "range":
            lo, hi = limit[1], limit[2]
            if isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value):
                fixed = sorted(min(max(int(v), lo), hi) for v in value)
                if fixed != value:
                    notes.append(f"{name}={_short(value)} in the link is outside {lo}–{hi}: using {fixed}")
                out[name] = fixed
            else:
                notes.append(f"{name} in the link is not a pair of numbers; ignored")
        else:
            lo = -JS_SAFE if limit[0] is None else limit[0]
            hi = JS_SAFE if limit[1] is None else limit[1]
            if not _is_number(value):
                notes.append(f"{name} in the link is not a number; ignored")
                continue
            fixed = min(max(value, lo), hi)
            if fixed != value:
                notes.append(f"{name}={_short(value)} in the link is outside {lo:,}–{hi:,}: using {fixed:,}")
            out[name] = fixed
    return out, notes


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


def _short(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= 24 else text[:21] + "…"


def deceptive_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The Deceptive sets page's settings that reproduce a stored run's configuration (its word pair — or "each" when
    every draw has its own —, conditions, seed, size, samples, operations, approach and part of speech), for a shared ``run=`` link; keys it does not hold are left
    out."""
    out: dict[str, Any] = {}
    pairs = config.get("hypernym_pairs") or []
    if pairs and len(pairs[0]) == 2:
        out["a"], out["b"] = str(pairs[0][0]), str(pairs[0][1])
    out["hyp"] = "fixed" if pairs else "each"
    if config.get("conditions"):
        out["conds"] = list(config["conditions"])
    if config.get("seed") is not None:
        out["seed"] = int(config["seed"])
    sizes = config.get("sizes") or []
    if sizes:
        out["size"] = int(sizes[0])
    if config.get("samples") is not None:
        out["samples"] = int(config["samples"])
    if config.get("operations"):
        out["ops"] = list(config["operations"])
    approaches = config.get("approaches") or []
    if approaches:
        out["approach"] = str(approaches[0])
    pos = config.get("pos") or []
    if pos:
        out["pos"] = "any" if pos[0] is None else str(pos[0])
    return out

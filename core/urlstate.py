"""Page settings as query-string values (no Streamlit here): a page keeps in the URL only what differs from where it
started (a preset, or the defaults), one parameter per setting, values as compact JSON — ``samples=3``,
``sizes=[2,4,8]``, ``lengths=[null,1]``. A reload or a shared link decodes them back onto the same start.

    encode(values, defaults)  -> {name: json text, or None where the value is the default (the key is removed)}
    decode(params, defaults)  -> {name: value} for the names of ``defaults`` present in ``params`` whose JSON parses
                                 and has the default's kind (a mistyped or hostile link changes nothing)
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

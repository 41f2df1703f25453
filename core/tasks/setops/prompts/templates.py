"""Prompt templates as data: load ``templates.yaml``, merge a user's edits, validate, compile.

A user's edits travel as an *override*: a mapping with the same shape as ``templates.yaml`` holding only what
changed (new phrasings / approaches may be added). It lives in the task config under ``templates`` and so is stored
with the run. ``templates_diff(edited)`` turns a fully edited template document back into such an override.

Placeholders are ``{name}``; only the names allowed in a part are replaced and any other braces are literal text,
so templates never need escaping. Rendering is a ``"".join`` over pre-split parts (fast, and no ``str.format``
attribute/index access on user-written text).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from core.errors import ConfigError
from core.files import parse_yaml_mapping
from core.tasks.setops.operations import OPERATIONS

TEMPLATES_PATH = Path(__file__).with_name("templates.yaml")

PLACEHOLDERS = {
    "construction": ("set_a", "set_b", "size_a", "size_b"),
    "task": ("size_a", "size_b"),
    "demo": ("set_a", "set_b", "result", "result_members", "verb", "from_a", "from_b", "steps", "n"),
    "step": ("member", "where", "verdict"),
    "demo_item": ("demo", "n"),
    "demonstrations": ("demos", "k"),
    "persona": ("empty",),
    "instructions": ("empty",),
    "cue": (),
}
_ALL_NAMES = frozenset(n for names in PLACEHOLDERS.values() for n in names)
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

_TOP_KEYS = {"version", "set_format", "verb_forms", "construction", "demonstrations", "demo_item", "demo", "demo_empty",
             "phrasings", "approaches"}
_SET_FORMAT_KEYS = {"open", "close", "separator", "word_quote", "empty", "list_separator", "list_last"}
_PHRASING_KEYS = {"description", "reference", "task", "demo", "demo_empty", "set_format", "demo_item", "step",
                  "step_separator", "where", "verdict"}
_APPROACH_KEYS = {"description", "reference", "persona", "instructions", "cue", "answer_only"}
_VERB_KEYS = ("one", "many")
_WHERE_KEYS = ("both", "a_only", "b_only")
_VERDICT_KEYS = ("keep", "drop")


# ------------------------------------------------------------------------------------------------ compiled pieces
class Template:
    """A template string split into literal text and placeholders."""

    __slots__ = ("text", "parts", "fields", "_fmt")

    def __init__(self, text: str, allowed: tuple[str, ...], where: str):
        if not isinstance(text, str):
            raise ConfigError(f"templates: {where} must be text, not {type(text).__name__}")
        parts: list = []
        pos = 0
        fields = []
        for m in _FIELD.finditer(text):
            name = m.group(1)
            if name not in allowed:
                if name in _ALL_NAMES or name.islower():
                    hint = ", ".join("{" + a + "}" for a in allowed) or "none"
                    raise ConfigError(f"templates: {where} uses unknown placeholder {{{name}}} (allowed here: {hint})")
                continue  # e.g. "{X}" — literal text
            parts.append(text[pos:m.start()])
            parts.append((name,))
            fields.append(name)
            pos = m.end()
        parts.append(text[pos:])
        self.text = text
        self.parts = tuple(p for p in parts if p != "")
        self.fields = frozenset(fields)
        # the same as a str.format pattern (literal braces doubled; fields are plain identifiers, so no attribute or
        # index access can occur) — format_map runs in C
        self._fmt = "".join(
            p.replace("{", "{{").replace("}", "}}") if p.__class__ is str else "{" + p[0] + "}" for p in self.parts)

    def render(self, values: dict) -> str:
        return self._fmt.format_map(values)


@dataclass(frozen=True)
class SetFormat:
    open: str
    close: str
    separator: str
    word_quote: str
    empty: str
    list_separator: str
    list_last: str

    def members(self, members, words: bool) -> list[str]:
        if words:
            q = self.word_quote
            return [f"{q}{m}{q}" for m in members]
        return [str(m) for m in members]

    def render(self, members, words: bool, quoted: dict | None = None) -> str:
        """``{m1, m2}`` (or the empty-set text); ``quoted`` = a cache member -> shown text, optional."""
        if not members:
            return self.empty
        shown = [quoted[m] for m in members] if quoted is not None else self.members(members, words)
        return self.open + self.separator.join(shown) + self.close

    def render_list(self, members, words: bool, quoted: dict | None = None) -> str:
        shown = [quoted[m] for m in members] if quoted is not None else self.members(members, words)
        if len(shown) <= 1:
            return "".join(shown)
        return self.list_separator.join(shown[:-1]) + self.list_last + shown[-1]


@dataclass(frozen=True)
class Phrasing:
    name: str
    description: str
    reference: str  # the reference instruction this phrasing renders
    set_format: SetFormat
    verbs: tuple  # (one, many): the {verb} of a demonstration, agreeing with the result's size
    task: dict
    demo: dict
    demo_empty: dict
    demo_item: Template
    step: Template | None
    step_separator: str
    where: dict
    verdict: dict


@dataclass(frozen=True)
class Approach:
    name: str
    description: str
    reference: str  # the reference approach this one renders
    persona: Template
    instructions: Template
    cue: Template  # the prompt's last part ("<thinking>" for the reasoning approaches, as in the reference)
    answer_only: bool = False   # the reply is asked to be the answer alone (gets a reply cap sized to the answer)


@dataclass(frozen=True)
class Templates:
    document: dict  # the merged template document (defaults + override)
    construction: Template
    demonstrations: Template
    phrasings: dict
    approaches: dict
    separator: str = "\n\n"


# ------------------------------------------------------------------------------------------------------- loading
@lru_cache(maxsize=1)
def _default_text() -> str:
    return TEMPLATES_PATH.read_text(encoding="utf-8")


def default_templates() -> dict:
    """The shipped template document (a fresh deep copy — safe to edit)."""
    return copy.deepcopy(_default_document())


@lru_cache(maxsize=1)
def _default_document() -> dict:
    return yaml.load(_default_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: ~10x faster


def default_templates_yaml() -> str:
    """The shipped templates.yaml text, comments included (for the UI editor)."""
    return _default_text()


def _merge(base: dict, over: dict, where: str) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _merge(base[key], value, f"{where}.{key}")
        else:
            out[key] = copy.deepcopy(value)
    return out


def merge_templates(override: dict | None) -> dict:
    if override is None:
        return default_templates()
    if not isinstance(override, dict):
        raise ConfigError("templates must be a mapping with the shape of core/tasks/setops/prompts/templates.yaml")
    return _merge(_default_document(), override, "templates")


def templates_diff(edited: dict, base: dict | None = None) -> dict:
    """The minimal override that turns the default templates (or ``base``) into ``edited``."""
    base = _default_document() if base is None else base
    if not isinstance(edited, dict):
        raise ConfigError("templates must be a mapping")
    diff = {}
    for key, value in edited.items():
        if key not in base:
            diff[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(base[key], dict):
            sub = templates_diff(value, base[key])
            if sub:
                diff[key] = sub
        elif value != base[key]:
            diff[key] = copy.deepcopy(value)
    return diff


def parse_templates_yaml(text: str) -> dict:
    """Parse an edited templates document (YAML text) into a mapping; ConfigError on bad YAML."""
    return parse_yaml_mapping(text, "the templates document")


# ---------------------------------------------------------------------------------------------------- validation
def _check_keys(d, allowed: set, where: str) -> dict:
    if not isinstance(d, dict):
        raise ConfigError(f"templates: {where} must be a mapping")
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise ConfigError(f"templates: unknown key {unknown[0]!r} in {where} (allowed: {', '.join(sorted(allowed))})")
    return d


def _text(d: dict, key: str, where: str, default=None) -> str:
    value = d.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"templates: {where}.{key} must be text")
    return value


def _set_format(base: dict, over: dict | None, where: str) -> SetFormat:
    fmt = dict(_check_keys(base, _SET_FORMAT_KEYS, "set_format"))
    if over:
        fmt.update(_check_keys(over, _SET_FORMAT_KEYS, f"{where}.set_format"))
    missing = sorted(_SET_FORMAT_KEYS - set(fmt))
    if missing:
        raise ConfigError(f"templates: set_format lacks {missing[0]!r}")
    for k, v in fmt.items():
        if not isinstance(v, str):
            raise ConfigError(f"templates: {where}.set_format.{k} must be text")
    return SetFormat(**{k: fmt[k] for k in sorted(_SET_FORMAT_KEYS)})


def _op_templates(d, kind: str, where: str, required: bool) -> dict:
    if d is None and not required:
        return {}
    ops = _check_keys(d, set(OPERATIONS), f"{where}.{kind}")
    out = {}
    for op in OPERATIONS:
        if op not in ops:
            if required:
                raise ConfigError(f"templates: {where}.{kind} lacks the operation {op!r}")
            continue
        out[op] = Template(ops[op], PLACEHOLDERS["demo" if kind.startswith("demo") else kind], f"{where}.{kind}.{op}")
    return out


def _verbs(doc: dict) -> tuple[str, str]:
    forms = _check_keys(doc.get("verb_forms", {"one": "is", "many": "are"}), set(_VERB_KEYS), "verb_forms")
    return tuple(_text(forms, k, "verb_forms", "") for k in _VERB_KEYS)


def _phrasing(name: str, d: dict, doc: dict, global_fmt: dict, global_item: Template, global_demo: dict,
              global_empty: dict) -> Phrasing:
    where = f"phrasings.{name}"
    _check_keys(d, _PHRASING_KEYS, where)
    task = _op_templates(d.get("task"), "task", where, True)
    # a phrasing's own demonstrations (if any) replace the shared ones operation by operation
    demo = {**global_demo, **_op_templates(d.get("demo"), "demo", where, False)}
    demo_empty = {**global_empty, **_op_templates(d.get("demo_empty"), "demo_empty", where, False)}
    missing = [op for op in OPERATIONS if op not in demo]
    if missing:
        raise ConfigError(f"templates: {where}.demo lacks the operation {missing[0]!r} (and there is no shared demo)")
    uses_steps = any("steps" in t.fields for t in list(demo.values()) + list(demo_empty.values()))
    step = None
    where_words: dict = {}
    verdict: dict = {}
    if uses_steps or "step" in d:
        step = Template(_text(d, "step", where), PLACEHOLDERS["step"], f"{where}.step")
        where_words = _check_keys(d.get("where"), set(_WHERE_KEYS), f"{where}.where")
        verdict = _check_keys(d.get("verdict"), set(_VERDICT_KEYS), f"{where}.verdict")
        for k in _WHERE_KEYS:
            _text(where_words, k, f"{where}.where")
        for k in _VERDICT_KEYS:
            _text(verdict, k, f"{where}.verdict")
    item = Template(d["demo_item"], PLACEHOLDERS["demo_item"], f"{where}.demo_item") if "demo_item" in d else global_item
    return Phrasing(
        name=name,
        description=str(d.get("description", "")),
        reference=str(d.get("reference", "")),
        set_format=_set_format(global_fmt, d.get("set_format"), where),
        verbs=_verbs(doc),
        task=task,
        demo=demo,
        demo_empty=demo_empty,
        demo_item=item,
        step=step,
        step_separator=_text(d, "step_separator", where, "; "),
        where=dict(where_words),
        verdict=dict(verdict),
    )


def _approach(name: str, d: dict) -> Approach:
    where = f"approaches.{name}"
    _check_keys(d, _APPROACH_KEYS, where)
    return Approach(
        name=name,
        description=str(d.get("description", "")),
        reference=str(d.get("reference", "")),
        persona=Template(_text(d, "persona", where, ""), PLACEHOLDERS["persona"], f"{where}.persona"),
        instructions=Template(_text(d, "instructions", where), PLACEHOLDERS["instructions"], f"{where}.instructions"),
        cue=Template(_text(d, "cue", where, ""), PLACEHOLDERS["cue"], f"{where}.cue"),
        answer_only=_flag(d, "answer_only", where),
    )


def _flag(d: dict, key: str, where: str) -> bool:
    value = d.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"templates: {where}.{key} must be true or false, got {value!r}")
    return value


def _compile(doc: dict) -> Templates:
    _check_keys(doc, _TOP_KEYS, "the template document")
    global_fmt = doc.get("set_format")
    _check_keys(global_fmt, _SET_FORMAT_KEYS, "set_format")
    global_item = Template(_text(doc, "demo_item", "templates"), PLACEHOLDERS["demo_item"], "demo_item")
    global_demo = _op_templates(doc.get("demo"), "demo", "templates", False)
    global_empty = _op_templates(doc.get("demo_empty"), "demo_empty", "templates", False)
    _verbs(doc)
    phr = _check_keys(doc.get("phrasings"), set(doc.get("phrasings") or {}), "phrasings")
    app = _check_keys(doc.get("approaches"), set(doc.get("approaches") or {}), "approaches")
    if not phr or not app:
        raise ConfigError("templates: at least one phrasing and one approach are needed")
    return Templates(
        document=doc,
        construction=Template(_text(doc, "construction", "templates"), PLACEHOLDERS["construction"], "construction"),
        demonstrations=Template(_text(doc, "demonstrations", "templates"), PLACEHOLDERS["demonstrations"],
                                "demonstrations"),
        phrasings={str(n): _phrasing(str(n), d, doc, global_fmt, global_item, global_demo, global_empty)
                   for n, d in phr.items()},
        approaches={str(n): _approach(str(n), d) for n, d in app.items()},
    )


@lru_cache(maxsize=32)
def _compiled(override_json: str) -> Templates:
    override = json.loads(override_json)
    return _compile(merge_templates(override))


def load_templates(override: dict | None = None) -> Templates:
    """Compiled templates: the defaults with ``override`` merged in. Raises ConfigError when invalid."""
    try:
        key = json.dumps(override, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        raise ConfigError("templates must contain only text, numbers, lists and mappings") from None
    return _compiled(key)


def phrasing_names(override: dict | None = None) -> tuple[str, ...]:
    return tuple(load_templates(override).phrasings)


def approach_names(override: dict | None = None) -> tuple[str, ...]:
    return tuple(load_templates(override).approaches)

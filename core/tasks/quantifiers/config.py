"""The quantifier config: templates and their fields, nouns, totals, count ranges, predicate pairs,
quantifiers from the catalogue; validation into a frozen Config (ConfigError otherwise). See the package docstring
for the keys."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import string
from dataclasses import dataclass, field
from typing import Any, Callable

from core.errors import ConfigError
from core.tasks.base import INT64, REASONING_EFFORTS, is_int
from core.tasks.quantifiers.catalogue import GQG_QUANTIFIERS, Quantifier, parse_quantifier
from core.tasks.quantifiers.presets import PRESETS

TASK = "quantifiers"

# The 12 objects of the vanilla dataset, in the order of the published data file.
GQG_OBJECTS: tuple[str, ...] = (
    "tables", "chairs", "circles", "squares", "apples", "bikes", "pans",
    "trees", "shelves", "birds", "penguins", "mountains",
)

# Named templates. Fields: see TEMPLATE_FIELDS.
TEMPLATES: dict[str, str] = {
    # GQG (Wang & Steinert-Threlkeld 2023), verbatim.
    "gqg": (
        "There are {total} {objects}. {count_first} of the {objects} {be_first} {first}. "
        "{count_second} of the {objects} {be_second} {second}. "
        "Are {quantifier} of the {objects} {predicate}? Answer with only one word, true or false."
    ),
    # Same situation, the claim stated as a sentence rather than asked.
    "statement": (
        "There are {total} {objects}. {count_first} of the {objects} {be_first} {first}. "
        "{count_second} of the {objects} {be_second} {second}. "
        "Statement: {Quantifier} of the {objects} are {predicate}. "
        "Is the statement true or false? Answer with only one word, true or false."
    ),
    # The other predicate's count stated first.
    "gqg-swapped-order": (
        "There are {total} {objects}. {count_second} of the {objects} {be_second} {second}. "
        "{count_first} of the {objects} {be_first} {first}. "
        "Are {quantifier} of the {objects} {predicate}? Answer with only one word, true or false."
    ),
}

TEMPLATE_FIELDS: dict[str, str] = {
    "total": "number of objects n",
    "objects": "the (plural) noun",
    "first": "first predicate of the pair (e.g. large)",
    "second": "second predicate of the pair (e.g. small)",
    "count_first": "how many objects have the first predicate",
    "count_second": "how many objects have the second predicate",
    "be_first": "'is' when count_first is 1, else 'are'",
    "be_second": "'is' when count_second is 1, else 'are'",
    "quantifier": "the quantifier, e.g. at least 3",
    "Quantifier": "the quantifier capitalised, e.g. At least 3",
    "predicate": "the asked predicate",
    "other": "the predicate not asked",
}
_REQUIRED_FIELDS = ("quantifier", "predicate", "objects")

MAX_TOTAL = 1000
MAX_TEMPLATE = 2000
_WORD = re.compile(r"^[a-z][a-z' -]{0,38}[a-z]$|^[a-z]$")

def _noun_groups() -> dict[str, tuple[str, ...]]:
    from core.tasks.quantifiers.nouns import load_noun_groups

    return {"gqg": GQG_OBJECTS, **load_noun_groups()}


def _clean_word(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be a word, got {value!r}")
    text = " ".join(value.strip().split())
    if not _WORD.match(text.lower()):
        raise ConfigError(f"{what} {value!r} must be 1–40 letters (spaces, hyphens, apostrophes allowed inside)")
    return text


def _whole(key: str, lo: int, hi: int) -> Callable[[Any, dict], int]:
    def check(value: Any, _seen: dict) -> int:
        if not is_int(value):
            raise ConfigError(f"{key} must be a whole number, got {value!r}")
        if not lo <= value <= hi:
            raise ConfigError(f"{key} must be between {lo} and {hi}, got {value}")
        return value
    return check


def _listed(key: str, each: Callable[[list, dict], Any]) -> Callable[[Any, dict], Any]:
    """A key whose value is a non-empty list (a lone string counts as a list of one), then checked by ``each``."""
    def check(value: Any, seen: dict) -> Any:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value:
            raise ConfigError(f"{key} must be a non-empty list")
        return each(list(value), seen)
    return check


def _check_template(text: str) -> None:
    if len(text) > MAX_TEMPLATE:
        raise ConfigError(f"template is longer than {MAX_TEMPLATE} characters")
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ConfigError(f"template is not valid ({exc}); write literal braces as {{{{ and }}}}") from None
    used = set()
    for _, field_name, spec, conversion in parsed:
        if field_name is None:
            continue
        if field_name not in TEMPLATE_FIELDS or spec or conversion:
            raise ConfigError(
                f"template field {{{field_name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}} "
                f"is not allowed; use only: {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}")
        used.add(field_name)
    missing = [f for f in _REQUIRED_FIELDS if f not in used and not (f == "quantifier" and "Quantifier" in used)]
    if missing:
        raise ConfigError(f"template must contain {', '.join('{' + f + '}' for f in missing)}")
    if not used & {"count_first", "count_second"}:
        raise ConfigError("template must state at least one count: {count_first} or {count_second}")


# ---- the checks of the config's keys, one per key (named in the field that holds it) --------------------------------
def _quantifier_names(names: list, _seen: dict) -> tuple[str, ...]:
    canon = tuple(parse_quantifier(q).name for q in names)
    dup = sorted({q for q in canon if canon.count(q) > 1})
    if dup:
        raise ConfigError(f"quantifier listed twice: {', '.join(dup)}")
    return canon


def _objects(words: list, _seen: dict) -> tuple[str, ...]:
    return tuple(_clean_word(o, "object") for o in words)


def _group_names(groups: list, _seen: dict) -> tuple[str, ...]:
    available = _noun_groups()
    keys = []
    for g in groups:
        key = "_".join(str(g).strip().lower().replace("-", " ").split())
        if key not in available:
            raise ConfigError(f"unknown noun group {g!r}; expected one of: {', '.join(available)}")
        keys.append(key)
    return tuple(keys)


def _nouns_per_group(value: Any, seen: dict) -> int:
    if seen["noun_groups"] is None:
        raise ConfigError("nouns_per_group needs noun_groups")
    return _whole("nouns_per_group", 1, 10_000)(value, seen)


def _count_range(rng: Any, seen: dict) -> tuple[int, int] | None:
    total = seen["total"]
    if (not isinstance(rng, (list, tuple)) or len(rng) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in rng)):
        raise ConfigError(f"count_range must be two whole numbers [low, high], got {rng!r}")
    lo, hi = rng
    if not 0 <= lo <= hi <= total:
        raise ConfigError(f"count_range must satisfy 0 ≤ low ≤ high ≤ total ({total}), got [{lo}, {hi}]")
    return None if (lo, hi) == (0, total) else (lo, hi)


def _predicate_pairs(pairs_in: list, _seen: dict) -> tuple[tuple[str, str], ...]:
    pairs = []
    for p in pairs_in:
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise ConfigError(f"each entry of predicates must be a pair like [large, small], got {p!r}")
        a, b = _clean_word(p[0], "predicate"), _clean_word(p[1], "predicate")
        if a == b:
            raise ConfigError(f"a predicate pair needs two different words, got [{a}, {b}]")
        pairs.append((a, b))
    if len(set(pairs)) != len(pairs):
        raise ConfigError("a predicate pair is listed twice")
    return tuple(pairs)


def _template(template: Any, _seen: dict) -> str:
    if not isinstance(template, str) or not template.strip():
        raise ConfigError("template must be a template name or a text with {fields}")
    if template not in TEMPLATES:
        if "{" not in template:
            raise ConfigError(f"unknown template {template!r}; expected one of: {', '.join(TEMPLATES)} "
                              "or a text with {fields}")
        _check_template(template)
    return template


def _samples(value: Any, seen: dict) -> int | None:
    samples = _whole("samples", 1, MAX_TOTAL + 1)(value, seen)
    lo, hi = seen["count_range"] or (0, seen["total"])
    if samples > hi - lo + 1:
        raise ConfigError(f"samples ({samples}) exceeds the {hi - lo + 1} possible counts {lo}…{hi}")
    return None if samples == hi - lo + 1 else samples  # all counts: same items as not sampling


def _name(value: Any, _seen: dict) -> str:
    if not isinstance(value, str):
        raise ConfigError("name must be a text")
    return value


def _efforts(values: list, _seen: dict) -> tuple[str, ...]:
    levels = ["none" if v is None else v.strip().lower() if isinstance(v, str) else v for v in values]
    bad = [v for v in levels if v not in REASONING_EFFORTS]
    if bad:
        raise ConfigError(f"reasoning: {bad[0]!r} is not valid (expected one of: {', '.join(REASONING_EFFORTS)})")
    return tuple(dict.fromkeys(levels))


def _key(default: Any, check: Callable[[Any, dict], Any]) -> Any:
    """A config key: its value when the key is absent (or null), and the check that validates and normalises a given
    value (it sees the keys declared before it, already checked)."""
    return field(default=default, metadata={"check": check})


@dataclass(frozen=True)
class Config:
    """A quantifier config. Each field is a key of the YAML/dict form and declares its own check; ``from_dict``
    applies them in the order declared here (a key's check may read the keys above it)."""

    quantifiers: tuple[str, ...] = _key(GQG_QUANTIFIERS, _listed("quantifiers", _quantifier_names))
    objects: tuple[str, ...] | None = _key(None, _listed("objects", _objects))
    noun_groups: tuple[str, ...] | None = _key(None, _listed("noun_groups", _group_names))
    nouns_per_group: int | None = _key(None, _nouns_per_group)
    total: int = _key(50, _whole("total", 1, MAX_TOTAL))
    count_range: tuple[int, int] | None = _key(None, _count_range)
    predicates: tuple[tuple[str, str], ...] = _key((("large", "small"),), _listed("predicates", _predicate_pairs))
    template: str = _key("gqg", _template)
    samples: int | None = _key(None, _samples)
    seed: int = _key(0, _whole("seed", *INT64))
    name: str | None = _key(None, _name)
    # reasoning efforts crossed with the grid (the outermost factor: every level asks the same items); None: not a
    # factor, every item is asked with the run's own effort (``SamplingParams.reasoning_effort``)
    reasoning: tuple[str, ...] | None = _key(None, _listed("reasoning", _efforts))
    # derived (not part of equality): parsed quantifiers, (noun, group) list
    _quants: tuple[Quantifier, ...] = field(default=(), compare=False, repr=False)
    _nouns: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    task = TASK

    @property
    def parsed_quantifiers(self) -> tuple[Quantifier, ...]:
        """The quantifiers of ``quantifiers``, parsed (the engine asks about these)."""
        return self._quants

    def __post_init__(self) -> None:
        if not self._quants or not self._nouns:  # constructed directly, not through from_dict: validate, normalise
            full = Config.from_dict(self.to_dict())
            for f in dataclasses.fields(self):
                object.__setattr__(self, f.name, getattr(full, f.name))

    # ---- construction -------------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Any) -> "Config":
        if isinstance(d, Config):
            return d
        d = _known_keys(d)
        values: dict[str, Any] = {}
        for f in _DECLARED:
            raw = d.get(f.name)
            values[f.name] = f.default if raw is None else f.metadata["check"](raw, values)
        if values["objects"] is None and values["noun_groups"] is None:
            values["noun_groups"] = ("gqg",)
        return cls(**values, _quants=tuple(parse_quantifier(q) for q in values["quantifiers"]),
                   _nouns=_noun_list(values))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"task": TASK}
        if self.name:
            d["name"] = self.name
        d["quantifiers"] = list(self.quantifiers)
        if self.objects:
            d["objects"] = list(self.objects)
        if self.noun_groups:
            d["noun_groups"] = list(self.noun_groups)
        if self.nouns_per_group is not None:
            d["nouns_per_group"] = self.nouns_per_group
        d["total"] = self.total
        if self.count_range:
            d["count_range"] = list(self.count_range)
        d["predicates"] = [list(p) for p in self.predicates]
        d["template"] = self.template
        if self.samples is not None:
            d["samples"] = self.samples
        d["seed"] = self.seed
        if self.reasoning is not None:
            d["reasoning"] = list(self.reasoning)
        return d

    # ---- derived ------------------------------------------------------------------------------------------------
    @property
    def nouns(self) -> tuple[tuple[str, str], ...]:
        """(noun, noun_group) in item order."""
        return self._nouns

    @property
    def template_text(self) -> str:
        return TEMPLATES.get(self.template, self.template)

    @property
    def template_name(self) -> str:
        if self.template in TEMPLATES:
            return self.template
        return "custom-" + hashlib.sha256(self.template.encode("utf-8")).hexdigest()[:8]

    @property
    def counts_per_cell(self) -> int:
        lo, hi = self.count_range or (0, self.total)
        return self.samples if self.samples is not None else hi - lo + 1


_DECLARED = tuple(f for f in dataclasses.fields(Config) if "check" in f.metadata)
_KEYS = ("task", "preset", *(f.name for f in _DECLARED))


def _known_keys(d: Any) -> dict:
    """The config as a plain dict with its preset expanded; ConfigError on a non-mapping, an unknown key or a task
    other than this one."""
    if not isinstance(d, dict):
        raise ConfigError("a quantifier config must be a mapping (YAML dictionary)")
    d = dict(d)
    if "preset" in d:
        preset = d.pop("preset")
        if preset not in PRESETS:
            raise ConfigError(f"unknown quantifier preset {preset!r}; expected one of: {', '.join(PRESETS)}")
        d = {**PRESETS[preset], **d}
    unknown = sorted(set(d) - set(_KEYS))
    if unknown:
        raise ConfigError(f"unknown key(s) in quantifier config: {', '.join(map(str, unknown))}; "
                          f"allowed: {', '.join(_KEYS)}")
    if d.get("task", TASK) != TASK:
        raise ConfigError(f"task must be {TASK!r} for a quantifier config, got {d.get('task')!r}")
    return d


def _noun_list(values: dict) -> tuple[tuple[str, str], ...]:
    """(noun, group) in item order: the config's own objects, then each noun group's first ``nouns_per_group``."""
    nouns = [(o, "custom") for o in values["objects"] or ()]
    groups = values["noun_groups"] or ()
    available = {"gqg": GQG_OBJECTS} if set(groups) <= {"gqg"} else _noun_groups()
    for g in groups:
        nouns += [(noun, g) for noun in available[g][:values["nouns_per_group"]]]
    # a noun may sit in two groups (e.g. "books" is common and in the GQG pilot); within one group, never twice
    if len(set(nouns)) != len(nouns):
        dup = sorted({n for n, g in nouns if nouns.count((n, g)) > 1})
        raise ConfigError(f"noun listed twice: {', '.join(dup)}")
    return tuple(nouns)


def load_config(d: Any) -> Config:
    return Config.from_dict(d)


def preset_config(name: str) -> "Config":
    """The Config of a named preset (see PRESETS)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown quantifier preset {name!r}; expected one of: {', '.join(PRESETS)}")
    return Config.from_dict(PRESETS[name])

"""The set-operations config: keys, defaults, limits and validation. A list-valued key is a
grid axis; ``Config.from_dict`` turns any user mapping into a validated, frozen config or raises ConfigError."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path

import yaml

from core.errors import ConfigError, UserError
from core.files import parse_yaml_mapping
from core.tasks.base import INT64, REASONING_EFFORTS, is_int
from core.tasks.setops import aliases
from core.tasks.setops.factors import FACTORS
from core.tasks.setops.operations import OPERATIONS
from core.tasks.setops.prompts.templates import load_templates
from core.tasks.setops.sets import deceptive as D

TASK = "setops"
MEMBER_TYPES = ("numbers", "words", "deciles", "deceptive")
DECILE_MODES = ("log_width", "rank")
CONDITIONS = D.CONDITIONS
KEY_VERSION = "setops/v1"
# The version of what a config generates (prompts, populations). Bump it whenever the same config starts giving other
# items: it keys runs (core/runner/plan.py), so a run stored by an older version is never continued with other items.
# 2: reference-faithful prompts, one-digit numbers 1-9, overlap floor(m*f), deceptive groups of every part of speech.
GENERATOR_VERSION = 2

ITEM_KEYS = ("config_id", "idx", "sample", "seed") + FACTORS + (
    "hypernym_a", "hypernym_b", "member_hypernyms", "set_a", "set_b", "truth", "prompt")

MAX_SIZE = 1000
MAX_SHOTS = 20
MAX_SAMPLES = 1_000_000
MAX_LENGTH = 40
DRAW_ATTEMPTS = 2000



# ----------------------------------------------------------------------------------------------------- validation
def _as_list(key: str, value) -> list:
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ConfigError(f"{key} must not be empty")
    out, seen = [], set()
    for v in values:
        tag = (type(v).__name__, repr(v))
        if tag not in seen:
            seen.add(tag)
            out.append(v)
    return out


def _choice(key: str, v, allowed) -> str:
    """``v`` (or our name for a reference alias of it, see ``aliases``) if it is one of ``allowed``."""
    if key in ("operations", "phrasings", "approaches", "members"):
        why = aliases.UNSUPPORTED.get(key, {}).get(v.strip().lower() if isinstance(v, str) else v)
        if why:
            raise ConfigError(f"{key}: {v!r} is not supported: {why}")
        v = aliases.canonical(key, v)
    if not isinstance(v, str) or v not in allowed:
        raise ConfigError(f"{key}: {v!r} is not valid (expected one of: {', '.join(allowed)})")
    return v


def _int(key: str, v, lo: int, hi: int | None = None) -> int:
    if not is_int(v):
        raise ConfigError(f"{key}: {v!r} is not an integer")
    if v < lo or (hi is not None and v > hi):
        rng = f"{lo}…{hi}" if hi is not None else f"≥ {lo}"
        raise ConfigError(f"{key}: {v} is out of range (allowed: {rng})")
    return v


def _none_word(v) -> bool:
    return v is None or (isinstance(v, str) and v.strip().lower() in ("none", "null", "independent", "undefined", ""))


def _length(v):
    if _none_word(v):
        return None
    return _int("lengths", v, 1, MAX_LENGTH)


POS_NAMES = {"n": "noun", "noun": "noun", "v": "verb", "verb": "verb", "a": "adjective", "adj": "adjective",
             "adjective": "adjective", "s": "adjective", "r": "adverb", "adv": "adverb", "adverb": "adverb"}


def _pos(v):
    if _none_word(v) or (isinstance(v, str) and v.strip().lower() == "any"):
        return None
    if isinstance(v, str) and v.strip().lower() in POS_NAMES:
        return POS_NAMES[v.strip().lower()]
    raise ConfigError(f"pos: {v!r} is not a part of speech (expected noun, verb, adjective, adverb or none)")


def _swap(v):
    if _none_word(v):
        return None
    return _int("swap_count", v, 0, MAX_SIZE)


def _overlap(v):
    if _none_word(v):
        return None
    if isinstance(v, float):
        if not (0.0 <= v <= 1.0) or math.isnan(v):
            raise ConfigError(f"overlap: a fraction must lie in [0, 1], not {v!r}")
        return v
    if is_int(v):
        return _int("overlap", v, 0, MAX_SIZE)
    raise ConfigError(f"overlap: {v!r} is neither a member count (int), a fraction (float in [0, 1]) nor none")


@dataclass(frozen=True)
class Config:
    """A validated set-operation config; every tuple field is a grid axis."""

    task: str = TASK
    seed: int = 0
    samples: int = 50
    operations: tuple = tuple(OPERATIONS)
    sizes: tuple | None = (2, 4, 8, 16)
    sizes_a: tuple | None = None
    sizes_b: tuple | None = None
    members: tuple = ("numbers", "words")
    lengths: tuple = (None,)
    pos: tuple = (None,)  # words and deceptive: WordNet part of speech (noun, verb, adjective, adverb); None = any
    deciles: tuple = tuple(range(1, 11))
    decile_mode: tuple = ("log_width",)
    conditions: tuple = tuple(CONDITIONS)
    swap_count: tuple = (None,)
    overlap: tuple = (None,)
    number_max: int = 10000
    frequency_source: str = "wordfreq"
    phrasings: tuple = ("formal",)
    approaches: tuple = ("baseline",)
    shots: tuple = (0,)
    fixed_shots: bool = True
    # deceptive only: "reference" — every shipped hyponym group, as the reference draws them (research grids);
    # "curated" — without the groups and members the project's blocklist names (data/lexicon/blocklist.txt; words
    # safe to project: the live demo and its recording). docs/FIDELITY.md lists it as a deliberate difference.
    word_pool: str = "reference"
    # only these draws (sample indices 0 … samples − 1) of every cell, sorted; None: all of them. An item keeps its
    # sample index, so its sets, config_id and sample are those of the full grid's item (a re-ask of chosen draws).
    only_samples: tuple | None = None
    hypernym_pairs: tuple | None = None  # deceptive only: fixed (hypernym_a, hypernym_b) pairs instead of random ones
    templates: dict | None = field(default=None, hash=False)
    # reasoning efforts crossed with the grid (core.tasks.base.REASONING_EFFORTS: ``none``, ``off`` … ``max``); None: not a
    # factor — every item is asked with the run's own effort (``SamplingParams.reasoning_effort``)
    reasoning: tuple | None = None

    # --------------------------------------------------------------------------------------------- construction
    @classmethod
    def from_dict(cls, d) -> "Config":
        if isinstance(d, Config):
            return d
        if not isinstance(d, dict):
            raise ConfigError("a setops config must be a mapping of keys to values")
        unknown = [k for k in d if k not in KEYS]
        if unknown:
            k = unknown[0]
            raise ConfigError(f"unknown config key {k!r} (allowed: {', '.join(KEYS)})")
        g = dict(_DEFAULTS)
        g.update(d)
        if g["task"] != TASK:
            raise ConfigError(f"task must be {TASK!r} for this config, not {g['task']!r}")
        seed = _int("seed", g["seed"], *INT64)
        samples = _int("samples", g["samples"], 1, MAX_SAMPLES)
        ops = tuple(dict.fromkeys(_choice("operations", v, OPERATIONS) for v in _as_list("operations", g["operations"])))

        has_ab = "sizes_a" in d or "sizes_b" in d
        if has_ab:
            if "sizes" in d:
                raise ConfigError("give either sizes or sizes_a + sizes_b, not both")
            if "sizes_a" not in d or "sizes_b" not in d:
                raise ConfigError("sizes_a and sizes_b must be given together")
            sizes = None
            sizes_a = tuple(_int("sizes_a", v, 1, MAX_SIZE) for v in _as_list("sizes_a", d["sizes_a"]))
            sizes_b = tuple(_int("sizes_b", v, 1, MAX_SIZE) for v in _as_list("sizes_b", d["sizes_b"]))
        else:
            sizes = tuple(_int("sizes", v, 1, MAX_SIZE) for v in _as_list("sizes", g["sizes"]))
            sizes_a = sizes_b = None

        members = tuple(dict.fromkeys(_choice("members", v, MEMBER_TYPES) for v in _as_list("members", g["members"])))
        lengths = tuple(dict.fromkeys(_length(v) for v in _as_list("lengths", g["lengths"])))
        pos = tuple(dict.fromkeys(_pos(v) for v in _as_list("pos", g["pos"])))
        deciles = tuple(_int("deciles", v, 1, 10) for v in _as_list("deciles", g["deciles"]))
        modes = tuple(_choice("decile_mode", v, DECILE_MODES) for v in _as_list("decile_mode", g["decile_mode"]))
        conditions = tuple(_choice("conditions", v, CONDITIONS) for v in _as_list("conditions", g["conditions"]))
        swaps = tuple(dict.fromkeys(_swap(v) for v in _as_list("swap_count", g["swap_count"])))
        overlaps = tuple(_overlap(v) for v in _as_list("overlap", g["overlap"]))
        overlaps = tuple({(type(v).__name__, v): v for v in overlaps}.values())
        number_max = _int("number_max", g["number_max"], 1, 10**18)
        src = g["frequency_source"]
        if not isinstance(src, str) or not src.strip():
            raise ConfigError("frequency_source must be 'wordfreq' or the path of a word,count file")
        shots = tuple(_int("shots", v, 0, MAX_SHOTS) for v in _as_list("shots", g["shots"]))
        if not isinstance(g["fixed_shots"], bool):
            raise ConfigError(f"fixed_shots must be true or false, not {g['fixed_shots']!r}")

        word_pool = _choice("word_pool", g["word_pool"], D.WORD_POOLS)
        only = g["only_samples"]
        if only is not None:
            if not isinstance(only, (list, tuple)) or not only:
                raise ConfigError("only_samples must be a non-empty list of sample indices")
            only = tuple(sorted({_int("only_samples", v, 0, samples - 1) for v in only}))

        pairs = g["hypernym_pairs"]
        if pairs is not None:
            if not isinstance(pairs, (list, tuple)) or not pairs:
                raise ConfigError("hypernym_pairs must be a list of [hypernym_a, hypernym_b] pairs")
            checked = []
            for pair in pairs:
                if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                        or not all(isinstance(x, str) and x for x in pair)):
                    raise ConfigError(f"hypernym_pairs: {pair!r} is not a pair of synset names like "
                                      f"['mammal.n.01', 'vehicle.n.01']")
                if pair[0] == pair[1]:
                    raise ConfigError(f"hypernym_pairs: the two hypernyms must differ, not {pair[0]!r} twice")
                checked.append((pair[0], pair[1]))
            pairs = tuple(dict.fromkeys(checked))

        templates = g["templates"]
        if templates is not None and not isinstance(templates, dict):
            raise ConfigError("templates must be a mapping (an override of core/prompts/templates.yaml)")
        if templates == {}:
            templates = None
        tpl = load_templates(templates)  # validates the override
        phrasings = tuple(dict.fromkeys(
            _choice("phrasings", v, tuple(tpl.phrasings)) for v in _as_list("phrasings", g["phrasings"])))
        approaches = tuple(dict.fromkeys(
            _choice("approaches", v, tuple(tpl.approaches)) for v in _as_list("approaches", g["approaches"])))

        reasoning = g["reasoning"]
        if reasoning is not None:
            reasoning = tuple(dict.fromkeys(
                _choice("reasoning", v.strip().lower() if isinstance(v, str) else "none" if v is None else v,
                        REASONING_EFFORTS) for v in _as_list("reasoning", reasoning)))

        return cls(task=TASK, seed=seed, samples=samples, operations=ops, sizes=sizes, sizes_a=sizes_a,
                   sizes_b=sizes_b, members=members, lengths=lengths, pos=pos, deciles=deciles, decile_mode=modes,
                   conditions=conditions, swap_count=swaps, overlap=overlaps, number_max=number_max,
                   frequency_source=src, phrasings=phrasings, approaches=approaches, shots=shots,
                   fixed_shots=g["fixed_shots"], word_pool=word_pool, only_samples=only, hypernym_pairs=pairs, reasoning=reasoning, templates=json.loads(json.dumps(templates)) if templates else None)

    def to_dict(self) -> dict:
        """Plain JSON/YAML-able dict; ``Config.from_dict(cfg.to_dict()) == cfg``."""
        d: dict = {"task": self.task, "seed": self.seed, "samples": self.samples, "operations": list(self.operations)}
        if self.sizes is not None:
            d["sizes"] = list(self.sizes)
        else:
            d["sizes_a"], d["sizes_b"] = list(self.sizes_a), list(self.sizes_b)
        d.update({
            "members": list(self.members), "lengths": list(self.lengths), "pos": list(self.pos), "deciles": list(self.deciles),
            "decile_mode": list(self.decile_mode), "conditions": list(self.conditions),
            "swap_count": list(self.swap_count), "overlap": list(self.overlap), "number_max": self.number_max,
            "frequency_source": self.frequency_source, "phrasings": list(self.phrasings),
            "approaches": list(self.approaches), "shots": list(self.shots), "fixed_shots": self.fixed_shots,
        })
        if self.word_pool != "reference":  # left out when default: a reference config keeps its form (and run key)
            d["word_pool"] = self.word_pool
        if self.only_samples is not None:
            d["only_samples"] = list(self.only_samples)
        if self.hypernym_pairs:
            d["hypernym_pairs"] = [list(p) for p in self.hypernym_pairs]
        if self.templates:
            d["templates"] = json.loads(json.dumps(self.templates))
        if self.reasoning is not None:
            d["reasoning"] = list(self.reasoning)
        return d

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    @property
    def sample_ids(self) -> tuple[int, ...]:
        """The sample indices every cell holds: ``only_samples``, else 0 … samples − 1."""
        return self.only_samples if self.only_samples is not None else tuple(range(self.samples))

    def size_pairs(self) -> list[tuple[int, int]]:
        if self.sizes is not None:
            return [(m, m) for m in self.sizes]
        return [(a, b) for a in self.sizes_a for b in self.sizes_b]


# A key left out of a config takes its field's default; sizes_a / sizes_b (given together, instead of sizes) have none.
_DEFAULTS = {f.name: f.default for f in fields(Config) if f.name not in ("sizes_a", "sizes_b")}
KEYS = tuple(_DEFAULTS) + ("sizes_a", "sizes_b")


def load_config(d) -> Config:
    """Validate a config mapping (or pass a Config through). Raises ConfigError with one clear line."""
    if isinstance(d, Config):
        return d
    try:
        key = json.dumps(d, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return Config.from_dict(d)  # reports the bad value
    return _config_from_json(key)


@lru_cache(maxsize=16)
def _config_from_json(text: str) -> Config:
    return Config.from_dict(json.loads(text))


def load_config_yaml(text: str) -> Config:
    return load_config(parse_yaml_mapping(text, "config"))


def load_config_file(path) -> Config:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read config file {path}: {exc}") from None
    return load_config_yaml(text)

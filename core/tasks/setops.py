"""Set-operation items (SetLexSem; SPEC S1–S8, P1–P5).

A config is a grid: every list-valued key is crossed with the others. Each grid cell is one *configuration* of the
paper (``config_id``) and holds ``samples`` items that differ only in the sampled sets A and B.

Determinism and pairing
    The sets of an item are drawn with ``random.Random(<text key>)`` (string seeds are hashed with SHA-512 by CPython,
    independent of PYTHONHASHSEED). The key holds the seed, the *sampler* factors (members, sizes, length, decile,
    decile mode, overlap, number range, frequency source) and the sample index — never the operation, phrasing,
    approach or number of shots. So items that differ only in incidental prompt features show the very same A and B
    (a paired design: the paper kept A and B fixed across k), and the three deceptive conditions share the same
    hypernym pair and draws. Within a cell, samples are distinct (A, B) pairs: sample j redraws (from its own
    stream) until it differs from samples 0…j-1, so growing ``samples`` keeps the earlier items unchanged.
    Demonstrations are drawn from the same sampler (own key), never equal the item's sets, and the k = 1 / 3 shots
    are the first ones of the k = 5 shots. ``fixed_shots: true`` uses one shot stream per sampler cell (the same
    demonstrations for every item, except that a shot equal to an item's own sets is skipped for that item);
    ``false`` draws shots per sample.

Config keys (YAML; a list is a grid axis, a scalar a one-value axis)
    task: setops              seed: int (0)                samples: per configuration (50)
    operations: union | intersection | difference | symmetric_difference   (all four)
    sizes: [2, 4, 8, 16]      or sizes_a + sizes_b (crossed, |A| ≠ |B| allowed)
    members: numbers | words | deciles | deceptive               (numbers, words)
    lengths: [none, 1, 2, …]  digits of numbers / letters of words and decile words (none)
    pos: noun | verb | adjective | adverb | none     WordNet part of speech of word members (none)
    deciles: 1…10 (all)       decile_mode: log_width | rank (log_width)
    frequency_source: wordfreq | path of a "word,count" file (wordfreq)
    conditions: not_swapped | swapped | random (all)   swap_count: none (= ⌊m/2⌋) | int
    hypernym_pairs: [[hypernym_a, hypernym_b], …]       fixed hypernyms for deceptive sets (random pairs)
    overlap: none (independent draws) | int count | float fraction of the smaller set (none)
    number_max: upper bound of numbers without a length (10000)
    phrasings: formal | plain | functional | pythonic | iterative (formal)
    approaches: baseline | baseline_allow_empty | cot | self_recitation | domain_expertise | composite |
                composite_allow_empty (baseline)
    shots: [0, 1, 3, 5] (0)   fixed_shots: true | false (true)
    templates: an override of core/prompts/templates.yaml (edited templates, stored with the run)

Identity
    ``config_id`` = stable hash of the grid cell: its factors (FACTORS) plus the seed and whatever else changes the
    cell's items — number_max (unconstrained numbers), frequency_source (deciles), a fixed hypernym pair,
    fixed_shots (when k > 0) and the template edits. So (config_id, sample) names one item's sets exactly, and runs
    with the same config and seed share config_ids (comparisons pair them item by item).
    Deceptive sets also accept ``hypernym_pairs: [[hypernym_a, hypernym_b], ...]`` to fix the hypernyms (for the
    UI's "pick a pair"); by default every sample draws its own pair.

Public API (the task contract of ``core/tasks/__init__.py``)::

    Config / load_config(d) / load_config_yaml(text) / load_config_file(path)
    plan(cfg) -> Plan            grid cells + skipped combinations (Plan.warnings() gives counted messages)
    count(cfg) -> int            item(cfg, i) -> dict          items(cfg, start=0, stop=None) -> Iterator[dict]
    preview(cfg, n=5) -> list[dict]   warnings(cfg) -> list[str]
    score(item, response) -> dict     solve(item) -> str      FACTORS, ITEM_KEYS
"""

from __future__ import annotations

import json
import math
import random
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from core.config_files import parse_yaml_mapping
from core.errors import ConfigError, UserError
from core.prompts import render as R
from core.prompts.templates import Templates, load_templates
from core.sets import deceptive as D
from core.sets import populations
from core.sets.draw import distinct_pairs, draw_pair, infeasible_reason, overlap_count
from core.sets.operations import OPERATIONS, apply as apply_op, truth as op_truth
from core.tasks.base import stable_id

TASK = "setops"
MEMBER_TYPES = ("numbers", "words", "deciles", "deceptive")
DECILE_MODES = ("log_width", "rank")
CONDITIONS = D.CONDITIONS
KEY_VERSION = "setops/v1"

FACTORS = ("operation", "size_a", "size_b", "members", "length", "decile", "decile_mode", "condition", "swap_count",
           "overlap", "phrasing", "approach", "shots")
ITEM_KEYS = ("config_id", "idx", "sample", "seed") + FACTORS + (
    "hypernym_a", "hypernym_b", "member_hypernyms", "set_a", "set_b", "truth", "prompt")

MAX_SIZE = 1000
MAX_SHOTS = 20
MAX_SAMPLES = 1_000_000
MAX_LENGTH = 40
_DRAW_ATTEMPTS = 2000

_DEFAULTS = {
    "task": TASK,
    "seed": 0,
    "samples": 50,
    "operations": list(OPERATIONS),
    "sizes": [2, 4, 8, 16],
    "members": ["numbers", "words"],
    "lengths": [None],
    "pos": [None],
    "deciles": list(range(1, 11)),
    "decile_mode": ["log_width"],
    "conditions": list(CONDITIONS),
    "swap_count": [None],
    "overlap": [None],
    "number_max": 10000,
    "frequency_source": "wordfreq",
    "phrasings": ["formal"],
    "approaches": ["baseline"],
    "shots": [0],
    "fixed_shots": True,
    "hypernym_pairs": None,
    "templates": None,
}
KEYS = tuple(_DEFAULTS) + ("sizes_a", "sizes_b")


# ----------------------------------------------------------------------------------------------------- validation
def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


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
    if not isinstance(v, str) or v not in allowed:
        raise ConfigError(f"{key}: {v!r} is not valid (expected one of: {', '.join(allowed)})")
    return v


def _int(key: str, v, lo: int, hi: int | None = None) -> int:
    if not _is_int(v):
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
    if _is_int(v):
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
    pos: tuple = (None,)  # words only: WordNet part of speech (noun, verb, adjective, adverb); None = any
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
    hypernym_pairs: tuple | None = None  # deceptive only: fixed (hypernym_a, hypernym_b) pairs instead of random ones
    templates: dict | None = field(default=None, hash=False)

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
        seed = _int("seed", g["seed"], -(2**63), 2**63 - 1)
        samples = _int("samples", g["samples"], 1, MAX_SAMPLES)
        ops = tuple(_choice("operations", v, OPERATIONS) for v in _as_list("operations", g["operations"]))

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

        members = tuple(_choice("members", v, MEMBER_TYPES) for v in _as_list("members", g["members"]))
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
        phrasings = tuple(_choice("phrasings", v, tuple(tpl.phrasings)) for v in _as_list("phrasings", g["phrasings"]))
        approaches = tuple(
            _choice("approaches", v, tuple(tpl.approaches)) for v in _as_list("approaches", g["approaches"]))

        return cls(task=TASK, seed=seed, samples=samples, operations=ops, sizes=sizes, sizes_a=sizes_a,
                   sizes_b=sizes_b, members=members, lengths=lengths, pos=pos, deciles=deciles, decile_mode=modes,
                   conditions=conditions, swap_count=swaps, overlap=overlaps, number_max=number_max,
                   frequency_source=src, phrasings=phrasings, approaches=approaches, shots=shots,
                   fixed_shots=g["fixed_shots"], hypernym_pairs=pairs, templates=json.loads(json.dumps(templates)) if templates else None)

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
        if self.hypernym_pairs:
            d["hypernym_pairs"] = [list(p) for p in self.hypernym_pairs]
        if self.templates:
            d["templates"] = json.loads(json.dumps(self.templates))
        return d

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def size_pairs(self) -> list[tuple[int, int]]:
        if self.sizes is not None:
            return [(m, m) for m in self.sizes]
        return [(a, b) for a in self.sizes_a for b in self.sizes_b]


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


# ----------------------------------------------------------------------------------------------------- the grid
@dataclass
class Sampler:
    """One way of drawing (A, B): everything the sets depend on (but not the sample index)."""

    members: str
    size_a: int
    size_b: int
    length: int | None
    decile: int | None
    decile_mode: str | None
    overlap: int | float | None
    common: int | None
    condition: str | None
    swap_count: int | None  # resolved (swapped: s; not_swapped: 0; otherwise None)
    hypernyms: tuple | None  # a fixed (hypernym_a, hypernym_b) pair, deceptive only
    draw_key: str  # what the draws depend on (deceptive: shared by the three conditions)
    population: object = None  # tuple / range, or the deceptive Vocabulary

    def __post_init__(self):
        self.key = f"{self.draw_key}|cond={self.condition}|swap={self.swap_count}"
        self.words = self.members != "numbers"


@dataclass
class Cell:
    sampler: Sampler
    operation: str
    phrasing: str
    approach: str
    shots: int
    config_id: str
    factors: dict


@dataclass
class Skip:
    reason: str
    cells: int
    items: int


@dataclass
class Plan:
    cfg: Config
    templates: Templates
    cells: list
    skipped: list

    @property
    def count(self) -> int:
        return len(self.cells) * self.cfg.samples

    def warnings(self) -> list[str]:
        total = len(self.cells) + sum(s.cells for s in self.skipped)
        return [
            f"skipped {s.cells} of {total} grid cells ({s.items} items): {s.reason}" for s in self.skipped
        ]


def _population(cfg: Config, members: str, length, decile, mode, pos=None):
    if members == "numbers":
        return populations.numbers(length, cfg.number_max)
    if members == "words":
        return populations.words(length, pos)
    return populations.deciles(decile, mode, length, cfg.frequency_source)


def _vocabulary() -> D.Vocabulary:
    try:
        return D.vocabulary()
    except (ImportError, OSError) as exc:
        raise ConfigError(f"deceptive sets need the shipped hyponym groups (data/hyponyms/): {exc}") from None


def _sampler_variants(cfg: Config):
    """(members, length, decile, decile_mode, population) for the non-deceptive member types, in grid order."""
    for members in cfg.members:
        if members == "numbers":
            for length in cfg.lengths:
                yield members, length, None, None, None, None
        elif members == "words":
            for length in cfg.lengths:
                for pos in cfg.pos:
                    yield members, length, None, None, None, pos
        elif members == "deciles":
            for decile in cfg.deciles:
                for mode in cfg.decile_mode:
                    for length in cfg.lengths:
                        yield members, length, decile, mode, None, None
        else:
            for pair in cfg.hypernym_pairs or (None,):
                yield members, None, None, None, pair, None


def _build_plan(cfg: Config) -> Plan:
    tpl = load_templates(cfg.templates)
    prompt_cells = len(cfg.operations) * len(cfg.phrasings) * len(cfg.approaches) * len(cfg.shots)
    max_shots = max(cfg.shots)
    cells: list[Cell] = []
    skipped: dict[str, list[int]] = {}
    tpl_id = stable_id(cfg.templates) if cfg.templates else None

    def skip(reason: str, n_samplers: int = 1):
        s = skipped.setdefault(reason, [0, 0])
        s[0] += n_samplers * prompt_cells
        s[1] += n_samplers * prompt_cells * cfg.samples

    uses_pos = any(p is not None for p in cfg.pos) and "words" in cfg.members
    for members, length, decile, mode, hyp_pair, pos in _sampler_variants(cfg):
        if members == "deceptive":
            vocab = _vocabulary()
            pop = vocab
            if hyp_pair is not None:
                for syn in hyp_pair:
                    if syn not in vocab.by_synset:
                        raise ConfigError(f"hypernym_pairs: unknown hypernym {syn!r} (not among the shipped "
                                          f"hyponym groups)")
        elif members == "numbers" and length is not None and length > populations.MAX_NUMBER_LENGTH:
            skip(f"numbers of length {length}: at most {populations.MAX_NUMBER_LENGTH} digits are supported",
                 len(cfg.size_pairs()) * len(cfg.overlap))
            continue
        else:
            pop = _population(cfg, members, length, decile, mode, pos)
            vocab = None
        what = populations.describe(members, length, decile, mode, pos)
        for size_a, size_b in cfg.size_pairs():
            for ov in cfg.overlap:
                common = overlap_count(ov, size_a, size_b)
                base = {
                    "members": members, "size_a": size_a, "size_b": size_b, "length": length, "decile": decile,
                    "decile_mode": mode, "overlap": ov,
                }
                if members == "numbers" and length is None:
                    base["number_max"] = cfg.number_max
                if members == "deciles":
                    base["frequency_source"] = cfg.frequency_source
                if hyp_pair is not None:
                    base["hypernyms"] = list(hyp_pair)
                if pos is not None:
                    base["pos"] = pos
                draw_key = json.dumps(base, sort_keys=True)
                if members == "deceptive":
                    if ov is not None:
                        skip("overlap control does not apply to deceptive sets (they are disjoint by construction)",
                             len(cfg.conditions))
                        continue
                    if hyp_pair is not None:
                        reason = vocab.pair_reason(hyp_pair[0], hyp_pair[1], size_a, size_b)
                    else:
                        reason = vocab.feasible(size_a, size_b)
                    if reason:
                        skip(f"deceptive sets of sizes {size_a} and {size_b}: {reason}", len(cfg.conditions))
                        continue
                    conds = []
                    for cond in cfg.conditions:
                        if cond == "swapped":
                            for s in cfg.swap_count:
                                s_res = D.default_swap_count(size_a, size_b) if s is None else s
                                if s_res > min(size_a, size_b):
                                    skip(f"swap_count {s_res} exceeds the smaller set's size {min(size_a, size_b)}")
                                    continue
                                conds.append((cond, s_res))
                        else:
                            conds.append((cond, 0 if cond == "not_swapped" else None))
                    conds = list(dict.fromkeys(conds))
                else:
                    n = len(pop)
                    reason = infeasible_reason(n, size_a, size_b, common)
                    if reason is None:
                        pairs = distinct_pairs(n, size_a, size_b, common)
                        need = max(cfg.samples, max_shots + 1)
                        if pairs < need:
                            reason = (f"sizes {size_a} and {size_b}"
                                      + (f" with overlap {ov}" if ov is not None else "")
                                      + f" give only {pairs} different (A, B) pairs, fewer than the {need} distinct "
                                      f"samples/shots asked for")
                    if reason:
                        skip(f"{what}: {reason}")
                        continue
                    conds = [(None, None)]
                for cond, swap in conds:
                    sampler = Sampler(members, size_a, size_b, length, decile, mode, ov, common, cond, swap,
                                      hyp_pair, draw_key, pop)
                    for op in cfg.operations:
                        for phr in cfg.phrasings:
                            for app in cfg.approaches:
                                for k in cfg.shots:
                                    factors = {
                                        "operation": op, "size_a": size_a, "size_b": size_b, "members": members,
                                        "length": length, **({"pos": pos} if uses_pos else {}), "decile": decile, "decile_mode": mode, "condition": cond,
                                        "swap_count": swap, "overlap": ov, "phrasing": phr, "approach": app,
                                        "shots": k,
                                    }
                                    ident = dict(factors, task=TASK, seed=cfg.seed)
                                    for extra in ("number_max", "frequency_source", "hypernyms", "pos"):
                                        if extra in base:
                                            ident[extra] = base[extra]
                                    if k:
                                        ident["fixed_shots"] = cfg.fixed_shots
                                    if tpl_id:
                                        ident["templates"] = tpl_id
                                    cells.append(Cell(sampler, op, phr, app, k, stable_id(ident), factors))
    skips = [Skip(reason, c, i) for reason, (c, i) in skipped.items()]
    return Plan(cfg, tpl, cells, skips)


def plan(cfg) -> Plan:
    """The expanded grid of ``cfg`` (cached on the config object)."""
    cfg = load_config(cfg)
    p = cfg.__dict__.get("_plan")
    if p is None:
        p = _build_plan(cfg)
        object.__setattr__(cfg, "_plan", p)
        object.__setattr__(cfg, "_engine", _Engine(p))
    return p


def _engine(cfg: Config) -> "_Engine":
    plan(cfg)
    return cfg.__dict__["_engine"]


def count(cfg) -> int:
    return plan(cfg).count


def warnings(cfg) -> list[str]:
    """Counted messages about grid combinations that were skipped as impossible."""
    return plan(cfg).warnings()


# ---------------------------------------------------------------------------------------------------- sampling
class _Pair:
    """The final (A, B) of one sampler cell and sample, with per-pair render caches."""

    __slots__ = ("a", "b", "hyp", "hypernym_a", "hypernym_b", "ident", "construction", "truths", "lines", "shown",
                 "shots", "results")

    def __init__(self, a, b, hyp=None, hypernym_a=None, hypernym_b=None):
        self.a = a
        self.b = b
        self.hyp = hyp
        self.hypernym_a = hypernym_a
        self.hypernym_b = hypernym_b
        self.ident = (frozenset(a), frozenset(b))
        self.construction: dict = {}  # phrasing -> rendered set-construction part
        self.truths: dict = {}  # operation -> sorted truth
        self.lines: dict = {}  # (operation, phrasing, n) -> this pair rendered as demonstration n
        self.shown: dict = {}  # phrasing -> (A, B rendered in that phrasing's set format, member -> shown text)
        self.results: dict = {}  # operation -> result in order of appearance (for demonstrations)
        self.shots: list | None = None  # the item's demonstrations (max k), once computed


class _LRU(OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def get_or(self, key, make):
        try:
            self.move_to_end(key)
            return self[key]
        except KeyError:
            value = make()
            self[key] = value
            if len(self) > self.size:
                self.popitem(last=False)
            return value


@dataclass
class _CellContext:
    cell: Cell
    base: dict  # the item dict with the per-item values still None
    pairs: list
    head: str  # persona (if any) — before the construction
    tail_plain: str  # task [+ fixed demonstrations] + instructions, joined
    task: str
    instructions: str
    phrasing: object
    fixed_shots: list  # fixed shots of this cell (first k of the stream), [] when k = 0 or per item
    fixed_idents: frozenset


class _Engine:
    """Draw and render caches of one plan (bounded, so huge grids stream in constant memory)."""

    def __init__(self, p: Plan):
        self.plan = p
        self.cfg = p.cfg
        self.templates = p.templates
        self.sep = p.templates.separator
        self.prefix = f"{KEY_VERSION}|seed={self.cfg.seed}|"
        self.max_shots = max(self.cfg.shots)
        self.draws = _LRU(64)  # draw_key -> list of raw draws (one per sample)
        self.pairs = _LRU(64)  # sampler.key -> list of _Pair
        self.shot_streams = _LRU(512)  # (sampler.key, sample|None) -> list of _Pair
        self.contexts = _LRU(256)  # cell index -> _CellContext

    # -------------------------------------------------------------------------------------------- raw draws
    def _draw_once(self, s: Sampler, rng: random.Random):
        if s.members == "deceptive":
            return s.population.draw(rng, s.size_a, s.size_b, s.hypernyms)
        a, b = draw_pair(rng, s.population, s.size_a, s.size_b, s.common)
        return tuple(a), tuple(b)

    @staticmethod
    def _ident(raw):
        if isinstance(raw, D.DeceptiveDraw):
            return raw.key()
        return (frozenset(raw[0]), frozenset(raw[1]))

    def _make_draws(self, s: Sampler) -> list:
        out, seen = [], set()
        for j in range(self.cfg.samples):
            rng = random.Random(f"{self.prefix}{s.draw_key}|sample={j}")
            for _ in range(_DRAW_ATTEMPTS):
                raw = self._draw_once(s, rng)
                ident = self._ident(raw)
                if ident not in seen:
                    break
            seen.add(ident)
            out.append(raw)
        return out

    def _finish(self, s: Sampler, raw) -> _Pair:
        if s.members == "deceptive":
            a, b, hyp = D.apply_condition(raw, s.condition, s.swap_count, s.population.home)
            return _Pair(a, b, hyp, raw.hypernym_a, raw.hypernym_b)
        return _Pair(list(raw[0]), list(raw[1]))

    def pairs_of(self, s: Sampler) -> list:
        def make():
            raws = self.draws.get_or(s.draw_key, lambda: self._make_draws(s))
            return [self._finish(s, raw) for raw in raws]

        return self.pairs.get_or(s.key, make)

    # ---------------------------------------------------------------------------------------------- shots
    def _shot_stream(self, s: Sampler, sample: int | None) -> list:
        """max_shots + 1 distinct pairs from the item's sampler (enough to skip one equal to the item)."""

        def make():
            tag = "shots" if sample is None else f"sample={sample}|shots"
            rng = random.Random(f"{self.prefix}{s.draw_key}|{tag}")
            out, seen = [], set()
            while len(out) < self.max_shots + 1:
                for _ in range(_DRAW_ATTEMPTS):
                    pair = self._finish(s, self._draw_once(s, rng))
                    if pair.ident not in seen:
                        break
                seen.add(pair.ident)
                out.append(pair)
            return out

        return self.shot_streams.get_or((s.key, sample), make)

    def _shots(self, s: Sampler, sample: int, pair: _Pair, k: int) -> list:
        """The k demonstrations of an item: the first k of its stream that differ from the item's own sets."""
        if pair.shots is None:
            stream = self._shot_stream(s, None if self.cfg.fixed_shots else sample)
            pair.shots = [shot for shot in stream if shot.ident != pair.ident][: self.max_shots]
        return pair.shots[:k]

    def _demonstrations(self, cell: Cell, shots: list) -> str:
        t = self.templates
        phr = t.phrasings[cell.phrasing]
        op, words, name = cell.operation, cell.sampler.words, cell.phrasing
        lines = []
        for n, shot in enumerate(shots, start=1):
            key = (op, name, n)
            line = shot.lines.get(key)
            if line is None:
                shown = shot.shown.get(name)
                if shown is None:
                    fmt = phr.set_format
                    quoted = dict(zip(shot.a, fmt.members(shot.a, words)))
                    quoted.update(zip(shot.b, fmt.members(shot.b, words)))
                    shown = shot.shown[name] = (fmt.render(shot.a, words, quoted), fmt.render(shot.b, words, quoted),
                                                quoted)
                result = shot.results.get(op)
                if result is None:
                    result = shot.results[op] = apply_op(op, shot.a, shot.b)
                line = shot.lines[key] = R.demo(phr, op, shot.a, shot.b, words, n, shown[:2], result, shown[2])
            lines.append(line)
        return t.demonstrations.render({"demos": "\n".join(lines), "k": len(shots)})

    # --------------------------------------------------------------------------------------------- render
    def context(self, cell_index: int) -> _CellContext:
        return self.contexts.get_or(cell_index, lambda: self._make_context(self.plan.cells[cell_index]))

    def _make_context(self, cell: Cell) -> _CellContext:
        t = self.templates
        phr = t.phrasings[cell.phrasing]
        s = cell.sampler
        persona = R.persona(t, cell.approach, phr)
        task_text = R.task(phr, cell.operation, s.size_a, s.size_b)
        instr = R.instructions(t, cell.approach, phr)
        fixed: list = []
        tail_parts = [task_text]
        if cell.shots and self.cfg.fixed_shots:
            fixed = self._shot_stream(s, None)[: cell.shots]
            tail_parts.append(self._demonstrations(cell, fixed))
        tail_parts.append(instr)
        base = {"config_id": cell.config_id, "idx": None, "sample": None, "seed": self.cfg.seed}
        base.update(cell.factors)
        base.update({"hypernym_a": None, "hypernym_b": None, "member_hypernyms": None, "set_a": None,
                     "set_b": None, "truth": None, "prompt": None})
        return _CellContext(cell, base, self.pairs_of(s), persona, self.sep.join(p for p in tail_parts if p),
                            task_text, instr, phr, fixed, frozenset(x.ident for x in fixed))

    def item(self, ctx: _CellContext, i: int, sample: int) -> dict:
        cell = ctx.cell
        pair = ctx.pairs[sample]
        construction = pair.construction.get(cell.phrasing)
        if construction is None:
            construction = R.construction(self.templates, pair.a, pair.b, cell.sampler.words, ctx.phrasing)
            pair.construction[cell.phrasing] = construction
        op = cell.operation
        truth = pair.truths.get(op)
        if truth is None:
            truth = pair.truths[op] = op_truth(op, pair.a, pair.b)
        if not cell.shots or (ctx.fixed_shots and pair.ident not in ctx.fixed_idents):
            tail = ctx.tail_plain
        else:  # shots drawn per item, or a fixed shot equal to this item's sets (skipped for this item)
            key = (op, cell.phrasing, "block", cell.shots)
            demos = pair.lines.get(key)
            if demos is None:
                demos = self._demonstrations(cell, self._shots(cell.sampler, sample, pair, cell.shots))
                pair.lines[key] = demos
            tail = self.sep.join(p for p in (ctx.task, demos, ctx.instructions) if p)
        d = ctx.base.copy()
        d["idx"] = i
        d["sample"] = sample
        if pair.hyp is not None:
            d["hypernym_a"] = pair.hypernym_a
            d["hypernym_b"] = pair.hypernym_b
            d["member_hypernyms"] = dict(pair.hyp)
        d["set_a"] = pair.a[:]
        d["set_b"] = pair.b[:]
        d["truth"] = truth[:]
        sep = self.sep
        d["prompt"] = (ctx.head + sep + construction + sep + tail) if ctx.head else (construction + sep + tail)
        return d


# ------------------------------------------------------------------------------------------------------- items
def item(cfg, i: int) -> dict:
    """Item ``i`` (0-based) of the config — a pure function of (config, seed, i)."""
    cfg = load_config(cfg)
    p = plan(cfg)
    if not _is_int(i) or not 0 <= i < p.count:
        raise IndexError(f"item index {i!r} out of range (the config has {p.count} items)")
    cell_index, sample = divmod(i, cfg.samples)
    eng = _engine(cfg)
    return eng.item(eng.context(cell_index), i, sample)


def items(cfg, start: int = 0, stop: int | None = None) -> Iterator[dict]:
    """Items ``start`` … ``stop - 1`` in index order (all by default)."""
    cfg = load_config(cfg)
    p = plan(cfg)
    eng = _engine(cfg)
    n = cfg.samples
    start = max(start, 0)
    stop = p.count if stop is None else min(stop, p.count)
    i = start
    while i < stop:
        cell_index, sample = divmod(i, n)
        ctx = eng.context(cell_index)
        make = eng.item
        end = min(stop, (cell_index + 1) * n)
        for j in range(sample, sample + end - i):
            yield make(ctx, i, j)
            i += 1


def preview(cfg, n: int = 5) -> list[dict]:
    """``n`` items spread evenly over the grid (for showing what a config produces)."""
    total = count(cfg)
    if total == 0 or n <= 0:
        return []
    n = min(n, total)
    idx = sorted({(j * total) // n for j in range(n)})
    return [item(cfg, i) for i in idx]


# ---------------------------------------------------------------------------------------------------- scoring
def _members(value):
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return list(value or [])


def kind_of(item: dict) -> str:
    """The parser kind for an item's members: "numbers" or "words"."""
    return "numbers" if item.get("members") == "numbers" else "words"


def score(item: dict, response: str) -> dict:
    """Parse a raw model response and score it against the item's truth (see core/tasks/base.Score)."""
    from core.parse import parse_set
    from core.scoring import set_metrics

    parsed = parse_set(response or "", kind_of(item))
    answer = list(parsed.members) if parsed.followed and parsed.members is not None else None
    metrics = set_metrics(_members(item["truth"]), answer, _members(item["set_a"]), _members(item["set_b"]))
    out = {
        "parsed": json.dumps(answer, ensure_ascii=False) if answer is not None else None,
        "followed": answer is not None,
        "correct": bool(metrics.get("correct")),
    }
    for key, value in metrics.items():
        out.setdefault(key, value)
    return out


def solve(item: dict) -> str:
    """The reference solver's response: the truth inside <answer></answer> tags."""
    truth = _members(item["truth"])
    if kind_of(item) == "numbers":
        shown = ", ".join(str(int(m)) for m in truth)
    else:
        shown = ", ".join(f"'{m}'" for m in truth)
    return f"<answer>{{{shown}}}</answer>"


# ----------------------------------------------------------------------------------------------------- presets
PRESETS: dict[str, dict] = {
    # The paper's main grid (Table 2 without frequency/semantics): ~125k prompts.
    "paper-main": {
        "task": TASK, "seed": 0, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
        "members": ["numbers", "words"], "lengths": [None, 1, 2, 3, 4], "phrasings": ["formal", "plain"],
        "approaches": ["baseline", "cot"], "shots": [0, 1, 3, 5], "fixed_shots": True,
    },
    # Frequency deciles x lengths 3 and 5 (paper Table 7), chain of thought, formal phrasing.
    "paper-deciles": {
        "task": TASK, "seed": 0, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
        "members": ["deciles"], "deciles": list(range(1, 11)), "decile_mode": ["rank"], "lengths": [3, 5],
        "phrasings": ["formal"], "approaches": ["cot"], "shots": [0],
    },
    # Deceptive hyponym sets in the three conditions (paper Figure 7), chain of thought, formal phrasing.
    "paper-deceptive": {
        "task": TASK, "seed": 0, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
        "members": ["deceptive"], "conditions": list(CONDITIONS), "phrasings": ["formal"], "approaches": ["cot"],
        "shots": [0],
    },
    # Small enough to run live against the embedded model.
    "demo-small": {
        "task": TASK, "seed": 0, "samples": 5, "operations": list(OPERATIONS), "sizes": [2, 4],
        "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0],
    },
}


def preset_config(name: str) -> Config:
    """The Config of a named preset (see PRESETS)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown setops preset {name!r}; expected one of: {', '.join(PRESETS)}")
    return load_config(PRESETS[name])

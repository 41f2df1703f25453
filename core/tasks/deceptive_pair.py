"""Deceptive sets for ONE chosen hypernym pair — the live demo of the Deceptive sets page (SPEC S6, U1).

The setops task draws a different hypernym pair for every sample; a live demo wants the pair the audience picked.
This task pins (hypernym_a, hypernym_b) and crosses operations × conditions × samples. Sample j's draw is shared by
all operations and the three conditions (a paired design, exactly as in setops): ``not_swapped`` A from hypernym_a,
B from hypernym_b; ``swapped`` s members exchanged (default ⌊m/2⌋); ``random`` A, B from the pooled vocabulary of
all shipped hyponym groups. Prompts use the same templates and renderer as setops (zero shots); items carry the
setops item keys, so scoring, storage and analysis are the setops ones.

Determinism: sample j is drawn with ``random.Random("deceptive_pair/v1|seed=…|<a>|<b>|size=…|sample=j")`` (string
seeds are hashed with SHA-512 by CPython, independent of PYTHONHASHSEED).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator

from core.errors import ConfigError
from core.prompts import render as R
from core.prompts.templates import load_templates
from core.sets import deceptive as D
from core.sets.operations import OPERATIONS, truth as op_truth
from core.tasks import setops
from core.tasks.base import stable_id

TASK = "deceptive_pair"
KEY_VERSION = "deceptive_pair/v1"
FACTORS = setops.FACTORS
MAX_SIZE = 64
MAX_SAMPLES = 1000
KEYS = ("task", "hypernym_a", "hypernym_b", "operations", "size", "samples", "seed", "conditions", "swap_count",
        "phrasing", "approach")


@dataclass(frozen=True)
class Config:
    hypernym_a: str
    hypernym_b: str
    operations: tuple = tuple(OPERATIONS)
    size: int = 4
    samples: int = 5
    seed: int = 0
    conditions: tuple = tuple(D.CONDITIONS)
    swap_count: int | None = None
    phrasing: str = "formal"
    approach: str = "baseline"
    task: str = TASK

    @classmethod
    def from_dict(cls, d) -> "Config":
        if isinstance(d, Config):
            return d
        if not isinstance(d, dict):
            raise ConfigError("a deceptive_pair config must be a mapping")
        unknown = [k for k in d if k not in KEYS]
        if unknown:
            raise ConfigError(f"unknown config key {unknown[0]!r} (allowed: {', '.join(KEYS)})")
        if d.get("task", TASK) != TASK:
            raise ConfigError(f"task must be {TASK!r}")
        ha, hb = d.get("hypernym_a"), d.get("hypernym_b")
        if not isinstance(ha, str) or not isinstance(hb, str) or not ha or not hb:
            raise ConfigError("hypernym_a and hypernym_b must be synset names such as 'mammal.n.01'")
        if ha == hb:
            raise ConfigError("hypernym_a and hypernym_b must differ")
        ops = tuple(d.get("operations", OPERATIONS))
        if not ops or any(o not in OPERATIONS for o in ops):
            raise ConfigError(f"operations must be a non-empty list of: {', '.join(OPERATIONS)}")
        conds = tuple(d.get("conditions", D.CONDITIONS))
        if not conds or any(c not in D.CONDITIONS for c in conds):
            raise ConfigError(f"conditions must be a non-empty list of: {', '.join(D.CONDITIONS)}")

        def _int(key, lo, hi, default):
            v = d.get(key, default)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ConfigError(f"{key} must be a whole number in {lo}…{hi}, not {v!r}")
            return v

        size = _int("size", 1, MAX_SIZE, 4)
        samples = _int("samples", 1, MAX_SAMPLES, 5)
        seed = _int("seed", -(2**63), 2**63 - 1, 0)
        swap = d.get("swap_count")
        if swap is not None:
            swap = _int("swap_count", 0, size, 0)
        tpl = load_templates(None)
        phrasing, approach = d.get("phrasing", "formal"), d.get("approach", "baseline")
        if phrasing not in tpl.phrasings:
            raise ConfigError(f"phrasing {phrasing!r} unknown (expected one of: {', '.join(tpl.phrasings)})")
        if approach not in tpl.approaches:
            raise ConfigError(f"approach {approach!r} unknown (expected one of: {', '.join(tpl.approaches)})")
        cfg = cls(ha, hb, ops, size, samples, seed, conds, swap, phrasing, approach)
        _pools(cfg)  # checks the groups exist and are large enough
        return cfg

    def to_dict(self) -> dict:
        return {"task": TASK, "hypernym_a": self.hypernym_a, "hypernym_b": self.hypernym_b,
                "operations": list(self.operations), "size": self.size, "samples": self.samples, "seed": self.seed,
                "conditions": list(self.conditions), "swap_count": self.swap_count, "phrasing": self.phrasing,
                "approach": self.approach}


def load_config(d) -> Config:
    return Config.from_dict(d)


def _pools(cfg: Config) -> tuple[list[str], list[str], D.Vocabulary]:
    vocab = D.vocabulary()
    ga, gb = vocab.by_synset.get(cfg.hypernym_a), vocab.by_synset.get(cfg.hypernym_b)
    for name, g in ((cfg.hypernym_a, ga), (cfg.hypernym_b, gb)):
        if g is None:
            raise ConfigError(f"no shipped hyponym group {name!r}")
    pa, pb = vocab.exclusive_pools(ga, gb)
    if len(pa) < cfg.size or len(pb) < cfg.size:
        raise ConfigError(f"{cfg.hypernym_a} and {cfg.hypernym_b} have {len(pa)} and {len(pb)} members of their own; "
                          f"sets of {cfg.size} need at least {cfg.size} each")
    return pa, pb, vocab


def count(cfg) -> int:
    cfg = load_config(cfg)
    return len(cfg.operations) * len(cfg.conditions) * cfg.samples


def draw(cfg: Config, sample: int) -> D.DeceptiveDraw:
    """The draw of sample ``sample`` (shared by every operation and condition)."""
    pa, pb, vocab = _pools(cfg)
    rng = random.Random(f"{KEY_VERSION}|seed={cfg.seed}|{cfg.hypernym_a}|{cfg.hypernym_b}|size={cfg.size}"
                        f"|sample={sample}")
    m = cfg.size
    a = tuple(rng.sample(pa, m))
    b = tuple(rng.sample(pb, m))
    perm_a = tuple(rng.sample(range(m), m))
    perm_b = tuple(rng.sample(range(m), m))
    pooled = vocab.pooled
    ra = rng.sample(pooled, m)
    taken, rb = set(ra), []
    while len(rb) < m:
        w = pooled[rng.randrange(len(pooled))]
        if w not in taken:
            taken.add(w)
            rb.append(w)
    return D.DeceptiveDraw(cfg.hypernym_a, cfg.hypernym_b, a, b, perm_a, perm_b, tuple(ra), tuple(rb))


def item(cfg, i: int) -> dict:
    cfg = load_config(cfg)
    n = count(cfg)
    if not isinstance(i, int) or not 0 <= i < n:
        raise IndexError(f"item index {i!r} out of range (the config has {n} items)")
    cell, sample = divmod(i, cfg.samples)
    op = cfg.operations[cell // len(cfg.conditions)]
    condition = cfg.conditions[cell % len(cfg.conditions)]
    d = draw(cfg, sample)
    _, _, vocab = _pools(cfg)
    a, b, hyp = D.apply_condition(d, condition, cfg.swap_count, vocab.home)
    t = load_templates(None)
    phr = t.phrasings[cfg.phrasing]
    parts = [R.persona(t, cfg.approach, phr), R.construction(t, a, b, True, phr),
             R.task(phr, op, cfg.size, cfg.size), R.instructions(t, cfg.approach, phr)]
    swap = D.default_swap_count(cfg.size, cfg.size) if cfg.swap_count is None else cfg.swap_count
    factors = {"operation": op, "size_a": cfg.size, "size_b": cfg.size, "members": "deceptive", "length": None,
               "decile": None, "decile_mode": None, "condition": condition,
               "swap_count": swap if condition == "swapped" else None, "overlap": None,
               "phrasing": cfg.phrasing, "approach": cfg.approach, "shots": 0}
    config_id = stable_id({"task": TASK, **factors, "hypernym_a": cfg.hypernym_a, "hypernym_b": cfg.hypernym_b,
                           "seed": cfg.seed})
    out = {"config_id": config_id, "idx": i, "sample": sample, "seed": cfg.seed}
    out.update({k: factors.get(k) for k in FACTORS})
    out.update({"hypernym_a": cfg.hypernym_a, "hypernym_b": cfg.hypernym_b, "member_hypernyms": dict(hyp),
                "set_a": list(a), "set_b": list(b), "truth": op_truth(op, a, b),
                "prompt": R.assemble(t, parts)})
    return out


def items(cfg, start: int = 0, stop: int | None = None) -> Iterator[dict]:
    cfg = load_config(cfg)
    stop = count(cfg) if stop is None else min(stop, count(cfg))
    for i in range(start, stop):
        yield item(cfg, i)


def conditions_preview(cfg, sample: int = 0) -> dict[str, dict]:
    """{condition: {"set_a", "set_b", "member_hypernyms"}} of one sample, for showing the three side by side."""
    cfg = load_config(cfg)
    d = draw(cfg, sample)
    _, _, vocab = _pools(cfg)
    out = {}
    for c in D.CONDITIONS:
        a, b, hyp = D.apply_condition(d, c, cfg.swap_count, vocab.home)
        out[c] = {"set_a": list(a), "set_b": list(b), "member_hypernyms": dict(hyp)}
    return out


def random_pair(seed: int, size: int = 4) -> tuple[str, str]:
    """A random pair of hypernyms with at least ``size`` members of their own each (for "draw one")."""
    vocab = D.vocabulary()
    rng = random.Random(f"{KEY_VERSION}|pair|seed={seed}|size={size}")
    cand = vocab.eligible(size)
    if len(cand) < 2:
        raise ConfigError(f"fewer than two hyponym groups have {size} members")
    for _ in range(500):
        ga, gb = rng.sample(cand, 2)
        pa, pb = vocab.exclusive_pools(ga, gb)
        if len(pa) >= size and len(pb) >= size:
            return ga.synset, gb.synset
    raise ConfigError(f"no two hyponym groups with {size} members of their own found")


score = setops.score
solve = setops.solve

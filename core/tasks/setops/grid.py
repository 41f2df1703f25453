"""The grid of a config: its cells (one paper "configuration" each), the samplers behind them, and the
combinations that cannot be filled (skipped with a counted warning)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

from core.errors import ConfigError
from core.tasks.base import cached_on, stable_id
from core.tasks.setops.config import TASK, Config, load_config
from core.tasks.setops.prompts.templates import Templates, load_templates
from core.tasks.setops.sets import deceptive as D, populations
from core.tasks.setops.sets.draw import distinct_pairs, infeasible_reason, overlap_count


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
        return len(self.cells) * len(self.cfg.sample_ids)

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


def _vocabulary(pos: str | None = None, pool: str = "reference") -> D.Vocabulary:
    try:
        return D.vocabulary(None, pos, pool)
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
                for pos in cfg.pos:
                    yield members, None, None, None, pair, pos


# Cells of one grid, at most. A cell is a few hundred bytes and its samples are drawn together, so a grid past this
# (sizes 1…1000 crossed with sizes 1…1000 × …) is refused before any cell is built (core.config caps the items).
MAX_CELLS = 250_000


def cell_bound(cfg: Config) -> int:
    """An upper bound of the grid's cells (impossible combinations not yet skipped) — arithmetic only."""
    prompt_cells = (len(cfg.operations) * len(cfg.phrasings) * len(cfg.approaches) * len(cfg.shots)
                    * len(cfg.reasoning or (None,)))
    sizes = len(cfg.sizes) if cfg.sizes is not None else len(cfg.sizes_a) * len(cfg.sizes_b)
    variants = 0
    for members in cfg.members:
        if members == "numbers":
            variants += len(cfg.lengths) * len(cfg.overlap)
        elif members == "words":
            variants += len(cfg.lengths) * len(cfg.pos) * len(cfg.overlap)
        elif members == "deciles":
            variants += len(cfg.deciles) * len(cfg.decile_mode) * len(cfg.lengths) * len(cfg.overlap)
        else:
            variants += len(cfg.hypernym_pairs or (None,)) * len(cfg.conditions) * len(cfg.swap_count)
    return variants * sizes * prompt_cells


def _variant_population(cfg: Config, members, length, decile, mode, hyp_pair, pos, skip):
    """(population, deceptive vocabulary or None) of one sampler variant, or None when the variant is skipped."""
    if members == "deceptive":
        vocab = _vocabulary(pos, cfg.word_pool)
        if hyp_pair is not None:
            every = _vocabulary(None, cfg.word_pool).by_synset
            for syn in hyp_pair:
                if syn not in every:
                    pool = " of the curated word pool" if cfg.word_pool == "curated" else ""
                    raise ConfigError(f"hypernym_pairs: unknown hypernym {syn!r} (not among the shipped "
                                      f"hyponym groups{pool})")
            other = [syn for syn in hyp_pair if syn not in vocab.by_synset]
            if other:
                skip(f"hypernym {other[0]} is a {every[other[0]].pos} group, not a {pos} one",
                     len(cfg.size_pairs()) * len(cfg.conditions))
                return None
        return vocab, vocab
    if members == "numbers" and length is not None and length > populations.MAX_NUMBER_LENGTH:
        skip(f"numbers of length {length}: at most {populations.MAX_NUMBER_LENGTH} digits are supported",
             len(cfg.size_pairs()) * len(cfg.overlap))
        return None
    return _population(cfg, members, length, decile, mode, pos), None


def _draw_base(cfg: Config, members, size_a, size_b, length, decile, mode, ov, hyp_pair, pos) -> dict:
    """What a draw of sets depends on (its key is shared by every prompt cell that reuses the draw)."""
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
    if members == "deceptive" and cfg.word_pool != "reference":
        base["word_pool"] = cfg.word_pool
    return base


def _deceptive_conditions(cfg: Config, vocab, hyp_pair, size_a: int, size_b: int, ov, skip) -> list | None:
    """(condition, swap count) pairs of a deceptive draw, or None when the sizes/overlap cannot be drawn."""
    if ov is not None:
        skip("overlap control does not apply to deceptive sets (they are disjoint by construction)",
             len(cfg.conditions))
        return None
    if hyp_pair is not None:
        reason = vocab.pair_reason(hyp_pair[0], hyp_pair[1], size_a, size_b)
    else:
        reason = vocab.feasible(size_a, size_b)
    if reason:
        skip(f"deceptive sets of sizes {size_a} and {size_b}: {reason}", len(cfg.conditions))
        return None
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
    return list(dict.fromkeys(conds))


def _sampled_reason(cfg: Config, n: int, size_a: int, size_b: int, ov, common: int) -> str | None:
    """Why a population of ``n`` cannot give the draws asked for (None: it can)."""
    reason = infeasible_reason(n, size_a, size_b, common)
    if reason is None:
        pairs = distinct_pairs(n, size_a, size_b, common)
        need = max(cfg.samples, max(cfg.shots) + 1)
        if pairs < need:
            reason = (f"sizes {size_a} and {size_b}"
                      + (f" with overlap {ov}" if ov is not None else "")
                      + f" give only {pairs} different (A, B) pairs, fewer than the {need} distinct "
                      f"samples/shots asked for")
    return reason


def _prompt_cells(cfg: Config, sampler: Sampler, base: dict, pos, tpl_id: str | None) -> list[Cell]:
    """The cells of one sampler: operations x phrasings x approaches x shots x reasoning efforts."""
    out = []
    for op, phr, app, k, effort in itertools.product(cfg.operations, cfg.phrasings, cfg.approaches, cfg.shots,
                                                     cfg.reasoning or (None,)):
        factors = {
            "operation": op, "size_a": sampler.size_a, "size_b": sampler.size_b,
            "members": sampler.members, "length": sampler.length, "pos": pos, "decile": sampler.decile,
            "decile_mode": sampler.decile_mode, "condition": sampler.condition,
            "swap_count": sampler.swap_count, "overlap": sampler.overlap, "phrasing": phr, "approach": app,
            "shots": k, "reasoning": effort,
        }
        ident = dict(factors, task=TASK, seed=cfg.seed)
        if pos is None:   # cells without a part-of-speech filter keep their ids
            del ident["pos"]
        for extra in ("number_max", "frequency_source", "hypernyms", "pos", "word_pool"):
            if extra in base:
                ident[extra] = base[extra]
        if k:
            ident["fixed_shots"] = cfg.fixed_shots
        if tpl_id:
            ident["templates"] = tpl_id
        if effort is None:   # a grid without the factor keeps its cells' ids
            del ident["reasoning"]
        out.append(Cell(sampler, op, phr, app, k, stable_id(ident), factors))
    return out


def _build_plan(cfg: Config) -> Plan:
    bound = cell_bound(cfg)
    if bound > MAX_CELLS:
        raise ConfigError(f"the grid has up to {bound:,} configurations ({bound * cfg.samples:,} items), more than "
                          f"the {MAX_CELLS:,} configurations a config may hold; narrow its lists")
    tpl = load_templates(cfg.templates)
    prompt_cells = (len(cfg.operations) * len(cfg.phrasings) * len(cfg.approaches) * len(cfg.shots)
                    * len(cfg.reasoning or (None,)))
    cells: list[Cell] = []
    skipped: dict[str, list[int]] = {}
    tpl_id = stable_id(cfg.templates) if cfg.templates else None

    def skip(reason: str, n_samplers: int = 1):
        s = skipped.setdefault(reason, [0, 0])
        s[0] += n_samplers * prompt_cells
        s[1] += n_samplers * prompt_cells * len(cfg.sample_ids)

    for members, length, decile, mode, hyp_pair, pos in _sampler_variants(cfg):
        found = _variant_population(cfg, members, length, decile, mode, hyp_pair, pos, skip)
        if found is None:
            continue
        pop, vocab = found
        what = populations.describe(members, length, decile, mode, pos)
        for (size_a, size_b), ov in itertools.product(cfg.size_pairs(), cfg.overlap):
            common = overlap_count(ov, size_a, size_b)
            base = _draw_base(cfg, members, size_a, size_b, length, decile, mode, ov, hyp_pair, pos)
            if members == "deceptive":
                conds = _deceptive_conditions(cfg, vocab, hyp_pair, size_a, size_b, ov, skip)
                if conds is None:
                    continue
            else:
                reason = _sampled_reason(cfg, len(pop), size_a, size_b, ov, common)
                if reason:
                    skip(f"{what}: {reason}")
                    continue
                conds = [(None, None)]
            draw_key = json.dumps(base, sort_keys=True)
            for cond, swap in conds:
                sampler = Sampler(members, size_a, size_b, length, decile, mode, ov, common, cond, swap,
                                  hyp_pair, draw_key, pop)
                cells += _prompt_cells(cfg, sampler, base, pos, tpl_id)
    skips = [Skip(reason, c, i) for reason, (c, i) in skipped.items()]
    return Plan(cfg, tpl, cells, skips)


def plan(cfg) -> Plan:
    """The expanded grid of ``cfg`` (cached on the config object)."""
    cfg = load_config(cfg)
    return cached_on(cfg, "_plan", lambda: _build_plan(cfg))


def count(cfg) -> int:
    return plan(cfg).count


def warnings(cfg) -> list[str]:
    """Counted messages about grid combinations that were skipped as impossible."""
    return plan(cfg).warnings()

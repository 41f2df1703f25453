"""Item generation: item i of a config is a pure function of (config, seed, i). Draws are cached per sampler
cell so a whole grid streams fast, and any single item can be made without the others."""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from core.tasks.base import cached_on, is_int, spread_indices
from core.tasks.setops.config import DRAW_ATTEMPTS, KEY_VERSION, Config, load_config
from core.tasks.setops.grid import Cell, Plan, Sampler, count, plan
from core.tasks.setops.operations import apply as apply_op, truth as op_truth
from core.tasks.setops.prompts import render as R
from core.tasks.setops.sets import deceptive as D
from core.tasks.setops.sets.draw import draw_pair


# ---------------------------------------------------------------------------------------------------- sampling
class _Pair:
    """The final (A, B) of one sampler cell and sample, with per-pair render caches."""

    __slots__ = ("a", "b", "hyp", "hypernym_a", "hypernym_b", "pos", "ident", "construction", "truths", "lines",
                 "shown", "shots", "results")

    def __init__(self, a, b, hyp=None, hypernym_a=None, hypernym_b=None, pos=None):
        self.a = a
        self.b = b
        self.hyp = hyp
        self.pos = pos  # deceptive: the parts of speech of the members' hyponym groups
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
    tail_plain: str  # task [+ fixed demonstrations] + instructions [+ cue], joined
    task: str
    instructions: str  # instructions [+ cue], joined
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
            for _ in range(DRAW_ATTEMPTS):
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
            return _Pair(a, b, hyp, raw.hypernym_a, raw.hypernym_b, s.population.pos_of(hyp))
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
                for _ in range(DRAW_ATTEMPTS):
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
        return R.demonstrations(t, lines)

    # --------------------------------------------------------------------------------------------- render
    def context(self, cell_index: int) -> _CellContext:
        return self.contexts.get_or(cell_index, lambda: self._make_context(self.plan.cells[cell_index]))

    def _make_context(self, cell: Cell) -> _CellContext:
        t = self.templates
        phr = t.phrasings[cell.phrasing]
        s = cell.sampler
        persona = R.persona(t, cell.approach, phr)
        task_text = R.task(phr, cell.operation, s.size_a, s.size_b)
        instr = R.assemble(t, (R.instructions(t, cell.approach, phr), R.cue(t, cell.approach)))
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
        return _CellContext(cell, base, self.pairs_of(s), persona, R.assemble(t, tail_parts),
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
            tail = R.assemble(self.templates, (ctx.task, demos, ctx.instructions))
        d = ctx.base.copy()
        d["idx"] = i
        d["sample"] = sample
        if pair.hyp is not None:
            d["hypernym_a"] = pair.hypernym_a
            d["hypernym_b"] = pair.hypernym_b
            d["member_hypernyms"] = dict(pair.hyp)
            d["pos"] = pair.pos
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
    if not is_int(i) or not 0 <= i < p.count:
        raise IndexError(f"item index {i!r} out of range (the config has {p.count} items)")
    ids = cfg.sample_ids
    cell_index, k = divmod(i, len(ids))
    eng = _engine(cfg)
    return eng.item(eng.context(cell_index), i, ids[k])


def items(cfg, start: int = 0, stop: int | None = None) -> Iterator[dict]:
    """Items ``start`` … ``stop - 1`` in index order (all by default)."""
    cfg = load_config(cfg)
    p = plan(cfg)
    eng = _engine(cfg)
    ids = cfg.sample_ids
    n = len(ids)
    start = max(start, 0)
    stop = p.count if stop is None else min(stop, p.count)
    i = start
    while i < stop:
        cell_index, k = divmod(i, n)
        ctx = eng.context(cell_index)
        make = eng.item
        end = min(stop, (cell_index + 1) * n)
        for j in range(k, k + end - i):
            yield make(ctx, i, ids[j])
            i += 1


def spread(cfg, n: int) -> list[int]:
    """``n`` item indices spread over the grid (every level of every factor when ``n`` allows; deterministic)."""
    cfg = load_config(cfg)
    p = plan(cfg)
    samples = len(cfg.sample_ids)
    return spread_indices([c.factors for c in p.cells], samples, n, cfg.seed,
                          lambda c, s: c * samples + s)


def run_order(cfg, items_: list[dict]) -> list[dict]:
    """The order a run calls ``items_`` in. A grid with deceptive conditions goes draw by draw: sample 0 of every
    cell (as sampled, swapped, random — the same draw), then sample 1, …, so a live run shows whole pairs from its
    first answers and a run stopped early holds as many draws of each condition. Other grids keep index order."""
    cfg = load_config(cfg)
    if "deceptive" not in cfg.members or len(cfg.conditions) < 2:
        return list(items_)
    return sorted(items_, key=lambda it: (it["sample"], it["idx"]))


def preview(cfg, n: int = 5) -> list[dict]:
    """``n`` items spread evenly over the grid (for showing what a config produces)."""
    total = count(cfg)
    if total == 0 or n <= 0:
        return []
    n = min(n, total)
    idx = sorted({(j * total) // n for j in range(n)})
    return [item(cfg, i) for i in idx]


def _engine(cfg: Config) -> _Engine:
    """The item engine of ``cfg`` (cached on the config object beside its plan)."""
    p = plan(cfg)
    return cached_on(cfg, "_engine", lambda: _Engine(p))

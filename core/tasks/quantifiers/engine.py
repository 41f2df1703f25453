"""Quantifier items: item i of a config is a pure function of (config, seed, i), in the order of the published
GQG data file; gold labels from each quantifier's set-theoretic meaning; scoring and the reference solver."""

from __future__ import annotations

import hashlib
import json
import random
from functools import lru_cache
from typing import Iterator

from core.tasks.base import spread_indices, stable_id
from core.tasks.quantifiers.config import TASK, Config
from core.tasks.quantifiers.parse import score_truth


def _base_count(cfg: Config) -> int:
    """Items of one reasoning effort (the whole grid when the effort is not a factor)."""
    return len(cfg.predicates) * 2 * len(cfg.nouns) * cfg.counts_per_cell * len(cfg.quantifiers)


def count(cfg: Config) -> int:
    return _base_count(cfg) * len(cfg.reasoning or (None,))


@lru_cache(maxsize=4096)
def _cell_counts(cfg: Config, quantifier: str, noun: str, pair: tuple[str, str], asked: str) -> tuple[int, ...]:
    """Counts of the asked predicate for one cell, ordered by the count of the second predicate ascending."""
    lo, hi = cfg.count_range or (0, cfg.total)
    if cfg.samples is None:
        asked_counts = list(range(lo, hi + 1))
    else:
        key = json.dumps([cfg.seed, quantifier, noun, list(pair), asked, cfg.total, lo, hi], ensure_ascii=False)
        rng = random.Random(int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big"))
        asked_counts = rng.sample(range(lo, hi + 1), cfg.samples)
    if asked == pair[1]:
        return tuple(sorted(asked_counts))
    return tuple(sorted(asked_counts, reverse=True))  # count_second = total − a ascending


@lru_cache(maxsize=65536)
def _config_id(quantifier: str, noun: str, group: str, total: int, pair: tuple[str, str], asked: str,
               template: str) -> str:
    """One configuration = (quantifier, noun, noun group, total, pair, asked predicate, template); its samples are
    the counts."""
    return stable_id({"task": TASK, "quantifier": quantifier, "object": noun, "noun_group": group, "total": total,
                      "pair": list(pair), "predicate": asked, "template": template})


def render_prompt(template_text: str, total: int, *, noun: str, pair: tuple[str, str], asked: str, other: str,
                  quantifier: str, count_first: int, count_second: int) -> str:
    """The prompt of one item from its template text and the item's values (also used to check an imported row)."""
    fields = {
        "total": total,
        "objects": noun,
        "first": pair[0],
        "second": pair[1],
        "count_first": count_first,
        "count_second": count_second,
        "be_first": "is" if count_first == 1 else "are",
        "be_second": "is" if count_second == 1 else "are",
        "quantifier": quantifier,
        "Quantifier": quantifier[:1].upper() + quantifier[1:],
        "predicate": asked,
        "other": other,
    }
    return template_text.format(**fields)


def _render(cfg: Config, *, noun: str, pair: tuple[str, str], asked: str, other: str, quantifier: str,
            count_first: int, count_second: int) -> str:
    return render_prompt(cfg.template_text, cfg.total, noun=noun, pair=pair, asked=asked, other=other,
                         quantifier=quantifier, count_first=count_first, count_second=count_second)


def item(cfg: Config, i: int) -> dict:
    n = count(cfg)
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        raise IndexError(f"item index {i!r} out of range 0…{n - 1}")
    nq, nk, no = len(cfg.quantifiers), cfg.counts_per_cell, len(cfg.nouns)
    ri, rest = divmod(i, _base_count(cfg))   # the reasoning effort is the outermost factor
    effort = cfg.reasoning[ri] if cfg.reasoning else None
    qi, rest = rest % nq, rest // nq
    j, rest = rest % nk, rest // nk
    oi, rest = rest % no, rest // no
    si, pi = rest % 2, rest // 2
    pair = cfg.predicates[pi]
    asked, other = (pair[1], pair[0]) if si == 0 else (pair[0], pair[1])
    quant = cfg.parsed_quantifiers[qi]
    noun, group = cfg.nouns[oi]
    a = _cell_counts(cfg, quant.name, noun, pair, asked)[j]
    count_first, count_second = (cfg.total - a, a) if asked == pair[1] else (a, cfg.total - a)
    truth = quant.holds(cfg.total, a, cfg.total - a)
    config_id = _config_id(quant.name, noun, group, cfg.total, pair, asked, cfg.template_text)
    if effort is not None:   # a grid without the factor keeps its configurations' ids
        config_id = stable_id({"config": config_id, "reasoning": effort})
    return {
        "config_id": config_id,
        "idx": i,
        "sample": j,
        "seed": cfg.seed,
        "prompt": _render(cfg, noun=noun, pair=pair, asked=asked, other=other, quantifier=quant.name,
                          count_first=count_first, count_second=count_second),
        "truth": truth,
        "label": "true" if truth else "false",
        "quantifier": quant.name,
        "object": noun,
        "noun_group": group,
        "total": cfg.total,
        "count_large": count_first,   # count with the pair's first predicate ("large" in GQG)
        "count_small": count_second,  # count with the pair's second predicate ("small" in GQG)
        "predicate": asked,
        "other_predicate": other,
        "count_asked": a,
        "template": cfg.template_name,
        "reasoning": effort,
    }


def describe(cfg: Config) -> dict:
    """Size and label balance of a config without rendering prompts: n_items, n_true, n_false, n_configs,
    counts_per_config, and per quantifier the number of true items."""
    n_true = 0
    per_q: dict[str, int] = {}
    for quant in cfg.parsed_quantifiers:
        t = 0
        for pair in cfg.predicates:
            for asked in (pair[1], pair[0]):
                for noun, _ in cfg.nouns:
                    t += sum(quant.holds(cfg.total, a) for a in _cell_counts(cfg, quant.name, noun, pair, asked))
        per_q[quant.name] = t
        n_true += t
    levels = len(cfg.reasoning or (None,))   # every reasoning effort asks the same items
    n, n_true = count(cfg), n_true * levels
    return {"n_items": n, "n_true": n_true, "n_false": n - n_true,
            "n_configs": len(cfg.parsed_quantifiers) * len(cfg.nouns) * 2 * len(cfg.predicates) * levels,
            "counts_per_config": cfg.counts_per_cell,
            "true_per_quantifier": {q: t * levels for q, t in per_q.items()}}


def warnings(cfg: Config) -> list[str]:
    """Quantifier grids have no impossible combinations (kept for the task protocol)."""
    return []


def spread(cfg: Config, n: int) -> list[int]:
    """``n`` item indices spread over the grid — quantifiers, nouns, predicate pairs and asked predicates, with the
    counts spread within each cell (deterministic; see ``core.tasks.base.spread_indices``)."""
    nq, nk, no = len(cfg.quantifiers), cfg.counts_per_cell, len(cfg.nouns)
    base = _base_count(cfg)
    cells, where = [], []
    for ri, effort in enumerate(cfg.reasoning or (None,)):
        for pi, pair in enumerate(cfg.predicates):
            for si in (0, 1):
                asked = pair[1] if si == 0 else pair[0]
                for oi, (noun, group) in enumerate(cfg.nouns):
                    for qi, quant in enumerate(cfg.parsed_quantifiers):
                        cell = {"quantifier": quant.name, "object": noun, "noun_group": group,
                                "pair": "/".join(pair), "predicate": asked}
                        if effort is not None:
                            cell["reasoning"] = effort
                        cells.append(cell)
                        where.append((qi, oi, si, pi, ri))

    def index_of(c: int, j: int) -> int:
        qi, oi, si, pi, ri = where[c]
        return qi + nq * (j + nk * (oi + no * (si + 2 * pi))) + base * ri

    return spread_indices(cells, nk, n, cfg.seed, index_of)


def items(cfg: Config) -> Iterator[dict]:
    for i in range(count(cfg)):
        yield item(cfg, i)


def score(item: dict, response: str | None) -> dict:
    label = item.get("label")
    if label is None:
        label = "true" if item["truth"] in (True, "true", "True", 1) else "false"
    return score_truth(label, response)


def solve(item: dict) -> str:
    return item["label"] if "label" in item else ("true" if item["truth"] in (True, "true") else "false")


def to_gqg_line(it: dict) -> str:
    """One line in the format of the published data file: {"input": prompt, "target": "true"|"false"}."""
    return json.dumps({"input": it["prompt"], "target": it["label"]}, ensure_ascii=False)

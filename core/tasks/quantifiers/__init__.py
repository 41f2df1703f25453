"""Quantifier task: "There are 50 tables. 47 of the tables are large. 3 of the tables are small. Are at
least 3 of the tables small? Answer with only one word, true or false."

Source of the vanilla dataset: Leroy Z. Wang and Shane Steinert-Threlkeld, "GQG: Generalized Quantifier
Generalization — A Dataset for Evaluating Quantifier Semantics in Language Models", GenBench workshop, EMNLP 2023
(code and data: github.com/lerow/llm-quantifier). The ``gqg`` template below is the paper's prompt verbatim, including
its agreement rule ("1 of the apples is small", otherwise "are"); reproducing it is the point of the ``gqg-vanilla``
preset: 12 objects × 15 quantifiers × 51 counts × 2 asked predicates = 18,360 prompts, 8,592 true and 9,768 false,
in the order of the published data file ``test_data_new.txt``:

    for asked in (small, large):          # all "… small?" prompts first, then all "… large?" prompts
        for object in objects:            # tables, chairs, circles, squares, apples, bikes, pans, trees, shelves, …
            for i in 0 … 50:              # i = number of small objects; 50 − i are large
                for quantifier in the 15: # Table 2 order
                    prompt

(The paper's Table 3 lists "shelves" before "trees"; the published file and its generator have "trees" first — we
follow the data.)

Generalisation (Q2): any total, any range of counts, other predicate pairs, nouns by frequency group or made up,
quantifiers from ``core.tasks.quantifiers.catalogue`` (never user code), other templates (a closed set of named fields),
and ``samples`` = how many counts are drawn per (quantifier, noun, asked predicate) instead of all of them.

Config keys (YAML, ``task: quantifiers``; every key optional):

    preset           start from a named preset (PRESETS) and override the keys given
    quantifiers      names from the catalogue grammar (core.tasks.quantifiers.catalogue), default the 15 of GQG
    objects          your own plural nouns (noun_group "custom")
    noun_groups      common, less_common, rare, rarer, rarest, made_up (data/nouns), pilot_* (the paper's lists),
                     gqg (the 12 objects); default gqg when neither objects nor noun_groups is given
    nouns_per_group  only the first k nouns of each group (a fixed pseudo-random subset)
    total            n, the number of objects (default 50)
    count_range      [low, high] of the count with the asked predicate (default [0, total])
    predicates       pairs [[first, second], …] (default [[large, small]]); both are asked
    template         a name in TEMPLATES or a text using only the TEMPLATE_FIELDS
    samples          counts drawn per (quantifier, noun, pair, asked predicate); default all counts in the range
    seed             seed of those draws (default 0)
    name             a label, kept in the config

Item order in general: for each predicate pair, for asked in (second, first), for each noun, for the j-th count of the
cell (ordered by the count of the *second* predicate, ascending — as in the published file), for each quantifier.
A "configuration" (``config_id``) is one (quantifier, noun, total, pair, asked predicate, template) cell; its samples
are the counts.

Modules: ``config`` (keys, templates, validation) · ``presets`` · ``engine`` (items, labels, scoring) · ``catalogue``
(quantifiers and their meanings) · ``nouns`` (noun groups by frequency, made-up nouns) · ``parse`` (true/false answers)
· ``metrics`` (accuracy, precision, recall, F1 in DuckDB) · ``factors`` (its Plotly figures: core/analysis/quantifier_figures.py) (item columns).
"""

from core.tasks.quantifiers.answers import STOP, answer_grammar, reply_cap
from core.tasks.quantifiers.catalogue import GQG_QUANTIFIERS, parse_quantifier
from core.tasks.quantifiers.config import (
                                           GQG_OBJECTS,
                                           MAX_TEMPLATE,
                                           MAX_TOTAL,
                                           TASK,
                                           TEMPLATE_FIELDS,
                                           TEMPLATES,
                                           Config,
                                           load_config,
                                           preset_config,
)
from core.tasks.quantifiers.engine import count, describe, item, items, score, solve, spread, to_gqg_line, warnings
from core.tasks.quantifiers.factors import FACTORS
from core.tasks.quantifiers.presets import PRESETS

__all__ = [
    "STOP", "answer_grammar", "reply_cap", "spread", "FACTORS", "GQG_OBJECTS", "GQG_QUANTIFIERS", "MAX_TEMPLATE", "MAX_TOTAL", "PRESETS", "TASK", "TEMPLATES", "TEMPLATE_FIELDS", "Config",
    "count", "describe", "item", "items", "load_config", "parse_quantifier", "preset_config", "score", "solve", "to_gqg_line", "warnings",
]

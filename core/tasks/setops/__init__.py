"""Set-operation items (SetLexSem).

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
    pos: noun | verb | adjective | adverb | none     WordNet part of speech of word members, or of the hyponym
                              groups of deceptive sets (none = any; items record it in their ``pos`` column)
    deciles: 1…10 (all)       decile_mode: log_width | rank (log_width)
    frequency_source: wordfreq | path of a "word,count" file (wordfreq)
    conditions: not_swapped | swapped | random (all)   swap_count: none (= ⌊m/2⌋) | int
    hypernym_pairs: [[hypernym_a, hypernym_b], …]       fixed hypernyms for deceptive sets (random pairs)
    word_pool: reference | curated   deceptive sets from every hyponym group (reference) or without the blocklist's
                              words (curated: safe to project; core.lexicon.blocklist) (reference)
    only_samples: [j, …]      only these draws (sample indices) of every cell; each item keeps its sample index,
                              sets and config_id — the full grid's item, asked again (none = all)
    overlap: none (independent draws) | int count | float fraction of the smaller set (none)
    number_max: upper bound of numbers without a length (10000)
    phrasings: formal | plain | functional | pythonic | iterative (formal)
    approaches: baseline | baseline_allow_empty | cot | self_recitation | domain_expertise | composite |
                composite_allow_empty (baseline)
    The SetLexSem reference's value names (formal_language, chain_of_thought, "symmetric difference", decile_words …)
    are accepted as aliases (``aliases``), and a reference experiment YAML as a whole (``reference_yaml``).
    shots: [0, 1, 3, 5] (0)   fixed_shots: true | false (true)
    templates: an override of core/tasks/setops/prompts/templates.yaml (edited templates, stored with the run)

Identity
    ``config_id`` = stable hash of the grid cell: its factors (FACTORS) plus the seed and whatever else changes the
    cell's items — number_max (unconstrained numbers), frequency_source (deciles), a fixed hypernym pair,
    fixed_shots (when k > 0) and the template edits. So (config_id, sample) names one item's sets exactly, and runs
    with the same config and seed share config_ids (comparisons pair them item by item).
    Deceptive sets also accept ``hypernym_pairs: [[hypernym_a, hypernym_b], ...]`` to fix the hypernyms (for the
    UI's "pick a pair"); by default every sample draws its own pair.

Modules: ``config`` (keys, validation) · ``aliases`` (the reference's value names) · ``reference_yaml`` (the
reference's experiment YAML) · ``grid`` (cells, samplers, skipped combinations) · ``engine`` (items) · ``presets`` · ``factors`` (item columns) · ``operations`` (the four operations, canonical member order) · ``sets/``
(populations, pair draws, deceptive sets) · ``prompts/`` (templates, rendering) · ``parse`` (answers) · ``scoring``
(per-item metrics, error-analysis fields).

Public API (the Task protocol of ``core/tasks/__init__.py``)::

    Config / load_config(d) / load_config_yaml(text) / load_config_file(path)
    plan(cfg) -> Plan            grid cells + skipped combinations (Plan.warnings() gives counted messages)
    count(cfg) -> int            item(cfg, i) -> dict          items(cfg, start=0, stop=None) -> Iterator[dict]
    preview(cfg, n=5) -> list[dict]   warnings(cfg) -> list[str]
    score(item, response) -> dict     solve(item) -> str      FACTORS, ITEM_KEYS
    spread(cfg, n) -> list[int]  n item indices spread over the grid (every level of every factor when n allows)
    STOP, reply_cap(cfg, item), answer_grammar(cfg, item)   how a reply ends and its form (``answers``)
    run_order(cfg, items)        deceptive grids are called draw by draw (each sample's conditions together)
"""

from core.tasks.setops.answers import STOP, answer_grammar, reply_cap
from core.tasks.setops.config import (
                                      CONDITIONS,
                                      DECILE_MODES,
                                      GENERATOR_VERSION,
                                      ITEM_KEYS,
                                      KEY_VERSION,
                                      KEYS,
                                      MAX_LENGTH,
                                      MAX_SAMPLES,
                                      MAX_SHOTS,
                                      MAX_SIZE,
                                      MEMBER_TYPES,
                                      POS_NAMES,
                                      TASK,
                                      Config,
                                      load_config,
                                      load_config_file,
                                      load_config_yaml,
)
from core.tasks.setops.engine import item, items, preview, run_order, spread
from core.tasks.setops.factors import FACTORS
from core.tasks.setops.grid import Cell, Plan, Sampler, Skip, count, plan, warnings
from core.tasks.setops.operations import OPERATIONS, SYMBOLS
from core.tasks.setops.presets import PRESET_SOURCES, PRESETS, preset_config
from core.tasks.setops.scoring import kind_of, score_set_response as score, solve

__all__ = [
    "CONDITIONS", "DECILE_MODES", "FACTORS", "GENERATOR_VERSION", "ITEM_KEYS", "KEY_VERSION", "KEYS", "MAX_LENGTH",
    "MAX_SAMPLES", "MAX_SHOTS", "MAX_SIZE", "MEMBER_TYPES", "OPERATIONS", "POS_NAMES", "PRESETS", "PRESET_SOURCES",
    "STOP", "SYMBOLS", "TASK", "answer_grammar", "reply_cap", "spread", "Cell",
    "Config", "Plan", "Sampler", "Skip", "count", "item", "items", "kind_of", "load_config", "load_config_file",
    "load_config_yaml", "plan", "preset_config", "preview", "run_order", "score", "solve", "warnings",
]

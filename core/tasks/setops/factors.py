"""The factors of a set-operation item — the one place that names them.

``COLUMNS`` are the item fields the store keeps as typed columns of ``items`` (``name, kind, since``: kind is
``str``/``int``/``float``; ``since`` is the store schema version that added the column — the store derives its
migrations from it, so a new factor is one line here). ``FACTORS`` are the grid factors that define a cell (the
paper's hyperparameters; ``ITEM_KEYS`` order). ``GROUP_BY`` is the order in which views offer them for grouping.
"""

from __future__ import annotations

COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("operation", "str", 1), ("size_a", "int", 1), ("size_b", "int", 1), ("members", "str", 1),
    ("length", "int", 1), ("decile", "int", 1), ("decile_mode", "str", 1), ("condition", "str", 1),
    ("hypernym_a", "str", 1), ("hypernym_b", "str", 1), ("member_hypernyms", "str", 1), ("swap_count", "int", 1),
    ("overlap", "float", 1), ("phrasing", "str", 1), ("approach", "str", 1), ("shots", "int", 1),
    ("set_a", "str", 1), ("set_b", "str", 1),
    # words: the part-of-speech filter; deceptive: the parts of speech of the members' hyponym groups (noun, verb,
    # noun+verb)
    ("pos", "str", 2),
    # the reasoning effort the item is asked with, when the config crosses it (``reasoning: [none, low, high]``)
    ("reasoning", "str", 8),
)

FACTORS: tuple[str, ...] = (
    "operation", "size_a", "size_b", "members", "length", "pos", "decile", "decile_mode", "condition", "swap_count",
    "overlap", "phrasing", "approach", "shots", "reasoning",
)

GROUP_BY: tuple[str, ...] = (
    "operation", "size_a", "size_b", "members", "length", "pos", "decile", "decile_mode", "condition",
    "hypernym_a", "hypernym_b", "swap_count", "overlap", "phrasing", "approach", "shots", "reasoning",
)

"""The factors of a quantifier item — the one place that names them (see core/tasks/setops/factors.py for the
meaning of ``COLUMNS``, ``FACTORS`` and ``GROUP_BY``)."""

from __future__ import annotations

COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("quantifier", "str", 1), ("object", "str", 1), ("noun_group", "str", 1), ("total", "int", 1),
    ("count_large", "int", 1), ("count_small", "int", 1), ("count_asked", "int", 1), ("predicate", "str", 1),
    ("other_predicate", "str", 1), ("template", "str", 1), ("label", "str", 1),
    ("reasoning", "str", 8),   # the reasoning effort asked, when the config crosses it (as for set operations)
)

FACTORS: tuple[str, ...] = (
    "quantifier", "object", "noun_group", "total", "predicate", "other_predicate",
    "count_asked", "count_large", "count_small", "template", "reasoning",
)

GROUP_BY: tuple[str, ...] = (
    "quantifier", "object", "noun_group", "total", "count_large", "count_small", "predicate", "template", "label",
    "reasoning",
)

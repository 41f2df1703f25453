"""The SetLexSem reference code's value names, accepted everywhere as aliases of ours.

The reference (github.com/amazon-science/SetLexSem-Challenge) names its prompt types ``formal_language`` …, its
approaches ``chain_of_thought`` …, its operations with spaces (``symmetric difference``) and its set types
``decile_words`` / ``deceptive_words``. A config, a reference experiment YAML, an imported result file and the pages
all map them here, once, to this tool's names (the names stored with every run and item).

    canonical(kind, value) -> our name, or ``value`` unchanged when it is no alias
"""

from __future__ import annotations

OPERATION_ALIASES = {
    "symmetric difference": "symmetric_difference", "symmetric-difference": "symmetric_difference",
    "symmetricdifference": "symmetric_difference",
}
PHRASING_ALIASES = {
    "formal_language": "formal", "plain_language": "plain", "functional_language": "functional",
    "pythonic_language": "pythonic", "iterative_accumulation": "iterative",
}
APPROACH_ALIASES = {"chain_of_thought": "cot"}
MEMBER_ALIASES = {
    "decile_words": "deciles", "deceptive_words": "deceptive",
    "basicnumbersampler": "numbers", "basicwordsampler": "words",
}

# what the reference offers that this tool does not measure (refused with a reason, not as an unknown value)
UNSUPPORTED = {
    "operations": {"cartesian product": "the Cartesian product is not one of the four set operations measured here "
                                        "(the reference's own studies left it out too)",
                   "cartesian_product": "the Cartesian product is not one of the four set operations measured "
                                        "here (the reference's own studies left it out too)"},
}

_TABLES = {"operations": OPERATION_ALIASES, "phrasings": PHRASING_ALIASES, "approaches": APPROACH_ALIASES,
           "members": MEMBER_ALIASES}


def canonical(kind: str, value):
    """Our name for a reference value name of ``kind`` (operations, phrasings, approaches, members); anything else
    (our own names, unknown values) is returned unchanged for the caller to validate."""
    if not isinstance(value, str):
        return value
    table = _TABLES[kind]
    return table.get(value, table.get(value.strip().lower(), value))


def aliases_of(kind: str) -> dict[str, str]:
    """The alias table of ``kind`` (reference name -> our name)."""
    return dict(_TABLES[kind])

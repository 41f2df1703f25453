"""Set samplers: number / word / frequency-decile populations, pair draws with overlap control, deceptive hyponym
sets, and the four operations. Pure functions of an explicit ``random.Random`` — no global state."""

from core.tasks.setops.operations import OPERATIONS, SYMBOLS, apply, keeps, truth
from core.tasks.setops.sets.deceptive import (
    CONDITIONS,
    DeceptiveDraw,
    Vocabulary,
    apply_condition,
    default_swap_count,
    vocabulary,
)
from core.tasks.setops.sets.draw import distinct_pairs, draw_pair, infeasible_reason, overlap_count

__all__ = [
    "CONDITIONS", "DeceptiveDraw", "Vocabulary", "apply_condition", "default_swap_count", "vocabulary",
    "distinct_pairs", "draw_pair", "infeasible_reason", "overlap_count",
    "OPERATIONS", "SYMBOLS", "apply", "keeps", "truth",
]

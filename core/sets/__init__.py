"""Set samplers: number / word / frequency-decile populations, pair draws with overlap control, deceptive hyponym
sets, and the four operations. Pure functions of an explicit ``random.Random`` — no global state."""

from core.sets.deceptive import CONDITIONS, DeceptiveDraw, Vocabulary, apply_condition, default_swap_count, vocabulary
from core.sets.draw import distinct_pairs, draw_pair, infeasible_reason, overlap_count
from core.sets.operations import OPERATIONS, SYMBOLS, apply, keeps, truth

__all__ = [
    "CONDITIONS", "DeceptiveDraw", "Vocabulary", "apply_condition", "default_swap_count", "vocabulary",
    "distinct_pairs", "draw_pair", "infeasible_reason", "overlap_count",
    "OPERATIONS", "SYMBOLS", "apply", "keeps", "truth",
]

"""The SetLexSem paper's findings, as data: ids, the contrasted factor and its levels, the reference's filters, the
paper's claims and numbers. Nothing is computed here (core/analysis/findings.py computes; findings_text words).

Each finding is one of the reference's hypotheses (``configs/post_hypothesis/hypothesis.json`` of
github:amazon-science/SetLexSem-Challenge; ``id`` = its ``hypo_name``) or a figure the paper draws from its runs
(Fig 6a / Table 7: length 5 − 3 per decile; precision, recall and Jaccard). A finding names the reference's filter in
our factor names, the factor it contrasts and the level pairs (its pre-specified contrasts: one Holm family per model),
and the paper's figure, claim and numbers. The reference's hypotheses that keep one LLM ("Claude Haiku") are
computed for every model separately: a verdict is always one model's.

Factors that vary *within* a draw of (A, B) (the same sets asked with another operation, phrasing, approach, number
of demonstrations, deceptive condition — or of another model on the same draw) are compared paired by draw; factors
that vary *between* draws (set size, token type, length, decile, overlap) are compared between draws, stratified on
the other draw-level factors. ``WITHIN_DRAW`` names the first kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

# the design factors a contrast holds equal (those present in the runs); ``pos`` counts only for words (for
# deceptive items it is the parts of speech of the drawn groups, which change with the condition)
DESIGN = ("operation", "size_a", "size_b", "members", "length", "pos", "decile", "decile_mode", "condition",
          "swap_count", "overlap", "phrasing", "approach", "shots", "reasoning")
# factors that change while the drawn (A, B) stays the same
WITHIN_DRAW = ("operation", "phrasing", "approach", "shots", "condition", "swap_count", "reasoning", "model")
# what determines a draw (see core/tasks/setops/grid.py: a sampler's draw_key, and the sample index under the seed):
# the sampler's factors, the seed and the sample index; the drawn sets themselves (words and numbers; for deceptive
# draws the two hypernyms, shared by the three conditions) so runs whose config differs in a value not stored as a
# column (number_max, frequency source) never share a draw by accident
DRAW = ("seed", "sample", "members", "size_a", "size_b", "length", "decile", "decile_mode", "overlap", "pos",
        "hypernym_a", "hypernym_b", "set_a", "set_b")
WORDLIKE = ("words", "deciles", "deceptive")
ALLOW_EMPTY = ["baseline_allow_empty", "composite_allow_empty"]


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    factor: str                                   # the column the finding contrasts
    pairs: tuple = ()                             # (a, b) level pairs; empty = adjacent levels present
    filters: Mapping[str, Sequence] = field(default_factory=dict)   # the reference's filter, our names
    within: tuple[str, ...] = ()                  # contrasts computed separately per level of these columns
    ignore: tuple[str, ...] = ()                  # factors that change with ``factor`` (not held equal)
    secondary_to: str | None = None               # a split of this finding's pooled contrast: its own family
    source: str = ""                              # the paper's figure / table
    claim: str = ""                               # what the paper says
    paper: Mapping[tuple, float] = field(default_factory=dict)   # paper's estimate per (a, b[, within]) in points
    paper_table: str | None = None                # data/reference_figures.json table beside ours
    kind: str = "contrast"                        # "contrast" | "metrics"


DECEPTIVE = {"members": ["deceptive"], "phrasing": ["formal"]}

FINDINGS: tuple[Finding, ...] = (
    Finding("which_prompt_language_is_better_formal_vs_plain", "Formal vs plain demonstration phrasing", "phrasing",
            (("formal", "plain"),), {"members": ["numbers", "words"]},
            source="Fig 9, Appendix Table 10 (demonstration phrasing)",
            claim="formal phrasing is better than plain (76.8 vs 72.2, seven LLMs pooled)",
            paper={("formal", "plain"): 4.6}, paper_table="setlexsem_by_phrasing"),
    Finding("operation_types", "Set operations", "operation",
            (("union", "intersection"), ("union", "difference"), ("union", "symmetric_difference"),
             ("intersection", "difference"), ("difference", "symmetric_difference"),
             ("intersection", "symmetric_difference")),
            {"members": ["numbers", "words"]}, source="Fig 4a, Appendix Table 4 (operation)",
            claim="union is easiest; symmetric difference hardest (88.9 / 71.2 / 73.0 / 65.3)",
            paper={("union", "intersection"): 17.71, ("union", "difference"): 15.9,
                   ("union", "symmetric_difference"): 23.63, ("intersection", "difference"): -1.81,
                   ("difference", "symmetric_difference"): 7.73, ("intersection", "symmetric_difference"): 5.92},
            paper_table="setlexsem_by_operation"),
    # Table 6: numbers − words = +2.1 (union), −25.0 (intersection), −5.5 (difference), −6.1 (symmetric difference);
    # −8.6 over the four operations
    Finding("numbers_vs_words", "Numbers vs words", "members", (("numbers", "words"),),
            {"members": ["numbers", "words"]}, ignore=("pos",),
            source="Fig 5, Appendix Table 6 (operation × token type)",
            claim="accuracy is lower with numbers than with words almost everywhere: words score higher in 3 of the 4 "
                  "operations (all but union), by 25 points on intersections",
            paper={("numbers", "words"): -8.62}, paper_table="setlexsem_by_operation_members"),
    Finding("operand_size", "Operand size", "size_a", (),
            {"members": ["numbers", "words"], "phrasing": ["formal"], "shots": [0]}, ignore=("size_b",),
            source="Fig 4b, Appendix Table 5 (operand size)",
            claim="accuracy falls as sets grow (90.4 / 80.6 / 70.5 / 54.4 for 2 / 4 / 8 / 16)",
            paper={(2, 4): 9.78, (4, 8): 10.14, (8, 16): 16.06}, paper_table="setlexsem_by_size"),
    Finding("llm_comparison", "Models compared", "model", (),
            {"members": ["numbers", "words"], "phrasing": ["formal"], "shots": [0], "length": [1, 2, 3, 4],
             "approach": ALLOW_EMPTY},
            source="Fig 3, Appendix Table 3 (LLMs)", claim="models differ in mean and, more, in spread",
            paper_table="setlexsem_by_model"),
    Finding("compare_deciles", "Token frequency deciles", "decile", (),
            {"members": ["deciles"], "phrasing": ["formal"]}, source="Fig 6 (token frequency)",
            claim="rarer words are not uniformly harder: the effect depends on length (Fig 6a)"),
    Finding("deceptiveness_swapping_effect", "Swapping hyponyms between the sets", "condition",
            (("swapped", "not_swapped"),), DECEPTIVE, ignore=("swap_count",),
            source="Fig 7, Appendix Table 8 (deceptive words)",
            claim="swapping lowers accuracy (Claude Haiku 71.9 vs 91.8; −41 points on intersections) and widens "
                  "the spread over configurations (std 26.4 vs 10.3)",
            paper={("swapped", "not_swapped"): -19.96}, paper_table="setlexsem_deceptive"),
    Finding("deceptiveness_effect", "Deceptive vs random words", "condition", (("swapped", "random"),),
            DECEPTIVE, ignore=("swap_count",), source="Fig 7, Appendix Table 8",
            claim="swapped deceptive sets are harder than a random baseline (71.9 vs 81.1)",
            paper={("swapped", "random"): -9.18}, paper_table="setlexsem_deceptive"),
    Finding("deceptiveness_effect_k_shots", "Swapping effect by number of demonstrations", "condition",
            (("swapped", "not_swapped"),), DECEPTIVE, within=("shots",), ignore=("swap_count",),
            secondary_to="deceptiveness_swapping_effect",
            source="Fig 8 (demonstrations × relationship between A and B)",
            claim="demonstrations do not remove the swapping effect"),
    # the reference's levels (STUDY2DECEPTIVE_WORD_SAMPLER): Random Baseline, Deceptive swapped, Deceptive not
    # swapped — our deceptive conditions random / swapped / not_swapped, with the allow-empty approaches
    Finding("effect_of_deceptive_words_when_sampled_for_word_and_overlap_samplers",
            "Deceptive sets vs the random baseline", "condition",
            (("swapped", "random"), ("not_swapped", "random")),
            {**DECEPTIVE, "approach": ALLOW_EMPTY}, ignore=("swap_count",),
            source="Fig 7, Appendix Table 8 (random baseline vs deceptive, swapped or not)",
            claim="swapped deceptive sets are harder than the random baseline (71.9 vs 81.1), not-swapped ones "
                  "easier (91.8)",
            paper={("swapped", "random"): -9.18, ("not_swapped", "random"): 10.78},
            paper_table="setlexsem_deceptive"),
    Finding("effect_of_deceptive_words_when_sampled_for_word_and_overlap_samplers_for_each_set_operation",
            "Deceptive sets vs the random baseline, per operation", "condition",
            (("swapped", "random"), ("not_swapped", "random")),
            {**DECEPTIVE, "approach": ALLOW_EMPTY}, within=("operation",), ignore=("swap_count",),
            secondary_to="effect_of_deceptive_words_when_sampled_for_word_and_overlap_samplers",
            source="Appendix Table 9 (deceptive, per operation)",
            claim="swapping hurts most on intersections (50.1 vs 86.7 for the random baseline)",
            paper_table="setlexsem_deceptive_by_operation"),
    Finding("is_overlap_important_only_haiku_numbers", "Overlap between the sets (numbers)", "overlapping",
            (("overlap", "independent"),), {"members": ["numbers"], "phrasing": ["formal"]},
            ignore=("overlap",), source="Appendix (overlap samplers)",
            claim="a controlled overlap changes accuracy on numbers"),
    Finding("is_overlap_important_only_haiku_words", "Overlap between the sets (words)", "overlapping",
            (("overlap", "independent"),), {"members": ["words"], "phrasing": ["formal"]},
            ignore=("overlap",), source="Appendix (overlap samplers)",
            claim="a controlled overlap changes accuracy on words"),
    Finding("length_5_minus_3_per_decile", "Word length 5 vs 3, per frequency decile (Fig 6a)", "length",
            ((5, 3),), {"members": ["deciles"]}, within=("decile",), source="Fig 6a, Appendix Table 7",
            claim="longer words are easier, most in rare deciles (+16.6 points in decile 2, +1.7 in decile 5)",
            paper={(5, 3, 2): 16.6, (5, 3, 3): 11.2, (5, 3, 4): 6.4, (5, 3, 5): 1.7, (5, 3, 6): 4.9,
                   (5, 3, 7): 4.2, (5, 3, 8): 2.5, (5, 3, 9): 3.8},
            paper_table="setlexsem_len5_minus_len3_by_decile"),
    Finding("precision_recall_jaccard", "Precision, recall and Jaccard of the answers", "operation",
            source="§3 metrics (per-item precision, recall, Jaccard)", kind="metrics",
            claim="partial credit: how far wrong answers are from the truth"),
)
BY_ID = {f.id: f for f in FINDINGS}

# columns made from others for a finding: ``overlapping`` = "overlap" when a fraction of the smaller set is shared
# by design, else "independent"
DERIVED = ("overlapping",)

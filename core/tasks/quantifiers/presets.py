"""Named quantifier configs: the GQG vanilla dataset and its variations."""

from __future__ import annotations

from typing import Any

from core.tasks.quantifiers.catalogue import GQG_QUANTIFIERS

PRESETS: dict[str, dict[str, Any]] = {
    # The page's default: GQG's prompt and objects on a small grid (3 quantifiers × 4 objects × 2 asked predicates ×
    # 6 counts drawn = 144 prompts), a few minutes with the embedded model.
    "gqg-small": {
        "task": "quantifiers",
        "quantifiers": ["at least half", "more than 10", "none"],
        "noun_groups": ["gqg"],
        "nouns_per_group": 4,
        "total": 50,
        "predicates": [["large", "small"]],
        "template": "gqg",
        "samples": 6,
        "seed": 0,
    },
    # The published GQG dataset, exactly (18,360 prompts).
    "gqg-vanilla": {
        "task": "quantifiers",
        "quantifiers": list(GQG_QUANTIFIERS),
        "noun_groups": ["gqg"],
        "total": 50,
        "predicates": [["large", "small"]],
        "template": "gqg",
        "seed": 0,
    },
    # The paper's frequency pilot (Figure 1): q = at least half, counts 0…50, the paper's 10 nouns per group.
    "gqg-frequency-pilot": {
        "task": "quantifiers",
        "quantifiers": ["at least half"],
        "noun_groups": ["pilot_common", "pilot_less_common", "pilot_rare", "pilot_rarer", "pilot_rarest",
                        "pilot_made_up"],
        "total": 50,
        "predicates": [["large", "small"]],
        "template": "gqg",
        "seed": 0,
    },
    # Our frequency bands (wordfreq) plus made-up nouns, a sample of 6 counts per cell: small enough to run live.
    "frequency-bands-sampled": {
        "task": "quantifiers",
        "quantifiers": ["at least half", "more than 10", "none"],
        "noun_groups": ["common", "less_common", "rare", "rarer", "rarest", "made_up"],
        "total": 50,
        "predicates": [["large", "small"]],
        "template": "gqg",
        "samples": 6,
        "seed": 0,
    },
}

"""Named quantifier configs: the GQG vanilla dataset and its variations."""

from __future__ import annotations

from typing import Any

from core.tasks.quantifiers.catalogue import GQG_QUANTIFIERS

PRESETS: dict[str, dict[str, Any]] = {
    # What the Quantifiers page opens with: small enough to run in a few minutes on the embedded model (issue 22:
    # opening on the 18,360-prompt dataset with Run enabled invited a 5–10 hour run by accident).
    "small": {
        "task": "quantifiers",
        "seed": 0,
        "quantifiers": ["at least half", "more than 10", "none", "between 2 and 10"],
        "noun_groups": ["common", "made_up"],
        "samples": 6,
        "nouns_per_group": 5,
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

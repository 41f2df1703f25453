"""Named set-operation configs: the paper's studies and a small live demo."""

from __future__ import annotations

from core.errors import ConfigError
from core.tasks.setops.config import CONDITIONS, TASK, Config, load_config
from core.tasks.setops.operations import OPERATIONS

# ----------------------------------------------------------------------------------------------------- presets
PRESETS: dict[str, dict] = {
    # The paper's main grid (Table 2 without frequency/semantics): ~125k prompts.
    "paper-main": {
        "task": TASK, "seed": 0, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
        "members": ["numbers", "words"], "lengths": [None, 1, 2, 3, 4], "phrasings": ["formal", "plain"],
        "approaches": ["baseline", "cot"], "shots": [0, 1, 3, 5], "fixed_shots": True,
    },
    # Frequency deciles x lengths 3 and 5 (paper Table 7), chain of thought, formal phrasing.
    "paper-deciles": {
        "task": TASK, "seed": 0, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
        "members": ["deciles"], "deciles": list(range(1, 11)), "decile_mode": ["rank"], "lengths": [3, 5],
        "phrasings": ["formal"], "approaches": ["cot"], "shots": [0],
    },
    # Deceptive hyponym sets in the three conditions (paper Figure 7), chain of thought, formal phrasing.
    "paper-deceptive": {
        "task": TASK, "seed": 0, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
        "members": ["deceptive"], "conditions": list(CONDITIONS), "phrasings": ["formal"], "approaches": ["cot"],
        "shots": [0],
    },
    # Small enough to run live against the embedded model.
    "demo-small": {
        "task": TASK, "seed": 0, "samples": 5, "operations": list(OPERATIONS), "sizes": [2, 4],
        "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0],
    },
}


def preset_config(name: str) -> Config:
    """The Config of a named preset (see PRESETS)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown setops preset {name!r}; expected one of: {', '.join(PRESETS)}")
    return load_config(PRESETS[name])

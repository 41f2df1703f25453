"""Named set-operation configs: the SetLexSem reference's studies and a small live demo."""

from __future__ import annotations

from core.errors import ConfigError
from core.tasks.setops.config import CONDITIONS, TASK, Config, load_config
from core.tasks.setops.operations import OPERATIONS

# ----------------------------------------------------------------------------------------------------- presets
# The reference's studies (github.com/amazon-science/SetLexSem-Challenge, configs/experiments/), as our configs:
# the same grid a reference YAML gives through core/tasks/setops/reference_yaml.py (seed 292 = its RANDOM_SEED_VAL,
# so a preset run and a run of the YAML itself share their items). PRESET_SOURCES names the file(s) each reproduces.
_STUDY = {
    "task": TASK, "seed": 292, "samples": 50, "operations": list(OPERATIONS), "sizes": [2, 4, 8, 16],
    "shots": [0, 1, 3, 5], "fixed_shots": True, "phrasings": ["formal"],
    "approaches": ["baseline", "baseline_allow_empty", "composite", "composite_allow_empty"],
}
PRESETS: dict[str, dict] = {
    # numbers and words of length 1-4, formal and plain: 3,968 configurations x 50 = 198,400 prompts
    "paper-main": dict(_STUDY, members=["numbers", "words"], lengths=[1, 2, 3, 4], phrasings=["formal", "plain"]),
    # frequency deciles 1-9 (the reference's log-width bins) x lengths 3 and 5, the two allow-empty approaches
    "paper-deciles": dict(_STUDY, members=["deciles"], deciles=list(range(1, 10)), decile_mode=["log_width"],
                          lengths=[3, 5], approaches=["baseline_allow_empty", "composite_allow_empty"]),
    # deceptive hyponym sets in the three conditions of the paper's Figure 7
    "paper-deceptive": dict(_STUDY, members=["deceptive"], conditions=list(CONDITIONS)),
    # small enough to run live against the embedded model
    "demo-small": {
        "task": TASK, "seed": 0, "samples": 5, "operations": list(OPERATIONS), "sizes": [2, 4],
        "members": ["numbers", "words"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0],
    },
}

PRESET_SOURCES: dict[str, str] = {
    "paper-main": "configs/experiments/anthr_haiku.yaml (study 240505_ClaudeHaiku)",
    "paper-deciles": "configs/experiments/anthr_haiku_deciles.yaml (study 240506_Deciles_ClaudeHaiku)",
    "paper-deceptive": "configs/experiments/anthr_haiku_deceptive.yaml (swapped) + anthr_haiku_deceptive_NoSwap.yaml "
                       "(not swapped) + the random baseline (study 240531_ClaudeHaiku, whose config is not published)",
    "demo-small": "none: a small live demo",
}


def preset_config(name: str) -> Config:
    """The Config of a named preset (see PRESETS)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown setops preset {name!r}; expected one of: {', '.join(PRESETS)}")
    return load_config(PRESETS[name])

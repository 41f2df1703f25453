"""Task registry: a task turns a validated config into items (prompt + truth + factors) and scores answers.

The contract every task module implements (see ``core/tasks/base.py``)::

    Config                      dataclass; Config.from_dict(d) validates (raises ConfigError), .to_dict()
    load_config(d) -> Config    same as Config.from_dict
    count(cfg) -> int           number of items (after skipping impossible grid cells)
    item(cfg, i) -> dict        pure function of (cfg, cfg.seed, i); JSON-serialisable dict holding
                                'config_id' (the grid cell = one "configuration" of the paper), 'idx',
                                'sample' (index within the cell), every factor as a flat key,
                                'prompt' and 'truth'.
    items(cfg) -> Iterator[dict]  all items in order (may be faster than item() in a loop)
    score(item, response) -> dict  parse a raw model response and score it (see base.Score)
    solve(item) -> str          a response text the reference solver would give (always correct)
    FACTORS                     the factor keys of this task's items (for grouping / store columns)
"""

from __future__ import annotations

import importlib
from types import ModuleType

from core.errors import ConfigError

TASKS = {
    "setops": "core.tasks.setops",
    "quantifiers": "core.tasks.quantifiers",
}


def get_task(name: str) -> ModuleType:
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; expected one of: {', '.join(TASKS)}")
    return importlib.import_module(TASKS[name])


def task_of_config(d: dict) -> ModuleType:
    if not isinstance(d, dict):
        raise ConfigError("config must be a mapping (YAML dictionary)")
    return get_task(d.get("task", "setops"))

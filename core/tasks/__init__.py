"""Tasks: a task turns a validated config into items (prompt + truth + factors) and scores answers.

Every task is a package under ``core/tasks/`` whose ``__init__`` provides the ``Task`` protocol below, registered by
name in ``TASKS``. Nothing else probes a task module: the runner, the CLI, the pages and the store use exactly these
names.

    TASK                        its registered name
    Config                      frozen dataclass; Config.from_dict(d) validates (raises ConfigError), .to_dict()
    load_config(d) -> Config    same as Config.from_dict (a Config passes through)
    count(cfg) -> int           number of items (after skipping impossible grid cells)
    warnings(cfg) -> list[str]  counted messages about skipped grid cells
    item(cfg, i) -> dict        pure function of (cfg, cfg.seed, i); JSON-serialisable dict holding 'config_id'
                                (the grid cell = one "configuration" of the paper), 'idx', 'sample', every factor
                                as a flat key, 'prompt' and 'truth'
    items(cfg) -> Iterator      all items in order (faster than item() in a loop)
    score(item, response)       parse a raw model response and score it (see base.Score)
    solve(item) -> str          the reference solver's response (always correct)
    spread(cfg, n) -> list[int] n item indices spread over the grid: every level of every grid factor appears when
                                n allows (``base.spread_indices``); deterministic
    STOP                        stop sequences that end a complete reply (the default of params ``stop``)
    reply_cap(cfg, item)        tokens an answer-only reply may need (None: the prompt asks for reasoning)
    answer_grammar(cfg, item)   {"gbnf", "regex"}: the answer's form, for answer_format "constrained"
    run_order(cfg, items)       optional: the order a run calls its items in (default: index order);
                                ``in_run_order`` applies it
    PRESETS                     named configs (mappings)
    FACTORS                     the grid factors of its items

Shared by every task and by the layers above (defined in ``core.tasks.base``, imported from here): ``stable_id``,
``is_int``, ``INT64`` (the range of a stored whole number), ``REASONING_EFFORTS`` and ``RESULTS_VIEW`` (the name of
the store's results view).

Each task's ``factors`` module names its item columns (``COLUMNS``) and the order views group by (``GROUP_BY``);
``item_columns()`` and ``group_by()`` gather them for the store and the analysis.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Iterator, Mapping, Protocol

from core.errors import ConfigError
from core.tasks.base import INT64, REASONING_EFFORTS, RESULTS_VIEW, is_int, stable_id  # noqa: F401  (shared by every layer)

TASKS = {
    "setops": "core.tasks.setops",
    "quantifiers": "core.tasks.quantifiers",
}


PROTOCOL = ("TASK", "PRESETS", "FACTORS", "Config", "load_config", "count", "warnings", "item", "items", "score",
            "solve", "spread", "STOP", "reply_cap", "answer_grammar")


class Task(Protocol):
    TASK: str
    STOP: tuple[str, ...]
    PRESETS: Mapping[str, Mapping]
    FACTORS: tuple[str, ...]
    Config: type

    def load_config(self, d: Any) -> Any: ...
    def count(self, cfg: Any) -> int: ...
    def warnings(self, cfg: Any) -> list[str]: ...
    def item(self, cfg: Any, i: int) -> dict: ...
    def items(self, cfg: Any) -> Iterator[dict]: ...
    def score(self, item: dict, response: str) -> dict: ...
    def solve(self, item: dict) -> str: ...
    def spread(self, cfg: Any, n: int) -> list[int]: ...
    def reply_cap(self, cfg: Any, item: dict) -> int | None: ...
    def answer_grammar(self, cfg: Any, item: dict) -> dict: ...


def get_task(name: str) -> ModuleType:
    """The task registered as ``name`` (ConfigError for an unknown one)."""
    if not isinstance(name, str) or name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; expected one of: {', '.join(TASKS)}")
    module = importlib.import_module(TASKS[name])
    missing = [n for n in PROTOCOL if not hasattr(module, n)]
    if missing:  # a task package that lost part of the protocol is a bug, said plainly
        raise TypeError(f"task {name!r} ({TASKS[name]}) does not implement the Task protocol: missing {missing}")
    return module


def select_items(task: ModuleType, cfg: Any, limit: int | None, pick: str = "spread") -> Iterator[dict]:
    """The items of ``cfg`` in index order: all of them, or ``limit`` of them — spread over the grid
    (``task.spread``: every level of every factor when ``limit`` allows), or the first ones (``pick="first"``, how
    runs stored before the spread picked them)."""
    if limit is None:
        yield from task.items(cfg)
        return
    if pick == "first":
        for n, it in enumerate(task.items(cfg)):
            if n >= limit:
                return
            yield it
        return
    total = task.count(cfg)
    if limit >= total:
        yield from task.items(cfg)
        return
    wanted = task.spread(cfg, limit)
    if len(wanted) * 20 < total:   # a few items: made one by one (item i is a pure function of the config and i)
        for i in wanted:
            yield task.item(cfg, i)
        return
    keep = set(wanted)
    yield from (it for it in task.items(cfg) if it["idx"] in keep)


def in_run_order(task: ModuleType, cfg: Any, items: list[dict]) -> list[dict]:
    """``items`` in the order a run calls them: the task's ``run_order`` if it has one, else as given (index order).
    The order changes only what is answered first, never which items a run holds or their keys."""
    order = getattr(task, "run_order", None)
    return list(items) if order is None else order(cfg, items)


def task_of_config(d: dict) -> ModuleType:
    if not isinstance(d, dict):
        raise ConfigError("config must be a mapping (YAML dictionary)")
    return get_task(d.get("task", "setops"))


def _factor_modules() -> list[ModuleType]:
    return [importlib.import_module(f"{path}.factors") for path in TASKS.values()]


def item_columns() -> tuple[tuple[str, str, int], ...]:
    """Every task's item columns (name, kind, schema version that added it), each name once."""
    seen: dict[str, tuple[str, str, int]] = {}
    for mod in _factor_modules():
        for col in mod.COLUMNS:
            if col[0] in seen and seen[col[0]][1] != col[1]:
                raise TypeError(f"item column {col[0]!r} is declared with two kinds: {seen[col[0]][1]}, {col[1]}")
            seen.setdefault(col[0], col)
    return tuple(seen.values())


def group_by() -> dict[str, tuple[str, ...]]:
    """Per task, the factors views offer for grouping, in display order."""
    return {name: importlib.import_module(f"{path}.factors").GROUP_BY for name, path in TASKS.items()}

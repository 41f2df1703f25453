"""One path from what a user wrote to what runs: a YAML file, a YAML text, a preset or a dict → ``RunSpec``.

Every entry point goes through here — ``python -m core generate`` and ``run``, the pages (set operations,
quantifiers, deceptive sets, an uploaded run YAML on the Runs page) and ``runner.resume_run`` — so a document
accepted by one is accepted by all, and is refused with the same one-line ``ConfigError`` everywhere.

Documents accepted (YAML mappings)::

    a task config            task: setops, operations: [...], …          (task defaults to setops)
    a task config + run      the same, plus model:, params: {…}, base_url:
    a run document           config: {task config}, model:, params:, base_url:   (what the Runs page downloads)
    a SetLexSem reference experiment YAML (STUDY_NAME, N_RUN, OP_LIST, SET_TYPES, M, … — its upper-case keys),
                             translated once, here, by core.tasks.setops.reference_yaml; what cannot be honoured
                             exactly is listed in ``RunSpec.notes`` (one line each)

    run_spec(doc, *, task=None, model=None, params=None, base_url=None) -> RunSpec
    read_run_spec(path, …) / parse_run_spec(text, …) / preset_run_spec(task, name, …)
    RunOptions(concurrency, rpm, tpm, max_attempts, call_timeout, limit).checked(flags=False)
    run_yaml(config, model, params, base_url) -> str      a stored run as a document run_spec accepts back
    max_items() -> int                                    the cap on a config's items ($STUDIO_MAX_ITEMS)

Explicit arguments (CLI flags, the page's model picker) win over the document's ``model``/``params``/``base_url``.

Size: a config whose grid holds more items than the cap (``max_items``: $STUDIO_MAX_ITEMS, default
DEFAULT_MAX_ITEMS) is refused by ``run_spec`` with its count and the cap in one line — counted from the grid's cells,
never by building items — so no entry point (generate, run, --estimate, the pages) ever materialises a huge grid.
The cap holds for the whole grid, ``--limit`` or not: a task draws all samples of a grid cell together.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.errors import ConfigError
from core.files import parse_yaml_mapping, read_yaml_file

RUN_KEYS = ("model", "params", "base_url")
MAX_ITEMS_ENV = "STUDIO_MAX_ITEMS"
# Above the paper's main grid (124,800 prompts) and its ~200k-prompt studies per model. A run holds its items in
# memory (~3 kB each for set operations), so the default keeps a run of the cap's size near 1 GB.
DEFAULT_MAX_ITEMS = 300_000


def max_items() -> int:
    """The cap on the items of one config: $STUDIO_MAX_ITEMS (a whole number >= 1), else DEFAULT_MAX_ITEMS."""
    raw = os.environ.get(MAX_ITEMS_ENV, "").strip().replace("_", "").replace(",", "")
    if not raw:
        return DEFAULT_MAX_ITEMS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{MAX_ITEMS_ENV} must be a whole number >= 1, got {os.environ[MAX_ITEMS_ENV]!r}")
    return int(raw)


def check_item_count(n: int, cap: int | None = None) -> int:
    """``n`` if it is within the cap (``cap`` or ``max_items()``), else ConfigError naming both."""
    cap = max_items() if cap is None else cap
    if n > cap:
        raise ConfigError(f"the config has {n:,} items, more than the cap of {cap:,} (narrow the grid, or raise "
                          f"the cap with {MAX_ITEMS_ENV})")
    return n


@dataclass(frozen=True)
class RunOptions:
    """How a run is executed (not what it asks): checked once, here, for the CLI, the pages and resume."""

    concurrency: int | None = None      # calls in flight; None = the model's default
    rpm: float | None = None            # requests per minute; None = no limit
    tpm: float | None = None            # tokens per minute; None = no limit
    max_attempts: int = 6               # attempts per call before it is recorded as failed
    call_timeout: float = 120.0         # seconds per call
    limit: int | None = None            # only N items of the grid

    # field → (CLI flag, words for the pages / API)
    LABELS = {"concurrency": ("--concurrency", "concurrency"), "rpm": ("--rpm", "requests per minute"),
              "tpm": ("--tpm", "tokens per minute"), "max_attempts": ("--max-attempts", "max_attempts"),
              "call_timeout": ("--timeout", "call timeout"), "limit": ("--limit", "limit")}

    def checked(self, flags: bool = False) -> "RunOptions":
        """This object, or ConfigError naming the first bad value (by its CLI flag when ``flags``)."""
        def name(f: str) -> str:
            return self.LABELS[f][0 if flags else 1]

        for f in ("concurrency", "max_attempts", "limit"):
            v = getattr(self, f)
            if v is None and f != "max_attempts":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name(f)} must be a whole number >= 1, got {v!r}")
        for f in ("rpm", "tpm", "call_timeout"):
            v = getattr(self, f)
            if v is None and f != "call_timeout":
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name(f)} must be a positive number, got {v!r}")
        return self


@dataclass(frozen=True)
class RunSpec:
    """A validated task config plus (optionally) the model, sampling parameters and base URL to run it with."""

    task: str
    config: Any                          # the task's validated Config object
    model: str | None = None
    params: dict = field(default_factory=dict)
    base_url: str | None = None
    notes: tuple[str, ...] = ()          # how a reference experiment YAML was translated (one line each)
    name: str | None = None              # a run label the document gives (the reference's STUDY_NAME)

    @property
    def task_module(self):
        from core.tasks import get_task

        return get_task(self.task)

    def config_dict(self) -> dict:
        """The config as a plain mapping with its task first (what runs store and YAML downloads hold)."""
        d = self.config.to_dict()
        return {"task": self.task, **{k: v for k, v in d.items() if k != "task"}}


def _split(doc: dict) -> tuple[dict, dict]:
    """(task config mapping, run keys) of a document in any accepted shape."""
    if not isinstance(doc, dict):
        raise ConfigError("config must be a mapping (YAML dictionary)")
    if isinstance(doc.get("config"), dict):
        run = {k: doc.get(k) for k in RUN_KEYS if doc.get(k) is not None}
        extra = sorted(set(doc) - {"config", *RUN_KEYS})
        if extra:
            raise ConfigError(f"a run document holds config, model, params and base_url; unknown key {extra[0]!r}")
        return dict(doc["config"]), run
    config = {k: v for k, v in doc.items() if k not in RUN_KEYS}
    return config, {k: doc[k] for k in RUN_KEYS if doc.get(k) is not None}


def run_spec(doc: dict, *, task: str | None = None, model: str | None = None, params: dict | None = None,
             base_url: str | None = None, max_items: int | None = None) -> RunSpec:
    """Validate a document (see the module docstring). ``task`` (the CLI's positional task) must match the
    document's own ``task`` when both are given; explicit model/params/base_url override the document's.
    ``max_items`` overrides the cap on the grid's items (default: ``max_items()``)."""
    from core.tasks import get_task

    config, run = _split(doc)
    notes: tuple[str, ...] = ()
    name = None
    from core.tasks.setops import reference_yaml

    if reference_yaml.is_reference(config):
        if task not in (None, "setops") or config.get("task", "setops") != "setops":
            raise ConfigError(f"a SetLexSem reference experiment config is a setops config, not {task!r}")
        ref = reference_yaml.translate(config)
        config, notes, name = ref.config, ref.notes, ref.name
        if ref.model and "model" not in run:
            run["model"] = ref.model
    given = config.get("task", task or "setops")
    if not isinstance(given, str):
        raise ConfigError(f"'task' must be a task name, got {given!r}")
    if task is not None and given != task:
        raise ConfigError(f"the config is for task {given!r}, not {task!r}")
    doc_params = run.get("params", {})
    if not isinstance(doc_params, dict):
        raise ConfigError("'params' in the config must be a mapping of sampling parameters")
    for key in ("model", "base_url"):
        if key in run and not isinstance(run[key], str):
            raise ConfigError(f"'{key}' in the config must be text, got {run[key]!r}")
    module = get_task(given)
    cfg = module.load_config({**config, "task": given})
    check_item_count(module.count(cfg), max_items)
    merged = {**doc_params, **{k: v for k, v in (params or {}).items() if v is not None}}
    return RunSpec(given, cfg, model or run.get("model"), merged, base_url or run.get("base_url"), notes, name)


def parse_run_spec(text: str, what: str = "config", **overrides) -> RunSpec:
    return run_spec(parse_yaml_mapping(text, what), **overrides)


def read_run_spec(path: str | Path, **overrides) -> RunSpec:
    return run_spec(read_yaml_file(path), **overrides)


def preset_run_spec(task: str, name: str, **overrides) -> RunSpec:
    """A task's named preset (``PRESETS`` of the task) as a RunSpec."""
    from core.tasks import get_task

    presets = get_task(task).PRESETS
    if name not in presets:
        raise ConfigError(f"unknown {task} preset {name!r}; expected one of: {', '.join(presets) or 'none'}")
    return run_spec({**presets[name], "task": task}, task=task, **overrides)


def load_task_config(doc: dict) -> tuple[str, Any]:
    """(task name, validated config) of a document in any accepted shape."""
    spec = run_spec(doc)
    return spec.task, spec.config


def run_yaml(config: dict, model: str | None, params: dict | None, base_url: str | None = None) -> str:
    """A stored run's configuration as a YAML document (what the Runs page offers for download and accepts back)."""
    doc: dict = {"config": config, "model": model, "params": params}
    if base_url:
        doc["base_url"] = base_url
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def config_changes(before: dict, after: dict, limit: int = 6) -> list[str]:
    """What differs between two task configs, one short phrase per key ("samples 50 → 2", "operations −union"),
    at most ``limit`` of them."""
    def show(v) -> str:
        return "none" if v is None else str(v)

    out = []
    for k in dict.fromkeys([*before, *after]):
        a, b = before.get(k), after.get(k)
        if k == "task" or a == b:
            continue
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            gone = [show(x) for x in a if x not in b]
            new = [show(x) for x in b if x not in a]
            out.append(f"{k} " + " ".join([*(f"−{x}" for x in gone), *(f"+{x}" for x in new)] or ["reordered"]))
        else:
            out.append(f"{k} {show(a)} → {show(b)}")
    return out[:limit] + ([f"… {len(out) - limit} more"] if len(out) > limit else [])

"""Reading YAML documents written by users: task configs (CLI ``--config``, uploads on the Runs page), edited prompt
templates. One place that turns any bad document into a one-line ``ConfigError`` naming the problem and its line.

    parse_yaml_mapping(text, what) -> dict        a YAML mapping (an empty document is {}); ConfigError otherwise
    read_yaml_file(path) -> dict                  the same from a file (missing, too large, not UTF-8 → ConfigError)
    load_task_config(doc) -> (task, config)       a task config, or a stored run's YAML with a ``config`` inside
    run_yaml(config, model, params, base_url) -> str   a stored run's configuration as YAML (the Runs page)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.errors import ConfigError

MAX_CONFIG_BYTES = 1_000_000


def parse_yaml_mapping(text: str, what: str = "config") -> dict:
    """Parse ``text`` as YAML with the safe loader (no Python objects are ever built) and require a mapping."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{what} is not valid YAML{where}: {problem}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{what} must be a mapping (key: value lines), not a {type(doc).__name__}")
    return doc


def read_yaml_file(path: str | Path, max_bytes: int = MAX_CONFIG_BYTES) -> dict:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file not found: {path}")
    if p.stat().st_size > max_bytes:
        raise ConfigError(f"config file {path} is larger than {max_bytes // 1000} kB")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    return parse_yaml_mapping(text, f"config file {path}")


def run_yaml(config: dict, model: str | None, params: dict | None, base_url: str | None = None) -> str:
    """A stored run's configuration as a YAML document (what the Runs page offers for download and accepts back)."""
    doc: dict = {"config": config, "model": model, "params": params}
    if base_url:
        doc["base_url"] = base_url
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def load_task_config(doc: dict) -> tuple[str, Any]:
    """A validated task config from a YAML mapping: either the config itself or a run's YAML (as downloaded from
    the Runs page) holding it under ``config``. Returns (task name, config object)."""
    from core.tasks import get_task

    config = doc["config"] if isinstance(doc.get("config"), dict) else doc
    task = config.get("task", "setops")
    if not isinstance(task, str):
        raise ConfigError(f"'task' must be a task name, got {task!r}")
    return task, get_task(task).load_config(config)

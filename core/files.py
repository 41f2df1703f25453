"""Files users hand us and files we hand back: reading their YAML documents (task configs, run documents, edited
prompt templates) and checking output paths they name. One place that turns any bad document or path into a one-line
error naming the problem (and its line), before any slow work.

    PROJECT_ROOT, DATA_DIR                        the checkout and its shipped data
    parse_yaml_mapping(text, what) -> dict        a YAML mapping (an empty document is {}); ConfigError otherwise
    read_yaml_file(path) -> dict                  the same from a file (missing, too large, not UTF-8 → ConfigError)
    check_output_path(path, suffixes, flag=…)     an output file that can be written (UserError otherwise)

What a document means (task config, run document) is core/config.py's business.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import yaml

from core.errors import ConfigError, UserError

PROJECT_ROOT = Path(__file__).resolve().parent.parent   # the checkout: app.py, core/, data/ …
DATA_DIR = PROJECT_ROOT / "data"                        # shipped data (see each data/*/README.md)

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


def check_output_path(path: str | os.PathLike, suffixes: Sequence[str], *, flag: str | None = None,
                      probe: bool = True) -> Path:
    """The output path as a Path, or UserError when its name does not end in one of ``suffixes``, it is a
    directory, its folder does not exist, or (``probe``) the file cannot be created there — probed by opening it for
    appending, and removed again if it did not exist before."""
    p = Path(path).expanduser()
    label = f"{flag} {str(path)!r}" if flag else repr(str(path))
    if not any(p.name.lower().endswith(s) for s in suffixes):
        *rest, last = suffixes
        raise UserError(f"{label}: use a {', '.join(rest) + ' or ' if rest else ''}{last} file name")
    if p.is_dir():
        raise UserError(f"{flag + ' ' if flag else ''}{path} is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"output directory does not exist: {parent}")
    if probe:
        existed = p.exists()
        try:
            open(p, "ab").close()
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
        if not existed:
            p.unlink(missing_ok=True)
    return p

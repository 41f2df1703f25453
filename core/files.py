"""Files users hand us and files we hand back: reading their YAML documents (task configs, run documents, edited
prompt templates) and checking output paths they name. One place that turns any bad document or path into a one-line
error naming the problem (and its line), before any slow work.

    PROJECT_ROOT, DATA_DIR                        the checkout and its shipped data
    parse_yaml_mapping(text, what) -> dict        a YAML mapping (an empty document is {}); ConfigError otherwise
                                                  (bounded: aliases may expand to MAX_ALIAS_NODES nodes, nesting
                                                  MAX_YAML_DEPTH levels — refused while composing, before anything
                                                  walks or serialises the document)
    read_yaml_file(path) -> dict                  the same from a file (missing, too large, not UTF-8 → ConfigError)
    check_output_path(path, suffixes, flag=…)     an output file that can be written (UserError otherwise)
    neutralise(text) / restore(text)              a text cell made safe for a spreadsheet (the OWASP rule for CSV:
                                                  a leading ' before = + - @ tab CR), and back again exactly
    neutralise_sql(column), is_formula(text)      the same rule in DuckDB SQL; a cell a spreadsheet would run

What a document means (task config, run document) is core/config.py's business.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from core.errors import ConfigError, UserError

PROJECT_ROOT = Path(__file__).resolve().parent.parent   # the checkout: app.py, core/, data/ …
DATA_DIR = PROJECT_ROOT / "data"                        # shipped data (see each data/*/README.md)

MAX_CONFIG_BYTES = 1_000_000
MAX_ALIAS_NODES = 100_000     # nodes that aliases (*name, <<: *name) may add once expanded, over the whole document
MAX_YAML_DEPTH = 100          # nesting levels of sequences and mappings


class _Refused(yaml.composer.ComposerError):
    """A document refused for its shape (alias expansion, nesting), with the line where it happened."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader (no Python objects are ever built) that also refuses, while composing the node graph:

    * alias expansion past MAX_ALIAS_NODES: an alias is one node in the graph but as many as its anchor holds once
      anything walks or serialises the document (a 342-byte "billion laughs" file expands to ~10^9 strings); the
      expanded size of every node is tracked (aliased subtrees counted as often as they are referenced), and the
      nodes aliases add are summed;
    * nesting deeper than MAX_YAML_DEPTH (the composer and everything after it recurse once per level).
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._weight: dict[int, int] = {}   # id(node) -> nodes in its expanded subtree
        self._alias_nodes = 0
        self._depth = 0

    def _size(self, node) -> int:
        return self._weight.get(id(node), 1)

    def compose_node(self, parent, index):
        if self.check_event(yaml.events.AliasEvent):
            event = self.peek_event()
            node = super().compose_node(parent, index)
            self._alias_nodes += self._size(node)
            if self._alias_nodes > MAX_ALIAS_NODES:
                raise _Refused(None, None, f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes (refused: an "
                               "alias bomb would exhaust memory)", event.start_mark)
            return node
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise _Refused(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", self.peek_event().start_mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if isinstance(node, yaml.SequenceNode):
            self._weight[id(node)] = 1 + sum(self._size(v) for v in node.value)
        elif isinstance(node, yaml.MappingNode):
            self._weight[id(node)] = 1 + sum(self._size(k) + self._size(v) for k, v in node.value)
        return node


def parse_yaml_mapping(text: str, what: str = "config") -> dict:
    """Parse ``text`` as YAML with the bounded safe loader and require a mapping."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{what} is larger than {MAX_CONFIG_BYTES // 1000} kB")
    try:
        doc = yaml.load(text, Loader=_BoundedLoader)  # noqa: S506 — a SafeLoader subclass
    except RecursionError:   # a shape the depth bound does not see (defence in depth)
        raise ConfigError(f"{what} is nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if isinstance(exc, _Refused):
            raise ConfigError(f"{what}{where.replace(' at', ',', 1)}: {problem}") from None
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


# ------------------------------------------------------------------------------------------- spreadsheet cells
# A model's reply ``=HYPERLINK("http://…")`` leaves a CSV export as ``'=HYPERLINK("http://…")`` (spreadsheets show it
# as text) and an import of that file stores ``=HYPERLINK("http://…")`` again — the text the model wrote. A cell that
# already starts with ' before one of the triggers gets one more ', so ``restore`` undoes ``neutralise`` exactly.
# ``is_formula`` is what imports refuse: = or @ first, or + / - first with a function call, a DDE pipe or a sheet
# reference after it (``-2+3+cmd|' /C calc'!A0``); plain numbers (-1, +0.5) and neutralised cells are not formulas.

TRIGGERS = "=+-@\t\r"
_NEEDS_QUOTE = re.compile(r"^'*[=+\-@\t\r]")
_QUOTED = re.compile(r"^'+[=+\-@\t\r]")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def neutralise(text):
    """``text`` safe for a spreadsheet (non-text passes through)."""
    if isinstance(text, str) and _NEEDS_QUOTE.match(text):
        return "'" + text
    return text


def restore(text):
    """The text a neutralised cell stood for (non-text and other cells pass through)."""
    if isinstance(text, str) and _QUOTED.match(text):
        return text[1:]
    return text


def neutralise_sql(column: str) -> str:
    """A DuckDB expression applying ``neutralise`` to the text column ``column`` (a quoted identifier)."""
    return (f"CASE WHEN regexp_matches({column}, '^''*[=+\\-@\\t\\r]') THEN '''' || {column} ELSE {column} END")


def is_formula(text) -> bool:
    """Whether a spreadsheet would evaluate the cell (see the module docstring)."""
    if not isinstance(text, str):
        return False
    s = text.lstrip(" \t\r\n")
    if not s or s[0] not in "=+-@":
        return False
    if s[0] in "=@":
        return True
    if _NUMBER.match(s.rstrip()):
        return False
    return any(c in s for c in "(|!")

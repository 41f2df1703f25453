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
                                                  a leading ' before tab, CR, or = + - @ after any leading
                                                  whitespace), and back again exactly
    neutralise_sql(column), is_formula(text)      the same rule in DuckDB SQL; a cell a spreadsheet would run
    write_csv(rows, target) / csv_text(rows)      the one CSV writer: every CSV the tool writes, cells neutralised

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
# as text) and an import of that file stores ``=HYPERLINK("http://…")`` again — the text the model wrote. The rule
# (OWASP's, widened): a cell is quoted when it starts with tab or CR, or with = + - @ after any run of ASCII
# whitespace (`` =1`` is a formula to a spreadsheet that trims, and ``is_formula`` refuses it on import). A cell that
# already starts with ' before such a start gets one more ', so ``restore`` undoes ``neutralise`` exactly.
# ``is_formula`` is what imports refuse: = or @ first (after whitespace), or + / - first with a function call, a DDE
# pipe or a sheet reference after it (``-2+3+cmd|' /C calc'!A0``); plain numbers (-1, +0.5) and neutralised cells
# are not formulas.
#
# Every CSV the tool writes goes through ``write_csv`` / ``csv_text`` (reports, samples, tuples, generated items,
# page downloads) or, for exports streamed by DuckDB's COPY, applies ``neutralise_sql`` — the same rule in SQL — to
# every text column. Our readers of those files (core/store/readers.py, core/embeddings/samples.py) ``restore``.

TRIGGERS = "=+-@\t\r"
# Rows end in CRLF (RFC 4180): Python's csv writer (and pandas') quotes a cell holding a character of the line
# terminator; with "\n" alone a bare CR in a reply went unquoted, and every reader (ours, a spreadsheet's) broke the
# row there — the text after it a new row's first cell, ``\r@SUM(…)`` a formula again.
CSV_NEWLINE = "\r\n"
_SPACE = " \t\r\n\v\f"                                # what a spreadsheet may skip before = + - @
_START = r"(?:[\t\r]|[ \t\r\n\v\f]*[=+\-@])"          # the start of a cell a spreadsheet could run
_NEEDS_QUOTE = re.compile(r"^'*" + _START)
_QUOTED = re.compile(r"^'+" + _START)
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
    """A DuckDB expression applying ``neutralise`` to the text column ``column`` (a quoted identifier): the same
    pattern, which RE2 reads as Python's re does."""
    pattern = _NEEDS_QUOTE.pattern.replace("'", "''")
    return f"CASE WHEN regexp_matches({column}, '{pattern}') THEN '''' || {column} ELSE {column} END"


def is_formula(text) -> bool:
    """Whether a spreadsheet would evaluate the cell (see the comment above)."""
    if not isinstance(text, str):
        return False
    s = text.lstrip(_SPACE)
    if not s or s[0] not in "=+-@":
        return False
    if s[0] in "=@":
        return True
    if _NUMBER.match(s.rstrip()):
        return False
    return any(c in s for c in "(|!")


def csv_cell(value):
    """One value as a CSV cell: None (and NaN) empty, text neutralised, anything else as it is."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return neutralise(value)


def write_csv(rows, target, columns: Sequence[str] | None = None) -> int:
    """Write ``rows`` — a pandas DataFrame or an iterable of dicts (the first one's keys are the header unless
    ``columns`` is given) — as CSV to ``target`` (a path or a text file object), every text cell and column name
    neutralised. Returns the number of rows written; nothing is written for no rows and no ``columns``."""
    import csv

    own = isinstance(target, (str, os.PathLike))
    fh = open(target, "w", newline="", encoding="utf-8") if own else target
    try:
        if hasattr(rows, "to_csv"):   # a DataFrame: pandas formats its numbers, we neutralise its text
            frame = rows.map(neutralise).rename(columns=lambda c: neutralise(str(c)))
            frame.to_csv(fh, index=False, lineterminator=CSV_NEWLINE)
            return len(frame)
        writer = None
        if columns is not None:
            writer = csv.writer(fh, lineterminator=CSV_NEWLINE)
            writer.writerow([csv_cell(str(c)) for c in columns])
        n = 0
        for row in rows:
            if writer is None:
                columns = list(row)
                writer = csv.writer(fh, lineterminator=CSV_NEWLINE)
                writer.writerow([csv_cell(str(c)) for c in columns])
            writer.writerow([csv_cell(row.get(c)) for c in columns])
            n += 1
        return n
    finally:
        if own:
            fh.close()


def csv_text(rows, columns: Sequence[str] | None = None) -> str:
    """``write_csv`` into a string (downloads)."""
    import io

    buf = io.StringIO()
    write_csv(rows, buf, columns)
    return buf.getvalue()

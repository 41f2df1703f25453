"""Finds SQL that writes a table, in the string literals of Python source (read with ``ast``, imports nothing from it).

Every string constant of a file is a candidate: a plain or implicitly concatenated literal, an f-string (each
``{…}`` read as one placeholder identifier) and a ``+`` of literals. A candidate that holds a write keyword (any
case) is parsed as DuckDB SQL by sqlglot, every statement of it: INSERT (also ``INSERT OR REPLACE``, ``BY NAME``,
below a ``WITH``), UPDATE, DELETE, MERGE, CREATE, DROP, ALTER, TRUNCATE and ``COPY … FROM`` name the table they
write; quoting, case, a schema prefix and comments between the words do not hide it. Text sqlglot cannot parse
(an f-string whose placeholder stands for a clause) is read by a pattern of the same statements as well, so a
write is found either way. Used by tests/architecture/test_store_writes.py; from a shell:

    python -m tests.support.sql_writes          # every write to a store table outside core/store
"""

from __future__ import annotations

import ast
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from tests.support.source_scan import ROOT

logging.getLogger("sqlglot").setLevel(logging.ERROR)   # prose it reads as a command is no finding of ours

PLACEHOLDER = "_ph_"
_WRITE_WORD = re.compile(r"\b(insert|update|delete|merge|create|drop|alter|truncate|copy)\b", re.IGNORECASE)

# the same statements as a pattern, for text the parser refuses: the target is the one group that matched
_NAME = r'(?:"?\w+"?\s*\.\s*)?"?(\w+)"?'
_COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*", re.DOTALL)
_PATTERN = re.compile(
    r"\b(?:insert\s+(?:or\s+(?:replace|ignore)\s+)?into\s+" + _NAME
    + r"|update\s+" + _NAME + r"\s+(?:(?:as\s+)?\w+\s+)?set\b"
    + r"|delete\s+from\s+" + _NAME
    + r"|merge\s+into\s+" + _NAME + r"\s+(?:(?:as\s+)?\w+\s+)?using\b"
    + r"|truncate\s+(?:table\s+)?" + _NAME
    + r"|(?:drop|alter)\s+(?:table|view)\s+(?:if\s+exists\s+)?" + _NAME
    + r"|create\s+(?:or\s+replace\s+)?(?:(?:temp|temporary)\s+)?(?:table|view)\s+(?:if\s+not\s+exists\s+)?" + _NAME
    + r"|copy\s+" + _NAME + r"\s+from\b)",
    re.IGNORECASE)

_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable,
           exp.Copy)


@dataclass(frozen=True)
class Write:
    path: str
    line: int
    table: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: writes {self.table}: {' '.join(self.text.split())[:70]}"


def _text(node: ast.AST) -> str | None:
    """The string a node stands for (placeholders for an f-string's values), or None when it is no string."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else PLACEHOLDER for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Each string of a module once: the outermost literal (an f-string's parts and the operands of a ``+`` of
    literals are read as the whole they make)."""
    out, inner = [], set()
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        text = _text(node)
        if text is None:
            continue
        out.append((node.lineno, text))
        inner.update(id(sub) for sub in ast.walk(node) if sub is not node)
    return out


def _target_tables(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Copy) and not node.args.get("kind"):   # COPY … TO a file reads its source
        return []
    parts = [node.args.get("this")]
    if isinstance(node, (exp.Drop, exp.TruncateTable)):
        parts += node.args.get("expressions") or []
    names = []
    for part in parts:
        if isinstance(part, exp.Table):
            names.append(part.name)
        elif isinstance(part, exp.Expression):
            first = part.find(exp.Table)
            if first is not None:
                names.append(first.name)
    return names


def written_tables(sql: str) -> set[str]:
    """Lower-case names of the tables ``sql`` writes (parsed, and by pattern), empty for text that writes none."""
    if not _WRITE_WORD.search(sql):
        return set()
    found = {next(g for g in m.groups() if g) for m in _PATTERN.finditer(_COMMENT.sub(" ", sql))}
    try:
        statements = sqlglot.parse(sql, read="duckdb")
    except SqlglotError:
        statements = []
    for statement in statements:
        if statement is None:
            continue
        for node in statement.walk():
            if isinstance(node, _WRITES):
                found.update(_target_tables(node))
    return {name.lower() for name in found}


def writes_in_file(path: Path, tables: set[str], root: Path = ROOT) -> list[Write]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = str(path.relative_to(root))
    return [Write(rel, line, table, text) for line, text in _strings(tree)
            for table in sorted(written_tables(text) & tables)]


def store_writes(files: list[Path], tables: set[str], root: Path = ROOT) -> list[Write]:
    return [w for p in files for w in writes_in_file(p, tables, root)]


def files_outside_the_store(root: Path = ROOT) -> list[Path]:
    """The product's and the benches' Python files, core/store excepted (tests build and damage stores on purpose)."""
    files = [root / "app.py"] if (root / "app.py").exists() else []
    for top in ("core", "pages", "ui", "bench"):
        files += [p for p in sorted((root / top).rglob("*.py")) if (root / "core" / "store") not in p.parents]
    return files


def store_tables() -> set[str]:
    """The tables and views of a new store file, as core.store makes it."""
    import tempfile

    from core import store

    with tempfile.TemporaryDirectory() as tmp, store.connect(Path(tmp) / "tables.duckdb") as con:
        rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary UNION "
                           "SELECT view_name FROM duckdb_views() WHERE NOT temporary AND NOT internal").fetchall()
    return {r[0].lower() for r in rows}


if __name__ == "__main__":
    found = store_writes(files_outside_the_store(), store_tables())
    for w in found:
        print(w)
    print(f"{len(found)} SQL writes to store tables outside core/store")

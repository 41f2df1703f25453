"""Reads core/ with ``ast`` (imports nothing from it) for the shape figures of the code: functions longer than a
limit, and imports that go past a package's front door. From a shell:

    python -m tests.support.shape_scan             # both lists, and their counts
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests.support.source_scan import ROOT, import_statements, module_name

MAX_FUNCTION_LINES = 100


@dataclass(frozen=True)
class Function:
    path: str
    name: str       # qualified within its module: Class.method, outer.inner
    lines: int      # from ``def`` to its last line (decorators not counted)

    def __str__(self) -> str:
        return f"{self.path}: {self.name} ({self.lines} lines)"


def core_files(root: Path = ROOT) -> list[Path]:
    return sorted((root / "core").rglob("*.py"))


def functions(path: Path, root: Path = ROOT) -> list[Function]:
    """Every function and method of a file, nested ones included, with its length in lines."""
    rel = str(path.relative_to(root))
    out: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append(Function(rel, name, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return out


def long_functions(root: Path = ROOT, limit: int = MAX_FUNCTION_LINES) -> list[Function]:
    """The functions of core/ longer than ``limit`` lines, longest first."""
    found = [f for p in core_files(root) for f in functions(p, root) if f.lines > limit]
    return sorted(found, key=lambda f: (-f.lines, f.path, f.name))


# ---- front doors ----------------------------------------------------------------------------------------------------
def packages(root: Path = ROOT) -> set[str]:
    """The packages directly under core/ (``core.store``, ``core.analysis`` …): each one's ``__init__`` is its door."""
    return {f"core.{p.name}" for p in (root / "core").iterdir() if (p / "__init__.py").is_file()}


def _is_module(name: str, root: Path) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_targets(path: Path, root: Path = ROOT) -> set[str]:
    """The project modules a file imports, at any depth of the file: ``from a.b import c`` gives ``a.b.c`` when c is
    a module, else ``a.b``; ``importlib.import_module("a.b")`` with a constant name counts as an import of a.b."""
    tree, found = import_statements(path, root)
    out: set[str] = set()
    for base, names in found:
        if not names:   # import a.b
            out.add(base)
        out.update(f"{base}.{n}" if _is_module(f"{base}.{n}", root) else base for n in names)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.add(node.args[0].value)
    return {m for m in out if m == "core" or m.startswith("core.")}


def _package_of(name: str, pkgs: set[str]) -> str | None:
    return next((p for p in pkgs if name == p or name.startswith(p + ".")), None)


def cross_package_imports(root: Path = ROOT) -> list[tuple[str, str]]:
    """(importing file, imported module) for each import from one package of core/ (or a top-level module of core/)
    into another package of core/."""
    pkgs = packages(root)
    out = []
    for path in core_files(root):
        mine = _package_of(module_name(path, root), pkgs)
        for target in imported_targets(path, root):
            theirs = _package_of(target, pkgs)
            if theirs is not None and theirs != mine:
                out.append((str(path.relative_to(root)), target))
    return sorted(out)


def past_front_doors(root: Path = ROOT) -> list[tuple[str, str]]:
    """The cross-package imports that reach a submodule (``core.store.runs``) rather than the package itself."""
    pkgs = packages(root)
    return [(f, t) for f, t in cross_package_imports(root) if t not in pkgs]


if __name__ == "__main__":
    long = long_functions()
    for f in long:
        print(f)
    print(f"{len(long)} functions over {MAX_FUNCTION_LINES} lines in core/")
    crossing, past = cross_package_imports(), past_front_doors()
    for f, t in past:
        print(f"{f} -> {t}")
    print(f"{len(past)} of {len(crossing)} cross-package imports in core/ go past a package's front door")

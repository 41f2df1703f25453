"""Reads the project's source with ``ast`` (imports nothing from it) to list where modules reach into each other's
private parts and which layer imports which. Used by tests/architecture and handy from a shell:

    python -m tests.support.source_scan            # every cross-module private name and attribute, by file
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("core", "pages", "ui")

# Underscore attributes that are a public API of the standard library or of a library we use.
PUBLIC_UNDERSCORE_ATTRS = frozenset({
    "_replace", "_asdict", "_fields", "_make", "_field_defaults",   # collections.namedtuple / typing.NamedTuple
    "_exit",                                                        # os._exit
    "_getframe",                                                    # sys._getframe
})


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(root: Path = ROOT, tops: tuple[str, ...] = SCANNED) -> list[Path]:
    return [p for top in tops for p in sorted((root / top).rglob("*.py"))]


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


# calls that import the module named by their first argument, and calls that reach the attribute named by their second
_IMPORT_CALLS = frozenset({"import_module", "__import__"})
_ATTR_CALLS = frozenset({"getattr", "hasattr", "delattr"})


def _called(node: ast.Call) -> str | None:
    """The name a call calls: ``f(…)`` → ``f``, ``mod.f(…)`` → ``f``."""
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _literal_arg(node: ast.Call, pos: int) -> str | None:
    if len(node.args) > pos and isinstance(node.args[pos], ast.Constant) and isinstance(node.args[pos].value, str):
        return node.args[pos].value
    return None


def dynamic_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Modules imported by a call with a literal name: ``importlib.import_module("m")``, ``__import__("m")``."""
    return [(node.lineno, name) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _called(node) in _IMPORT_CALLS
            and (name := _literal_arg(node, 0)) is not None and not name.startswith(".")]


def _absolute(node: ast.ImportFrom, me: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = me if is_package else me.rpartition(".")[0]
    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(anchor + ([node.module] if node.module else []))


def _private_module_allowed(target: str, me: str) -> bool:
    """A private module ``pkg._m`` (or a name inside it) may be imported only by ``pkg`` itself (its ``__init__``,
    the public face) and from inside ``pkg._m``; a private name ``m._x`` only inside ``m``."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if is_private(part):
            owner, private = ".".join(parts[:i]), ".".join(parts[: i + 1])
            if not (me == owner or me == private or me.startswith(private + ".")):
                return False
    return True


def _defined_private_attrs(tree: ast.AST) -> set[str]:
    """Underscore names a module defines as attributes: ``self._x = …``, class-level ``_x = …``, ``def _x``."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and is_private(node.name):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and is_private(sub.attr):
                        out.add(sub.attr)
                    elif isinstance(sub, ast.Name) and is_private(sub.id):
                        out.add(sub.id)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and len(node.args) > 1:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and is_private(arg.value):
                out.add(arg.value)
    return out


def private_uses(path: Path, root: Path = ROOT) -> list[Violation]:
    """Cross-module private names in one file: ``from m import _x``, ``import m._x`` (also by
    ``importlib.import_module("m._x")``), ``from m import _sub`` of a private module outside its package, and
    ``obj._x`` (also ``getattr(obj, "_x")``, ``hasattr``, ``delattr``) where ``obj`` is not ``self``/``cls`` and ``_x``
    is not an attribute this module defines itself (another module's or a library's private state)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path, root)
    rel = str(path.relative_to(root))
    is_package = path.name == "__init__.py"
    out: list[Violation] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node, me, is_package)
            if base.split(".")[0] not in SCANNED:
                continue
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if not _private_module_allowed(target, me):
                    out.append(Violation(rel, node.lineno, f"from {base} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in SCANNED and not _private_module_allowed(alias.name, me):
                    out.append(Violation(rel, node.lineno, f"import {alias.name}"))
    for line, name in dynamic_imports(tree):
        if name.split(".")[0] in SCANNED and not _private_module_allowed(name, me):
            out.append(Violation(rel, line, f"import {name}"))
    own = _defined_private_attrs(tree)
    for node in ast.walk(tree):   # getattr(obj, "_x") and its kin: the same reach as obj._x
        if isinstance(node, ast.Call) and _called(node) in _ATTR_CALLS and node.args:
            attr = _literal_arg(node, 1)
            if attr is None or not is_private(attr) or attr in own or attr in PUBLIC_UNDERSCORE_ATTRS:
                continue
            if isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"):
                continue
            out.append(Violation(rel, node.lineno, f"attribute .{attr} of {ast.unparse(node.args[0])}"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and is_private(node.attr)):
            continue
        if node.attr in own or node.attr in PUBLIC_UNDERSCORE_ATTRS:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        out.append(Violation(rel, node.lineno, f"attribute .{node.attr} of {ast.unparse(node.value)}"))
    return sorted(set(out), key=lambda v: (v.path, v.line, v.what))


def all_private_uses(root: Path = ROOT, tops: tuple[str, ...] = SCANNED) -> list[Violation]:
    return [v for p in source_files(root, tops) for v in private_uses(p, root)]


def import_statements(path: Path, root: Path = ROOT):
    """(tree, [(module, names)]) of a file: one entry per import statement at any depth — ``import a.b`` gives
    ("a.b", ()), ``from .b import c, d`` gives the absolute module and ("c", "d")."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path, root)
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((_absolute(node, me, path.name == "__init__.py"), tuple(a.name for a in node.names)))
    return tree, found


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module name ``path`` imports (project or library, at any depth of the file), fully qualified as written
    (``from a.b import c`` gives ``a.b`` and ``a.b.c``), also by a call with a literal name
    (``importlib.import_module("a.b")``)."""
    tree, found = import_statements(path, root)
    out: set[str] = set()
    for base, names in found:
        out.add(base)
        out.update(f"{base}.{n}" for n in names)
    out.update(name for _, name in dynamic_imports(tree))
    return out

if __name__ == "__main__":
    found = all_private_uses()
    for v in found:
        print(v)
    print(f"{len(found)} cross-module private uses")

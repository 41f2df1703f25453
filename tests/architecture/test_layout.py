"""The shape of the code base (docs/ARCHITECTURE.md): one home per concept, no import cycles, small modules, layers
that only call downwards. These read the source with ``ast``; they import nothing from the project."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
PAGES = ROOT / "pages"
UI = ROOT / "ui"
MAX_LINES = 600
MAX_TOP_LEVEL_MODULES = 8


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(top: Path) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(top.rglob("*.py"))}


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every project module ``path`` imports, at any depth of the file (function-level imports count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != me:
                out.add(name)
    return out


def _graph(top: Path) -> dict[str, set[str]]:
    mods = _modules(top)
    known = set(mods) | set(_modules(ROOT / "core"))
    return {m: _imports(p, known) for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_core_modules():
    assert _cycles(_graph(CORE)) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_core_top_level_is_small_and_has_no_loose_task_modules():
    loose = sorted(p.name for p in CORE.glob("*.py"))
    assert len(loose) <= MAX_TOP_LEVEL_MODULES, loose
    assert not [n for n in loose if n.startswith(("quantifier", "setops", "store_", "runner_"))], loose


def test_no_module_over_the_line_limit():
    long = {str(p.relative_to(ROOT)): n for top in (CORE, PAGES, UI) for p in top.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_core_never_imports_streamlit_and_pages_import_only_core_and_the_ui_helpers():
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] == "streamlit" for n in names), path
    known = set(_modules(CORE)) | set(_modules(PAGES)) | set(_modules(UI))
    for path in [*PAGES.rglob("*.py"), *UI.rglob("*.py")]:
        for name in _imports(path, known):
            assert name.split(".")[0] in ("core", "ui"), (path, name)


def test_test_fixtures_live_outside_core():
    names = {p.stem for p in CORE.rglob("*.py")}
    assert not names & {"runner_loopback", "loopback", "synthetic", "fixtures", "conftest"}


# constant -> its one home
ONE_HOME = {
    "OPERATIONS": "core/tasks/setops/operations.py",
    "STRICT_COLUMNS": "core/tasks/setops/scoring.py",
    "DID_NOT_FOLLOW_SQL": "core/tasks/setops/scoring.py",
    "VIEW": "core/analysis/sql.py",
    "INT64": "core/tasks/base.py",
    "RESULTS_VIEW": "core/tasks/base.py",
}


def test_shared_constants_are_defined_once():
    homes: dict[str, list[str]] = {name: [] for name in ONE_HOME}
    for p in sorted(CORE.rglob("*.py")):
        for n in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if getattr(t, "id", None) in homes:
                        homes[t.id].append(str(p.relative_to(ROOT)))
    assert homes == {name: [home] for name, home in ONE_HOME.items()}, "import these from their one home"

"""The layer order of docs/ARCHITECTURE.md, read from the source with ``ast``:

    tasks  ←  store, models  ←  runner, analysis  ←  cli, ui, pages

A layer imports only the layers to its left (and core's shared modules: errors, files, config …). In particular:
tasks never import analysis, runner, store, the UI or Plotly (a task is data: items, prompts, scoring); the store
never imports analysis, the runner or a task's private names; analysis writes no store table itself (every write
goes through core.store); nothing in core imports Streamlit or the UI."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.source_scan import ROOT, imported_modules, module_name

CORE = ROOT / "core"

# package -> module prefixes it must never import
FORBIDDEN = {
    "core.tasks": ("core.analysis", "core.runner", "core.store", "core.cli", "pages", "ui", "plotly", "streamlit"),
    "core.store": ("core.analysis", "core.runner", "core.cli", "pages", "ui", "plotly", "streamlit"),
    "core.models": ("core.analysis", "core.runner", "core.cli", "pages", "ui", "plotly", "streamlit"),
    "core.analysis": ("core.runner", "core.cli", "pages", "ui", "streamlit"),
    "core.runner": ("core.analysis", "core.cli", "pages", "ui", "plotly", "streamlit"),
    "core": ("pages", "ui", "streamlit"),
}
WRITE_SQL = re.compile(r"^\s*(INSERT\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|CREATE\s|DROP\s|ALTER\s|TRUNCATE\b|COPY\s)")


def _hits(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def layer_violations(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted((root / "core").rglob("*.py")):
        me = module_name(path, root)
        package = max((p for p in FORBIDDEN if me == p or me.startswith(p + ".")), key=len)
        for name in sorted(imported_modules(path, root)):
            if _hits(name, FORBIDDEN[package]):
                out.append(f"{path.relative_to(root)}: {package} imports {name}")
    return out


def store_writes_outside_the_store(root: Path = ROOT) -> list[str]:
    """SQL that writes (INSERT, UPDATE, DELETE, CREATE, DROP …) in a string of an analysis module."""
    out = []
    for path in sorted((root / "core" / "analysis").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            # a plain string, or the text of an f-string (ast gives its literal parts as constants too)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and WRITE_SQL.match(node.value):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {node.value.strip()[:60]}")
    return out


def store_imports_of_task_privates(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted((root / "core" / "store").rglob("*.py")):
        for name in sorted(imported_modules(path, root)):
            if name.startswith("core.tasks.") and any(p.startswith("_") and not p.startswith("__")
                                                      for p in name.split(".")):
                out.append(f"{path.relative_to(root)}: {name}")
    return out


def test_each_layer_imports_only_the_layers_below_it():
    found = layer_violations()
    assert not found, "imports against the layer order (docs/ARCHITECTURE.md):\n" + "\n".join(found)


def test_analysis_writes_no_store_table_itself():
    found = store_writes_outside_the_store()
    assert not found, "analysis modules writing store tables (move the write into core.store):\n" + "\n".join(found)


def test_the_store_imports_no_private_name_of_a_task():
    found = store_imports_of_task_privates()
    assert not found, "\n".join(found)


def test_the_layer_checks_see_a_violation(tmp_path):
    (tmp_path / "core" / "tasks").mkdir(parents=True)
    (tmp_path / "core" / "analysis").mkdir()
    (tmp_path / "core" / "store").mkdir()
    (tmp_path / "core" / "tasks" / "t.py").write_text("import plotly.graph_objects as go\nfrom core.analysis import x\n")
    (tmp_path / "core" / "analysis" / "a.py").write_text('def f(con, k):\n    con.execute(f"DELETE FROM t WHERE k = {k}")\n'
                                                         '    con.execute("INSERT INTO t VALUES (?)", [k])\n')
    (tmp_path / "core" / "store" / "s.py").write_text("from core.tasks.setops.scoring import _strict\n"
                                                      "import core.tasks._shared\n")
    assert layer_violations(tmp_path) == ["core/tasks/t.py: core.tasks imports core.analysis",
                                          "core/tasks/t.py: core.tasks imports core.analysis.x",
                                          "core/tasks/t.py: core.tasks imports plotly.graph_objects"]
    assert [v.split(":")[0] for v in store_writes_outside_the_store(tmp_path)] == ["core/analysis/a.py"] * 2
    assert store_imports_of_task_privates(tmp_path) == ["core/store/s.py: core.tasks._shared",
                                                        "core/store/s.py: core.tasks.setops.scoring._strict"]

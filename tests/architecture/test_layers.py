"""The layer order of docs/ARCHITECTURE.md, read from the source with ``ast``:

    tasks  ←  store, models  ←  runner, analysis  ←  cli, ui, pages

A layer imports only the layers to its left (and core's shared modules: errors, files, config …). In particular:
tasks never import analysis, runner, store, the UI or Plotly (a task is data: items, prompts, scoring); the store
never imports analysis, the runner or a task's private names; nothing in core imports Streamlit or the UI. An import
by a call with a literal name (``importlib.import_module("core.store")``) counts as an import. That no module outside
the store writes a store table itself is tests/architecture/test_store_writes.py's."""

from __future__ import annotations

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


def test_the_store_imports_no_private_name_of_a_task():
    found = store_imports_of_task_privates()
    assert not found, "\n".join(found)


def test_the_layer_checks_see_a_violation(tmp_path):
    (tmp_path / "core" / "tasks").mkdir(parents=True)
    (tmp_path / "core" / "analysis").mkdir()
    (tmp_path / "core" / "store").mkdir()
    (tmp_path / "core" / "tasks" / "t.py").write_text("import plotly.graph_objects as go\nfrom core.analysis import x\n")
    # a task reaching the store by a module name in a string, at the top and inside a function
    (tmp_path / "core" / "tasks" / "u.py").write_text("import importlib\nstore = importlib.import_module('core.store')\n"
                                                      "def later():\n    return __import__('core.runner.plan')\n")
    (tmp_path / "core" / "store" / "s.py").write_text("from core.tasks.setops.scoring import _strict\n"
                                                      "import core.tasks._shared\n")
    assert layer_violations(tmp_path) == ["core/tasks/t.py: core.tasks imports core.analysis",
                                          "core/tasks/t.py: core.tasks imports core.analysis.x",
                                          "core/tasks/t.py: core.tasks imports plotly.graph_objects",
                                          "core/tasks/u.py: core.tasks imports core.runner.plan",
                                          "core/tasks/u.py: core.tasks imports core.store"]
    assert store_imports_of_task_privates(tmp_path) == ["core/store/s.py: core.tasks._shared",
                                                        "core/store/s.py: core.tasks.setops.scoring._strict"]

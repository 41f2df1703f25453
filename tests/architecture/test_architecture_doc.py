"""docs/ARCHITECTURE.md is the map of core/: it names every module, every path it names exists, and its layer
picture is the one the imports follow (read with ``ast``, function-level imports and ``importlib.import_module``
included)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.shape_scan import imported_targets
from tests.support.source_scan import ROOT, module_name

DOC = ROOT / "docs" / "ARCHITECTURE.md"

# left to right: a unit imports only units of the layers to its left, and within its layer only SAME_LAYER
LAYERS = (("lexicon",), ("tasks",), ("store", "models", "config"), ("runner", "analysis", "embeddings"),
          ("cli", "ui", "pages"))
SAME_LAYER = {("models", "store")}
SHARED = ("errors", "files", "redaction", "urlstate")   # import no package of core/; any layer imports them
TOP = ("__init__", "__main__")                         # core's own package module and `python -m core`: above all


def picture() -> str:
    return "  ←  ".join(", ".join(layer) for layer in LAYERS)


def _unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "core" and len(parts) > 1 else None


def _layer(unit: str) -> int:
    if unit in SHARED:
        return -1
    if unit in TOP:
        return len(LAYERS)
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def layer_breaks(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted((root / "core").rglob("*.py")):
        me = module_name(path, root)
        mine = _unit(me) or "__init__"
        for target in sorted(imported_targets(path, root)):
            theirs = _unit(target)
            if theirs is None or theirs == mine:
                continue
            a, b = _layer(mine), _layer(theirs)
            if a == -1:   # a shared module imports only shared ones
                bad = b != -1
            else:
                bad = b > a or (b == a and (mine, theirs) not in SAME_LAYER)
            if bad:
                out.append(f"{path.relative_to(root)}: {mine} imports {target}")
    return out


def named_paths(text: str) -> set[str]:
    """The paths under core/ the text names in backquotes (placeholders such as ``<task>`` left out)."""
    return {m for m in re.findall(r"`(core/[^`\s]*)`", text) if "<" not in m}


def test_every_module_of_core_is_named():
    text = DOC.read_text(encoding="utf-8")
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")}
    missing = sorted(modules - named_paths(text))
    assert not missing, "modules of core/ that docs/ARCHITECTURE.md does not name (one line each):\n" + "\n".join(missing)


def test_every_path_the_map_names_exists():
    gone = sorted(p for p in named_paths(DOC.read_text(encoding="utf-8")) if not (ROOT / p).exists())
    assert not gone, "docs/ARCHITECTURE.md names paths that do not exist:\n" + "\n".join(gone)


def test_the_layer_picture_is_the_one_in_the_map():
    assert picture() in DOC.read_text(encoding="utf-8")


def test_the_imports_follow_the_layer_picture():
    found = layer_breaks()
    assert not found, f"imports against the layers ({picture()}):\n" + "\n".join(found)


def test_the_layer_check_sees_a_break(tmp_path):
    files = {
        "core/__init__.py": "import core.analysis\n",
        "core/errors.py": "",
        "core/files.py": "from core.errors import UserError\nfrom core.tasks import TASKS\n",
        "core/lexicon/__init__.py": "",
        "core/lexicon/words.py": "def f():\n    from core.tasks.base import stable_id\n",
        "core/tasks/__init__.py": "from core.lexicon import words\n",
        "core/store/__init__.py": "import importlib\nimportlib.import_module('core.models.base')\n",
        "core/models/__init__.py": "from core.store import x\n",
        "core/models/base.py": "",
        "core/analysis/__init__.py": "from core.runner import start_run\nfrom core.config import run_spec\n",
        "core/runner/__init__.py": "",
        "core/config.py": "from core.tasks import TASKS\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert layer_breaks(tmp_path) == [
        "core/analysis/__init__.py: analysis imports core.runner",
        "core/files.py: files imports core.tasks",
        "core/lexicon/words.py: lexicon imports core.tasks.base",
        "core/store/__init__.py: store imports core.models.base",
    ]

"""Modules talk through public names: no module of core/, pages/ or ui/ imports another module's ``_private`` name
(or a private module from outside its package), and none reads or writes another object's ``_private`` attribute
(``obj._x`` where ``obj`` is not ``self``/``cls`` and ``_x`` is not defined in the same module). The few library
internals the product relies on are listed in ``LIBRARY_INTERNALS``, each checked to still exist in the installed
library (tests/architecture/test_streamlit_compat.py for Streamlit's)."""

from __future__ import annotations

import atexit
import os
import threading
from collections import defaultdict
from pathlib import Path

from tests.support.source_scan import Violation, all_private_uses, private_uses

# file -> the library internals it may use, and why
LIBRARY_INTERNALS = {
    ("core/cli/__init__.py", "attribute ._shutdown of threading"):
        "the CLI's fast exit waits for the threads that are not daemons the way Python's own exit does (read with "
        "getattr: where it is missing, the ordinary exit is taken)",
    ("core/cli/__init__.py", "attribute ._run_exitfuncs of atexit"):
        "the CLI's fast exit runs the atexit handlers itself, then skips the interpreter's teardown (os._exit)",
    ("core/redaction.py", "attribute ._data of os.environ"):
        "the raw environment mapping: its identity and size say cheaply whether any *_API_KEY may have changed",
    ("core/tasks/quantifiers/nouns.py", "attribute ._morphy of wn"):
        "WordNet's every base form of a word (the public morphy returns only the first); building the noun list only",
}


def _grouped(found: list[Violation]) -> str:
    by_file: dict[str, list[str]] = defaultdict(list)
    for v in found:
        by_file[v.path].append(f"  {v.line}: {v.what}")
    return "\n".join(f"{path} ({len(lines)}):\n" + "\n".join(lines) for path, lines in sorted(by_file.items()))


def test_no_module_uses_another_modules_private_names():
    found = [v for v in all_private_uses() if (v.path, v.what) not in LIBRARY_INTERNALS]
    assert not found, (f"{len(found)} cross-module private names (give the name a public one, or add a public "
                       f"method that says what the caller needs):\n{_grouped(found)}")


def test_every_listed_library_internal_is_still_used_and_still_exists():
    used = {(v.path, v.what) for v in all_private_uses()}
    assert set(LIBRARY_INTERNALS) <= used, sorted(set(LIBRARY_INTERNALS) - used)   # a stale entry: drop it
    assert callable(getattr(atexit, "_run_exitfuncs", None))
    assert callable(getattr(threading, "_shutdown", None))
    assert isinstance(getattr(os.environ, "_data", None), dict)
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    assert callable(getattr(WordNetCorpusReader, "_morphy", None))


def _scan(tmp_path: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return [v.what for name in files for v in private_uses(tmp_path / name, tmp_path)]


def test_the_scanner_sees_each_kind_of_private_use(tmp_path):
    found = _scan(tmp_path, {
        "core/__init__.py": "",
        "core/a.py": "_x = 1\nclass A:\n    def __init__(self):\n        self._own = 1\n    def f(self, o):\n"
                     "        return o._own + self._own\n",
        "core/b.py": "from core.a import _x\nfrom .a import A\nimport core.a as a\n\ndef g(h):\n"
                     "    return h._state, a._x, h._replace(), h.__class__\n",
        "core/_hidden.py": "",
        "core/pkg/__init__.py": "from core.pkg._impl import thing\n",
        "core/pkg/_impl.py": "thing = 1\n",
        "core/c.py": "from core import _hidden\nfrom core.pkg._impl import thing\nfrom core.pkg import thing as t\n",
        # the same reaches by a name in a string: each is found as the plain one is
        "core/d.py": "import importlib\nfrom importlib import import_module\n\ndef k(h, name):\n"
                     "    getattr(h, '_secret'), hasattr(h.inner, '_flag'), getattr(h, '_secret_too', None)\n"
                     "    getattr(self, '_mine'), getattr(h, name), getattr(h, 'public'), getattr(h, '__dict__')\n"
                     "    importlib.import_module('core.pkg._impl'), import_module('core.a')\n"
                     "    return __import__('core._hidden')\n",
    })
    assert sorted(found) == sorted([
        "from core.a import _x", "attribute ._state of h", "attribute ._x of a",
        "from core import _hidden", "from core.pkg._impl import thing",
        "attribute ._secret of h", "attribute ._flag of h.inner", "attribute ._secret_too of h",
        "import core.pkg._impl", "import core._hidden",
    ])

"""No function in core/ is longer than 100 lines (``def`` to its last line): a longer one is split into named steps.
The scanner is tests/support/shape_scan.py (``python -m tests.support.shape_scan`` prints the list)."""

from __future__ import annotations

from tests.support.shape_scan import MAX_FUNCTION_LINES, functions, long_functions

# file, function -> why it may still be longer (none today)
ALLOWED: dict[tuple[str, str], str] = {}


def test_no_function_in_core_is_over_the_limit():
    found = [f for f in long_functions() if (f.path, f.name) not in ALLOWED]
    assert not found, (f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps):\n"
                       + "\n".join(map(str, found)))


def test_every_allowed_long_function_is_still_long():
    long = {(f.path, f.name) for f in long_functions()}
    assert set(ALLOWED) <= long, sorted(set(ALLOWED) - long)   # a stale entry: drop it


def test_the_scanner_measures_nested_functions_and_methods(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(101))
    (tmp_path / "core").mkdir()
    path = tmp_path / "core" / "m.py"
    path.write_text(f"class A:\n    def short(self):\n        return 1\n\n    def long(self):\n{body.replace('    ', '        ')}\n"
                    f"\n\ndef outer():\n    def inner():\n{body.replace('    ', '        ')}\n    return inner\n")
    assert {(f.name, f.lines) for f in functions(path, tmp_path)} == {
        ("A.short", 2), ("A.long", 102), ("outer", 104), ("outer.inner", 102)}
    assert [f.name for f in long_functions(tmp_path)] == ["outer", "A.long", "outer.inner"]

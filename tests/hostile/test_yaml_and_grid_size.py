"""Issue 13, items 1, 2 and part of 8: a YAML alias bomb, nesting 5,000 deep, a 10^9-item grid and an 8,000,000-cell
grid are each refused with one clear line — in the CLI and on the Runs page, in a child process held to 1.5 GB of
address space — before anything expands, serialises or materialises them."""

from __future__ import annotations

import re

import pytest

from core.config import DEFAULT_MAX_ITEMS, check_item_count, max_items, parse_run_spec, run_spec
from core.errors import ConfigError
from core.files import MAX_ALIAS_NODES, MAX_YAML_DEPTH, parse_yaml_mapping
from tests.hostile.conftest import HOSTILE, page_upload, run_limited

REFUSED = {
    "alias_bomb.yaml": "aliases expand to more than",
    "nested_lists_5000.yaml": f"nested deeper than {MAX_YAML_DEPTH} levels",
    "nested_mappings_5000.yaml": f"nested deeper than {MAX_YAML_DEPTH} levels",
    "grid_1e9.yaml": f"the config has 1,000,000,000 items, more than the cap of {DEFAULT_MAX_ITEMS:,}",
    "grid_cells.yaml": "the grid has up to 8,000,000 configurations",
    "task_list.yaml": "'task' must be a task name, got [1, 2]",
}


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr[-3000:]
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("command", ["generate", "run", "estimate"])
def test_cli_refuses_with_one_line_under_a_memory_limit(name, command, db, tmp_path):
    cfg = str(HOSTILE / name)
    args = {"generate": ["generate", "setops", "--config", cfg, "--out", str(tmp_path / "items.jsonl")],
            "run": ["run", "--config", cfg, "--model", "reference/solver", "--no-progress"],
            "estimate": ["run", "--config", cfg, "--model", "reference/solver", "--estimate"]}[command]
    done = run_limited(["-m", "core", *args], env={"STUDIO_DB": db}, timeout=120)
    assert done.returncode == 2, done.stderr[-3000:]
    assert REFUSED[name] in _one_error_line(done.stderr)
    assert not (tmp_path / "items.jsonl").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alias_bomb.yaml", "nested_lists_5000.yaml", "grid_1e9.yaml", "grid_cells.yaml",
                                  "task_list.yaml"])
def test_runs_page_upload_refuses_with_one_error_under_a_memory_limit(name, db):
    shown = page_upload(HOSTILE / name, env={"STUDIO_DB": db})
    assert shown["exceptions"] == [] and shown["successes"] == [], shown
    assert len(shown["errors"]) == 1, shown
    text = re.sub(r"\\(.)", r"\1", shown["errors"][0])     # as displayed (Markdown escapes removed)
    assert REFUSED[name] in text and text.startswith(name), shown


def test_aliases_within_the_budget_are_fine_and_the_budget_counts_expanded_nodes():
    ok = parse_yaml_mapping("ops: &ops [union, difference]\noperations: *ops\nmore: [*ops, *ops]\n")
    assert ok["operations"] == ["union", "difference"] and ok["more"] == [["union", "difference"]] * 2
    # one anchor of 1,000 scalars referenced 99 times expands to 99,099 nodes: allowed; 101 times: refused
    items = "[" + ", ".join(["x"] * 999) + "]"
    fine = parse_yaml_mapping(f"a: &a {items}\nb: [{', '.join(['*a'] * 99)}]\n")
    assert len(fine["b"]) == 99
    with pytest.raises(ConfigError, match=f"more than {MAX_ALIAS_NODES:,} nodes"):
        parse_yaml_mapping(f"a: &a {items}\nb: [{', '.join(['*a'] * 101)}]\n")
    # merge keys are aliases too
    with pytest.raises(ConfigError, match="aliases expand"):
        parse_yaml_mapping("a: &a {" + ", ".join(f"k{i}: {i}" for i in range(600)) + "}\n"
                           + "".join(f"b{j}: {{<<: *a}}\n" for j in range(100)))


def test_nesting_up_to_the_limit_parses_and_one_more_level_is_refused():
    depth = MAX_YAML_DEPTH - 1           # the document's own mapping is one level
    assert parse_yaml_mapping("x: " + "[" * depth + "]" * depth)["x"] is not None
    with pytest.raises(ConfigError, match="nested deeper"):
        parse_yaml_mapping("x: " + "[" * (depth + 1) + "]" * (depth + 1))


def test_oversized_yaml_text_is_refused_before_parsing():
    with pytest.raises(ConfigError, match="larger than"):
        parse_yaml_mapping("a: " + "x" * 1_000_001)


def test_the_cap_is_configurable_and_checked_by_count_not_by_building_items(monkeypatch):
    doc = {"task": "setops", "samples": 1000, "members": ["numbers"], "sizes": [2, 4],
           "operations": ["union", "intersection"]}                   # 4 cells × 1,000 = 4,000 items
    assert run_spec(doc).config.samples == 1000
    monkeypatch.setenv("STUDIO_MAX_ITEMS", "3999")
    assert max_items() == 3999
    with pytest.raises(ConfigError, match="4,000 items, more than the cap of 3,999"):
        run_spec(doc)
    assert run_spec(doc, max_items=4000).config.samples == 1000      # an explicit cap wins over the environment
    monkeypatch.setenv("STUDIO_MAX_ITEMS", "many")
    with pytest.raises(ConfigError, match="STUDIO_MAX_ITEMS must be a whole number"):
        max_items()
    assert check_item_count(5, cap=5) == 5


def test_estimate_and_run_refuse_a_huge_grid_before_anything_is_stored(db):
    from core import runner, store

    text = (HOSTILE / "grid_1e9.yaml").read_text()
    with pytest.raises(ConfigError, match="1,000,000,000 items"):
        parse_run_spec(text)
    doc = {"task": "setops", "samples": 1_000_000, "members": ["numbers"], "sizes": list(range(2, 252))}
    with pytest.raises(ConfigError, match="more than the cap"):
        runner.estimate(doc, "reference/solver", db_path=db)
    with pytest.raises(ConfigError, match="more than the cap"):
        runner.start_run(doc, "reference/solver", db_path=db)
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0

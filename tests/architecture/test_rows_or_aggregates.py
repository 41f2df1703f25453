"""One function decides whether a view reads the store's per-configuration aggregates or the rows:
``core/analysis/aggregated.py``'s ``_answers``, asked by ``source`` (what a view reads) and ``column_facts`` (which
values factor columns take). The views write their queries once, over what those return."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
HOME = "core/analysis/aggregated.py"
# the modules whose views once chose their own path, each with an aggregate query and a row query
VIEWS = ("queries", "summaries", "error_table", "findings_metrics", "findings")
AGGREGATE_TABLES = ("agg_configs", "agg_counts", "agg_lengths", "agg_inside")


def _calls(name: str, owner: str | None = None) -> list[str]:
    """``path:line`` of every call of ``name`` (``owner.name`` when ``owner`` is given) in core/."""
    out = []
    for p in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if owner is None:
                got = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            else:
                got = f.attr if isinstance(f, ast.Attribute) and getattr(f.value, "id", None) == owner else None
            if got == name:
                out.append(f"{p.relative_to(ROOT).as_posix()}:{node.lineno}")
    return out


def test_one_function_decides_and_at_most_two_places_ask_it():
    sites = _calls("_answers")
    assert 1 <= len(sites) <= 2, sites
    assert all(s.startswith(f"{HOME}:") for s in sites), sites


def test_no_view_chooses_its_own_relation():
    for name in ("usable", "relation", "configs", "lengths", "inside_columns"):
        assert _calls(name, owner="aggregated") == [], name
    for module in VIEWS:
        text = (CORE / "analysis" / f"{module}.py").read_text(encoding="utf-8")
        assert not [t for t in AGGREGATE_TABLES if t in text], module
        assert "rows_only" not in text and "enabled()" not in text, module


def test_reading_which_path_was_taken_stays_rare():
    """A view may read ``Source.aggregated`` only to choose what is cheap (an overview of every run, both scorings in
    one statement), never to write its query twice: today run_overview and run_overview_among."""
    reads = []
    for p in sorted(CORE.rglob("*.py")):
        if p.relative_to(ROOT).as_posix() == HOME:
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "aggregated" and isinstance(node.value, ast.Call):
                reads.append(f"{p.relative_to(ROOT).as_posix()}:{node.lineno}")
    assert len(reads) <= 2, reads

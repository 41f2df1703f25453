"""Packages of core/ are used through their front doors: a module of one package imports another package
(``core.store``, ``core.analysis`` …: its ``__init__``), not that package's submodules. The imports that still go
past a door are listed below — the list may only shrink: a new one fails (import the name from the package, or give
the package a public name for it), and an entry no longer imported fails until it is dropped.

The scanner is tests/support/shape_scan.py; ``python -m tests.support.shape_scan`` prints the current list and its
count, and ``python -m tests.architecture.test_front_doors`` prints it in the form of ``ALLOWED`` below."""

from __future__ import annotations

from collections import defaultdict

from tests.support.shape_scan import cross_package_imports, past_front_doors

# importing file -> the submodules of other packages it imports (each a way round a door, kept until it is closed)
ALLOWED: dict[str, set[str]] = {
    "core/analysis/aggregated.py": {"core.store.aggregates", "core.store.schema"},
    "core/analysis/comparison.py": {"core.store.provenance", "core.store.rescore", "core.store.scratch"},
    "core/analysis/draw_contrasts.py": {"core.store.scratch"},
    "core/analysis/effort.py": {"core.store.provenance"},
    "core/analysis/figures.py": {"core.tasks.setops"},
    "core/analysis/findings.py": {"core.store.provenance"},
    "core/analysis/memo.py": {"core.store.aggregates", "core.store.analysis_cache", "core.store.schema"},
    "core/analysis/presenter.py": {"core.lexicon.blocklist", "core.tasks.setops", "core.tasks.setops.scoring"},
    "core/analysis/quantifier_figures.py": {"core.tasks.quantifiers.metrics"},
    "core/analysis/queries.py": {"core.tasks.setops.aliases"},
    "core/analysis/reasoning.py": {"core.store.provenance"},
    "core/analysis/report.py": {"core.store.provenance", "core.tasks.quantifiers.metrics"},
    "core/analysis/sql.py": {"core.store.provenance", "core.store.schema"},
    "core/cli/commands/backup.py": {"core.store.backup"},
    "core/cli/commands/batches.py": {"core.runner.batch_collect"},
    "core/cli/commands/build_hyponyms.py": {"core.lexicon.datafile", "core.lexicon.hyponyms", "core.lexicon.wordnet_build", "core.lexicon.words"},
    "core/cli/commands/embeddings.py": {"core.embeddings.encoders", "core.embeddings.fusion", "core.embeddings.pipeline", "core.embeddings.report", "core.embeddings.samples"},
    "core/cli/commands/export.py": {"core.store.exports"},
    "core/cli/commands/export_batch.py": {"core.runner.batch_files"},
    "core/cli/commands/import_.py": {"core.store.io", "core.store.rescore"},
    "core/cli/commands/import_batch.py": {"core.runner.batch_files"},
    "core/cli/commands/report.py": {"core.analysis.memo", "core.analysis.report"},
    "core/cli/commands/report_compare.py": {"core.analysis.comparison"},
    "core/cli/commands/report_findings.py": {"core.analysis.findings", "core.analysis.findings_view", "core.analysis.summaries"},
    "core/cli/commands/report_thinking.py": {"core.analysis.effort", "core.analysis.reasoning"},
    "core/cli/commands/restore.py": {"core.store.backup"},
    "core/cli/commands/run.py": {"core.models.batch", "core.models.providers", "core.models.registry", "core.runner.ray_connect", "core.runner.ray_engine"},
    "core/cli/commands/serve_local.py": {"core.models.providers.local_llama"},
    "core/config.py": {"core.tasks.setops.reference_yaml"},
    "core/embeddings/cache.py": {"core.store.embedding_tables"},
    "core/embeddings/encoders.py": {"core.models.providers.local_llama"},
    "core/embeddings/fusion.py": {"core.models.base", "core.models.params"},
    "core/embeddings/results_store.py": {"core.store.embedding_tables"},
    "core/models/params.py": {"core.tasks.base"},
    "core/models/providers/anthropic.py": {"core.store.model_info"},
    "core/runner/batch.py": {"core.models.base", "core.models.batch", "core.models.batch.common", "core.models.reasoning", "core.store.batches", "core.store.journal"},
    "core/runner/batch_collect.py": {"core.models.batch", "core.models.batch.common", "core.models.params", "core.models.pricing", "core.models.reasoning", "core.store.batches"},
    "core/runner/batch_files.py": {"core.models.batch.jsonl", "core.models.pricing", "core.models.reasoning", "core.models.registry", "core.store.claims", "core.store.journal"},
    "core/runner/executor.py": {"core.models.base", "core.models.retry_policy", "core.store.claims", "core.store.journal"},
    "core/runner/group_commit.py": {"core.store.journal"},
    "core/runner/handle.py": {"core.models.base", "core.models.batch", "core.store.journal"},
    "core/runner/later_items.py": {"core.store.batches"},
    "core/runner/plan.py": {"core.models.base", "core.models.batch", "core.models.params", "core.store.cache", "core.tasks.base"},
    "core/runner/ray_connect.py": {"core.models.retry_policy"},
    "core/runner/ray_engine.py": {"core.models.batch.jsonl", "core.models.providers", "core.models.registry", "core.models.retry_policy"},
    "core/runner/ray_run.py": {"core.models.batch.jsonl", "core.store.claims", "core.store.journal"},
    "core/runner/ray_workers.py": {"core.models.retry_policy", "core.store.faults"},
    "core/runner/sharing.py": {"core.store.claims", "core.store.journal"},
    "core/store/backfill.py": {"core.tasks.quantifiers.parse", "core.tasks.setops.scoring"},
    "core/store/io.py": {"core.tasks.setops.reference_csv", "core.tasks.setops.scoring"},
    "core/store/rescore.py": {"core.tasks.quantifiers.recheck", "core.tasks.setops.recheck"},
    "core/tasks/setops/sets/deceptive.py": {"core.lexicon.blocklist", "core.lexicon.hyponyms"},
    "core/tasks/setops/sets/populations.py": {"core.lexicon.frequency", "core.lexicon.words"},
}


def _allowed() -> set[tuple[str, str]]:
    return {(f, t) for f, targets in ALLOWED.items() for t in targets}


def test_no_new_import_goes_past_a_front_door():
    new = sorted(set(past_front_doors()) - _allowed())
    assert not new, ("imports past a package's front door (import the name from the package itself, adding it to "
                     "the package's __init__ if it belongs to its public face):\n"
                     + "\n".join(f"{f}: {t}" for f, t in new))


def test_every_allowed_entry_is_still_imported():
    gone = sorted(_allowed() - set(past_front_doors()))
    assert not gone, "no longer imported past a door: drop from ALLOWED:\n" + "\n".join(f"{f}: {t}" for f, t in gone)


def _plant(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_scanner_sees_each_way_past_a_door(tmp_path):
    _plant(tmp_path, {
        "core/__init__.py": "",
        "core/errors.py": "",
        "core/store/__init__.py": "from core.store.runs import start\n",
        "core/store/runs.py": "from core.store import journal\n",
        "core/store/journal.py": "",
        "core/analysis/__init__.py": "",
        "core/analysis/a.py": ("from core.store import start\nfrom core.store import journal\nimport core.store.runs\n"
                               "from core.errors import X\nfrom . import b\n"),
        "core/analysis/b.py": ("def f():\n    from core.store.runs import start\n"
                               "    import importlib\n    return importlib.import_module('core.store.journal')\n"),
        "core/cli/__init__.py": "from ..store import runs as r\n",
    })
    assert cross_package_imports(tmp_path) == [
        ("core/analysis/a.py", "core.store"), ("core/analysis/a.py", "core.store.journal"),
        ("core/analysis/a.py", "core.store.runs"), ("core/analysis/b.py", "core.store.journal"),
        ("core/analysis/b.py", "core.store.runs"), ("core/cli/__init__.py", "core.store.runs"),
    ]
    assert [t for _, t in past_front_doors(tmp_path)] == ["core.store.journal", "core.store.runs",
                                                          "core.store.journal", "core.store.runs", "core.store.runs"]


if __name__ == "__main__":
    by: dict[str, list[str]] = defaultdict(list)
    for f, t in past_front_doors():
        by[f].append(t)
    for f in sorted(by):
        print(f"    {f!r}: {{{', '.join(repr(t) for t in sorted(by[f]))}}},".replace("'", '"'))
    print(f"# {len(past_front_doors())} of {len(cross_package_imports())} cross-package imports go past a front door")

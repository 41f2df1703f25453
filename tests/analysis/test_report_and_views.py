"""What a view opens with, how runs and configurations are named, and the static HTML report (core and CLI) —
over a real DuckDB file with runs made by the reference solver and an imported copy with another model."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from core import analysis, runner, store
from core.analysis import stats
from core.analysis.report import html_report
from core.store.exports import export_run
from core.store.io import import_results

DECEPTIVE = {"task": "setops", "seed": 0, "samples": 2, "operations": ["intersection", "union"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}
QUANT = {"task": "quantifiers", "quantifiers": ["at least half", "none"], "noun_groups": ["gqg"], "samples": 2,
         "nouns_per_group": 2}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "s.duckdb"
    solver = runner.run(DECEPTIVE, "reference/solver", db_path=path, name="deceptive · solver").run_id
    out = path.with_name("flaky.csv")
    export_run(path, solver, out)
    df = pd.read_csv(out)
    wrong = df.index % 2 == 0
    df.loc[wrong, "correct"] = False
    df["model"] = "flaky/model"
    df.to_csv(out, index=False)
    flaky = import_results(path, out.read_bytes(), "flaky.csv")[0]
    quant = runner.run(QUANT, "reference/solver", db_path=path).run_id
    return path, {"solver": solver, "flaky": flaky, "quant": quant}


def test_defaults_follow_the_selection(db):
    path, ids = db
    runs = store.list_runs(path)
    one = runs[runs["run_id"] == ids["solver"]]
    two = runs[runs["run_id"].isin([ids["solver"], ids["flaky"]])]
    with store.connect(path) as con:
        varying = analysis.factor_columns(con, [ids["solver"], ids["flaky"]], varying=True)
        factors = analysis.factor_columns(con, [ids["solver"], ids["flaky"]])
        q_factors = analysis.factor_columns(con, [ids["quant"]])
    assert analysis.view_defaults(two, varying, factors) == {"task": "setops", "x": "condition", "color": "model"}
    assert analysis.view_defaults(one, varying, factors)["color"] is None
    assert analysis.view_defaults(runs[runs["run_id"] == ids["quant"]], [], q_factors)["x"] == "quantifier"
    assert analysis.tasks_of(runs) == ["setops", "quantifiers"]


def test_runs_and_configurations_are_named_not_hashed(db):
    path, ids = db
    labels = analysis.run_labels(store.list_runs(path))
    assert labels[ids["solver"]] == "deceptive · solver"
    # an import: the file's own run name (issue 22) — here an edited copy of a stored run, so with its file's name
    assert labels[ids["flaky"]] == "deceptive · solver (flaky.csv)"
    assert labels[ids["quant"]] == "reference/solver"
    twins = pd.DataFrame([{"run_id": f"r{i}", "name": "", "task": "setops", "model": "m", "n_items": 10 * (i + 1),
                           "params_json": "{}", "created_at": None} for i in range(2)])
    assert sorted(analysis.run_labels(twins).values()) == ["m · 10 items", "m · 20 items"]
    with store.connect(path) as con:
        pts = analysis.config_accuracy(con, [ids["solver"]], by=["operation", "condition"])
    names = analysis.config_labels(pts, ["operation", "condition"])
    assert "intersection · swapped" in set(names) and not any(re.fullmatch(r"[0-9a-f]{12}", n) for n in names)


def test_the_report_is_one_self_contained_file_with_every_section(db):
    path, ids = db
    with store.connect(path) as con:
        page = html_report(con, [ids["solver"], ids["flaky"], ids["quant"]], title="My <study>")
    assert page.startswith("<!DOCTYPE html>") and "<title>My &lt;study&gt;</title>" in page
    assert "<script src=" not in page    # Plotly inline: the file opens with no network
    assert page.count("Plotly.newPlot") >= 4
    for section in ("Runs", "Set operations (SetLexSem)", "Quantifiers (GQG)", "Error analysis", "Robustness",
                    "Comparison", "Accuracy, precision, recall, F1"):
        assert section in page, section
    assert "deceptive · solver" in page and "deceptive · solver (flaky.csv)" in page
    # the first two runs tested at the draw (the claims' verdicts are re-scored from the same responses: equal)
    assert "(B) against" in page and "paired by draw" in page and "equally accurate" in page
    assert "None" not in re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "Welch" not in page and "Mann" not in page


def test_a_degenerate_comparison_gets_its_caveat_in_the_report(tmp_path):
    path = tmp_path / "d.duckdb"
    a = runner.run(dict(DECEPTIVE, operations=["union"]), "reference/solver", db_path=path).run_id
    out = tmp_path / "zero.csv"
    export_run(path, a, out)
    df = pd.read_csv(out)
    df["correct"], df["model"] = False, "zero/model"
    df.to_csv(out, index=False)
    b = import_results(path, out.read_bytes(), "zero.csv")[0]
    with store.connect(path) as con:
        page = html_report(con, [a, b])
    # the responses are the solver's: re-scored, the upload is as right as the run, item for item; two draws are
    # fewer than the engine's stats.MIN_UNITS: the estimate, no test
    assert "equally accurate" in page and stats.TOO_FEW in page and "Welch" not in page
    assert "spread 0" in page or "Every level of every factor" in page


def test_report_html_from_the_command_line(db, cli, tmp_path):
    path, ids = db
    out = tmp_path / "r.html"
    r = cli("report", "html", "--run", ids["solver"], "--run", ids["flaky"], "--out", out, "--db", path,
            "--filter", "condition=swapped")
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "Plotly.newPlot" in text and html.escape('slice: {"condition": ["swapped"]}') in text
    bad = cli("report", "html", "--run", "no-such-run", "--out", tmp_path / "x.html", "--db", path)
    assert bad.returncode == 2 and bad.stderr.startswith("error: no run 'no-such-run'") and "Traceback" not in bad.stderr
    assert not (tmp_path / "x.html").exists()
    wrong = cli("report", "html", "--run", "latest", "--out", tmp_path / "x.txt", "--db", path)
    assert wrong.returncode == 2 and ".html" in wrong.stderr


def test_an_old_results_view_gets_the_answer_format_column(tmp_path):
    """A database whose v_results predates a run-parameter column gets the current view at its first connection
    (a view holds no rows: no migration needed)."""
    from core.store import schema

    path = tmp_path / "old.duckdb"
    runner.run(dict(DECEPTIVE, operations=["union"]), "reference/solver", db_path=path,
               params={"answer_format": "constrained"})
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE OR REPLACE VIEW v_results AS SELECT i.*, ru.model FROM items i JOIN runs ru USING (run_id)")
    con.close()
    schema._VIEW_CURRENT.discard(str(path))
    with store.connect(path) as con:
        assert set(con.execute("SELECT DISTINCT answer_format FROM v_results").fetchall()) == {("constrained",)}
        assert "answer_format" in analysis.factor_columns(con, None)


def test_the_readme_cli_examples_write_into_the_git_ignored_out_folder():
    from tests.support import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith("python -m core")]
    assert len(commands) >= 10
    targets = [m.group(2) for c in commands for m in re.finditer(r"(--out|--samples-out|import)\s+(\S+)", c)]
    assert targets and all(t.startswith("out/") for t in targets), targets
    assert "/out/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()

"""One line, never a traceback: grouping a report by a call's measurement, a CSV cell of JSON nested 100,000 deep,
hostile values in a Quantifiers page link (clamped, with a note), and a model name carrying ``<script>`` into the
Findings Markdown (escaped)."""

from __future__ import annotations

import csv
import json

import pytest

from core import runner
from core.cli import main as cli_main

CONFIG = {"task": "setops", "seed": 2, "samples": 4, "operations": ["union", "intersection"], "sizes": [2],
          "members": ["numbers", "words"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
SCRIPT = "<script>alert(document.cookie)</script>"


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("oneline") / "studio.duckdb")
    p = runner.run(CONFIG, "reference/solver", db_path=db)
    assert p.status == "done" and p.done == 16
    return db, p.run_id


def one_error_line(r) -> str:
    assert r.returncode == 2 and "Traceback" not in r.stderr, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("report", ["table", "errors"])
@pytest.mark.parametrize("column", ["response", "latency_ms", "tokens_in", "cost_usd"])
def test_a_report_by_a_call_measurement_is_one_line(report, column, solved, cli, tmp_path):
    db, run_id = solved
    r = cli("report", report, "--db", db, "--run", run_id, "--by", f"operation,{column}", "--out",
            tmp_path / "t.csv")
    assert f"cannot group by '{column}'" in one_error_line(r)
    assert not (tmp_path / "t.csv").exists()


def test_a_cell_of_json_nested_100000_deep_is_one_line(cli, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "deep.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["idx", "prompt", "correct", "response", "task", "operation", "set_a", "set_b", "truth"])
        w.writerow([0, "p", "true", "{1}", "setops", "union", deep, "[1]", "[1]"])
    line = one_error_line(cli("import", "--db", tmp_path / "s.duckdb", path))
    assert "row 1, column 'set_a' is nested too deeply" in line


HOSTILE_LINK = {"total": "-1", "samples": "100000000", "seed": "1e30", "nouns_per_group": "-5",
                "count_range": "[5000,-3]", "objects": "[1,2]", "noun_groups": '["no-such-group"]',
                "predicates": "[[1,2]]"}


def test_hostile_quantifiers_link_values_are_clamped_with_a_note(open_page, page_db):
    at = open_page("pages/quantifiers.py", HOSTILE_LINK)      # fails on any exception shown on the page
    notes = " ".join(i.value for i in at.info)
    assert "The link's settings were adjusted" in notes
    for name in ("total=-1", "samples=100000000", "seed=", "objects"):
        assert name in notes, notes
    values = {n.label: n.value for n in at.number_input}
    assert values["Total n"] == 1 and values["Counts drawn per cell (0 = all)"] == 1001
    assert abs(values["Seed"]) <= 2 ** 53 - 1 and values["Nouns per group (0 = all)"] == 0


def test_findings_markdown_escapes_an_imported_model_name(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    (tmp_path / "c.yaml").write_text(json.dumps({**CONFIG, "samples": 30}))
    assert cli_main(["generate", "setops", "--config", str(tmp_path / "c.yaml"), "--out", str(items), "--quiet"]) == 0
    data = tmp_path / "forged.jsonl"
    with open(items, encoding="utf-8") as src, open(data, "w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            row = json.loads(line)
            row.update(response="{" + ", ".join(map(str, row["truth"][: 1 + i % 2])) + "}", correct=None,
                       model=SCRIPT, task="setops", name=SCRIPT)
            dst.write(json.dumps(row) + "\n")
    db, out = str(tmp_path / "s.duckdb"), tmp_path / "findings.md"
    assert cli_main(["import", "--db", db, str(data)]) == 0
    assert cli_main(["report", "findings", "--db", db, "--run", "latest", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "&lt;script&gt;" in text and "<script" not in text.lower()

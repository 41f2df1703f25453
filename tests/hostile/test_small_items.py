"""Issue 13, item 8: no markdown from an imported cell (or a model name from a file, or a URL parameter) is ever
rendered as an image or link; an idx of 2^63 in an imported JSONL is one error line; several tabs opened right
after the server starts show no ImportError (tests/pages/test_browser_smoke.py drives Chromium for that)."""

from __future__ import annotations

import re

import pytest

from core import store
from core.errors import ImportFileError
from core.store.io import import_results
from tests.hostile.conftest import HOSTILE
from tests.support import ROOT

# an image, link or autolink opener that is not escaped, and a code span broken out of
ACTIVE = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)\]\((?:https?:)?//|(?<!\\)<img|(?<!\\):red(?<!\\)\[")


def rendered_text(at) -> list[str]:
    """Every Markdown body on the page (markdown, captions, alerts, headers)."""
    out = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "subheader", "header", "title"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)   # CommonMark: same-length fences


def outside_code_spans(text: str) -> str:
    return CODE_SPAN.sub(" ", text)


def no_active_markdown(at) -> None:
    texts = rendered_text(at)
    assert texts
    bad = [t for t in texts if ACTIVE.search(outside_code_spans(t))]
    assert not bad, bad


@pytest.fixture()
def imported(tmp_path, monkeypatch):
    db = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", db)
    run_id, n = import_results(db, HOSTILE / "markdown_cells.csv")
    assert n == 2
    return db, run_id


@pytest.mark.slow
def test_imported_cells_never_render_as_markdown_on_runs_and_results(imported, open_page):
    from tests.pages.test_pages_edge_cases import select_row

    _db, run_id = imported
    at = open_page("pages/runs.py", {"run": run_id})
    no_active_markdown(at)
    model = [m.value for m in at.markdown if m.value.startswith("**Model**")][0]
    assert "``" in model or "\\!" in model, model         # the model's name is a literal code span
    at = open_page("pages/results.py", {"runs": run_id})
    for view in ("errors", "robustness", "violins"):    # one view at a time (issue 22): each is checked
        at.radio(key="res_view").set_value(view).run()
        no_active_markdown(at)
    at.radio(key="res_view").set_value("drilldown").run()
    select_row(at, "res_items", 0)
    no_active_markdown(at)
    detail = [m.value for m in at.markdown if m.value.startswith("**Parsed (lenient)**")]
    # the file's crafted `parsed` cell is not shown: imports are re-scored from the response (issue 22), and what
    # is shown is our parse of it, in a code span
    assert detail and "` [" in detail[0], detail
    assert any("attacker.invalid/pixel.png" in c.value for c in at.code)   # the reply itself: shown as code


@pytest.mark.slow
def test_a_url_parameter_is_not_rendered_as_markdown(imported, open_page):
    at = open_page("pages/results.py", {"runs": "![x](http://attacker.invalid/q.png)"})
    no_active_markdown(at)
    assert any("attacker.invalid" in w.value for w in at.warning)   # it is named, escaped


def test_md_helpers():
    from ui.text import md, md_code

    assert md("![x](http://a/b.png)") == "\\!\\[x\\](http:\u200b//a/b.png)"
    assert md("see www.example.org") == "see www\u200b.example.org"
    assert md("a_b * c") == "a_b * c"
    assert md_code("x`y") == "`` x`y ``" and md_code("plain") == "` plain `"


def test_an_idx_beyond_64_bits_is_one_error_line(cli, tmp_path):
    r = cli("import", "--db", tmp_path / "s.duckdb", HOSTILE / "idx_2_63.jsonl")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: idx_2_63.jsonl: row 1, column 'idx' is 9223372036854775808, outside the "
                               "range of a 64-bit whole number")
    with pytest.raises(ImportFileError, match="outside the range"):
        import_results(tmp_path / "t.duckdb", b'{"idx": -9223372036854775809, "prompt": "p", "correct": true}\n',
                       "neg.jsonl")
    assert import_results(tmp_path / "t.duckdb", b'{"idx": 9223372036854775807, "prompt": "p", "correct": true}\n',
                          "max.jsonl")[1] == 1
    with store.connect(tmp_path / "t.duckdb") as con:
        assert con.execute("SELECT max(idx) FROM items").fetchall()[0][0] == 2 ** 63 - 1


@pytest.mark.slow
def test_an_idx_beyond_64_bits_uploaded_on_compare_is_one_st_error(tmp_path, monkeypatch, open_page):
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "s.duckdb"))
    at = open_page("pages/compare.py")
    data = (HOSTILE / "idx_2_63.jsonl").read_bytes()
    at.file_uploader(key="cmp_upload").set_value([("idx_2_63.jsonl", data, "application/x-ndjson")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and "outside the range of a 64" in at.error[0].value, [e.value for e in at.error]


def test_root_is_the_checkout():
    assert (ROOT / "app.py").is_file()

"""The pieces of the findings — design factors only in robustness and factor lists, the deceptive contrasts paired
by draw, verdict sentences, and the Findings page under AppTest."""

from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from core import runner, store
from core.analysis import factor_columns, findings, robustness
from tests.support import ROOT

DECEPTIVE = {"task": "setops", "seed": 3, "samples": 4, "operations": ["union", "intersection"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}


@pytest.fixture(scope="module")
def deceptive_store(tmp_path_factory):
    """One solver run of DECEPTIVE, written once for the module: (store, run id)."""
    db = str(tmp_path_factory.mktemp("deceptive") / "s.duckdb")
    return db, runner.run(DECEPTIVE, "reference/solver", db_path=db).run_id


@pytest.fixture()
def deceptive_run(deceptive_store, tmp_path, monkeypatch):
    """The module's run in a copy of its store for each test (STUDIO_DB): what one test keeps in the store (a
    findings report) is never what the next one finds."""
    template, run_id = deceptive_store
    db = str(tmp_path / "s.duckdb")
    shutil.copyfile(template, db)
    monkeypatch.setenv("STUDIO_DB", db)
    return db, run_id


def test_per_sample_columns_are_never_offered_as_factors(deceptive_run):
    db, run_id = deceptive_run
    with store.connect(db) as con:
        offered = factor_columns(con, [run_id], varying=True)
        with_samples = factor_columns(con, [run_id], varying=True, per_sample=True)
        rob, _ = robustness(con, [run_id], scoring="strict")
        again, _ = robustness(con, [run_id], scoring="strict")
    assert "condition" in offered and "operation" in offered
    assert not {"hypernym_a", "hypernym_b"} & set(offered)          # they change from sample to sample
    assert {"hypernym_a", "hypernym_b"} <= set(with_samples)
    assert not {"hypernym_a", "hypernym_b", "pos"} & set(rob["factor"])
    assert rob.equals(again)                                       # the same answer on every call


def test_the_deceptive_contrasts_are_paired_by_draw_and_say_so(deceptive_run):
    db, run_id = deceptive_run
    with store.connect(db) as con:
        rep = findings.report(con, [run_id], only=["deceptiveness_swapping_effect", "deceptiveness_effect",
                                                   "compare_deciles"])
    swap, random_, deciles = rep["findings"]
    c = swap["contrasts"][0]
    # the solver: no effect; 4 draws (the three conditions of one draw share it), each over 2 operations — too
    # few draws for a test: the estimate, no p
    assert c["design"] == "paired by draw" and c["n"] == 4 and c["estimate"] == 0 and c["p"] is None
    assert not c["testable"] and c["caveat"].startswith("too few draws to test")
    assert c["model"] == "reference/solver" and c["strata_matched"] == c["strata_total"] == 2
    assert "paired over 4 draws (matched 2 of 2 strata): too few draws to test" in swap["verdicts"][0]
    assert swap["verdicts"][0].startswith("reference/solver: ")
    assert random_["contrasts"][0]["design"] == "paired by draw"      # the random baseline is drawn with them
    assert not deciles["applicable"] and deciles["verdicts"][0].startswith("Not answerable")
    assert rep["correction"].startswith("Holm within each finding and model")


def test_verdict_sentence_reads_as_a_sentence():
    fd = {"factor": "condition"}
    c = {"a": "swapped", "b": "not_swapped", "estimate": -17.26, "ci_low": -19.0, "ci_high": -15.6,
         "design": "paired by draw", "n": 40, "n_a": 40, "n_b": 40, "strata_matched": 12, "strata_total": 20,
         "p": 0.0001, "p_adjusted": 0.0002, "significant": True, "family": "deceptiveness_swapping_effect for m",
         "family_size": 1, "model": "m", "spread": {"std_a": 30.1, "std_b": 10.2, "p": 0.01},
         "paper_estimate": -19.96, "runs": ["r1"]}
    text = findings.verdict(fd, c, 0.05)
    assert text.startswith("m: Swapped trails Not swapped by 17.3 points [-19.0, -15.6], paired over 40 draws "
                           "(matched 12 of 20 strata), p < 0.001; Holm over the 1 contrast(s) of "
                           "deceptiveness_swapping_effect for m: adjusted p < 0.001 (significant at α = 0.05)"), text
    assert text.endswith("— paper: -20.0 points."), text
    two = findings.verdict(fd, {**c, "design": "paired by draw", "n": 2, "estimate": 100.0, "ci_low": 100.0,
                                "ci_high": 100.0, "p": 0.5, "p_adjusted": 0.5, "significant": False}, 0.05)
    assert "not significant" in two and "few draws" in two


def test_findings_page_renders_verdicts(deceptive_run):
    db, run_id = deceptive_run
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/findings.py")
    at.query_params["runs"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(m.value for m in at.markdown)
    assert "paired over 4 draws" in text and "findings** can be answered" in text
    assert "reference/solver" in text


def test_forest_svg_draws_each_contrast_with_its_numbers_and_escapes_text():
    import re
    import xml.dom.minidom

    from core.analysis import findings_view

    fd = {"factor": "members", "title": "Numbers <vs> words",
          "contrasts": [{"a": "numbers", "b": "words", "estimate": 12.5, "ci_low": 8.0, "ci_high": 17.0,
                         "p_adjusted": 0.001, "significant": True, "n_a": 40, "n_b": 41, "paper_estimate": 20.0},
                        {"a": "words", "b": "<img src=x onerror=alert(1)>", "estimate": -1.0, "ci_low": -6.0,
                         "ci_high": 4.0, "p_adjusted": 0.8, "significant": False, "n_a": 5, "n_b": 5},
                        {"a": "x", "b": "y", "estimate": None}]}   # no estimate: not drawn
    svg = findings_view.forest_svg(fd)
    doc = xml.dom.minidom.parseString(svg)                  # well-formed, every text escaped
    assert "<img" not in svg and "&#60;img src=x" in svg and "Numbers &#60;vs&#62; words" in svg
    assert "\n" not in svg and svg.startswith("<svg")       # one raw HTML block for st.markdown
    for active in "`*_[]$:":                                   # nothing Markdown or a directive could read
        texts = re.findall(r">([^<]*)<", svg)
        assert not any(active in t for t in texts), active
    odd = findings_view.forest_svg({"factor": "members", "contrasts": [
        {"a": ":red[x]", "b": "$y$ *z* `w`", "estimate": 1.0, "ci_low": 0.0, "ci_high": 2.0}]})
    assert ":red[" not in odd and "$y$" not in odd and "&#58;red&#91;x&#93;" in odd
    quoted = findings_view.forest_svg({"factor": "members", "title": "it's \"q\" & <b>", "contrasts": [
        {"a": "a'b", "b": "c", "estimate": 1.0, "ci_low": 0.0, "ci_high": 2.0}]})
    node = xml.dom.minidom.parseString(quoted)              # references stay whole: the text reads as written
    assert node.documentElement.getAttribute("aria-label") == "it's \"q\" & <b>: forest plot"
    assert node.getElementsByTagName("title")[0].firstChild.data.startswith("a'b − c: 1.0 points")
    tips = [t.firstChild.data for t in doc.getElementsByTagName("title")]
    assert tips == ["numbers − words: 12.5 points, 95 % interval [8.0, 17.0], adjusted p 0.001, n 40 / 41; paper 20.0",
                    "words − <img src=x onerror=alert(1)>: -1.0 points, 95 % interval [-6.0, 4.0], adjusted p 0.8, "
                    "n 5 / 5"]
    dots = [c.getAttribute("fill") for c in doc.getElementsByTagName("circle")][1:]   # the first is the legend's
    assert dots == [findings_view.SIGNIFICANT, findings_view.NOT_SIGNIFICANT]
    diamonds = [p for p in doc.getElementsByTagName("path") if p.getAttribute("fill") == findings_view.PAPER]
    assert len(diamonds) == 2                               # the legend's and the paper's estimate of row 1
    # positions on one linear axis: the estimate sits inside its interval, 0 (dotted) left of 12.5
    xs = lambda v: float(v)  # noqa: E731
    row = doc.getElementsByTagName("g")[0]
    interval = [ln for ln in row.getElementsByTagName("line")][0]
    dot = row.getElementsByTagName("circle")[0]
    assert xs(interval.getAttribute("x1")) < xs(dot.getAttribute("cx")) < xs(interval.getAttribute("x2"))
    zero = [ln for ln in doc.getElementsByTagName("line") if ln.getAttribute("stroke-dasharray")][0]
    assert xs(zero.getAttribute("x1")) < xs(dot.getAttribute("cx"))
    assert re.search(r">difference in accuracy \(points\)<", svg)
    assert "No contrast to draw" in findings_view.forest_svg({"factor": "members", "contrasts": []})


def test_strict_partial_credit_scores_the_strict_parse():
    from core.tasks.setops.scoring import strict_scores

    assert strict_scores("[1, 2, 3]", "[2, 3, 4, 5]") == (0.5, 2 / 3, 0.4)
    assert strict_scores("[1, 2]", None) == (0.0, 0.0, 0.0)                 # did not follow the reference's rule
    assert strict_scores("[]", "[]") == (1.0, 1.0, 1.0)
    assert strict_scores('["Cat"]', '["cat"]') == (0.0, 0.0, 0.0)          # compared as the strict verdict compares


def test_family_report_puts_every_primary_contrast_in_one_family(deceptive_run):
    db, run_id = deceptive_run
    with store.connect(db) as con:
        per_finding = findings.report(con, [run_id])
        whole = findings.report(con, [run_id], family="report")
    fams = {c["family"] for fd in whole["findings"] for c in fd["contrasts"] if not fd["secondary_to"]}
    assert fams == {"every primary contrast of this report"}
    secondary = [c["family"] for fd in whole["findings"] if fd["secondary_to"] for c in fd["contrasts"]]
    assert secondary and all(f != "every primary contrast of this report" for f in secondary)
    assert len({c["family"] for fd in per_finding["findings"] for c in fd["contrasts"]}) > 1

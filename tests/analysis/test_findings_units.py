"""Issue 18: the pieces of the findings — design factors only in robustness and factor lists, the deceptive swap
contrast paired by sample, verdict sentences, and the Findings page under AppTest."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core import runner, store
from core.analysis import factor_columns, findings, robustness
from tests.support import ROOT

DECEPTIVE = {"task": "setops", "seed": 3, "samples": 4, "operations": ["union", "intersection"], "sizes": [4],
             "members": ["deceptive"], "conditions": ["not_swapped", "swapped", "random"], "phrasings": ["formal"],
             "approaches": ["baseline"], "shots": [0]}


@pytest.fixture()
def deceptive_run(tmp_path, monkeypatch):
    db = str(tmp_path / "s.duckdb")
    monkeypatch.setenv("STUDIO_DB", db)
    p = runner.run(DECEPTIVE, "reference/solver", db_path=db)
    return db, p.run_id


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


def test_the_swap_contrast_is_paired_by_sample_and_says_so(deceptive_run):
    db, run_id = deceptive_run
    with store.connect(db) as con:
        rep = findings.report(con, [run_id], only=["deceptiveness_swapping_effect", "deceptiveness_effect",
                                                   "compare_deciles"])
    swap, random_, deciles = rep["findings"]
    c = swap["contrasts"][0]
    assert c["paired"] and c["n_pairs"] == 8 and c["estimate"] == 0      # the solver: no effect, 2 ops x 4 samples
    assert "paired over 8 samples" in swap["verdicts"][0]
    assert not random_["contrasts"][0]["paired"]                      # random draws are not the same samples
    assert not deciles["applicable"] and deciles["verdicts"][0].startswith("Not answerable")
    assert rep["correction"].startswith("Holm")


def test_verdict_sentence_reads_as_a_sentence():
    fd = {"factor": "condition"}
    c = {"a": "swapped", "b": "not_swapped", "estimate": -17.26, "ci_low": -19.0, "ci_high": -15.6, "paired": True,
         "n_pairs": 40, "n_a": 40, "n_b": 40, "unit": "samples (paired by draw, index and operation)",
         "p_adjusted": 0.0002, "significant": True, "spread": {"std_a": 30.1, "std_b": 10.2, "p": 0.01},
         "paper_estimate": -19.96}
    text = findings.verdict(fd, c, 0.05)
    assert text.startswith("Swapped trails Not swapped by 17.3 points [-19.0, -15.6], paired over 40 samples, "
                           "adjusted p < 0.001 (significant at α = 0.05)"), text
    assert text.endswith("— paper: -20.0 points."), text


def test_findings_page_renders_verdicts(deceptive_run):
    db, run_id = deceptive_run
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/findings.py")
    at.query_params["runs"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(m.value for m in at.markdown)
    assert "paired over 8 samples" in text and "findings** can be answered" in text

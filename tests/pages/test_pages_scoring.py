"""The one Strict / Lenient switch: default strict, kept in the URL, carried between pages, and every figure of the
page follows it (Results, Compare, Runs); the error table's two definitions of unparsed answers."""

from __future__ import annotations

import pytest

from tests.support.corpus_run import corpus_items, write_corpus_run


@pytest.fixture()
def corpus_db(tmp_path, monkeypatch):
    path = tmp_path / "studio.duckdb"
    monkeypatch.setenv("STUDIO_DB", str(path))
    write_corpus_run(path)
    return path


def _counts():
    from core.tasks.setops.scoring import score_set_response

    scores = [score_set_response(it, it["response"]) for it in corpus_items()]
    return sum(s["correct_strict"] for s in scores), sum(s["correct"] for s in scores)


def _overview_correct(at) -> int:
    frame = next(d.value for d in at.dataframe if "Correct" in d.value.columns and "Accuracy %" in d.value.columns)
    return int(frame["Correct"].iloc[0])


@pytest.mark.slow
def test_results_default_strict_switch_and_url(corpus_db, open_page):
    n_strict, n_lenient = _counts()
    at = open_page("pages/results.py", {"runs": "corpus"})
    switch = at.radio(key="_scoring_scoring")
    assert switch.value == "strict" and at.query_params["scoring"] == "strict"
    assert _overview_correct(at) == n_strict
    switch.set_value("lenient").run()
    assert not at.exception
    assert at.query_params["scoring"] == "lenient" and _overview_correct(at) == n_lenient
    # a shared link opens with its choice
    at = open_page("pages/results.py", {"runs": "corpus", "scoring": "lenient"})
    assert at.radio(key="_scoring_scoring").value == "lenient" and _overview_correct(at) == n_lenient


@pytest.mark.slow
def test_results_error_table_offers_both_unparsed_definitions(corpus_db, open_page):
    at = open_page("pages/results.py", {"runs": "corpus", "by": "members", "unparsed": "ours",
                                          "view": "errors"})
    radio = at.radio(key="res_unparsed")
    assert radio.value == "ours"
    paper = next(d.value for d in at.dataframe if "Top1 Mistake" in d.value.index)
    ours_made_up = paper.loc["Made Up Vals Sum"].astype(int).sum()
    radio.set_value("reference").run()
    assert not at.exception and at.query_params["unparsed"] == "reference"
    paper = next(d.value for d in at.dataframe if "Top1 Mistake" in d.value.index)
    did_not_follow = paper.loc["Did Not Follow Instruction"].astype(int).sum()
    assert paper.loc["Made Up Vals Sum"].astype(int).sum() == ours_made_up + did_not_follow
    assert not any("L?" in v for v in paper.loc[["Top1 Mistake", "Top2 Mistake", "Top3 Mistake"]].values.ravel())


@pytest.mark.slow
def test_compare_and_runs_follow_the_switch(corpus_db, open_page):
    n_strict, n_lenient = _counts()
    at = open_page("pages/compare.py", {"runs": "corpus", "scoring": "lenient"})
    summary = next(d.value for d in at.dataframe if "Items" in d.value.columns and "Series" in d.value.columns)
    assert at.radio(key="_scoring_scoring").value == "lenient" and int(summary["Items"].sum()) == 132
    at = open_page("pages/runs.py", {"run": "corpus"})
    text = " ".join(m.value for m in at.markdown)
    assert f"**Accuracy (strict)** {100 * n_strict / 132:.1f} % ({n_strict} of 132)" in text
    at.radio(key="_scoring_scoring").set_value("lenient").run()
    text = " ".join(m.value for m in at.markdown)
    assert f"**Accuracy (lenient)** {100 * n_lenient / 132:.1f} % ({n_lenient} of 132)" in text


def _table_accuracy(at) -> float:
    frame = next(d.value for d in at.dataframe if "accuracy" in d.value.columns and "run_id" in d.value.columns)
    return float(frame.loc[frame["run_id"] == "corpus", "accuracy"].iloc[0])


@pytest.mark.slow
def test_the_runs_table_follows_the_switch(corpus_db, open_page):
    """The runs table's accuracy column and the chosen run's line below it are scored the way the switch says."""
    n_strict, n_lenient = _counts()
    assert n_strict != n_lenient   # the corpus tells the two scorings apart
    at = open_page("pages/runs.py", {"run": "corpus"})
    assert at.radio(key="_scoring_scoring").value == "strict"
    assert _table_accuracy(at) == pytest.approx(100 * n_strict / 132)
    at.radio(key="_scoring_scoring").set_value("lenient").run()
    assert not at.exception
    assert _table_accuracy(at) == pytest.approx(100 * n_lenient / 132)


@pytest.mark.slow
def test_the_choice_is_carried_to_the_next_page(corpus_db, open_page):
    at = open_page("pages/results.py", {"runs": "corpus"})
    at.radio(key="_scoring_scoring").set_value("lenient").run()
    at.query_params.clear()
    at.switch_page("pages/runs.py")
    at.query_params["run"] = "corpus"
    at.run()
    assert not at.exception
    assert at.radio(key="_scoring_scoring").value == "lenient" and at.query_params["scoring"] == "lenient"

"""Views of reasoning effort over a real store filled through the runner and a thinking stand-in server: cost versus
accuracy per effort (tokens and dollars per correct answer, imported answers kept out of the tool's own figures),
Compare across runs asked at different efforts, the drill-down's reasoning beside the answer, view defaults."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import analysis, runner, store
from core.analysis import stats
from core.tasks import setops
from core.tasks.setops.scoring import solve
from tests.support.loopback import LoopbackServer

BASE = {"task": "setops", "samples": 4, "sizes": [2], "members": ["numbers"], "seed": 21,
        "operations": ["union", "intersection"]}           # 8 items
GRID = {**BASE, "reasoning": ["none", "high"]}              # 16 items
THOUGHT = "Checking each member in turn: <answer>{0}</answer> is not it."


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("effort")
    db = tmp / "e.duckdb"
    items = {it["prompt"]: it for it in setops.items(setops.load_config(BASE))}
    wrong = sorted(items)[:2]    # two prompts answered wrong at every effort

    def respond(prompt, model):
        return "<answer>{99999}</answer>" if prompt in wrong else solve(items[prompt])

    srv = LoopbackServer(0.001, responder=respond, reasoning=THOUGHT).start()
    try:
        spec = "openai-compatible/thinker"
        low = runner.run(BASE, spec, base_url=srv.base_url, db_path=db, params={"reasoning_effort": "low"})
        high = runner.run(BASE, spec, base_url=srv.base_url, db_path=db, params={"reasoning_effort": "high"})
        grid = runner.run(GRID, spec, base_url=srv.base_url, db_path=db)
    finally:
        srv.stop()
    assert {low.status, high.status, grid.status} == {"done"}
    return db, {"low": low.run_id, "high": high.run_id, "grid": grid.run_id}, tmp


def test_cost_per_correct_answer_per_effort(filled):
    db, ids, _ = filled
    with store.connect(db) as con:
        costs = analysis.effort_costs(con, [ids["grid"]])
    assert list(costs["reasoning"]) == ["none", "high"]
    t_reason = len(THOUGHT) // 4
    for row in costs.to_dict("records"):
        assert (row["answered"], row["correct"], row["calls"], row["imported"]) == (8, 6, 8, 0)
        assert row["tokens_reasoning"] == 8 * t_reason
        assert row["tokens_answer"] == row["tokens_out"] - row["tokens_reasoning"]
        assert row["tokens_per_correct"] == pytest.approx(row["tokens_out"] / 6)
        assert row["reasoning_tokens_per_correct"] == pytest.approx(8 * t_reason / 6)
        assert row["usd_per_correct"] is None and row["cost_usd"] is None   # a self-hosted endpoint has no price
    fig = analysis.cost_accuracy_figure(costs)
    assert [list(t.x) for t in fig.data] == [list(costs["tokens_per_correct"])]
    empty = analysis.cost_accuracy_figure(costs, per="usd")
    assert not empty.data and empty.layout.annotations


def test_imported_answers_count_in_accuracy_not_in_cost(filled, cli):
    db, ids, tmp = filled
    path = tmp / "high.jsonl"
    assert cli("export", "--run", ids["high"], "--out", path, "--db", db).returncode == 0
    import json

    from core.store.io import import_results

    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:   # a file that claims other figures than the calls made (not our export of a stored run)
        row.update(tokens_out=10_000, cost_usd=5.0, response=row["response"] + " ")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    imported, n = import_results(db, path, name="file copy")
    assert n == 8
    with store.connect(db) as con:
        own = analysis.effort_costs(con, [ids["high"]])
        both = analysis.effort_costs(con, [ids["high"], imported])
        reasoning_back = con.execute("SELECT count(*) FROM v_results WHERE run_id = ? AND reasoning_text LIKE "
                                     "'%<answer>{0}%'", [imported]).fetchall()[0][0]
    assert reasoning_back == 8    # the export carried the reasoning apart, and the import kept it apart
    o = own.iloc[0]
    mine, theirs = (both[both["provenance"] == kind].iloc[0] for kind in ("made here", "uploaded"))
    assert len(both) == 2 and theirs["runs"] == imported and "a file's claims" in theirs["series"]
    assert (theirs["answered"], theirs["correct"], theirs["imported"], theirs["calls"]) == (8, 6, 8, 0)
    assert pd.isna(theirs["tokens_out"])                  # what the file claims is not counted as measured
    assert (mine["answered"], mine["correct"], mine["imported"]) == (8, 6, 0)
    assert (mine["calls"], mine["tokens_out"], mine["tokens_per_correct"]) == (o["calls"], o["tokens_out"],
                                                                               o["tokens_per_correct"])


def test_compare_runs_asked_at_two_efforts_split_by_effort(filled):
    db, ids, _ = filled
    series = [analysis.Series("low", (ids["low"],)), analysis.Series("high", (ids["high"],))]
    with store.connect(db) as con:
        points, shared = analysis.compare_runs(con, series, x="reasoning")
        paired = analysis.paired_items(con, ids["low"], ids["high"])
    assert "reasoning" not in shared                       # not aligned away: each run is at its own effort
    assert sorted(points.groupby("series")["reasoning"].first().items()) == [("high", "high"), ("low", "low")]
    assert len(points) == 2 * 2                            # two configurations per run
    assert len(paired) == 8 and (paired["correct_a"] == paired["correct_b"]).all()   # the same draws paired


def test_drilldown_shows_the_reasoning_beside_the_answer(filled):
    db, ids, _ = filled
    with store.connect(db) as con:
        items = analysis.drilldown(con, [ids["high"]], limit=3)
    assert {"reasoning_text", "tokens_reasoning"} <= set(items.columns)
    detail = analysis.item_detail(items.iloc[0])
    assert detail["reasoning"] == THOUGHT and "{0}" not in detail["response"]
    assert detail["tokens_reasoning"] == len(THOUGHT) // 4
    assert analysis.item_detail({"response": "<answer>{1}</answer>", "correct": True})["reasoning"] is None


def test_views_colour_by_effort_and_robustness_leaves_it_out(filled):
    db, ids, _ = filled
    runs = pd.DataFrame([{"run_id": ids["grid"], "task": "setops", "model": "openai-compatible/thinker"}])
    defaults = analysis.view_defaults(runs, ["operation", "reasoning"], ["operation", "reasoning"])
    assert (defaults["x"], defaults["color"]) == ("operation", "reasoning")
    with store.connect(db) as con:
        rob, _ = analysis.robustness(con, [ids["grid"]])
    assert "reasoning" not in set(rob["factor"]) and "operation" in set(rob["factor"])


def test_what_thinking_buys_per_level(filled):
    """Accuracy and the spread across configurations per level against a pandas recomputation from the rows; the
    reasoning tokens per item the stand-in's count; the stand-in answers alike at every effort, so the paired
    contrast is 0 over the 4 draws — fewer than the engine's stats.MIN_UNITS: the estimate alone, too few to test."""
    db, ids, _ = filled
    with store.connect(db) as con:
        buys = analysis.thinking_buys(con, [ids["grid"]], scoring="lenient")
        rows = con.execute("SELECT reasoning, config_id, CAST(correct AS INTEGER) AS ok FROM v_results "
                           "WHERE run_id = ?", [ids["grid"]]).df()
    levels = buys["levels"].set_index("reasoning")
    assert list(levels.index) == ["none", "high"]
    for effort, part in rows.groupby("reasoning"):
        per_config = part.groupby("config_id")["ok"].mean() * 100
        assert levels.loc[effort, "configs"] == len(per_config) == 2
        assert levels.loc[effort, "accuracy"] == pytest.approx(part["ok"].mean() * 100)
        assert levels.loc[effort, "spread"] == pytest.approx(per_config.std(ddof=1))
        assert levels.loc[effort, "reasoning_tokens_per_item"] == len(THOUGHT) // 4
        assert levels.loc[effort, "cost_per_item"] is None            # a self-hosted endpoint has no price
    c = buys["contrasts"]
    effort = c[c["contrast"] == "effort"].iloc[0]
    assert (effort["low"], effort["high"], effort["estimate"], effort["n_draws"]) == ("none", "high", 0.0, 4)
    assert 4 < stats.MIN_UNITS
    assert not effort["testable"] and effort["verdict"] == "too few to test" and math.isnan(effort["p"])
    fig = analysis.thinking_figure(buys["levels"])
    assert [list(t.x) for t in fig.data] == [["none", "high"]]


def test_what_thinking_buys_filters_its_contrasts_as_its_levels(filled):
    """A filter as the CLI and the URL give it (text, also for a numeric column) keeps the same slice in the
    contrasts as in the levels table: every item of the grid has size_a 2, so nothing is left out of either."""
    db, ids, _ = filled
    with store.connect(db) as con:
        whole = analysis.thinking_buys(con, [ids["grid"]], scoring="lenient")
        kept = analysis.thinking_buys(con, [ids["grid"]], filters={"size_a": ["2"]}, scoring="lenient")
        none = analysis.thinking_buys(con, [ids["grid"]], filters={"size_a": ["3"]}, scoring="lenient")
    assert kept["levels"].equals(whole["levels"]) and len(whole["contrasts"])
    assert kept["contrasts"][["contrast", "low", "high", "n_draws"]].equals(
        whole["contrasts"][["contrast", "low", "high", "n_draws"]])
    assert none["levels"].empty and none["contrasts"].empty


def _upload_all_wrong(cli, db, run_id, path):
    """The run exported, every reply replaced by a wrong answer, imported back: a file whose claims disagree with
    the tool's own answers to the same prompts."""
    import json

    from core.store.io import import_results

    assert cli("export", "--run", run_id, "--out", path, "--db", db).returncode == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row.update(response="<answer>{99999}</answer>")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return import_results(db, path, name="wrong copy")[0]


def test_what_thinking_buys_never_pools_an_upload_with_the_runs_made_here(filled, cli):
    """An upload of the grid whose replies are all wrong, read with the grid: the tool's own series keeps its own
    accuracy, spread and contrasts (pooled, the upload would halve its accuracy), the upload is a series of its
    own labelled as a file's claims."""
    db, ids, tmp = filled
    upload = _upload_all_wrong(cli, db, ids["grid"], tmp / "wrong.jsonl")
    with store.connect(db) as con:
        alone = analysis.thinking_buys(con, [ids["grid"]], scoring="lenient")
        both = analysis.thinking_buys(con, [ids["grid"], upload], scoring="lenient")
    levels = both["levels"]
    mine = levels[levels["provenance"] == "made here"].reset_index(drop=True)
    theirs = levels[levels["provenance"] == "uploaded"].reset_index(drop=True)
    assert mine.equals(alone["levels"])
    assert list(theirs["reasoning"]) == ["none", "high"] and (theirs["accuracy"] == 0).all()
    assert (theirs["runs"] == upload).all() and theirs["series"].str.contains("a file's claims").all()
    c = both["contrasts"]
    assert set(c["series"]) == set(levels["series"])
    own = c[c["provenance"] == "made here"].drop(columns=["p", "p_holm", "verdict"]).reset_index(drop=True)
    assert own.equals(alone["contrasts"].drop(columns=["p", "p_holm", "verdict"]))
    assert c[(c["provenance"] == "uploaded") & (c["contrast"] == "effort")]["n_draws"].tolist() == [4]


def test_what_thinking_buys_names_the_runs_made_here_it_pools(filled):
    """Two runs made here of one model, one per effort: one series, the contrasts paired across them, both runs
    named in the rows and in the printed lines."""
    from core.analysis.reasoning import describe_levels

    db, ids, _ = filled
    with store.connect(db) as con:
        buys = analysis.thinking_buys(con, [ids["low"], ids["high"]], scoring="lenient")
    named = ", ".join(sorted([ids["low"], ids["high"]]))
    assert buys["levels"]["series"].nunique() == 1 and list(buys["levels"]["reasoning"]) == ["low", "high"]
    assert set(buys["contrasts"]["runs"]) == {named}
    assert all(f"runs pooled: {named}" in line for line in describe_levels(buys["contrasts"]))

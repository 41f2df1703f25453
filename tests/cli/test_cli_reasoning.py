"""CLI: reasoning effort against a real OpenAI-compatible stand-in that thinks — the effort travels in the request
body, the answer is scored without the reasoning (a decoy answer inside it never counts), the export carries the
reasoning apart, the effort is part of the cache key, and a config's ``reasoning`` list is a factor of the grid."""

from __future__ import annotations

import json

import pytest

from core import store
from core.tasks import setops
from core.tasks.setops.scoring import solve
from tests.support.loopback import LoopbackServer

CONFIG = ("task: setops\nsamples: 3\nsizes: [2]\nmembers: [numbers]\nseed: 11\n"
          "operations: [union, intersection]\n")   # 6 items
DECOY = "<answer>{999, 998}</answer>"


def _truths(text: str) -> dict:
    import yaml

    cfg = setops.load_config(yaml.safe_load(text))
    return {it["prompt"]: it for it in setops.items(cfg)}


@pytest.fixture(scope="module")
def thinking_server():
    items = {**_truths(CONFIG), **_truths(CONFIG + "reasoning: [low, high]\n")}
    srv = LoopbackServer(0.001, responder=lambda prompt, model: solve(items[prompt]),
                         reasoning=lambda prompt, model: f"Let me think. A first guess: {DECOY}. No, check again.")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def runs(thinking_server, tmp_path_factory):
    """One store: a run at effort high, the same again, one at effort low, and a grid crossing [low, high]."""
    from core.cli import main

    tmp = tmp_path_factory.mktemp("reasoning")
    (tmp / "cfg.yaml").write_text(CONFIG)
    (tmp / "grid.yaml").write_text(CONFIG + "reasoning: [low, high]\n")
    db = tmp / "r.duckdb"
    srv = thinking_server
    common = ["--model", "openai-compatible/thinker", "--base-url", srv.base_url, "--db", str(db), "--no-progress"]
    out = {}

    def run(name, cfg, *extra):
        before = sum(srv.requests.values())
        efforts = dict(srv.efforts)
        code = main(["run", "--config", str(tmp / cfg), *common, *extra])
        out[name] = {"code": code, "requests": sum(srv.requests.values()) - before,
                     "efforts": {k: v - efforts.get(k, 0) for k, v in srv.efforts.items() if v - efforts.get(k, 0)}}

    run("high", "cfg.yaml", "--reasoning-effort", "high")
    run("high_again", "cfg.yaml", "--reasoning-effort", "high")
    run("low", "cfg.yaml", "--reasoning-effort", "low")
    run("grid", "grid.yaml")
    return db, tmp, out


def test_effort_is_sent_in_the_body(runs, thinking_server):
    _, _, out = runs
    assert out["high"]["code"] == 0
    assert out["high"]["requests"] == 6
    assert out["high"]["efforts"] == {"high": 6}
    assert thinking_server.template_kwargs[json.dumps({"enable_thinking": True})] >= 6


def test_decoy_inside_the_reasoning_never_counts(runs):
    db, _, _ = runs
    with store.connect(db) as con:
        rows = con.execute("SELECT correct, response, reasoning_text FROM v_results").fetchall()
    assert rows and all(correct for correct, _, _ in rows)
    assert all(DECOY not in response and DECOY in reasoning for _, response, reasoning in rows)


def test_same_effort_again_makes_no_call_another_effort_does(runs):
    _, _, out = runs
    assert out["high_again"]["code"] == 0 and out["high_again"]["requests"] == 0
    assert out["low"]["code"] == 0 and out["low"]["requests"] == 6 and out["low"]["efforts"] == {"low": 6}


def test_export_has_the_reasoning_apart(runs, cli):
    db, tmp, _ = runs
    with store.connect(db) as con:
        run_id = con.execute("SELECT run_id FROM runs WHERE params_json LIKE '%\"high\"%'").fetchall()[0][0]
    path = tmp / "high.jsonl"
    r = cli("export", "--run", run_id, "--out", path, "--db", db)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 6
    for row in rows:
        assert DECOY in row["reasoning_text"] and DECOY not in row["response"]
        assert row["tokens_reasoning"] > 0
        assert row["tokens_answer"] == row["tokens_out"] - row["tokens_reasoning"]
        assert row["reasoning"] == "high"
        assert json.loads(row["reasoning_sent"])["reasoning_effort"] == "high"


def test_reasoning_list_is_a_factor(runs, cli):
    db, tmp, out = runs
    assert out["grid"]["code"] == 0
    # the grid's items at low and high ask what the single-effort runs asked: answered from the cache
    assert out["grid"]["requests"] == 0
    with store.connect(db) as con:
        run_id = con.execute("SELECT run_id FROM runs WHERE config_json LIKE '%reasoning%'").fetchall()[0][0]
    path = tmp / "by.json"
    r = cli("report", "table", "--run", run_id, "--by", "reasoning", "--out", path, "--db", db)
    assert r.returncode == 0, r.stderr
    rows = json.loads(path.read_text())
    rows = rows.get("rows", rows) if isinstance(rows, dict) else rows
    assert sorted(row["reasoning"] for row in rows) == ["high", "low"]
    assert [(row["mean"], row["items"]) for row in rows] == [(100.0, 6), (100.0, 6)]


def test_reasoning_finding_through_report_findings(runs, cli):
    """``report findings`` carries the reasoning-effort finding for a grid that crosses efforts on the same draws: one
    line per model and contrast over draws; the stand-in answers alike at every effort, so nothing is declared."""
    db, tmp, _ = runs
    with store.connect(db) as con:
        run_id = con.execute("SELECT run_id FROM runs WHERE config_json LIKE '%reasoning%'").fetchall()[0][0]
    path = tmp / "findings.json"
    r = cli("report", "findings", "--run", run_id, "--only", "reasoning_effort", "--format", "json", "--out", path,
            "--db", db)
    assert r.returncode == 0, r.stderr
    found = {f["id"]: f for f in json.loads(path.read_text())["findings"]}
    fd = found["reasoning_effort"]
    assert fd["applicable"] and fd["beyond_paper"]
    effort = [row for row in fd["table"] if row["contrast"] == "effort"]
    assert [(row["model"], row["low"], row["high"], row["n_draws"]) for row in effort] == [
        ("openai-compatible/thinker", "low", "high", 3)]
    assert all(row["verdict"] == "no evidence" for row in fd["table"])
    assert all(line["model"] == "openai-compatible/thinker" for line in fd["lines"])


# ------------------------------------------------------------------------- Anthropic: adaptive thinking and budgets
DECEPTIVE = ("task: setops\nseed: 3\nsamples: 3\noperations: [union]\nsizes: [3]\nmembers: [deceptive]\n"
             "conditions: [not_swapped, swapped]\nphrasings: [formal]\napproaches: [baseline]\nshots: [0]\n")


@pytest.fixture(scope="module")
def anthropic_runs(tmp_path_factory):
    """The Anthropic stand-in behaving as the API does (claude-opus-4-7 refuses budgets, claude-haiku-4-5 refuses
    adaptive thinking): a run of each at one effort, and a deceptive grid crossing efforts on opus."""
    from core.cli import main
    from tests.support.anthropic_standin import AnthropicStandIn

    items = {**_truths(CONFIG), **_truths(DECEPTIVE + "reasoning: [low, max]\n")}

    def answer(prompt, params):   # right, except swapped items at low effort: thinking removes the failure
        it = items[prompt]
        wrong = it.get("condition") == "swapped" and (params.get("output_config") or {}).get("effort") == "low"
        return "<answer>{}</answer>" if wrong else solve(it)

    tmp = tmp_path_factory.mktemp("anthropic")
    (tmp / "cfg.yaml").write_text(CONFIG)
    (tmp / "grid.yaml").write_text(DECEPTIVE + "reasoning: [low, max]\n")
    db = tmp / "a.duckdb"
    srv = AnthropicStandIn(answer=answer).start()
    codes = {}
    try:
        import os

        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test-standin-0000"
        for name, cfg, model, effort in (("opus", "cfg.yaml", "claude-opus-4-7", "max"),
                                         ("haiku", "cfg.yaml", "claude-haiku-4-5", "high"),
                                         ("grid", "grid.yaml", "claude-opus-4-7", None)):
            before = len(srv.bodies)
            extra = ["--reasoning-effort", effort] if effort else []
            codes[name] = (main(["run", "--config", str(tmp / cfg), "--model", f"anthropic/{model}", "--base-url",
                                 srv.base_url, "--db", str(db), "--no-progress", *extra]),
                           srv.bodies[before:])
    finally:
        os.environ.pop("ANTHROPIC_API_KEY", None)
        srv.stop()
    return db, tmp, codes, srv


def test_opus_4_7_at_max_answers_every_item_with_adaptive_thinking(anthropic_runs):
    db, _, codes, srv = anthropic_runs
    code, bodies = codes["opus"]
    assert code == 0 and len(bodies) == 6 and srv.counts["refused"] == 0
    assert all(b["thinking"] == {"type": "adaptive"} and b["output_config"] == {"effort": "max"} for b in bodies)
    with store.connect(db) as con:
        rows = con.execute("SELECT correct, response, reasoning_text, reasoning_sent FROM v_results WHERE run_id IN "
                           "(SELECT run_id FROM runs WHERE model = 'anthropic/claude-opus-4-7' "
                           "AND params_json LIKE '%\"reasoning_effort\":\"max\"%')").fetchall()
        kept = con.execute("SELECT model, info_json FROM model_capabilities").fetchall()
    assert len(rows) == 6 and all(correct for correct, *_ in rows)
    assert all("<answer>{0}</answer>" in thought and "{0}" not in response for _, response, thought, _ in rows)
    assert {json.loads(s)["output_config"]["effort"] for *_, s in rows} == {"max"}
    assert sorted(m for m, _ in kept) == ["anthropic/claude-haiku-4-5", "anthropic/claude-opus-4-7"]
    assert srv.counts["models"] == 2                                  # described once per model, then kept


def test_haiku_4_5_at_high_still_sends_a_budget(anthropic_runs):
    _, _, codes, _ = anthropic_runs
    code, bodies = codes["haiku"]
    assert code == 0 and len(bodies) == 6
    assert all(b["thinking"]["type"] == "enabled" and "output_config" not in b for b in bodies)


def test_anthropic_export_keeps_the_thinking_apart(anthropic_runs, cli):
    db, tmp, _, _ = anthropic_runs
    with store.connect(db) as con:
        run_id = con.execute("SELECT run_id FROM runs WHERE model = 'anthropic/claude-opus-4-7' "
                             "AND params_json LIKE '%\"reasoning_effort\":\"max\"%'").fetchall()[0][0]
    path = tmp / "opus.csv"
    r = cli("export", "--run", run_id, "--out", path, "--db", db)
    assert r.returncode == 0, r.stderr
    import csv

    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 6
    assert all("{0}" in row["reasoning_text"] and "{0}" not in row["response"] for row in rows)


def test_report_thinking_pairs_levels_on_the_same_draws(anthropic_runs, cli):
    """The grid asks 3 deceptive draws in both conditions at low and max; the stand-in fails swapped items at low
    only: accuracy rises, the swap effect at low is 100 points and vanishes at max (3 draws: fewer than the engine's
    stats.MIN_UNITS, so the estimates alone — too few to test, no interval, no p)."""
    db, tmp, codes, _ = anthropic_runs
    assert codes["grid"][0] == 0
    with store.connect(db) as con:
        run_id = con.execute("SELECT run_id FROM runs WHERE config_json LIKE '%reasoning%'").fetchall()[0][0]
    path = tmp / "thinking.json"
    r = cli("report", "thinking", "--run", run_id, "--out", path, "--db", db, "--scoring", "lenient")
    assert r.returncode == 0, r.stderr
    assert "anthropic/claude-opus-4-7" in r.stdout and "swap effect" in r.stdout
    levels = json.loads(path.read_text())
    assert [(x["reasoning"], x["accuracy"], x["configs"]) for x in levels] == [("low", 50.0, 2), ("max", 100.0, 2)]
    assert levels[0]["spread"] > levels[1]["spread"] == 0
    contrasts = {(c["contrast"], c["low"]): c for c in json.loads((tmp / "thinking.contrasts.json").read_text())}
    assert contrasts[("swap_effect", "low")]["estimate"] == 100 and contrasts[("swap_effect", "max")]["estimate"] == 0
    assert contrasts[("effort", "low")]["estimate"] == 50 and contrasts[("effort", "low")]["n_draws"] == 3
    assert contrasts[("interaction", "low")]["estimate"] == -100 and not contrasts[("interaction", "low")]["testable"]
    assert contrasts[("interaction", "low")]["verdict"] == "too few to test"


def test_a_level_the_server_lacks_is_sent_as_the_nearest_and_said(thinking_server, tmp_path, cli):
    """max is not an OpenAI-compatible level: the server gets xhigh, each call records it, the run says so."""
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    db = tmp_path / "n.duckdb"
    before = dict(thinking_server.efforts)
    r = cli("run", "--config", tmp_path / "cfg.yaml", "--model", "openai-compatible/thinker", "--base-url",
            thinking_server.base_url, "--db", db, "--no-progress", "--reasoning-effort", "max")
    assert r.returncode == 0, r.stderr
    assert thinking_server.efforts["xhigh"] - before.get("xhigh", 0) == 6 and "max" not in thinking_server.efforts
    assert "reasoning effort max was sent as xhigh" in r.stderr and "6 call(s)" in r.stderr
    with store.connect(db) as con:
        rows = con.execute("SELECT reasoning, reasoning_sent FROM v_results").fetchall()
    assert {(e, json.loads(s)["reasoning_effort"]) for e, s in rows} == {("max", "xhigh")}

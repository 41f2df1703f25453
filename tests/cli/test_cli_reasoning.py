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

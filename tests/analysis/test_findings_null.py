"""Findings that a reviewer would accept: simulated models whose truth is known, run through the runner (the first
replication through the CLI's ``run`` and ``report findings`` — ``python -m core``'s main, called in this process —
the others through the functions the CLI calls).

- A null model — its verdict is a hash of (set A, set B, operation, replication), so no factor has any effect while
  the configurations that reuse a draw share its verdicts — over 20 replications declares an effect in at most 10 %
  of the answerable findings (counting configurations as independent, the same runs gave about a third).
- An overlap run that differs from an independent run only in overlap (true effect 0) gives no significant overlap
  effect, and a second model without overlap runs changes nothing in the first model's verdict.
- Two items per model: no significant contrast, and no interval outside [−100, 100].
"""

from __future__ import annotations

import json

import pytest

from core import runner, store
from core.analysis import findings
from core.config import run_spec
from core.tasks.setops.scoring import solve
from tests.support.cli import cli_output
from tests.support.loopback import LoopbackServer, set_hash_responder

REPLICATIONS = 20
# each draw is asked in 4 operations x 2 phrasings x 2 approaches x 2 numbers of demonstrations: 16 configurations
# (the null model's verdict changes only with the operation), as in the paper's grids
NULL = {"task": "setops", "samples": 5,
        "operations": ["union", "intersection", "difference", "symmetric_difference"], "sizes": [2, 4],
        "members": ["numbers", "words"], "phrasings": ["formal", "plain"],
        "approaches": ["baseline_allow_empty", "composite_allow_empty"], "shots": [0, 1]}
OVERLAP = {"task": "setops", "seed": 7, "samples": 16, "operations": ["union", "intersection", "difference",
                                                                       "symmetric_difference"],
           "sizes": [4], "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
TINY = {"task": "setops", "seed": 3, "samples": 2, "operations": ["union"], "sizes": [2], "members": ["numbers"],
        "lengths": [2], "phrasings": ["formal"], "approaches": ["baseline_allow_empty"], "shots": [0]}


def _items(*configs) -> dict:
    out = {}
    for cfg in configs:
        spec = run_spec(cfg)
        for it in spec.task_module.items(spec.config):
            out[it["prompt"]] = it
    return out


@pytest.fixture(scope="module")
def null_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("null")
    db = tmp / "s.duckdb"
    configs = [dict(NULL, seed=100 + r) for r in range(REPLICATIONS)]
    srv = LoopbackServer(0.0005, responder=set_hash_responder(_items(*configs))).start()
    ids = []
    try:
        first = tmp / "null.yaml"
        first.write_text(json.dumps(configs[0]))
        done = cli_output("run", "--config", str(first), "--model", "openai-compatible/null-r0", "--base-url",
                    srv.base_url, "--concurrency", "16", "--no-progress", "--db", str(db), "--name", "null r0")
        ids.append(done.split("run ", 1)[1].split(":", 1)[0])
        for r, cfg in enumerate(configs[1:], start=1):
            ids.append(runner.run(cfg, f"openai-compatible/null-r{r}", db_path=db, base_url=srv.base_url,
                                  concurrency=16).run_id)
    finally:
        srv.stop()
    return db, ids


@pytest.mark.slow
def test_a_null_model_declares_an_effect_in_few_answerable_findings(null_runs, tmp_path):
    db, ids = null_runs
    out = tmp_path / "r0.json"
    cli_output("report", "findings", "--run", ids[0], "--format", "json", "--out", str(out), "--db", str(db))
    reports = [json.loads(out.read_text())]
    with store.connect(db) as con:
        reports += [findings.report(con, [rid]) for rid in ids[1:]]
    answerable = declared = 0
    for rep in reports:
        for fd in rep["findings"]:
            if not fd["contrasts"]:
                continue
            answerable += 1
            declared += any(c["significant"] for c in fd["contrasts"])
            for c in fd["contrasts"]:
                assert -100 <= c["ci_low"] <= c["estimate"] <= c["ci_high"] <= 100, c
    # phrasing, operations, numbers vs words, size: per replication (llm_comparison needs two models)
    assert answerable == 4 * REPLICATIONS, answerable
    assert declared <= 0.10 * answerable, (declared, answerable)
    phrasing = reports[0]["findings"][0]["contrasts"][0]
    assert phrasing["design"] == "paired by draw" and phrasing["n"] == 2 * 2 * NULL["samples"]   # types x sizes
    assert phrasing["estimate"] == 0 and phrasing["p"] == 1.0             # the same sets: the same verdicts
    size = next(fd for fd in reports[0]["findings"] if fd["id"] == "operand_size")["contrasts"][0]
    assert size["design"].startswith("between draws") and size["n_a"] == size["n_b"] == 2 * NULL["samples"]


def _size_only(items):
    """A model whose skill depends on the set size only (never on overlap): right with probability 0.8 at size 4."""
    import hashlib

    def respond(prompt, model):
        it = items[prompt]
        u = int(hashlib.sha256(f"{model}|{prompt}".encode()).hexdigest()[:8], 16) / 16 ** 8
        p = 0.8 if it["size_a"] == 4 else 0.6
        return solve(it) if u < p else "<answer>{zzwrong}</answer>"

    return respond


def test_overlap_contrast_holds_everything_else_equal_and_ignores_other_models(tmp_path):
    overlap = dict(OVERLAP, overlap=[0.5])
    other = dict(OVERLAP, sizes=[2], seed=8)                     # a second model: independent runs at another size
    srv = LoopbackServer(0.0005, responder=_size_only(_items(OVERLAP, overlap, other))).start()
    db = tmp_path / "s.duckdb"
    try:
        one = [runner.run(cfg, "openai-compatible/m1", db_path=db, base_url=srv.base_url, concurrency=16).run_id
               for cfg in (OVERLAP, overlap)]
        two = runner.run(other, "openai-compatible/m2", db_path=db, base_url=srv.base_url, concurrency=16).run_id
    finally:
        srv.stop()
    with store.connect(db) as con:
        alone = findings.report(con, one, only=["is_overlap_important_only_haiku_numbers"])["findings"][0]
        both = findings.report(con, [*one, two], only=["is_overlap_important_only_haiku_numbers"])["findings"][0]
    c = alone["contrasts"][0]
    assert c["model"] == "openai-compatible/m1" and not c["significant"], c
    assert c["design"].startswith("between draws") and c["n_a"] == c["n_b"] == 16, c
    assert c["strata_matched"] == c["strata_total"] == 4, c          # the four operations, size 4, formal, k = 0
    assert both["contrasts"] == alone["contrasts"]                     # m2 changes nothing in m1's verdict
    assert [u["model"] for u in both["unanswered"]] == ["openai-compatible/m2"]
    assert any("m2" in v and "not answerable" in v for v in both["verdicts"])


def test_two_items_per_model_give_no_certainty(tmp_path):
    srv = LoopbackServer(0.0005, answer="<answer>{zzwrong}</answer>").start()
    db = tmp_path / "s.duckdb"
    try:
        right = runner.run(TINY, "reference/solver", db_path=db).run_id
        wrong = runner.run(TINY, "openai-compatible/wrong", db_path=db, base_url=srv.base_url).run_id
        elsewhere = runner.run(dict(TINY, seed=4), "openai-compatible/wrong2", db_path=db,
                               base_url=srv.base_url).run_id
    finally:
        srv.stop()
    with store.connect(db) as con:
        rep = findings.report(con, [right, wrong, elsewhere], only=["llm_comparison"])
    cs = rep["findings"][0]["contrasts"]
    assert len(cs) == 3, rep["findings"][0]["verdicts"]
    for c in cs:   # 2 draws a side: an estimate, and "too few draws to test" instead of an interval and a p
        assert not c["significant"] and not c["testable"] and c["p"] is None and c["ci_low"] is None, c
        assert c["caveat"].startswith("too few draws to test"), c
    paired = [c for c in cs if c["design"] == "paired by draw"]
    assert [(abs(c["estimate"]), c["n"]) for c in paired] == [(100.0, 2)]   # right vs wrong, same draws
    between = [c for c in cs if c["design"].startswith("between")]
    assert {(c["n_a"], c["n_b"]) for c in between} == {(2, 2)} and len(between) == 2

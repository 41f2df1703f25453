"""Issue 17, items 3, 4 and 10: replies that could stall or exhaust the tool.

- A reply of 100,000 unclosed ``<answer>`` tags (the strict parser was quadratic: minutes) is scored well under a
  second by both scorings, and a CLI run against an endpoint that sends it finishes with every item answered.
- An endless streamed body is cut at the reply cap (``$STUDIO_MAX_REPLY_BYTES``) while it streams: the run ends,
  the calls fail with the cap named, and the process stays small.
- ``--timeout`` above 60 s reaches the client (it was always built with 60 s).
- The block search equals the reference's regular expression on every string of a small alphabet of tag pieces.
"""

from __future__ import annotations

import json
import random
import re
import time

import pytest

from core.config import run_spec
from core.models import get_model
from core.tasks import get_task
from core.tasks.setops.parse_strict import answer_blocks, parse_strict
from tests.hostile.conftest import run_limited
from tests.support.loopback import LoopbackServer

CFG = {"task": "setops", "seed": 3, "samples": 3, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
TAGS = "<answer>" * 100_000

REFERENCE_BLOCK = re.compile("(?<=<answer>)(?s:.*?)(?=</answer>)")   # the reference's search (quadratic)


def test_block_search_matches_the_reference_regex():
    pieces = ["<answer>", "</answer>", "a", " ", "<", ">", "/", "answer", "1", "</answer", "<answer"]
    rng = random.Random(17)
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert answer_blocks(text, limit=10 ** 6) == REFERENCE_BLOCK.findall(text), text


def test_a_100000_tag_reply_is_scored_quickly_by_both_scorings():
    task = get_task("setops")
    item = task.item(run_spec(CFG).config, 0)
    started = time.process_time()
    assert parse_strict(TAGS).reason == "answer_tag_unclosed"
    scored = task.score(item, TAGS)
    nested = task.score(item, "[" * 100_000 + "]" * 100_000)     # was a RecursionError in the lenient parser
    took = time.process_time() - started
    assert scored["correct"] in (False, 0) and nested is not None
    print(f"100,000 tags + 100,000-deep nesting scored in {took:.2f} s CPU")
    assert took < 20        # generous: a quadratic parser takes minutes here, a linear one a fraction of a second


def _run(srv, tmp_path, *extra, env=None):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CFG))
    return run_limited(["-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/hostile",
                        "--base-url", srv.base_url, "--no-progress", "--db", str(tmp_path / "s.duckdb"),
                        "--max-attempts", "1", *extra], env=env, timeout=120)


@pytest.mark.slow
def test_a_run_against_a_100000_tag_reply_ends_within_its_timeout(tmp_path):
    srv = LoopbackServer(0.01, answer=TAGS).start()
    try:
        # one call at a time: scoring one reply never eats into another call's timer on a loaded machine
        done = _run(srv, tmp_path, "--timeout", "10", "--concurrency", "1")
    finally:
        srv.stop()
    assert "Traceback" not in done.stderr
    assert done.returncode == 0 and "6/6 answered" in done.stdout, (done.stdout, done.stderr[-1500:])


@pytest.mark.slow
def test_an_endless_stream_is_cut_at_the_reply_cap(tmp_path):
    srv = LoopbackServer(0.01, endless=True).start()
    try:
        done = _run(srv, tmp_path, "--timeout", "60", "--concurrency", "4",
                    env={"STUDIO_MAX_REPLY_BYTES": str(2 * 1024 * 1024)})
    finally:
        srv.stop()
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 1 and "0/6 answered" in done.stdout, (done.stdout, done.stderr[-1500:])
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "over the cap of 2,097,152 bytes" in lines[0], lines


def test_the_run_timeout_reaches_the_model_client(monkeypatch, tmp_path):
    """start_run builds the model with the run's per-call timeout (it was a fixed 60 s)."""
    import core.models
    from core.runner.handle import start_run

    seen = {}

    class Stop(Exception):
        pass

    def fake_get_model(spec, **kw):
        seen.update(kw)
        raise Stop()

    monkeypatch.setattr(core.models, "get_model", fake_get_model)
    with pytest.raises(Stop):
        start_run(CFG, "openai-compatible/x", base_url="http://127.0.0.1:9/v1", call_timeout=300,
                  db_path=tmp_path / "s.duckdb")
    assert seen["timeout"] == 300
    assert get_model("openai-compatible/x", base_url="http://127.0.0.1:9/v1", timeout=300).timeout == 300



"""`run --engine ray` on a local Ray (issue 21): every item answered through the actor pool despite injected
429/500/non-JSON/hang failures, each answer stored once, and the same call again sends 0 requests."""

from __future__ import annotations

import pytest

from tests.support.loopback import LoopbackServer

ray = pytest.importorskip("ray")

CONFIG = {"task": "setops", "seed": 1, "samples": 2, "operations": ["union", "intersection"],
          "sizes": [2, 4], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


@pytest.fixture(scope="module")
def local_ray():
    from core.runner.ray_engine import start_ray

    start_ray(None)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_every_item_answered_once_and_rerun_sends_nothing(local_ray, tmp_path):
    from core import store
    from core.runner.ray_engine import run_ray

    db = tmp_path / "s.duckdb"
    srv = LoopbackServer(0.02, fail_rate=0.3, hang=2.0, retry_after_ms=10).start()
    try:
        c = run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, concurrency=4, actors=2,
                    block_size=4, timeout=0.5, max_attempts=6)
        st = srv.stats()
        assert c["requests"] > 0 and c["failed"] == 0
        assert st["total_answered"] == c["requests"]          # each distinct prompt answered once by the server
        assert set(st["failures"]) - {"429", "500", "timeout", "malformed"} == set()
        with store.connect(db) as con:
            n, done = con.execute("SELECT n_items, n_done FROM runs WHERE run_id = ?", [c["run_id"]]).fetchone()
            assert n == done > 0
            keys = con.execute("SELECT count(*), count(DISTINCT cache_key) FROM calls").fetchone()
            assert keys[0] == keys[1] == c["requests"]
        before = srv.stats()["total_requests"]
        again = run_ray(CONFIG, "openai-compatible/loop", srv.base_url, db_path=db, concurrency=4, actors=2)
        assert again["requests"] == 0 and srv.stats()["total_requests"] == before
    finally:
        srv.stop()


def test_ray_data_llm_names_exist():
    llm = pytest.importorskip("ray.data.llm")
    for name in ("build_processor", "vLLMEngineProcessorConfig", "HttpRequestProcessorConfig"):
        assert hasattr(llm, name), name


@pytest.mark.slow
def test_cli_engine_ray(local_ray, cli, tmp_path):
    import json

    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    srv = LoopbackServer(0.01).start()
    try:
        args = ("run", "--config", cfg, "--model", "openai-compatible/loop", "--base-url", srv.base_url,
                "--db", tmp_path / "s.duckdb", "--engine", "ray", "--no-progress")
        r = cli(*args)
        assert r.returncode == 0, r.stderr
        assert "0 failed" in r.stdout and " 0 request(s)" not in r.stdout
        sent = srv.stats()["total_requests"]
        r2 = cli(*args)
        assert r2.returncode == 0 and " 0 request(s)" in r2.stdout and srv.stats()["total_requests"] == sent
        bad = cli("run", "--config", cfg, "--model", "reference/solver", "--engine", "ray", "--db", tmp_path / "x.db")
        assert bad.returncode != 0 and "--engine ray" in bad.stderr and "Traceback" not in bad.stderr
    finally:
        srv.stop()

"""Runner mechanics with in-process fake models (only the model is fake: real setops task, real DuckDB file)."""

import asyncio
import threading
import time

import pytest

from core import runner, store
from core.errors import ConfigError
from core.models.base import Completion, ModelError, RetryableError
from core.tasks import setops

CFG = {"task": "setops", "samples": 10, "sizes": [2, 4], "members": ["numbers"], "seed": 3}   # 4 ops × 2 × 10 = 80


class FakeModel:
    """Answers with the reference solution after ``latency`` s; counts calls and the peak number in flight."""

    provider = "fake"
    supported_params = ()

    def __init__(self, latency=0.01, spec="fake/solver", concurrency=8, script=None, wrong_every=0):
        self.spec, self.latency, self.default_concurrency = spec, latency, concurrency
        self.script = script or {}          # prompt-attempt → exception to raise
        self.wrong_every = wrong_every
        self.calls, self.attempts = 0, {}
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()

    async def complete(self, request):
        n = self.attempts[request.prompt] = self.attempts.get(request.prompt, 0) + 1
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
            exc = self.script(request, n) if callable(self.script) else None
            if exc is not None:
                raise exc
            self.calls += 1
            text = setops.solve(request.item)
            if self.wrong_every and request.item["idx"] % self.wrong_every == 0:
                text = "I do not know"
            return Completion(text, 10, 4, self.latency * 1000, 0.001, "stop")
        finally:
            with self.lock:
                self.in_flight -= 1


def db_rows(db, sql, params=()):
    with store.connect(db) as con:
        return con.execute(sql, list(params)).fetchall()


def test_run_scores_stores_and_caches(tmp_path):
    db = tmp_path / "r.duckdb"
    model = FakeModel(wrong_every=4)
    seen = []
    p = runner.run(CFG, model, db_path=db, on_progress=lambda pr: seen.append(pr.done))
    assert p.status == "done" and p.total == 80 and p.done == 80 and p.failed == 0
    assert p.correct == 60 and abs(p.accuracy - 0.75) < 1e-9 and model.calls == 80
    assert abs(p.cost_usd - 0.08) < 1e-9
    assert seen == sorted(seen) and seen[-1] == 80
    rows = db_rows(db, "SELECT count(*), count(*) FILTER (WHERE correct), count(*) FILTER (WHERE NOT followed), "
                       "count(DISTINCT config_id), min(latency_ms) FROM v_results WHERE run_id = ?", [p.run_id])
    assert rows == [(80, 60, 20, 8, 10.0)]
    run_row = store.get_run(db, p.run_id)
    assert run_row["status"] == "done" and run_row["n_items"] == 80 and run_row["n_done"] == 80
    assert '"seed":3' in run_row["config_json"] and '"temperature":0.25' in run_row["params_json"]
    # identical run again: resumed, nothing to do, no call
    p2 = runner.run(CFG, model, db_path=db)
    assert p2.run_id == p.run_id and model.calls == 80 and p2.done == 80
    # a different run sharing the prompts (limit → different run) is answered from the cache
    p3 = runner.run(CFG, model, db_path=db, limit=30)
    assert p3.run_id != p.run_id and p3.cached == 30 and p3.calls == 0 and model.calls == 80
    # --fresh: a new draw, every call made again
    p4 = runner.run(CFG, model, db_path=db, fresh=True)
    assert p4.run_id.endswith("-d1") and p4.calls == 80 and model.calls == 160
    assert db_rows(db, "SELECT count(DISTINCT draw) FROM calls") == [(2,)]


def test_concurrency_bound_is_respected(tmp_path):
    model = FakeModel(latency=0.03)
    p = runner.run(CFG, model, db_path=tmp_path / "r.duckdb", concurrency=5)
    assert p.done == 80 and model.max_in_flight == 5
    model1 = FakeModel(latency=0.001, concurrency=1)
    runner.run(CFG, model1, db_path=tmp_path / "r2.duckdb", limit=10)  # default = model.default_concurrency
    assert model1.max_in_flight == 1


def test_retries_honour_retry_after_and_give_up(tmp_path):
    db = tmp_path / "r.duckdb"

    # --limit takes 12 items spread over the grid: S[k] is the k-th of them
    S = setops.spread(setops.load_config(CFG), 12)
    assert len(S) == 12

    def script(req, n):
        idx = S.index(req.item["idx"])
        if idx == 0:
            return RetryableError("rate limited (HTTP 429)", retry_after=0.3) if n == 1 else None
        if idx in (1, 2):
            return RetryableError("server error (HTTP 500)") if n <= 2 else None
        if idx == 3:
            return ModelError("request rejected (HTTP 400): bad")
        if idx == 4:
            return RetryableError("server error (HTTP 503)")   # always: gives up after max_attempts
        return None

    model = FakeModel(script=script)
    t0 = time.monotonic()
    p = runner.run(CFG, model, db_path=db, limit=12, max_attempts=3)
    assert time.monotonic() - t0 >= 0.3                       # waited for Retry-After
    assert p.done == 10 and p.failed == 2 and p.status == "incomplete"
    assert model.attempts[_prompt(db, p.run_id, S[0])] == 2
    assert model.attempts[_prompt(db, p.run_id, S[1])] == 3
    assert model.attempts[_prompt(db, p.run_id, S[3])] == 1       # not retryable
    assert model.attempts[_prompt(db, p.run_id, S[4])] == 3       # max_attempts
    errors = dict(db_rows(db, "SELECT idx, error FROM v_results WHERE run_id = ? AND error IS NOT NULL",
                          [p.run_id]))
    assert set(errors) == {S[3], S[4]} and "HTTP 400" in errors[S[3]] and "HTTP 503" in errors[S[4]]
    assert db_rows(db, "SELECT attempts FROM results WHERE run_id = ? AND idx = ?", [p.run_id, S[1]]) == [(3,)]
    # re-running retries only the failed items
    model.script = None
    before = model.calls
    p2 = runner.run(CFG, model, db_path=db, limit=12, max_attempts=3)
    assert p2.run_id == p.run_id and p2.status == "done" and p2.done == 12 and model.calls == before + 2


def _prompt(db, run_id, idx):
    return db_rows(db, "SELECT prompt FROM items WHERE run_id = ? AND idx = ?", [run_id, idx])[0][0]


def test_per_call_timeout_is_retryable(tmp_path):
    class Slow(FakeModel):
        async def complete(self, request):
            n = self.attempts.get(request.prompt, 0)
            if n == 0:
                self.attempts[request.prompt] = 1
                await asyncio.sleep(5)
            return await super().complete(request)

    model = Slow()
    t0 = time.monotonic()
    p = runner.run(CFG, model, db_path=tmp_path / "r.duckdb", limit=4, call_timeout=0.2)
    assert p.done == 4 and p.retries == 4 and time.monotonic() - t0 < 4


def test_cancel_keeps_finished_calls(tmp_path):
    db = tmp_path / "r.duckdb"
    model = FakeModel(latency=0.05, concurrency=2)
    h = runner.start_run(CFG, model, db_path=db)
    assert runner.get_handle(h.run_id) is h and h in runner.active_runs()
    while h.progress().done < 6:
        time.sleep(0.01)
    h.cancel()
    p = h.wait(10)
    assert h.done and p.status == "cancelled" and 6 <= p.done < 80
    assert model.calls <= p.done + 2
    stored = db_rows(db, "SELECT count(*) FROM results WHERE run_id = ? AND error IS NULL", [h.run_id])[0][0]
    assert stored == p.done
    assert store.get_run(db, h.run_id)["status"] == "cancelled"
    # resuming finishes the rest without repeating the finished ones
    calls_before = model.calls
    p2 = runner.run(CFG, model, db_path=db)
    assert p2.done == 80 and model.calls - calls_before == 80 - stored


def test_rate_limit_rpm(tmp_path):
    model = FakeModel(latency=0.0, concurrency=8)
    t0 = time.monotonic()
    # 600 rpm = 10/s with a burst of 100: 110 calls need ≥ 1 s
    p = runner.run({**CFG, "samples": 14}, model, db_path=tmp_path / "r.duckdb", limit=110, rpm=600)
    assert p.done == 110 and time.monotonic() - t0 >= 0.9


def test_bad_arguments_fail_before_starting(tmp_path):
    with pytest.raises(ConfigError):
        runner.start_run({"task": "setops", "sizes": [-1]}, FakeModel(), db_path=tmp_path / "r.duckdb")
    with pytest.raises(ConfigError):
        runner.start_run(CFG, FakeModel(), db_path=tmp_path / "r.duckdb", concurrency=0)
    with pytest.raises(ConfigError):
        runner.start_run({"task": "nope"}, FakeModel(), db_path=tmp_path / "r.duckdb")


def test_estimate_counts_cache(tmp_path):
    db = tmp_path / "r.duckdb"
    est = runner.estimate(CFG, "reference/solver", db_path=db)
    assert est.n_items == 80 and est.n_calls == 80 and est.n_cached == 0 and est.tokens_in > 80 * 20
    assert est.cost_usd == 0.0
    runner.run(CFG, "reference/solver", db_path=db, limit=30)
    est2 = runner.estimate(CFG, "reference/solver", db_path=db)
    assert est2.n_cached == 30 and est2.n_calls == 50 and est2.tokens_in < est.tokens_in
    assert runner.estimate(CFG, "reference/solver", db_path=db, fresh=True).n_calls == 80
    gpt = runner.estimate(CFG, "openai/gpt-4o-mini", db_path=db)
    assert gpt.cost_usd is not None and gpt.cost_usd > 0


def test_reference_solver_end_to_end(tmp_path):
    p = runner.run(CFG, "reference/solver", db_path=tmp_path / "r.duckdb")
    assert p.status == "done" and p.done == 80 and p.accuracy == 1.0


def test_resume_run_continues_exactly_that_run(tmp_path):
    db = tmp_path / "r.duckdb"
    model = FakeModel(latency=0.05, concurrency=2)
    h = runner.start_run(CFG, model, db_path=db, limit=40, max_attempts=4)
    while h.progress().done < 4:
        time.sleep(0.01)
    h.cancel()
    p = h.wait(10)
    assert p.status == "cancelled"
    # another run of the same config without limit exists meanwhile: resume_run must not pick it
    runner.run(CFG, FakeModel(), db_path=db, limit=3)
    # (a fake model cannot be rebuilt from its spec, so use resume_run's path with the model object)
    h2 = runner.start_run(CFG, model, db_path=db, limit=40, max_attempts=4, _run_id=h.run_id)
    p2 = h2.wait(30)
    assert h2.run_id == h.run_id and p2.status == "done" and p2.done == 40


def test_resume_run_from_stored_configuration(tmp_path):
    db = tmp_path / "r.duckdb"
    p = runner.run(CFG, "reference/solver", db_path=db, limit=12)
    with store.connect(db) as con:   # forget some results, as if the run had been interrupted
        con.execute("DELETE FROM results WHERE run_id = ? AND idx IN (SELECT idx FROM results WHERE run_id = ? "
                    "ORDER BY idx OFFSET 5)", [p.run_id, p.run_id])
    h = runner.resume_run(p.run_id, db_path=db)
    p2 = h.wait(30)
    assert h.run_id == p.run_id and p2.done == 12 and p2.status == "done" and p2.cached == 7
    with pytest.raises(Exception, match="no run"):
        runner.resume_run("nope", db_path=db)


def test_a_run_of_an_older_generator_is_never_continued_with_other_items(tmp_path, monkeypatch):
    """setops.GENERATOR_VERSION keys runs: after the items of a config change (e.g. the reference-faithful prompts),
    the same command starts a new run instead of mixing old and new prompts in one, and resuming the old run is
    refused with one line."""
    db = tmp_path / "r.duckdb"
    monkeypatch.setattr(setops, "GENERATOR_VERSION", setops.GENERATOR_VERSION - 1)
    old = runner.run(CFG, "reference/solver", db_path=db, limit=6)
    monkeypatch.undo()
    new = runner.run(CFG, "reference/solver", db_path=db, limit=6)
    assert new.run_id != old.run_id and new.done == 6   # (identical prompts still come from the call cache)
    with pytest.raises(Exception, match="does not match its stored configuration"):
        runner.resume_run(old.run_id, db_path=db)
    again = runner.run(CFG, "reference/solver", db_path=db, limit=6)   # same version: the same run
    assert again.run_id == new.run_id


def test_token_bucket_limits_tokens_per_minute():
    from core.runner.ratelimit import RateLimiter

    lim = RateLimiter(tpm=60_000)                # 1000 tokens/s, burst 10,000
    lim.tokens.level = 0.0                       # start empty: 500 tokens need ≥ 0.5 s
    t0 = time.monotonic()
    asyncio.run(lim.acquire(500))
    assert time.monotonic() - t0 >= 0.45
    lim.settle(500, 2500)                        # the call really used 2000 more tokens: charged afterwards
    assert lim.tokens.level < -1000


@pytest.mark.parametrize("kw", [{"rpm": -5}, {"tpm": 0}, {"call_timeout": 0}, {"call_timeout": float("nan")},
                                {"rpm": "fast"}])
def test_bad_limits_are_refused_before_anything_is_stored(tmp_path, kw):
    """The app's pages call the runner directly: limits must be checked there, not only by the CLI."""
    db = tmp_path / "s.duckdb"
    with pytest.raises(ConfigError, match="must be a positive number"):
        runner.start_run(CFG, FakeModel(), db_path=db, **kw)
    assert store.list_runs(db).empty


def test_a_limited_run_stored_before_limits_were_spread_resumes_with_its_first_n_items(tmp_path):
    """Runs stored before --limit spread its items picked the first N (their run_json has no limit_pick): resuming
    one continues exactly those items under its old key, never a different selection."""
    import json

    db = tmp_path / "r.duckdb"
    old = runner.run(CFG, "reference/solver", db_path=db, limit=6, limit_pick="first")
    with store.connect(db) as con:
        spec = json.loads(con.execute("SELECT run_json FROM runs WHERE run_id = ?", [old.run_id]).fetchone()[0])
        spec.pop("limit_pick")
        con.execute("UPDATE runs SET run_json = ? WHERE run_id = ?", [json.dumps(spec), old.run_id])
        con.execute("DELETE FROM results WHERE run_id = ? AND idx >= 3", [old.run_id])
    p = runner.resume_run(old.run_id, db_path=db).wait(30)
    assert p.status == "done" and p.done == 6
    with store.connect(db) as con:
        assert [r[0] for r in con.execute("SELECT idx FROM items WHERE run_id = ? ORDER BY idx",
                                          [old.run_id]).fetchall()] == list(range(6))
    spread = runner.run(CFG, "reference/solver", db_path=db, limit=6)   # today's --limit 6: another run
    assert spread.run_id != old.run_id

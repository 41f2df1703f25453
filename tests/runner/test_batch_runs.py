"""Batch runs through the official SDKs against a loopback stand-in of both batch APIs (tests/support/batch_standin):
1,000 items through each provider's batch path with failed and expired requests resubmitted, a finished run
re-run submitting nothing, cancel, the attempt limit, a live run leaving prompts in flight alone, batch prices."""

import secrets

import pytest

from core import runner, store
from core.config import run_spec
from core.models.batch import BatchLimits
from core.runner.batch_collect import cancel_batch, list_batches
from tests.support.batch_standin import BatchStandIn

CFG = {"task": "setops", "samples": 125, "sizes": [2, 4], "members": ["numbers"], "seed": 3}  # 4 ops × 2 × 125
SMALL = {"task": "setops", "samples": 10, "sizes": [2], "members": ["numbers"], "seed": 5}     # 40 items
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin-openai-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-standin-0000")


def solver_answers(config) -> dict:
    """prompt → the correct reply (so a reply stored against the wrong item would score as wrong)."""
    spec = run_spec(config)
    task = spec.task_module
    return {it["prompt"]: task.solve(it) for it in task.items(spec.config)}


def url(srv, provider):
    return srv.openai_url if provider == "openai" else srv.anthropic_url


def batch_run(srv, provider, config, db, **kw):
    kw.setdefault("poll_interval", 0.01)
    return runner.run(config, MODELS[provider], base_url=url(srv, provider), db_path=db, batch=True, **kw)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_thousand_items_each_answered_once_failures_resubmitted(tmp_path, provider):
    answers = solver_answers(CFG)
    srv = BatchStandIn(error_rate=0.04, expire_rate=0.03, seed=7, answer=answers.__getitem__).start()
    db = tmp_path / "b.duckdb"
    try:
        p = batch_run(srv, provider, CFG, db, batch_limits=BatchLimits(300, 50_000_000))
        first = srv.stats()
        again = batch_run(srv, provider, CFG, db, batch_limits=BatchLimits(300, 50_000_000))
        second = srv.stats()
    finally:
        srv.stop()
    assert p.status == "done" and p.error is None, (p.status, p.error)
    assert (p.total, p.done, p.failed, p.correct) == (1000, 1000, 0, 1000)   # every reply on its own item
    assert first["plain_calls"] == 0
    sent = first[provider]
    with store.connect(db) as con:
        n_keys = con.execute("SELECT count(DISTINCT cache_key) FROM batch_requests").fetchall()[0][0]
        outcomes = dict(con.execute(
            "SELECT outcome, count(DISTINCT (batch_id, custom_id)) FROM batch_requests GROUP BY ALL").fetchall())
        succeeded_twice = con.execute(
            """SELECT count(*) FROM (SELECT custom_id FROM batch_requests WHERE outcome = 'succeeded'
               GROUP BY custom_id HAVING count(DISTINCT batch_id) > 1)""").fetchall()[0][0]
        phases = dict(con.execute("SELECT phase, count(*) FROM batches GROUP BY ALL").fetchall())
        calls = con.execute("SELECT count(*), count(*) FILTER (WHERE cost_usd > 0) FROM calls").fetchall()[0]
    assert len(sent) == n_keys                                        # every prompt went out
    failures = outcomes.get("errored", 0) + outcomes.get("expired", 0)
    assert outcomes.get("errored", 0) > 0 and outcomes.get("expired", 0) > 0    # the stand-in did fail some
    assert sum(sent.values()) == n_keys + failures                    # resubmitted = exactly the failed ones
    assert succeeded_twice == 0                                       # nothing that had succeeded went out again
    assert phases == {"collected": phases["collected"]} and phases["collected"] >= 5   # 4 of ≤300 + resubmission
    assert calls == (n_keys, n_keys)                                  # stored like live calls, with a (batch) cost
    # the same command on a finished run submits nothing
    assert again.status == "done" and again.done == 1000
    assert second[provider] == sent and second["created"] == first["created"]


def test_estimate_batch_is_half_the_list_price(tmp_path):
    db = tmp_path / "e.duckdb"
    for spec in MODELS.values():
        live = runner.estimate(CFG, spec, db_path=db)
        half = runner.estimate(CFG, spec, db_path=db, batch=True)
        assert live.cost_usd > 0 and half.n_calls == live.n_calls
        assert half.cost_usd == pytest.approx(live.cost_usd / 2)
    with pytest.raises(Exception, match="openai/ and anthropic/"):
        runner.estimate(CFG, "local/smollm2", db_path=db, batch=True)


def test_cli_estimate_batch_prints_the_batch_price(tmp_path, cli):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: setops\nsamples: 125\nsizes: [2, 4]\nmembers: [numbers]\nseed: 3\n")
    args = ("run", "--config", cfg, "--model", "openai/gpt-4o-mini", "--db", tmp_path / "e.duckdb", "--estimate")
    live, batch = cli(*args), cli(*args, "--batch")
    assert live.returncode == 0 and batch.returncode == 0, batch.stderr
    cost = [float(r.stdout.split("estimated cost $")[1].split()[0]) for r in (live, batch)]
    assert "batch price" in batch.stdout and cost[1] == pytest.approx(cost[0] / 2, abs=1e-4)
    bad = cli(*args[:4], "local/smollm2", "--db", tmp_path / "e.duckdb", "--batch")
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "openai/ and anthropic/" in bad.stderr


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_cancel_keeps_finished_requests_and_a_rerun_resubmits_the_rest(tmp_path, provider):
    srv = BatchStandIn().start()
    db = tmp_path / "c.duckdb"
    try:
        srv.hold()
        p = batch_run(srv, provider, SMALL, db, wait=False)
        assert p.status == "waiting" and p.waiting == 40 and p.done == 0
        (batch_id,) = list_batches(db)["batch_id"]
        row = cancel_batch(db, batch_id)
        assert row["cancel_requested"] and row["status"] in ("cancelling", "canceling")
        srv.release()
        p = batch_run(srv, provider, SMALL, db)
        assert p.status == "cancelled" and p.done == 20 and p.waiting == 0   # half ran before the cancel
        assert sum(srv.stats()[provider].values()) == 40                      # nothing resubmitted after a cancel
        p = batch_run(srv, provider, SMALL, db)                              # running it again: the rest
        sent = srv.stats()[provider]
    finally:
        srv.stop()
    assert p.status == "done" and p.done == 40
    assert sorted(set(sent.values())) == [1, 2] and sum(sent.values()) == 60
    assert list(list_batches(db)["phase"]) == ["collected", "collected"]


def test_attempt_limit_records_failures_and_a_rerun_retries_them(tmp_path):
    srv = BatchStandIn(error_rate=0.5, fail_times=2, seed=1).start()
    db = tmp_path / "a.duckdb"
    try:
        p = batch_run(srv, "openai", SMALL, db, max_attempts=2)
        with store.connect(db) as con:
            errors = con.execute("SELECT DISTINCT error FROM results WHERE error IS NOT NULL").fetchall()
        p2 = batch_run(srv, "openai", SMALL, db, max_attempts=2)
    finally:
        srv.stop()
    assert p.status == "incomplete" and 0 < p.failed < 40 and p.done + p.failed == 40
    assert errors and all("after 2 batch attempt(s)" in e[0] for e in errors)
    assert p2.status == "done" and p2.done == 40     # a new allowance: the third submission succeeds


def test_given_up_prompts_stay_given_up_while_other_batches_run(tmp_path):
    """Failures recorded after the last attempt are not resubmitted by the same session's later passes."""
    srv = BatchStandIn(error_rate=0.5, fail_times=100, seed=3, slow={3: 10}).start()   # the 4th batch lags
    db = tmp_path / "g.duckdb"
    try:
        p = batch_run(srv, "openai", SMALL, db, max_attempts=1, batch_limits=BatchLimits(10, 10**6))
        sent = srv.stats()["openai"]
    finally:
        srv.stop()
    assert p.status == "incomplete" and p.failed > 0 and p.done + p.failed == 40
    assert sum(sent.values()) == 40 and len(srv.created) == 4     # each prompt went out once


@pytest.mark.parametrize("concurrency", [None, 2])   # 2: most prompts are looked up while the first calls fly
def test_live_run_leaves_prompts_in_flight_alone(tmp_path, concurrency):
    srv = BatchStandIn().start()
    db = tmp_path / "l.duckdb"
    try:
        srv.hold()
        p = batch_run(srv, "openai", SMALL, db, wait=False)
        live = runner.run(SMALL, MODELS["openai"], base_url=srv.openai_url, db_path=db, max_attempts=1,
                          concurrency=concurrency)
        plain = srv.stats()["plain_calls"]
        srv.release()
        done = batch_run(srv, "openai", SMALL, db)
        runs = store.list_runs(db)
    finally:
        srv.stop()
    assert p.status == "waiting" and live.status == "waiting" and live.waiting == 40 and plain == 0
    assert done.status == "done" and done.done == 40 and len(runs) == 1 and runs["status"][0] == "done"


def test_batch_needs_a_batch_provider_and_a_key(tmp_path, monkeypatch):
    with pytest.raises(Exception, match="openai/ and anthropic/"):
        runner.run(SMALL, "reference/solver", db_path=tmp_path / "x.duckdb", batch=True)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(Exception, match="OPENAI_API_KEY"):
        runner.run(SMALL, "openai/gpt-4o-mini", db_path=tmp_path / "x.duckdb", batch=True)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_api_keys_never_reach_the_store_or_the_messages(tmp_path, monkeypatch, provider):
    key = "sk-proj-" + secrets.token_hex(20)
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", key)
    ok, bad = BatchStandIn(error_rate=0.2).start(), BatchStandIn(reject_key=True).start()
    db = tmp_path / "data" / "s.duckdb"
    try:
        p = batch_run(ok, provider, SMALL, db)
        refused = batch_run(bad, provider, {**SMALL, "seed": 6}, db)    # the server echoes the key back
    finally:
        ok.stop()
        bad.stop()
    assert p.status == "done"
    assert refused.status == "error" and "401" in refused.error and key[-12:] not in refused.error
    with store.connect(db) as con:
        lost = con.execute("SELECT phase, error FROM batches WHERE phase = 'lost'").fetchall()
        columns = con.execute("SELECT table_name, column_name FROM information_schema.columns "
                              "WHERE data_type = 'VARCHAR'").fetchall()
        hits = [(t, c) for t, c in columns if con.execute(
            f'SELECT count(*) FROM "{t}" WHERE contains("{c}", ?)', [key[-12:]]).fetchall()[0][0]]
    assert lost and "401" in lost[0][1] and not hits, hits        # the refusal is recorded, the key is not
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert key[-12:].encode() not in path.read_bytes(), path


def test_a_batch_submitted_before_requests_kept_their_record_collects_with_its_batchs(tmp_path):
    """A store of schema 9 with a batch in flight: the migration adds each request's record (empty for the
    requests already submitted) and collection writes the batch's own record onto their calls, as before."""
    srv = BatchStandIn().start()
    db = tmp_path / "v9.duckdb"
    try:
        srv.hold()
        p = batch_run(srv, "anthropic", SMALL, db, wait=False)
        assert p.status == "waiting"
        with store.connect(db) as con:   # back to what schema 9 had: no per-request record
            con.execute("ALTER TABLE batch_requests DROP COLUMN dropped_params")
            con.execute("ALTER TABLE batch_requests DROP COLUMN reasoning_sent")
            con.execute("UPDATE batches SET dropped_params = '[\"top_p\"]'")
            con.execute("DELETE FROM schema_version WHERE version = 10")
        with store.connect(db) as con:
            cols = {r[0] for r in con.execute("DESCRIBE batch_requests").fetchall()}
            empty = con.execute("SELECT count(*) FROM batch_requests WHERE dropped_params IS NULL").fetchall()[0][0]
        assert {"dropped_params", "reasoning_sent"} <= cols and empty == 40
        srv.release()
        p = batch_run(srv, "anthropic", SMALL, db)
    finally:
        srv.stop()
    assert p.status == "done" and p.done == 40
    with store.connect(db) as con:
        dropped = con.execute("SELECT DISTINCT dropped_params FROM calls").fetchall()
    assert dropped == [('["top_p"]',)]

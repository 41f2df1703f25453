"""`run --batch [--no-wait]` and `batches` through the CLI against the loopback stand-in of the batch APIs: submit
and return, list, refresh, cancel, re-attach; bad flags are one error line."""

import pytest

from tests.support.batch_standin import BatchStandIn

CFG_YAML = "task: setops\nsamples: 5\nsizes: [2]\nmembers: [numbers]\nseed: 12\n"   # 20 items


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin-openai-0000")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    srv = BatchStandIn().start()
    yield cfg, tmp_path / "b.duckdb", srv
    srv.stop()


def test_no_wait_list_refresh_cancel_reattach(env, cli):
    cfg, db, srv = env
    run = ("run", "--config", cfg, "--model", "openai/gpt-4o-mini", "--base-url", srv.openai_url, "--db", db,
           "--batch", "--poll-interval", "0.01", "--no-progress")
    srv.hold()
    first = cli(*run, "--no-wait", "--batch-max-requests", "10")
    assert first.returncode == 0, first.stderr
    assert "waiting; 0/20 answered" in first.stdout and "20 item(s) wait in provider batches" in first.stderr
    listed = cli("batches", "--db", db, "--run", "latest")
    assert listed.returncode == 0 and listed.stdout.count(" openai ") == 2 and "validating" in listed.stdout
    srv.release()
    refreshed = cli("batches", "--db", db, "--run", "latest", "--refresh")
    assert refreshed.returncode == 0 and "refreshed 2 open batch(es)" in refreshed.stdout
    assert "in_progress" in refreshed.stdout
    victim = listed.stdout.splitlines()[1].split()[0]
    cancelled = cli("batches", "--db", db, "--cancel", victim)
    assert cancelled.returncode == 0 and "cancel" in cancelled.stdout, cancelled.stderr
    done = cli(*run)                                                # re-attach: collect both, stop after the cancel
    assert done.returncode == 0, done.stderr
    collected = cli("batches", "--db", db, "--cancel", victim)       # a collected batch cannot be cancelled
    assert collected.returncode == 2 and "only an open batch" in collected.stderr
    assert "cancelled; 15/20 answered" in done.stdout
    final = cli(*run)                                               # again: the cancelled five go out once more
    assert final.returncode == 0 and "done; 20/20 answered" in final.stdout
    assert sum(srv.stats()["openai"].values()) == 25


def test_bad_batch_flags_are_one_error_line(env, cli):
    cfg, db, srv = env
    base = ("run", "--config", cfg, "--db", db)
    cases = [
        (base + ("--model", "openai/gpt-4o-mini", "--no-wait"), "go with --batch"),
        (base + ("--model", "reference/solver", "--batch"), "openai/ and anthropic/"),
        (base + ("--model", "openai/gpt-4o-mini", "--batch", "--batch-max-requests", "0"), "whole number >= 1"),
        (base + ("--model", "openai/gpt-4o-mini", "--batch", "--poll-interval", "-1"), "--poll-interval"),
        (("batches", "--db", db, "--cancel", "b-nope"), "no batch 'b-nope'"),
        (("batches", "--db", db, "--refresh"), "--refresh needs --run"),
    ]
    for args, message in cases:
        r = cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("error:") and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert srv.stats()["created"] == []

"""Kill-safety of batch runs, through the CLI in a real process: ``kill -9`` right after the provider created the
first batch — before the process could store its id — then the same command re-attaches (finds that batch at the
provider), submits the rest and finishes with no prompt submitted twice."""

import os
import signal
import subprocess
import sys
import time

import pytest

from core import store
from tests.support import ROOT
from tests.support.batch_standin import BatchStandIn

CFG_YAML = "task: setops\nsamples: 50\nsizes: [2, 4]\nmembers: [numbers]\nseed: 9\n"   # 400 items
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_kill_9_after_the_first_batch_is_created_then_reattach(tmp_path, provider):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML)
    db = tmp_path / "k.duckdb"
    srv = BatchStandIn(create_delay=30.0).start()
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-standin-openai-0000",
           "ANTHROPIC_API_KEY": "sk-ant-test-standin-0000", "PYTHONPATH": str(ROOT)}
    base_url = srv.openai_url if provider == "openai" else srv.anthropic_url
    cmd = [sys.executable, "-m", "core", "run", "--config", str(cfg), "--model", MODELS[provider], "--base-url",
           base_url, "--db", str(db), "--batch", "--batch-max-requests", "100", "--poll-interval", "0.05",
           "--no-progress"]
    try:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not srv.stats()["created"] and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert srv.stats()["created"], proc.communicate(timeout=10)
        proc.send_signal(signal.SIGKILL)    # the provider has the batch; the process never heard its id
        proc.wait(10)
        with store.connect(db) as con:
            before = con.execute("SELECT phase, provider_batch_id FROM batches").fetchall()
        assert before == [("submitting", None)]
        assert list(store.list_runs(db)["status"]) == ["waiting"]    # the dead run waits on its batch: not failed
        srv.create_delay = 0.0
        rerun = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        stats = srv.stats()
    finally:
        srv.stop()
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "done; 400/400 answered" in rerun.stdout
    sent = stats[provider]
    assert len(sent) == 400 and set(sent.values()) == {1}          # every prompt once: nothing submitted twice
    assert len(stats["created"]) == 4 and stats["plain_calls"] == 0
    with store.connect(db) as con:
        phases = con.execute("SELECT phase, count(*) FROM batches GROUP BY ALL").fetchall()
        adopted = con.execute("SELECT provider_batch_id FROM batches ORDER BY created_at LIMIT 1").fetchall()[0][0]
        done = con.execute("SELECT count(*) FROM results WHERE error IS NULL").fetchall()[0][0]
        status = con.execute("SELECT status FROM runs").fetchall()
    assert phases == [("collected", 4)] and adopted == stats["created"][0] and done == 400
    assert status == [("done",)]

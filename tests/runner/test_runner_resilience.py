"""Runner resilience against a real loopback HTTP endpoint through the real OpenAI SDK path (openai-compatible):
kill -9 mid-run then resume, 20 % mixed failures, and CLI runs while another process reads the same DuckDB file."""

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from core import runner, store
from tests.support import ROOT

CFG_YAML = "task: setops\nsamples: {samples}\nsizes: [2, 4]\nmembers: [numbers]\nseed: 11\n"


def start_server(tmp_path, latency, *extra):
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.loopback", "--port", "0", "--latency", str(latency),
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    line = proc.stdout.readline().strip()
    assert line.startswith("listening "), line
    return proc, line.split(" ", 1)[1]


def stats(base_url):
    with urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as resp:
        return json.loads(resp.read())


def cli_run(cfg, base_url, db, concurrency, env=None):
    return [sys.executable, "-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/loop",
            "--base-url", base_url, "--db", str(db), "--concurrency", str(concurrency), "--no-progress"]


@pytest.mark.slow
def test_kill_9_then_resume_finishes_each_item_once(tmp_path):
    n_items, conc = 8 * 12, 4
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML.format(samples=12))
    db = tmp_path / "k.duckdb"
    server, base_url = start_server(tmp_path, 0.15)
    try:
        cmd = cli_run(cfg, base_url, db, conc)
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rng = random.Random()
        target = rng.randint(1, n_items - 2 * conc)        # a random moment in the middle of the run
        deadline = time.monotonic() + 60
        while stats(base_url)["total_requests"] < target and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.15))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        before = stats(base_url)
        assert before["total_requests"] < n_items, "the run finished before the kill; test is not meaningful"
        # journals of the dead process are merged: every call answered before the kill is in the DB
        rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        after = stats(base_url)
    finally:
        server.kill()
        server.wait(10)
    with store.connect(db) as con:
        runs = con.execute("SELECT run_id, status, n_done FROM runs").fetchall()
        assert len(runs) == 1 and runs[0][1] == "done" and runs[0][2] == n_items
        rows = con.execute("SELECT count(*), count(DISTINCT idx), count(*) FILTER (WHERE error IS NULL) "
                           "FROM results").fetchall()[0]
        assert rows == (n_items, n_items, n_items)
        assert con.execute("SELECT count(*), count(DISTINCT prompt_sha) FROM calls").fetchall()[0] == (n_items,
                                                                                                      n_items)
    sent = after["requests"]
    assert len(sent) == n_items and sum(after["answered"].values()) == after["total_requests"]
    resent = sum(n - 1 for n in sent.values())
    print(f"killed after {before['total_requests']} of {n_items} requests; {resent} sent again on resume")
    # only calls in flight at the kill may have been sent a second time: at most `concurrency` at the model plus
    # at most one per slot whose answer was still in the journal's group commit (see core/runner/)
    assert resent <= 2 * conc, f"{resent} calls re-sent (killed after {before['total_requests']} requests)"
    assert max(sent.values()) <= 2


@pytest.mark.slow
def test_twenty_percent_mixed_failures_every_item_answered_once(tmp_path):
    server, base_url = start_server(tmp_path, 0.02, "--fail-rate", "0.2", "--hang", "5", "--retry-after-ms", "50",
                                    "--seed", "5")
    try:
        cfg = {"task": "setops", "samples": 25, "sizes": [2, 4], "members": ["numbers"], "seed": 2}   # 200 items
        p = runner.run(cfg, "openai-compatible/loop", base_url=base_url, db_path=tmp_path / "f.duckdb",
                       concurrency=16, call_timeout=2.0, max_attempts=6)
        s = stats(base_url)
    finally:
        server.kill()
        server.wait(10)
    assert p.status == "done" and p.done == 200 and p.failed == 0
    failed = s["total_requests"] - s["total_answered"]
    assert 0.12 <= failed / s["total_requests"] <= 0.3, s["failures"]
    assert set(s["failures"]) == {"429", "500", "timeout", "malformed"}
    assert len(s["answered"]) == 200 and set(s["answered"].values()) == {1}      # each item answered once
    assert p.retries == failed
    with store.connect(tmp_path / "f.duckdb") as con:
        assert con.execute("SELECT count(*) FROM results WHERE error IS NULL").fetchall()[0][0] == 200
        assert con.execute("SELECT max(attempts) FROM results").fetchall()[0][0] <= 3


READER = r"""
import sys, time, json
from core import store
db, stop = sys.argv[1], sys.argv[2]
seen, errors = [], 0
import os
while True:
    final = os.path.exists(stop)      # written after the run ended: this read sees everything it stored
    try:
        n = store.query_df("SELECT count(*) AS n FROM v_results WHERE correct IS NOT NULL", db_path=db)["n"][0]
        seen.append(int(n))
    except Exception as exc:
        errors += 1
        print("ERR", exc, file=sys.stderr)
    if len(seen) + errors == 1:
        print("reading", flush=True)
    if final:
        break
    time.sleep(0.05)                  # the dashboard's polling pace
print(json.dumps({"seen": seen, "errors": errors}))
"""


@pytest.mark.slow
def test_cli_run_while_another_process_reads(tmp_path):
    """The 'dashboard' (another process polling v_results) and a CLI run share the DuckDB file."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML.format(samples=15))          # 120 items
    db = tmp_path / "d.duckdb"
    with store.connect(db):
        pass
    stop = tmp_path / "stop"
    # 30 rounds of 0.2 s: ~6 s of calls, so ~5 merges (every store.MERGE_INTERVAL = 1 s) happen during the run
    server, base_url = start_server(tmp_path, 0.2)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert reader.stdout.readline().strip() == "reading"      # the reader is polling before the run starts
        out = subprocess.run(cli_run(cfg, base_url, db, 4), cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-2000:]
    finally:
        stop.write_text("x")
        res, err = reader.communicate(timeout=60)
        server.kill()
        server.wait(10)
    report = json.loads(res.strip().splitlines()[-1])
    seen = report["seen"]
    assert report["errors"] == 0, err[-2000:]
    assert seen[-1] == 120
    partial = [n for n in seen if 0 < n < 120]
    assert len(set(partial)) >= 3, f"rows did not appear progressively while the run was going: {seen}"
    assert seen == sorted(seen)


@pytest.mark.slow
def test_two_cli_runs_write_the_same_file_at_once(tmp_path):
    db = tmp_path / "two.duckdb"
    procs = []
    for seed in (1, 2):
        cfg = tmp_path / f"cfg{seed}.yaml"
        cfg.write_text(f"task: setops\nsamples: 40\nsizes: [2, 4]\nmembers: [numbers]\nseed: {seed}\n")
        procs.append(subprocess.Popen([sys.executable, "-m", "core", "run", "--config", str(cfg), "--model",
                                       "reference/solver", "--db", str(db), "--no-progress"], cwd=ROOT,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        assert "320/320 answered" in out
    with store.connect(db) as con:
        assert con.execute("SELECT count(*), count(DISTINCT run_id), count(*) FILTER (WHERE correct) "
                           "FROM v_results").fetchall() == [(640, 2, 640)]
        assert con.execute("SELECT count(*) FROM runs WHERE status = 'done'").fetchall() == [(2,)]

"""API keys set in the environment appear nowhere on disk after runs, failures and exports (DB, journals, exports,
CLI output) — even when a server echoes the key back in its error message."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

CFG_YAML = "task: setops\nsamples: {samples}\nsizes: [2, 4]\nmembers: [numbers]\nseed: 11\n"


def start_server(tmp_path, latency, *extra):
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.loopback", "--port", "0", "--latency", str(latency),
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    line = proc.stdout.readline().strip()
    assert line.startswith("listening "), line
    return proc, line.split(" ", 1)[1]


def cli_run(cfg, base_url, db, concurrency):
    return [sys.executable, "-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/loop",
            "--base-url", base_url, "--db", str(db), "--concurrency", str(concurrency), "--no-progress"]


def _all_bytes(root: Path):
    for path in root.rglob("*"):
        if path.is_file():
            yield path, path.read_bytes()


@pytest.mark.slow
def test_api_keys_never_reach_disk(tmp_path):
    keys = {
        "OPENAI_API_KEY": "sk-proj-" + secrets.token_hex(20),
        "OPENAI_COMPATIBLE_API_KEY": "sk-compat-" + secrets.token_hex(20),
        "ANTHROPIC_API_KEY": "sk-ant-api03-" + secrets.token_hex(20),
    }
    env = {**os.environ, **keys, "PYTHONPATH": str(ROOT)}
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG_YAML.format(samples=3))
    db = tmp_path / "data" / "s.duckdb"
    outputs = []
    ok_server, ok_url = start_server(tmp_path, 0.01, "--fail-rate", "0.3", "--hang", "3")
    bad_server, bad_url = start_server(tmp_path, 0.01, "--reject-key")
    try:
        r = subprocess.run(cli_run(cfg, ok_url, db, 4) + ["--timeout", "1"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=180)
        assert r.returncode == 0, r.stderr[-2000:]
        outputs += [r.stdout, r.stderr]
        # a server that rejects the key and echoes it back: the failures are stored, the key is not
        r = subprocess.run(cli_run(cfg, bad_url, db, 4) + ["--max-attempts", "1"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=180)
        assert r.returncode == 1
        outputs += [r.stdout, r.stderr]
        (tmp_path / "out").mkdir()   # export writes into an existing folder only
        for ext in ("csv", "parquet", "jsonl"):
            r = subprocess.run([sys.executable, "-m", "core", "export", "--db", str(db), "--run", "latest",
                                "--out", str(tmp_path / "out" / f"e.{ext}")], cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            outputs += [r.stdout, r.stderr]
    finally:
        for s in (ok_server, bad_server):
            s.kill()
            s.wait(10)
    from core import store

    with store.connect(db) as con:
        errors = [e for (e,) in con.execute("SELECT DISTINCT error FROM results WHERE error IS NOT NULL").fetchall()]
    assert errors and all("401" in e for e in errors), errors      # the failure was recorded with its reason
    files = dict(_all_bytes(tmp_path))
    assert any(p.suffix == ".duckdb" for p in files) and len(files) >= 5
    for name, key in keys.items():
        needle = key.encode()
        for path, data in files.items():
            assert needle not in data, f"{name} found in {path}"
            assert key[-12:].encode() not in data, f"tail of {name} found in {path}"
        for text in outputs:
            assert key not in text and key[-12:] not in text

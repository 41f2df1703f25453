"""Issue 17, item 5: a run that cannot write says so — one ``error:`` line, a non-zero exit — and is not left
'running'; what its journal holds is recovered by the next command, and the same command again finishes the run.

The disk is really full where the machine lets a test mount a small tmpfs (root, as in CI); otherwise the journal's
write fails by injection (``STUDIO_FAULT``, core/store/faults.py), as the issue allows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from core import store
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

CFG = {"task": "setops", "seed": 5, "samples": 50, "operations": ["union", "intersection", "difference",
                                                                  "symmetric_difference"],
       "sizes": [2, 4], "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
N_ITEMS = 400
LONG = "<answer>{" + ", ".join(str(i) for i in range(3000)) + "}</answer>"


def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True).returncode == 0


@pytest.fixture(params=["tmpfs", "injected"])
def full_disk(request, tmp_path):
    """(db path, env for the failing run, a function that frees the space, the server's answer: one long enough
    to fill 8 MB within the run where the disk is real, a short one where the failure is injected)."""
    if request.param == "tmpfs":
        mnt = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
        if not _mount_tmpfs(mnt, "8m"):
            pytest.skip("cannot mount a tmpfs here (not root or no mount permission); the injected case covers it")
        db = mnt / "studio.duckdb"
        with store.connect(db):
            pass
        yield db, {}, lambda: subprocess.run(["mount", "-o", "remount,size=256m", str(mnt)], check=True), LONG
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
    else:
        db = tmp_path / "studio.duckdb"
        yield db, {"STUDIO_FAULT": "journal-append:enospc@40"}, lambda: None, "<answer>{1, 2}</answer>"


def _run(cfg, srv, db, env):
    return subprocess.run([sys.executable, "-m", "core", "run", "--config", str(cfg), "--model",
                           "openai-compatible/loop", "--base-url", srv.base_url, "--concurrency", "8",
                           "--no-progress", "--db", str(db)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                                              **env},
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_disk_full_mid_run_is_an_error_and_nothing_reported_is_lost(full_disk, tmp_path):
    db, env, free_space, answer = full_disk
    srv = LoopbackServer(0.01, answer=answer).start()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CFG))
    try:
        done = _run(cfg, srv, db, env)
        assert done.returncode != 0, (done.stdout, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        errors = [ln for ln in done.stderr.splitlines() if ln.strip()]
        assert len(errors) == 1 and errors[0].startswith("error: cannot write"), done.stderr[-3000:]
        m = re.search(r"run (\S+): error; (\d+)/(\d+) answered", done.stdout)
        assert m, done.stdout
        run_id, reported = m.group(1), int(m.group(2))
        assert reported < N_ITEMS

        free_space()
        store.recover_journals(db)        # what any next command does first
        with store.connect(db) as con:
            status, = con.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchall()[0]
            stored = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND error IS NULL",
                                 [run_id]).fetchall()[0][0]
        print(f"{errors[0]}\nreported {reported}/{N_ITEMS}; after recovery: status {status}, {stored} stored")
        assert status != "running"
        assert stored >= reported          # every answer the run reported is in the database
        again = _run(cfg, srv, db, {})
        assert again.returncode == 0 and f"{N_ITEMS}/{N_ITEMS} answered" in again.stdout, again.stderr[-2000:]
    finally:
        srv.stop()

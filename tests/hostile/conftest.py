"""Helpers of the hostile-input tests: the adversarial files, and commands run in a child process under a memory
limit (``resource.setrlimit(RLIMIT_AS)`` in the child only)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.support import DATA, ROOT

HOSTILE = DATA / "hostile"
MEMORY_LIMIT = 1_500_000_000     # bytes of address space: "under a 1.5 GB memory limit"


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def run_limited(args: list[str], *, env: dict | None = None, timeout: float = 180.0) -> Done:
    """``python ARGS`` in a child process limited to MEMORY_LIMIT bytes of address space."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    # RLIMIT_AS counts address space reserved, not memory used: glibc reserves 64 MB per thread that allocates (15
    # threads in a run: ~900 MB) and Arrow's mimalloc pool reserves 1 GB up front — a plain 6-item run peaks at
    # 2.4 GB of address space with ~130 MB resident, and under the limit it failed now and then inside DuckDB
    # (CI: "failed to allocate", exit 2). Two arenas and Arrow's system pool keep the limit a limit on what a
    # hostile input makes the tool hold.
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "MALLOC_ARENA_MAX": "2",
                "ARROW_DEFAULT_MEMORY_POOL": "system", **(env or {})}
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=full_env, preexec_fn=limit, capture_output=True,
                          text=True, timeout=timeout)
    return Done(proc.returncode, proc.stdout, proc.stderr)


def page_upload(path, env: dict | None = None) -> dict:
    """The Runs page's YAML upload of ``path`` under the memory limit: what the page shows (errors, successes,
    exceptions)."""
    done = run_limited(["-m", "tests.support.page_upload", str(path)], env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture()
def db(tmp_path, monkeypatch):
    path = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", path)
    return path

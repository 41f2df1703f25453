"""Peak memory (max RSS of the child) and wall time of each hostile case of issue 17, at full size.

    python bench/hostile_memory.py [--only NAME]

Every case runs the CLI in a child process and prints: its name, exit code, the one stderr line (or the summary),
peak RSS in MB and seconds. The tests in tests/hostile/ hold the behaviour on small files; this prints the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.loopback import LoopbackServer  # noqa: E402

CFG = {"task": "setops", "seed": 3, "samples": 3, "operations": ["union", "intersection"], "sizes": [2],
       "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}
BATCH_CFG = "task: setops\nsamples: 2\nsizes: [2]\nmembers: [numbers]\noperations: [union, intersection]\nseed: 4\n"
MODEL = "openai-compatible/hostile-vllm"


WRAP = ("import resource, subprocess, sys; d = subprocess.run(sys.argv[1:]); "
        "print('PEAK_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
        "sys.exit(d.returncode)")


def child(args, env=None, timeout=900):
    """(returncode, last stderr line or stdout line, peak RSS MB of the command, seconds). The command runs under a
    small wrapper process of its own, so its peak is its own (RUSAGE_CHILDREN is a running maximum)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAP, sys.executable, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                          check=False)
    took = time.perf_counter() - start
    lines = [ln for ln in (done.stderr or "").splitlines() if ln.strip()]
    peak = next((int(ln.split()[1]) for ln in lines if ln.startswith("PEAK_KB")), 0) / 1024
    lines = [ln for ln in lines if not ln.startswith("PEAK_KB")] or (done.stdout or "").splitlines() or [""]
    return done.returncode, lines[-1][:150], peak, took


def cases(tmp: Path):
    def run_against(server_kwargs, *extra, env=None):
        srv = LoopbackServer(0.01, **server_kwargs).start()
        cfg = tmp / "c.yaml"
        cfg.write_text(json.dumps(CFG))
        try:
            return child(["-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/h", "--base-url",
                          srv.base_url, "--no-progress", "--db", str(tmp / "run.duckdb"), "--max-attempts", "1",
                          *extra], env=env)
        finally:
            srv.stop()

    yield "reply of 100,000 unclosed <answer> tags (--timeout 10)", lambda: run_against(
        {"answer": "<answer>" * 100_000}, "--timeout", "10")
    yield "4 endless streamed replies at once", lambda: run_against({"endless": True}, "--concurrency", "4")

    def batch_file(name, content_writer):
        cfg, db, req = tmp / "b.yaml", tmp / f"{name}.duckdb", tmp / f"{name}-req.jsonl"
        cfg.write_text(BATCH_CFG)
        child(["-m", "core", "export-batch", "--config", str(cfg), "--model", MODEL, "--db", str(db), "--out",
               str(req)])
        path = tmp / f"{name}.jsonl"
        with open(path, "wb") as fh:
            content_writer(fh)
        out = child(["-m", "core", "import-batch", str(path), "--config", str(cfg), "--model", MODEL, "--db",
                     str(db)])
        path.unlink()
        return out

    def two_gb_line(fh):
        block = b"x" * (1 << 24)
        fh.write(b'{"custom_id": "')
        for _ in range(128):
            fh.write(block)
        fh.write(b'"}\n')

    yield "import-batch: one 2 GB line", lambda: batch_file("longline", two_gb_line)
    yield "import-batch: nesting 1,000,000 deep", lambda: batch_file(
        "deep", lambda fh: fh.write(b'{"custom_id": "a", "response": ' + b"[" * 10 ** 6 + b"]" * 10 ** 6 + b"}\n"))

    def wide_csv():
        path = tmp / "wide.csv"
        path.write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n1\n")
        return child(["-m", "core", "import", str(path), "--db", str(tmp / "wide.duckdb")])

    yield "import: CSV with 1,000,000 columns", wide_csv

    def big_cell():
        path = tmp / "cell.jsonl"
        with open(path, "w") as fh:
            fh.write('{"idx": 0, "prompt": "p", "correct": true, "response": "' + "a" * 190_000_000 + '"}\n')
        return child(["-m", "core", "import", str(path), "--db", str(tmp / "cell.duckdb")])

    yield "import: a 190 MB cell (JSONL)", big_cell


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="run only the cases whose name contains this")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT / "out" if (ROOT / "out").is_dir() else None) as tmp:
        for name, case in cases(Path(tmp)):
            if a.only and a.only not in name:
                continue
            rc, line, peak, took = case()
            print(f"{name:48s} exit {rc:3d}  peak {peak:7.0f} MB  {took:6.1f} s  | {line}", flush=True)


if __name__ == "__main__":
    main()

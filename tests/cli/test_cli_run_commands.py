"""CLI: `python -m core run / export` end to end with the reference solver, resume, estimate, one-line errors."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from core import store
from tests.support import ROOT


def core(*args, env=None, timeout=300):
    """A real subprocess: exit code, stdout and stderr exactly as a user sees them."""
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture()
def cfg(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("task: setops\nsamples: 4\nsizes: [2, 3]\nmembers: [numbers, words]\nseed: 5\n"
                    "operations: [union, difference]\n")
    return path   # 2 ops × 2 sizes × 2 member types × 4 samples = 32 items


def test_run_export_resume(tmp_path, cfg, cli):
    db = tmp_path / "c.duckdb"
    r = cli("run", "--config", cfg, "--model", "reference/solver", "--db", db)
    assert r.returncode == 0, r.stderr
    assert "done; 32/32 answered (0 cached, 32 calls this time), 0 failed, accuracy 1.000" in r.stdout
    assert "32/32" in r.stderr                                   # the tqdm progress bar
    run_id = r.stdout.split()[1].rstrip(":")
    # the same command resumes the finished run: no call
    r2 = cli("run", "--config", cfg, "--model", "reference/solver", "--db", db)
    assert r2.returncode == 0 and f"run {run_id}: done; 32/32 answered (0 cached, 0 calls this time)" in r2.stdout
    # estimate for a fresh run: every call again; for the same run: nothing
    r3 = cli("run", "--config", cfg, "--model", "reference/solver", "--db", db, "--estimate")
    assert "32 items, 32 cached/done, 0 calls to make" in r3.stdout
    r4 = cli("run", "--config", cfg, "--model", "reference/solver", "--db", db, "--estimate", "--fresh")
    assert "0 cached/done, 32 calls to make" in r4.stdout
    out = tmp_path / "out.parquet"
    r5 = cli("export", "--db", db, "--run", "latest", "--out", out)
    assert r5.returncode == 0 and f"exported 32 rows of run {run_id}" in r5.stdout
    df = pd.read_parquet(out)
    assert len(df) == 32 and df["correct"].all() and set(df["members"]) == {"numbers", "words"}
    needed = {"operation", "size_a", "size_b", "members", "prompt", "response", "parsed", "truth", "correct",
              "jaccard", "precision", "recall", "latency_ms", "tokens_in", "tokens_out", "cost_usd", "error"}
    assert needed <= set(df.columns)
    row = df.iloc[0]
    assert json.loads(row["truth"]) == json.loads(row["parsed"])
    runs = store.list_runs(db)
    assert len(runs) == 1 and runs.loc[0, "source"] == "cli" and runs.loc[0, "status"] == "done"


def test_limit_and_params(tmp_path, cfg, cli):
    db = tmp_path / "c.duckdb"
    r = cli("run", "--config", cfg, "--model", "reference/solver", "--db", db, "--limit", "5",
             "--temperature", "0", "--top-k", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "5/5 answered" in r.stdout and "item" not in r.stderr
    run = store.list_runs(db).iloc[0]
    params = json.loads(run["params_json"])
    assert params["temperature"] == 0 and params["top_k"] == 1 and params["top_p"] == 0.25
    assert json.loads(run["run_json"])["limit"] == 5


@pytest.mark.parametrize("args, text", [
    (["--model", "nonsense"], "model must look like provider/name"),
    (["--model", "reference/solver", "--concurrency", "0"], "concurrency"),
    (["--model", "reference/solver", "--temperature", "9"], "temperature"),
    (["--model", "openai/gpt-4o-mini"], "OPENAI_API_KEY"),
])
def test_bad_arguments_one_line(tmp_path, cfg, args, text, cli, monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    r = cli("run", "--config", cfg, "--db", tmp_path / "c.duckdb", *args)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr


def test_subprocess_error_is_one_line(tmp_path, cfg):
    r = core("run", "--config", cfg, "--db", tmp_path / "c.duckdb", "--model", "nonsense")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert [ln for ln in r.stderr.splitlines() if ln.strip()] == [
        "error: model must look like provider/name (e.g. local/default), got 'nonsense'"]


@pytest.mark.parametrize("content, text", [
    ("task: setops\nsizes: [-3]\n", "size"),
    ("task: nope\n", "unknown task"),
    ("- a\n- b\n", "mapping"),
    ("task: [unclosed\n", "not valid YAML"),
])
def test_bad_config_one_line(tmp_path, content, text, cli):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    r = cli("run", "--config", path, "--model", "reference/solver", "--db", tmp_path / "c.duckdb")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and text in lines[0], r.stderr


def test_export_errors(tmp_path, cfg, cli):
    db = tmp_path / "c.duckdb"
    r = cli("export", "--db", db, "--run", "latest", "--out", tmp_path / "x.csv")
    assert r.returncode == 2 and "no runs" in r.stderr
    cli("run", "--config", cfg, "--model", "reference/solver", "--db", db, "--limit", "2", "--no-progress")
    r = cli("export", "--db", db, "--run", "nope", "--out", tmp_path / "x.csv")
    assert r.returncode == 2 and "no run 'nope'" in r.stderr
    r = cli("export", "--db", db, "--out", tmp_path / "x.xlsx")
    assert r.returncode == 2 and "use a .csv, .parquet, .jsonl or .ndjson" in r.stderr
    r = cli("export", "--db", db, "--out", tmp_path / "o'dd name.jsonl")
    assert r.returncode == 0 and len((tmp_path / "o'dd name.jsonl").read_text().splitlines()) == 2

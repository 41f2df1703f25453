"""CLI edge cases a demanding user hits: bad paths, bad numbers, unreachable servers, interrupts.

Every bad input must give one clear ``error: …`` line on stderr, a non-zero exit, no traceback, and leave the
database (and the file system) as it was.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture()
def cli(capsys):
    """``python -m core …`` in-process (``core.cli.main``): exit code, stdout and stderr as a user sees them."""
    from core.cli import main

    def call(*args):
        capsys.readouterr()
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return Result(code, out.out, out.err)

    return call


def one_error_line(r: Result, *fragments: str) -> None:
    assert r.returncode != 0, r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.fixture()
def cfg(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("task: setops\nsamples: 2\nsizes: [2]\nmembers: [numbers]\nseed: 3\noperations: [union]\n")
    return path


def db_state(db: Path) -> tuple:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return tuple(con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                     for t in ("runs", "items", "calls", "results"))
    finally:
        con.close()


@pytest.fixture()
def db(tmp_path, cfg, cli):
    """A database holding one finished reference/solver run (2 items)."""
    path = tmp_path / "s.duckdb"
    r = cli("run", "--config", cfg, "--model", "reference/solver", "--db", path, "--no-progress")
    assert r.returncode == 0, r.stderr
    return path


# ------------------------------------------------------------------------------------------------------- export


def test_export_to_an_unwritable_place_is_one_line(tmp_path, db, cli):
    before = db_state(db)
    r = cli("export", "--db", db, "--out", "/proc/no-such-dir-here.csv")   # /proc refuses new files, even for root
    one_error_line(r, "cannot write /proc/no-such-dir-here.csv")
    assert db_state(db) == before


def test_export_into_a_missing_directory_is_refused_not_created(tmp_path, db, cli):
    target = tmp_path / "missing" / "deeper" / "out.csv"
    r = cli("export", "--db", db, "--out", target)
    one_error_line(r, "output directory does not exist", str(tmp_path / "missing" / "deeper"))
    assert not (tmp_path / "missing").exists()


def test_export_from_a_missing_database_does_not_create_one(tmp_path, cli):
    missing = tmp_path / "typo.duckdb"
    r = cli("export", "--db", missing, "--run", "latest", "--out", tmp_path / "out.csv")
    one_error_line(r, "no database at", str(missing))
    assert not missing.exists() and not (tmp_path / "out.csv").exists()


def test_export_bad_run_and_bad_extension_leave_no_file(tmp_path, db, cli):
    one_error_line(cli("export", "--db", db, "--run", "nope", "--out", tmp_path / "o.csv"), "no run 'nope'")
    one_error_line(cli("export", "--db", db, "--out", tmp_path / "o.txt"), ".csv, .parquet or .jsonl")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("o.", ".o."))) == []


# ----------------------------------------------------------------------------------------------------- generate


def test_generate_to_an_unwritable_place_is_one_line(tmp_path, cfg, cli):
    r = cli("generate", "setops", "--config", cfg, "--out", "/proc/items.jsonl")
    one_error_line(r, "cannot write /proc/items.jsonl")


def test_generate_onto_a_directory_is_one_line(tmp_path, cfg, cli):
    (tmp_path / "items.jsonl").mkdir()
    one_error_line(cli("generate", "setops", "--config", cfg, "--out", tmp_path / "items.jsonl"), "is a directory")


@pytest.mark.parametrize("limit", ["0", "-2"])
def test_generate_limit_below_one_is_refused(tmp_path, cfg, cli, limit):
    out = tmp_path / "items.jsonl"
    one_error_line(cli("generate", "setops", "--config", cfg, "--out", out, "--limit", limit), "--limit must be at least 1")
    assert not out.exists()

"""A password in ``--base-url http://alice:PASSWORD@host/v1`` travels as ``Authorization: Basic base64(alice:PASSWORD)``.
An endpoint that echoes that header in its error body must leave neither the password nor its base64 token (nor a
piece of either, in any letter case) in anything the tool writes: the command's output, the journal, the database,
CSV / JSONL / Parquet exports, a backup's Parquet files, log records."""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from core import store
from core.redaction import MARK, redact
from core.store.backup import backup
from core.store.exports import export_run
from tests.support import ROOT
from tests.support.loopback import LoopbackServer

USER, PASSWORD = "alice", "SuperSecretPassw0rd"
TOKEN = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()     # YWxpY2U6U3VwZXJTZWNyZXRQYXNzdzByZA==
CONFIG = {"task": "setops", "seed": 8, "samples": 3, "operations": ["union", "difference"], "sizes": [2],
          "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


def leaks(text: str) -> list[str]:
    """Pieces of the password (8 characters) or of its base64 token (12), in any letter case, found in ``text``."""
    low = text.lower()
    found = [PASSWORD[i:i + 8] for i in range(len(PASSWORD) - 7) if PASSWORD[i:i + 8].lower() in low]
    core = TOKEN.rstrip("=")
    return found + [core[i:i + 12] for i in range(len(core) - 11) if core[i:i + 12].lower() in low]


def stored_text(db: str) -> str:
    with store.connect(db) as con:
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_type = 'BASE TABLE'").fetchall()]
        return "\n".join(json.dumps(con.execute(f'SELECT * FROM "{t}"').fetchall(), default=str) for t in tables)


def run_cli(args: list[str], db: str, **env) -> subprocess.CompletedProcess:
    """``python -m core …`` in a child process: the test process never learns the password, so whatever it reads
    back (exports, backups) shows only what was stored."""
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "STUDIO_DB": db, "PYTHONPATH": str(ROOT), **env})


@pytest.fixture(scope="module")
def echoed(tmp_path_factory):
    """Two runs against an endpoint echoing the Authorization header: one to the end, one killed at its third journal
    append (its journal left beside the database, as a crash leaves it)."""
    tmp = tmp_path_factory.mktemp("basic")
    db = str(tmp / "studio.duckdb")
    srv = LoopbackServer(0.0, echo_auth=True).start()
    try:
        url = srv.base_url.replace("http://", f"http://{USER}:{PASSWORD}@")
        cfg = tmp / "c.yaml"
        cfg.write_text(json.dumps(CONFIG))
        args = ["run", "--config", str(cfg), "--model", "openai-compatible/loop", "--base-url", url, "--no-progress",
                "--max-attempts", "2"]
        done = run_cli(args, db)
        cfg2 = tmp / "c2.yaml"
        cfg2.write_text(json.dumps({**CONFIG, "seed": 9}))
        killed = run_cli([*args[:2], str(cfg2), *args[3:], "--concurrency", "1"], db,   # one call per append
                         STUDIO_FAULT="journal-append:kill@3")
        journal = "\n".join(p.read_text(errors="replace") for p in store.journal_dir(db).rglob("*") if p.is_file())
        seen = dict(srv.auth_seen)
    finally:
        srv.stop()
    return {"db": db, "done": done, "killed": killed, "journal": journal, "seen": seen, "tmp": tmp}


def test_the_password_travelled_and_the_endpoint_echoed_it(echoed):
    assert echoed["seen"].get(f"Basic {TOKEN}", 0) >= 6        # the credentials did reach the endpoint
    assert echoed["done"].returncode == 1 and "no access for Authorization" in echoed["done"].stderr, echoed["done"]
    assert echoed["killed"].returncode == -9 and echoed["journal"].count('"error"') >= 1


def test_no_trace_in_output_journal_database_exports_or_backup(echoed):
    db, tmp = echoed["db"], echoed["tmp"]
    for proc in (echoed["done"], echoed["killed"]):
        assert leaks(proc.stdout + proc.stderr) == [] and MARK in echoed["done"].stderr
    assert leaks(echoed["journal"]) == []
    store.recover_journals(db)                   # the killed run's journal merged
    text = stored_text(db)
    assert "no access for Authorization" in text and leaks(text) == []
    for run_id in store.list_runs(db)["run_id"]:
        for fmt in ("csv", "jsonl", "parquet"):
            out = tmp / f"{run_id}.{fmt}"
            export_run(db, run_id, out)
            body = json.dumps(pq.read_table(out).to_pylist(), default=str) if fmt == "parquet" else out.read_text()
            assert leaks(body) == [], fmt
    folder, _ = backup(db, tmp / "backup")
    parts = [json.dumps(pq.read_table(p).to_pylist(), default=str) for p in folder.glob("*.parquet")]
    parts += [p.read_text() for p in folder.glob("*.sql")]
    assert parts and leaks("\n".join(parts)) == []


def test_redact_knows_every_form_of_the_credentials():
    from core.redaction import remember_basic, remember_url

    remember_basic(USER, PASSWORD)
    for text in (f"Authorization: Basic {TOKEN}", f"echo {TOKEN[3:-3]}", TOKEN.upper(), TOKEN.lower(),
                 f'{{"authorization": "Basic {TOKEN}"}}', f"password {PASSWORD.upper()}"):
        assert leaks(redact(text)) == [] and MARK in redact(text), text
    assert leaks(redact(f"reply quoting {TOKEN}", keylike=False)) == []
    # any Authorization value, Basic token or Bearer token in an error, known or not
    other = base64.b64encode(b"bob:hunter2hunter2").decode()
    assert redact(f"header Authorization: Basic {other}") == f"header Authorization: {MARK}"
    assert redact(f"got Basic {other} here") == f"got Basic {MARK} here"
    assert redact("use Bearer abcdefghijklmnop1234") == f"use Bearer {MARK}"
    for plain in ("Basic auth required", "basic operations", "Authorization failed"):
        assert redact(plain) == plain
    remember_url("http://carol:Pa55-w0rd-carol@proxy:8080/v1")
    assert MARK in redact(base64.b64encode(b"carol:Pa55-w0rd-carol").decode())


def test_log_records_are_redacted(caplog):
    from core.redaction import remember_url

    remember_url(f"http://{USER}:{PASSWORD}@host/v1")
    with caplog.at_level(logging.WARNING, logger="core.test"):
        logging.getLogger("core.test").warning("server said %s", f"Authorization: Basic {TOKEN} ({PASSWORD})")
    assert caplog.records and leaks(caplog.text) == [] and MARK in caplog.text

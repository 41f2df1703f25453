"""Issue 13, item 3 (and 8's base-URL credentials): an endpoint that echoes the key upper-cased, lower-cased or cut
short, or quotes it in a reply, leaves no 12-character piece of it, in any letter case, in the database, the journal,
the exports or the command's output; a password in --base-url never shows; credentials in the URL combined with
OPENAI_COMPATIBLE_API_KEY work (the URL's credentials win)."""

from __future__ import annotations

import base64
import json
import socket

import pyarrow.parquet as pq
import pytest

from core import runner, store
from core.redaction import MARK, known_secrets, redact, redact_url, remember
from core.store.exports import export_run
from tests.support.loopback import LoopbackServer

KEY = "sk-live-7fQ2mZ9xR4tV8kL1pW6nB3yH5cJ0dGq"          # made up
CONFIG = {"task": "setops", "seed": 3, "samples": 3, "operations": ["union", "difference"], "sizes": [2],
          "members": ["numbers"], "phrasings": ["plain"], "approaches": ["baseline"], "shots": [0]}


def leaks(text: str, secret: str = KEY, n: int = 12) -> list[str]:
    """Every n-character piece of ``secret`` found in ``text``, in any letter case."""
    low, s = text.lower(), secret.lower()
    return [s[i:i + n] for i in range(len(s) - n + 1) if s[i:i + n] in low]


def everything_stored(db: str) -> str:
    """All text of all tables, and of any journal left beside the database."""
    out = []
    with store.connect(db) as con:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables "
                                    "WHERE table_type = 'BASE TABLE'").fetchall():
            out.append(json.dumps(con.execute(f'SELECT * FROM "{table}"').fetchall(), default=str))
    journal = store.journal_dir(db)
    if journal.is_dir():
        out += [p.read_text(errors="replace") for p in journal.rglob("*") if p.is_file()]
    return "\n".join(out)


def all_exports(db: str, run_id: str, tmp_path) -> str:
    texts = []
    for fmt in ("csv", "jsonl", "parquet"):
        path = tmp_path / f"export.{fmt}"
        export_run(db, run_id, path)
        texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str) if fmt == "parquet"
                     else path.read_text())
    return "\n".join(texts)


@pytest.fixture()
def loopback():
    servers = []

    def make(**kw):
        servers.append(LoopbackServer(0.01, **kw).start())
        return servers[-1]

    yield make
    for s in servers:
        s.stop()


def test_redact_catches_pieces_in_any_case_and_credentials_in_urls():
    text = (f"bad key {KEY.upper()}; again {KEY[3:-3]}; masked {KEY[:10]}****{KEY[-4:]}; "
            f"lower {KEY[8:30].lower()}; at http://alice:hunter2hunter2@proxy:8080/v1")
    out = redact(text, KEY)
    assert not leaks(out, n=8) and "hunter2" not in out and out.count(MARK) >= 5, out
    assert redact("nothing to hide here", KEY) == "nothing to hide here"
    assert redact(None) is None and redact(42) == 42
    assert redact("{risk-free, task-list}", keylike=False) == "{risk-free, task-list}"   # replies keep their words
    assert MARK in redact("Incorrect API key provided: sk-proj-*****************1234.")
    assert redact_url("https://u:p%40ss@host:1/v1") == "https://host:1/v1"
    short = "Pw9!"
    assert redact(f"token {short.lower()} used", short) == f"token {MARK} used"


def test_remembered_and_environment_keys_are_known(monkeypatch):
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "env-secret-0123456789")
    remember("typed-in-the-app-9876543210")
    known = known_secrets()
    assert {"env-secret-0123456789", "typed-in-the-app-9876543210"} <= known
    assert MARK in redact("echo: ENV-SECRET-0123456789 and TYPED-IN-THE-APP-98765")


@pytest.mark.parametrize("mode", ["upper", "lower", "cut"])
def test_an_echoed_key_never_reaches_the_db_exports_or_output(mode, loopback, cli, tmp_path, monkeypatch):
    db = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", db)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)
    srv = loopback(echo_key=mode)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    r = cli("run", "--config", cfg, "--model", "openai-compatible/loop", "--base-url", srv.base_url,
            "--no-progress", "--max-attempts", "2")
    assert r.returncode == 1 and "failed (e.g." in r.stderr and MARK in r.stderr, r
    assert srv.auth_seen == {f"Bearer {KEY}": 6}        # the key did travel, once per item (400 is not retried)
    run_id = store.list_runs(db)["run_id"].iloc[0]
    with store.connect(db) as con:
        errors = [e for (e,) in con.execute("SELECT error FROM results").fetchall()]
    assert len(errors) == 6 and all("has no access" in e for e in errors)
    assert leaks(r.stdout + r.stderr) == []
    assert leaks(everything_stored(db)) == []
    assert leaks(all_exports(db, run_id, tmp_path)) == []


def test_a_reply_quoting_the_key_is_stored_and_exported_without_it(loopback, tmp_path):
    db = str(tmp_path / "studio.duckdb")
    srv = loopback(key_in_reply=True)
    p = runner.run(CONFIG, "openai-compatible/loop", base_url=srv.base_url, api_key=KEY, db_path=db)
    assert p.status == "done" and p.done == 6 and p.correct == 0   # {1, 2} is not the truth of these items
    with store.connect(db) as con:
        replies = [t for (t,) in con.execute("SELECT response FROM calls").fetchall()]
    assert replies and all(t.startswith("{1, 2} (key ") and MARK in t for t in replies)
    assert leaks(everything_stored(db)) == []
    assert leaks(all_exports(db, p.run_id, tmp_path)) == []


def test_a_password_in_the_base_url_is_never_printed(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "studio.duckdb"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]           # closed once the block ends: nothing listens there
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    r = cli("run", "--config", cfg, "--model", "openai-compatible/loop", "--base-url",
            f"http://alice:Hunter2-Correct-Horse@127.0.0.1:{port}/v1", "--no-progress")
    assert r.returncode == 2 and r.stderr.startswith("error: cannot reach http://"), r
    assert "Hunter2" not in r.stderr + r.stdout and "alice" not in r.stderr, r.stderr


def test_base_url_credentials_win_over_the_environment_key(loopback, cli, tmp_path, monkeypatch):
    db = str(tmp_path / "studio.duckdb")
    monkeypatch.setenv("STUDIO_DB", db)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)
    srv = loopback()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(CONFIG))
    url = srv.base_url.replace("http://", "http://alice:Hunter2%40Horse@")
    r = cli("run", "--config", cfg, "--model", "openai-compatible/loop", "--base-url", url, "--no-progress")
    assert r.returncode == 0 and "6/6 answered" in r.stdout, r
    basic = "Basic " + base64.b64encode(b"alice:Hunter2@Horse").decode()
    assert srv.auth_seen == {basic: 6}                  # the environment key never reached this endpoint
    assert "Hunter2" not in everything_stored(db) and "alice" not in everything_stored(db)
    assert store.list_runs(db)["base_url"].iloc[0] == srv.base_url    # stored without the credentials

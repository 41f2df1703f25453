"""CLI edge cases a demanding user hits: bad paths, bad numbers, unreachable servers, interrupts.

Every bad input must give one clear ``error: …`` line on stderr, a non-zero exit, no traceback, and leave the
database (and the file system) as it was.
"""

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.support import ROOT


def one_error_line(r, *fragments: str) -> None:
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
    one_error_line(cli("export", "--db", db, "--out", tmp_path / "o.txt"), "use a .csv, .parquet, .jsonl or .ndjson file name")
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


# ---------------------------------------------------------------------------------------------------------- run


@pytest.mark.parametrize("flag,value", [("--rpm", "-5"), ("--rpm", "0"), ("--tpm", "-1"), ("--timeout", "0"),
                                        ("--timeout", "nan")])
def test_run_bad_limits_are_refused_before_anything_is_stored(tmp_path, db, cli, flag, value):
    before = db_state(db)
    r = cli("run", "--config", tmp_path / "cfg.yaml", "--model", "reference/solver", "--db", db, "--fresh", flag, value)
    one_error_line(r, f"{flag} must be a positive number")
    assert db_state(db) == before          # no run left behind in status 'running' (was: a ValueError traceback)


@pytest.mark.parametrize("model", ["reference/solver", "local/smollm2"])
def test_run_base_url_for_an_in_process_model_is_refused(tmp_path, cfg, cli, model):
    r = cli("run", "--config", cfg, "--model", model, "--base-url", "http://127.0.0.1:8080/v1",
            "--db", tmp_path / "x.duckdb")
    one_error_line(r, "--base-url does not apply to " + model)
    assert not (tmp_path / "x.duckdb").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_unreachable_base_url_is_one_line_and_stores_nothing(tmp_path, db, cli):
    before = db_state(db)
    url = f"http://127.0.0.1:{free_port()}/v1"            # nothing listens there
    r = cli("run", "--config", tmp_path / "cfg.yaml", "--model", "openai-compatible/m", "--base-url", url,
            "--db", db, "--no-progress")
    one_error_line(r, f"cannot reach {url}", "connection refused")
    assert db_state(db) == before
    one_error_line(cli("run", "--config", tmp_path / "cfg.yaml", "--model", "openai-compatible/m", "--base-url",
                       "http://127.0.0.1:99999/v1", "--db", db), "invalid port")
    assert db_state(db) == before


class _Server:
    """A loopback OpenAI-compatible endpoint: answers the first ``fast`` chat calls at once, then ``mode``:
    'hang' (never answers until closed) or 'missing' (HTTP 404 for every call)."""

    def __init__(self, mode: str, fast: int = 0):
        import http.server
        import json
        import threading

        self.mode, self.fast, self.calls = mode, fast, 0
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.calls += 1
                if server.calls > server.fast:
                    if server.mode == "hang":
                        server.release.wait(60)
                        return
                    self.send_response(404)
                    self.send_header("Content-Type", "application/json")
                    body = b'{"error": {"message": "model m not found"}}'
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": "<answer>{1}</answer>"}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_run_failed_items_say_why(tmp_path, cfg, cli):
    server = _Server("missing")
    try:
        r = cli("run", "--config", cfg, "--model", "openai-compatible/m", "--base-url", server.url,
                "--db", tmp_path / "f.duckdb", "--no-progress", "--max-attempts", "1")
    finally:
        server.close()
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "2 item(s) failed (e.g. openai-compatible/m at " in r.stderr and "404" in r.stderr, r.stderr
    assert "run the same command again to retry them" in r.stderr


def test_run_ctrl_c_keeps_answers_and_says_how_to_continue(tmp_path, cfg):
    server = _Server("hang", fast=1)
    db = tmp_path / "i.duckdb"
    cmd = [sys.executable, "-m", "core", "run", "--config", str(cfg), "--model", "openai-compatible/m",
           "--base-url", server.url, "--db", str(db), "--concurrency", "1", "--no-progress"]
    try:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 60
        while server.calls < 2 and time.monotonic() < deadline:   # item 1 answered, item 2 hanging at the server
            time.sleep(0.05)
        assert server.calls >= 2
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        server.close()
    assert p.returncode == 130 and "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted: run setops-"), err
    assert "stopped at 1/2 answered, every answer kept; the same command again continues it" in lines[0]
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT status, n_done FROM runs").fetchall() == [("cancelled", 1)]
    finally:
        con.close()


# --------------------------------------------------------------------------------------------------- embeddings


@pytest.mark.parametrize("args,text", [
    (["--out", "/proc/report.json"], "cannot write /proc/report.json"),       # was a traceback after embedding
    (["--out", "{tmp}/missing/report.json"], "output directory does not exist"),  # was created silently
    (["--out", "{tmp}/report.txt"], "use a .json file name"),
    (["--out", "{tmp}/r.json", "--samples-out", "/proc/s.csv"], "cannot write /proc/s.csv"),
    (["--out", "{tmp}/r.json", "--samples-out", "{tmp}/s.json"], "use a .csv file name"),
    (["--out", "{tmp}/r.json", "--data", "{tmp}/items.jsonl"], "--data expects a CSV file"),
])
def test_embeddings_score_bad_paths_fail_before_any_work(tmp_path, cli, monkeypatch, args, text):
    import core.embeddings.pipeline as pipeline

    monkeypatch.setenv("STUDIO_DB", str(tmp_path / "e.duckdb"))
    monkeypatch.setattr(pipeline, "score", lambda *a, **k: pytest.fail("embedded before checking the outputs"))
    (tmp_path / "items.jsonl").write_text('{"a": 1}\n')
    r = cli("embeddings", "score", "--encoder", "minilm", *[a.format(tmp=tmp_path) for a in args])
    one_error_line(r, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl"]


def test_embeddings_fuse_bad_limit_and_out(tmp_path, cli):
    data = tmp_path / "t.csv"
    data.write_text("s_prev,s_curr,s_next\na,b,c\n")
    one_error_line(cli("embeddings", "fuse", "--data", data, "--out", tmp_path / "o.csv", "--limit", "0"),
                   "--limit must be at least 1")
    one_error_line(cli("embeddings", "fuse", "--data", data, "--out", tmp_path / "no" / "o.csv"),
                   "output directory does not exist")


# ----------------------------------------------------------------------------------------------- build-hyponyms


@pytest.mark.parametrize("args,text", [
    (["--out", "/proc/groups.json.gz"], "cannot write /proc/groups.json.gz"),    # was found only after the build
    (["--out", "{tmp}/missing/groups.json.gz"], "output directory does not exist"),   # was created silently
    (["--out", "{tmp}/groups.txt"], "use a .json.gz file name"),                # was gzip written into a .txt
    (["--out", "{tmp}/g.json.gz", "--pos-out", "/proc/pos.json.gz"], "cannot write /proc/pos.json.gz"),
])
def test_build_hyponyms_bad_out_fails_before_reading_wordnet(tmp_path, cli, args, text):
    # a WordNet directory that does not exist: the output check must come first, so its error is the one shown
    r = cli("build-hyponyms", "--wordnet-dir", tmp_path / "no-wordnet", *[a.format(tmp=tmp_path) for a in args])
    one_error_line(r, text)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------------------- import


def test_import_of_an_unreadable_file_is_one_line_and_stores_nothing(tmp_path, db, cli):
    before = db_state(db)
    unreadable = tmp_path / "results.csv"
    unreadable.symlink_to("/proc/self/mem")      # exists, but reading it fails with EIO (even for root)
    one_error_line(cli("import", "--db", db, unreadable), "results.csv: cannot read the file")
    assert db_state(db) == before


# ------------------------------------------------------------------------------------------------- export JSONL


def _jsonl(path: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("config", [
    "task: setops\nsamples: 2\nsizes: [3]\nmembers: [words]\nseed: 1\noperations: [difference]\n",
    "task: quantifiers\nseed: 0\nquantifiers: [\"at least half\"]\nnoun_groups: [common]\nsamples: 2\n"
    "nouns_per_group: 1\n",
])
def test_export_jsonl_nests_sets_and_truths_and_round_trips(tmp_path, cli, config):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(config)
    db = tmp_path / "j.duckdb"
    assert cli("run", "--config", cfg, "--model", "reference/solver", "--db", db, "--no-progress").returncode == 0
    first = tmp_path / "first.jsonl"
    assert cli("export", "--db", db, "--out", first).returncode == 0
    rows = _jsonl(first)
    for row in rows:
        if row["task"] == "setops":    # real arrays, as `generate` writes them (was JSON text inside JSON)
            assert isinstance(row["set_a"], list) and isinstance(row["truth"], list)
            assert isinstance(row["parsed"], list) and sorted(row["parsed"]) == sorted(row["truth"])
        else:
            assert isinstance(row["truth"], bool) and row["parsed"] == row["truth"]
    # our own JSONL imports back to the same rows (into another database: in its own it is that run, issue 22)
    db2 = tmp_path / "other.duckdb"
    r = cli("import", "--db", db2, first)
    assert r.returncode == 0, r.stderr
    imported = r.stdout.split(" as run ")[1].strip()
    second = tmp_path / "second.jsonl"
    assert cli("export", "--db", db2, "--run", imported, "--out", second).returncode == 0
    strip = lambda rs: [{k: v for k, v in x.items() if k not in ("run_id", "name", "provenance")} for x in rs]  # noqa: E731
    assert strip(_jsonl(second)) == strip(rows)

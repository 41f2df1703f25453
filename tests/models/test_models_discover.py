"""Local OpenAI-compatible servers are found on loopback (GET /v1/models), never waited for past the budget."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.models import discover


class _Models(BaseHTTPRequestHandler):
    models: list[str] = []
    delay = 0.0
    status = 200

    def do_GET(self):  # noqa: N802 (http.server's name)
        time.sleep(self.delay)
        if self.path != "/v1/models":
            self.send_error(404)
            return
        data = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(models, delay=0.0, status=200):
    handler = type("H", (_Models,), {"models": models, "delay": delay, "status": status})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def servers(monkeypatch):
    started = []

    def make(models, delay=0.0, status=200):
        httpd = serve(models, delay, status)
        started.append(httpd)
        return httpd.server_address[1]

    monkeypatch.setattr(discover, "KNOWN_PORTS", {})   # only the ports of this test: the machine may run servers
    yield make
    for httpd in started:
        httpd.shutdown()


def test_servers_on_the_listed_ports_are_found_with_their_models(servers, monkeypatch):
    a = servers(["llama3.2", "qwen2.5:0.5b"])
    b = servers(["smollm2"])
    closed = free_port()
    monkeypatch.setenv("STUDIO_LOCAL_PORTS", f"{a}, {b},{closed},not-a-port")
    found = discover.local_servers(refresh=True)
    assert [(s.port, s.models) for s in found] == sorted([(a, ("llama3.2", "qwen2.5:0.5b")), (b, ("smollm2",))])
    assert found[0].base_url == f"http://127.0.0.1:{found[0].port}/v1"


def test_a_server_slower_than_the_budget_is_left_out_not_waited_for(servers, monkeypatch):
    fast, slow = servers(["m"]), servers(["late"], delay=3.0)
    monkeypatch.setenv("STUDIO_LOCAL_PORTS", f"{fast},{slow}")
    found = discover.local_servers(budget=0.5, refresh=True)
    assert [s.port for s in found] == [fast]   # the slow one would have answered, after the budget


def test_a_server_wanting_a_key_is_listed_with_a_note(servers, monkeypatch):
    port = servers([], status=401)
    monkeypatch.setenv("STUDIO_LOCAL_PORTS", str(port))
    (s,) = discover.local_servers(refresh=True)
    assert s.models == () and "key" in s.note


def test_answers_are_kept_for_a_few_seconds(servers, monkeypatch):
    port = servers(["one"])
    monkeypatch.setenv("STUDIO_LOCAL_PORTS", str(port))
    assert [s.models for s in discover.local_servers(refresh=True)] == [("one",)]
    monkeypatch.setattr(discover, "_probe", lambda *a: pytest.fail("asked again within the ttl"))
    assert [s.models for s in discover.local_servers()] == [("one",)]

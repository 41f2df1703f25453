"""A loopback OpenAI-compatible chat endpoint with fixed latency and injectable failures (benchmarks, tests, demos).

It speaks just enough HTTP/1.1 (keep-alive, Content-Length bodies) for the official OpenAI SDK pointed at it with
``openai-compatible/<name>`` and ``--base-url http://127.0.0.1:PORT/v1``. Every ``POST /v1/chat/completions`` waits
``latency`` seconds and answers ``answer`` (default ``{1, 2}``). With ``fail_rate`` > 0 a deterministic share of
requests fails in mixed ways — 429 with Retry-After, 500, a hang longer than any sane timeout, or a malformed (non-JSON)
200 body; with ``kinds`` including ``EMPTY`` also a 200 JSON body with no choices — but never more than
``max_fail_streak`` times in a row for one prompt, so a runner retrying enough always finishes. ``GET /stats`` returns
per-prompt counts (by sha256 of the prompt): requests received and valid answers sent, plus the peak number of
requests in flight. With ``reasoning`` (a text, or ``(prompt, model) -> text``) every answer comes with that
reasoning in ``message.reasoning_content`` and its tokens in ``usage.completion_tokens_details.reasoning_tokens``, as
vLLM's reasoning parsers return them; ``efforts`` counts the ``reasoning_effort`` of the requests received (None:
not sent). With ``by_effort`` (``(prompt, model, effort) -> (answer, reasoning)``) both depend on the effort asked.

    python -m tests.support.loopback --port 8765 --latency 0.25 [--fail-rate 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sys
import threading
import time
from collections import Counter

FAIL_KINDS = ("429", "500", "timeout", "malformed")
EMPTY = "empty"     # opt-in kind (``kinds``): a 200 JSON reply that is no chat completion (no choices)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LoopbackServer:
    def __init__(self, latency: float = 0.25, *, answer: str = "{1, 2}", fail_rate: float = 0.0,
                 max_fail_streak: int = 2, hang: float = 30.0, retry_after_ms: int = 100, seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0, reject_key: bool = False, echo_key: str | None = None,
                 key_in_reply: bool = False, endless: bool = False, responder=None, echo_auth: bool = False,
                 kinds=FAIL_KINDS, reasoning=None, hold_until_in_flight: int | None = None,
                 pause_after: int | None = None, by_effort=None):
        self.latency, self.answer, self.fail_rate = latency, answer, fail_rate
        self.max_fail_streak, self.hang, self.retry_after_ms, self.seed = max_fail_streak, hang, retry_after_ms, seed
        self.host, self.port = host, port
        self.reject_key = reject_key           # answer 401 echoing the bearer token, like some real servers do
        self.echo_key = echo_key               # "upper" | "lower" | "cut": answer 400 echoing the token so changed
        self.key_in_reply = key_in_reply       # a valid answer that quotes the token upper-cased
        self.echo_auth = echo_auth             # answer 400 quoting the whole Authorization header (Basic or Bearer)
        self.endless = endless                 # a 200 whose chunked body never ends (a hostile or broken server)
        self.responder = responder             # (prompt, model) -> reply text, instead of the fixed answer
        self.kinds = tuple(kinds)              # the failure kinds drawn from (FAIL_KINDS, and EMPTY if asked for)
        self.reasoning = reasoning             # text or (prompt, model) -> text: returned as reasoning_content
        # (prompt, model, reasoning_effort sent or None) -> (answer, reasoning or None): a fake whose answers and
        # thinking depend on the effort asked (instead of ``responder`` and ``reasoning``)
        self.by_effort = by_effort
        # no chat request is answered until this many are in flight at once (at most ``hang`` seconds): a test sees
        # several clients' requests together whatever the machine's speed
        self.hold_until_in_flight = hold_until_in_flight
        self._released: asyncio.Event | None = None
        self._open: asyncio.Event | None = None     # cleared by pause(): chat requests wait until resume()
        self.pause_after = pause_after         # pause() itself once this many valid answers have been sent
        self.efforts: Counter = Counter()      # reasoning_effort of the requests received (None: not sent)
        self.template_kwargs: Counter = Counter()   # chat_template_kwargs received (JSON text; None: not sent)
        self.auth_seen: Counter = Counter()    # Authorization headers received
        self.requests: Counter = Counter()     # prompt sha -> requests received
        self.answered: Counter = Counter()     # prompt sha -> valid answers sent
        self.failures: Counter = Counter()     # failure kind -> count
        self.streak: Counter = Counter()       # prompt sha -> consecutive failures so far
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_request_at: float | None = None   # time.time() of the first chat request (a client's start-up)
        self.last_answer_at: float | None = None     # ... and of the last valid answer (its wind-down after)
        self._server: asyncio.AbstractServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    async def serve(self) -> None:
        self._released = asyncio.Event()
        self._open = asyncio.Event()
        self._open.set()
        self._server = await asyncio.start_server(self._handle, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> "LoopbackServer":
        """Serve from a background thread (own event loop). Returns self once listening."""
        ready = threading.Event()

        def main():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.serve())
            ready.set()
            try:
                self._loop.run_forever()
            finally:
                # closed here, in its own thread, once stop() has stopped it: an unclosed loop is later finalized
                # by the garbage collector at a random point, and the error its __del__ then reports is formatted
                # by Python 3.11's traceback code with ast.parse, which corrupts a Streamlit page compile that
                # the collection happened to interrupt ("AST constructor recursion depth mismatch")
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
                self._loop.close()

        self._thread = threading.Thread(target=main, daemon=True, name="loopback-llm")
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            async def shutdown():
                self._server.close()
                for task in asyncio.all_tasks():
                    if task is not asyncio.current_task():
                        task.cancel()
            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    def pause(self) -> None:
        """From now on no chat request is answered (they wait, in flight) until ``resume()``: a client's run
        stays live for as long as a test needs, whatever the machine's speed. Only once ``start()`` has returned."""
        self._set_open(False)

    def resume(self) -> None:
        """Answer again, for good (a ``pause_after`` not yet reached is cancelled)."""
        self._set_open(True)

    def _set_open(self, value: bool) -> None:
        async def flip():
            if value:
                self.pause_after = None
                self._open.set()
            else:
                self._open.clear()
        asyncio.run_coroutine_threadsafe(flip(), self._loop).result(5)

    def stats(self) -> dict:
        return {"requests": dict(self.requests), "answered": dict(self.answered), "failures": dict(self.failures),
                "total_requests": sum(self.requests.values()), "total_answered": sum(self.answered.values()),
                "max_in_flight": self.max_in_flight, "in_flight": self.in_flight,
                "first_request_at": self.first_request_at, "last_answer_at": self.last_answer_at}

    # -- behaviour
    async def _held(self) -> None:
        if self.hold_until_in_flight is None or self._released is None:
            return
        if self.in_flight >= self.hold_until_in_flight:
            self._released.set()
        try:
            await asyncio.wait_for(self._released.wait(), self.hang)
        except TimeoutError:
            self._released.set()

    def _failure(self, key: str, n: int) -> str | None:
        if self.fail_rate <= 0 or self.streak[key] >= self.max_fail_streak:
            return None
        rng = random.Random(f"{self.seed}:{key}:{n}")
        if rng.random() >= self.fail_rate:
            return None
        return self.kinds[rng.randrange(len(self.kinds))]

    async def _chat(self, body: bytes, auth: str = "") -> tuple[int, dict, bytes]:
        self.auth_seen[auth] += 1
        token = auth.split(" ", 1)[-1]
        if self.echo_auth:
            return 400, {}, json.dumps({"error": {"message": f"no access for Authorization: {auth} (token {token})",
                                                  "type": "invalid_request_error"}}).encode()
        if self.echo_key:
            shown = {"upper": token.upper(), "lower": token.lower(), "cut": token[3:-3]}[self.echo_key]
            return 400, {}, json.dumps({"error": {"message": f"the key {shown} has no access to this model",
                                                  "type": "invalid_request_error"}}).encode()
        if self.reject_key:
            token = auth.split(" ", 1)[-1]
            return 401, {}, json.dumps({"error": {"message": f"Incorrect API key provided: {token}",
                                                  "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
        try:
            req = json.loads(body)
            prompt = "".join(str(m.get("content", "")) for m in req.get("messages", []))
            model = str(req.get("model", "loopback"))
            effort = req.get("reasoning_effort")
            self.efforts[effort] += 1
            kwargs = req.get("chat_template_kwargs")
            self.template_kwargs[json.dumps(kwargs, sort_keys=True) if kwargs is not None else None] += 1
        except (ValueError, AttributeError):
            return 400, {}, json.dumps({"error": {"message": "bad request body", "type": "invalid_request"}}).encode()
        key = _sha(prompt)
        self.requests[key] += 1
        if self.first_request_at is None:
            self.first_request_at = time.time()
        kind = self._failure(key, self.requests[key])
        if kind == "timeout":
            self.failures[kind] += 1
            self.streak[key] += 1
            await asyncio.sleep(self.hang)
            return 504, {}, b'{"error": {"message": "gateway timeout"}}'
        await asyncio.sleep(self.latency)
        if kind is not None:
            self.failures[kind] += 1
            self.streak[key] += 1
            if kind == "429":
                return 429, {"retry-after-ms": str(self.retry_after_ms), "retry-after": "1"}, json.dumps(
                    {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
                ).encode()
            if kind == "500":
                return 500, {}, json.dumps({"error": {"message": "internal error", "type": "server_error"}}).encode()
            if kind == EMPTY:
                return 200, {}, json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "choices": []}).encode()
            return 200, {}, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "{1, 2'   # malformed
        self.streak[key] = 0
        self.answered[key] += 1
        if self.pause_after is not None and sum(self.answered.values()) >= self.pause_after:
            self.pause_after = None            # once: resume() opens it for good
            self._open.clear()
        self.last_answer_at = time.time()
        thought = None
        if self.by_effort is not None:
            answer, thought = self.by_effort(prompt, model, effort)
        else:
            answer = self.responder(prompt, model) if self.responder is not None else self.answer
        answer += f" (key {token.upper()})" if self.key_in_reply else ""
        message = {"role": "assistant", "content": answer}
        t_in, t_out = max(1, len(prompt) // 4), max(1, len(self.answer) // 3)
        usage = {"prompt_tokens": t_in, "completion_tokens": t_out, "total_tokens": t_in + t_out}
        if self.reasoning is not None and self.by_effort is None:
            thought = self.reasoning(prompt, model) if callable(self.reasoning) else self.reasoning
        if thought is not None:
            message["reasoning_content"] = thought
            t_reason = max(1, len(thought) // 4)
            usage.update(completion_tokens=t_out + t_reason, total_tokens=t_in + t_out + t_reason,
                         completion_tokens_details={"reasoning_tokens": t_reason})
        payload = {
            "id": f"chatcmpl-{key[:12]}-{self.requests[key]}", "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
            "usage": usage,
        }
        return 200, {}, json.dumps(payload).encode()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                try:
                    method, path, _ = line.decode("latin-1").split(" ", 2)
                except ValueError:
                    break
                headers = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                if method == "POST" and path.rstrip("/").endswith("/chat/completions") and self.endless:
                    self.requests["endless"] += 1
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                    chunk = b'{"choices": [{"message": {"content": "' + b"<answer>" * 8192
                    while True:     # until the client goes away
                        writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        await writer.drain()
                        chunk = b"<answer>" * 8192
                if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
                    self.in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self.in_flight)
                    try:
                        await self._held()
                        await self._open.wait()
                        status, extra, out = await self._chat(body, headers.get("authorization", ""))
                    finally:
                        self.in_flight -= 1
                elif method == "GET" and path.startswith("/stats"):
                    status, extra, out = 200, {}, json.dumps(self.stats()).encode()
                elif method == "GET" and path.rstrip("/").endswith("/models"):
                    status, extra, out = 200, {}, json.dumps(
                        {"object": "list", "data": [{"id": "loopback", "object": "model"}]}).encode()
                else:
                    status, extra, out = 404, {}, b'{"error": {"message": "not found"}}'
                reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
                          500: "Internal Server Error", 504: "Gateway Timeout"}.get(status, "OK")
                head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json",
                        f"Content-Length: {len(out)}", "Connection: keep-alive"]
                head += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--fail-rate", type=float, default=0.0)
    ap.add_argument("--hang", type=float, default=30.0)
    ap.add_argument("--answer", default="{1, 2}")
    ap.add_argument("--retry-after-ms", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reject-key", action="store_true", help="answer 401 echoing the bearer token")
    args = ap.parse_args(argv)
    server = LoopbackServer(args.latency, answer=args.answer, fail_rate=args.fail_rate, hang=args.hang,
                            port=args.port, retry_after_ms=args.retry_after_ms, seed=args.seed,
                            reject_key=args.reject_key)

    async def run():
        await server.serve()
        print(f"listening {server.base_url}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())


def set_hash_responder(items_by_prompt: dict, p_right: float = 0.6, salt: str = ""):
    """A null model for the loopback server (``responder=``): an item is answered right when a hash of (set A, set B,
    operation, model name, ``salt``) falls below ``p_right`` — its verdict depends on the drawn sets and the operation
    only, so no other factor (phrasing, approach, shots, size, token type, condition) has any effect, while the
    configurations that reuse a draw share its verdicts, as a real model's errors do. The model name carries the
    replication (``null-r7``)."""

    from core.tasks.setops.scoring import solve

    def respond(prompt: str, model: str) -> str:
        it = items_by_prompt[prompt]
        key = json.dumps([sorted(map(str, it["set_a"])), sorted(map(str, it["set_b"])), it["operation"], model,
                          salt])
        u = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 16 ** 8
        return solve(it) if u < p_right else "<answer>{zzwrong}</answer>"

    return respond

"""A loopback stand-in of the two provider batch APIs, written for the tests: OpenAI Files + Batch
(``/v1/files``, ``/v1/batches``) and Anthropic Message Batches (``/v1/messages/batches``), on one port, spoken to by
the official SDKs through their ``base_url`` (OpenAI: ``http://127.0.0.1:P/v1``; Anthropic: ``http://127.0.0.1:P``).

Lifecycle, advanced one step by each retrieve (so a test controls time by polling):

    OpenAI     validating → in_progress (× steps) → finalizing → completed      cancel: cancelling → cancelled
    Anthropic  in_progress (× steps) → ended                                   cancel: canceling → ended

``slow`` gives the n-th batch created its own number of steps; ``hold()`` freezes every batch where it is until
``release()``; ``create_delay`` holds back the answer to a create call
after the batch exists (a client killed meanwhile never learns its id). When a batch finishes, each request's outcome is
drawn deterministically from (seed, custom_id, how many times that custom_id was submitted): while that count is at
most ``fail_times``, a share ``error_rate`` errors (HTTP 500 in OpenAI's error file; ``errored`` for Anthropic) and a
share ``expire_rate`` expires; later submissions succeed — so a runner that resubmits failures finishes. A cancelled
batch runs the first half of its requests and cancels the rest.

Checks a real provider makes are made here too: OpenAI requests must be POST /v1/chat/completions with a model and
messages, unique custom_ids, and no ``top_k`` (an unknown argument there: that request fails with HTTP 400);
Anthropic custom_ids must match ``^[a-zA-Z0-9_-]{1,64}$`` and be unique, each request needs model, max_tokens and
messages. Keys are required (401 without; ``reject_key`` refuses every key, echoing it back). ``stats()`` counts
submissions per custom_id, batches created, and plain (non-batch) chat calls — which a batch run must never make.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from typing import Callable

from aiohttp import web

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_answer(prompt: str) -> str:
    """An answer that names its prompt (so a test can check each reply went back to its own item)."""
    return f"<answer>{{}}</answer> [prompt {_sha(prompt)[:16]}]"


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")


class BatchStandIn:
    def __init__(self, *, steps: int = 1, error_rate: float = 0.0, expire_rate: float = 0.0, fail_times: int = 1,
                 seed: int = 0, answer: Callable[[str], str] | None = None, host: str = "127.0.0.1",
                 create_delay: float = 0.0, reject_key: bool = False, slow: dict[int, int] | None = None,
                 thinking: Callable[[str], str] | None = None, refuse: Callable[[dict], str | None] | None = None):
        self.steps, self.error_rate, self.expire_rate = steps, error_rate, expire_rate
        self.create_delay = create_delay       # seconds between creating a batch and answering the create call
        self.reject_key = reject_key           # answer 401 echoing the key back, as some gateways do
        self.slow = dict(slow or {})           # n-th batch created (from 0) → its own number of steps
        self.fail_times, self.seed = fail_times, seed
        self.answer = answer or default_answer
        # a request that asks for reasoning (OpenAI reasoning_effort, Anthropic thinking) is answered as a reasoning
        # model would: OpenAI counts reasoning tokens (its text stays hidden), Anthropic adds a thinking block
        self.thinking = thinking or (lambda prompt: "Thinking it over: <answer>{0}</answer> would be wrong.")
        # an Anthropic request whose params a model refuses (e.g. anthropic_standin.refusal): errored with that text
        self.refuse = refuse
        self.host, self.port = host, 0
        self.files: dict[str, bytes] = {}
        self.openai: dict[str, dict] = {}
        self.anthropic: dict[str, dict] = {}
        self.submitted: dict[str, Counter] = {"openai": Counter(), "anthropic": Counter()}
        self.created: list[str] = []
        self.plain_calls = 0
        self.bodies: list[dict] = []          # every request body/params received (sampling checks)
        self.lock = threading.RLock()
        self._hold = threading.Event()
        self._n = 0
        self._loop = None
        self._runner = None
        self._thread = None

    # -- lifecycle ---------------------------------------------------------------------------------------------
    @property
    def openai_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "BatchStandIn":
        ready = threading.Event()

        async def serve():
            app = web.Application(client_max_size=512 * 1024 * 1024)
            app.add_routes([
                web.post("/v1/files", self._file_create), web.get("/v1/files/{fid}/content", self._file_content),
                web.post("/v1/batches", self._oa_create), web.get("/v1/batches", self._oa_list),
                web.get("/v1/batches/{bid}", self._oa_get), web.post("/v1/batches/{bid}/cancel", self._oa_cancel),
                web.post("/v1/messages/batches", self._an_create), web.get("/v1/messages/batches", self._an_list),
                web.get("/v1/messages/batches/{bid}", self._an_get),
                web.post("/v1/messages/batches/{bid}/cancel", self._an_cancel),
                web.get("/v1/messages/batches/{bid}/results", self._an_results),
                web.post("/v1/chat/completions", self._plain), web.post("/v1/messages", self._plain),
            ])
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]

        def main():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(serve())
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

        self._thread = threading.Thread(target=main, daemon=True, name="batch-standin")
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            async def shutdown():
                await self._runner.cleanup()
                for task in asyncio.all_tasks():   # handlers still sleeping on a create_delay
                    if task is not asyncio.current_task():
                        task.cancel()

            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def hold(self) -> None:
        self._hold.set()

    def release(self) -> None:
        self._hold.clear()

    def stats(self) -> dict:
        with self.lock:
            return {"openai": dict(self.submitted["openai"]), "anthropic": dict(self.submitted["anthropic"]),
                    "created": list(self.created), "plain_calls": self.plain_calls}

    # -- shared ------------------------------------------------------------------------------------------------
    def _id(self, prefix: str) -> str:
        with self.lock:
            self._n += 1
            return f"{prefix}{self._n:06d}{_sha(str(time.time_ns()))[:10]}"

    def _auth(self, request: web.Request, provider: str) -> web.Response | None:
        key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if provider == "anthropic":   # x-api-key, or a bearer token (what recent SDKs send)
            key = request.headers.get("x-api-key") or key
        if not key or self.reject_key:
            msg = f"Incorrect API key provided: {key}" if key else "missing key"
            body = {"type": "error", "error": {"type": "authentication_error", "message": msg}} \
                if provider == "anthropic" else {"error": {"message": msg, "type": "invalid_request_error"}}
            return web.json_response(body, status=401)
        return None

    def _outcome(self, provider: str, custom_id: str, position: int, n: int, cancelled: bool) -> str:
        """succeeded | errored | expired | cancelled for one request of a finishing batch."""
        if cancelled and position >= n // 2:
            return "cancelled"
        times = self.submitted[provider][custom_id]
        if times > self.fail_times:
            return "succeeded"
        r = random.Random(f"{self.seed}:{custom_id}:{times}").random()
        if r < self.error_rate:
            return "errored"
        if r < self.error_rate + self.expire_rate:
            return "expired"
        return "succeeded"

    async def _plain(self, request: web.Request) -> web.Response:
        with self.lock:
            self.plain_calls += 1
        if self.refuse is not None and request.path == "/v1/messages":   # a live call of a model with rules
            params = await request.json()
            why = self.refuse(params)
            if why is not None:
                return web.json_response({"type": "error", "error": {"type": "invalid_request_error",
                                                                     "message": why}}, status=400)
            return web.json_response({"id": "msg_plain", "type": "message", "role": "assistant",
                                      "model": params.get("model"), "content": [{"type": "text", "text": "OK"}],
                                      "stop_reason": "end_turn", "stop_sequence": None,
                                      "usage": {"input_tokens": 5, "output_tokens": 1}})
        return web.json_response({"error": {"message": "plain calls are not expected here"}}, status=400)

    # -- OpenAI files ------------------------------------------------------------------------------------------
    async def _file_create(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "openai")) is not None:
            return denied
        form = await request.post()
        field = form.get("file")
        data = field.file.read() if hasattr(field, "file") else bytes(str(field or ""), "utf-8")
        fid = self._id("file-")
        self.files[fid] = data
        return web.json_response({"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                                  "filename": getattr(field, "filename", "upload.jsonl"),
                                  "purpose": form.get("purpose", "batch"), "status": "processed"})

    async def _file_content(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "openai")) is not None:
            return denied
        data = self.files.get(request.match_info["fid"])
        if data is None:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    # -- OpenAI batches ----------------------------------------------------------------------------------------
    def _oa_validate(self, lines: list[bytes]) -> tuple[list[dict], list[dict]]:
        requests, errors, seen = [], [], set()
        for n, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                req = json.loads(raw)
                body = req["body"]
                ok = (req.get("method") == "POST" and req.get("url") == "/v1/chat/completions"
                      and isinstance(body.get("model"), str) and isinstance(body.get("messages"), list))
            except (ValueError, KeyError, TypeError, AttributeError):
                ok, req = False, {}
            if not ok or req.get("custom_id") in seen or not isinstance(req.get("custom_id"), str):
                errors.append({"code": "invalid_request", "message": f"line {n} is not a valid request", "line": n})
                continue
            seen.add(req["custom_id"])
            requests.append(req)
        return requests, errors

    async def _oa_create(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "openai")) is not None:
            return denied
        doc = await request.json()
        data = self.files.get(doc.get("input_file_id"))
        if data is None or doc.get("endpoint") != "/v1/chat/completions" or doc.get("completion_window") != "24h":
            return web.json_response({"error": {"message": "bad batch request", "type": "invalid_request_error"}},
                                     status=400)
        requests, errors = self._oa_validate(data.splitlines())
        bid = self._id("batch_")
        now = time.time()
        with self.lock:
            for req in requests:
                self.submitted["openai"][req["custom_id"]] += 1
                self.bodies.append(req["body"])
            self.created.append(bid)
            self.openai[bid] = {
                "id": bid, "object": "batch", "endpoint": doc["endpoint"], "input_file_id": doc["input_file_id"],
                "completion_window": "24h", "status": "failed" if errors else "validating",
                "output_file_id": None, "error_file_id": None, "created_at": int(now),
                "expires_at": int(now + 86400), "metadata": doc.get("metadata"), "model": None,
                "errors": {"object": "list", "data": errors} if errors else None,
                "request_counts": {"total": len(requests), "completed": 0, "failed": 0},
                "_requests": requests, "_step": 0, "_cancel": False,
                "_steps": self.slow.get(len(self.created) - 1, self.steps),
            }
        await asyncio.sleep(self.create_delay)
        return web.json_response(self._oa_public(self.openai[bid]))

    @staticmethod
    def _oa_public(b: dict) -> dict:
        return {k: v for k, v in b.items() if not k.startswith("_")}

    def _oa_advance(self, b: dict) -> None:
        if self._hold.is_set() or b["status"] in ("completed", "failed", "expired", "cancelled"):
            return
        if b["status"] == "cancelling":
            self._oa_finish(b, "cancelled")
            return
        b["_step"] += 1
        if b["_step"] <= b["_steps"]:
            b["status"] = "in_progress"
            b.setdefault("in_progress_at", int(time.time()))
        elif b["status"] != "finalizing":
            b["status"] = "finalizing"
        else:
            self._oa_finish(b, "completed")

    def _oa_finish(self, b: dict, status: str) -> None:
        out, err = [], []
        reqs = b["_requests"]
        for pos, req in enumerate(reqs):
            cid, body = req["custom_id"], req["body"]
            kind = self._outcome("openai", cid, pos, len(reqs), status == "cancelled")
            if kind == "succeeded" and "top_k" in body:
                err.append({"id": f"batch_req_{pos}", "custom_id": cid, "error": None, "response": {
                    "status_code": 400, "request_id": f"req_{pos}", "body": {"error": {
                        "message": "Unrecognized request argument supplied: top_k", "type": "invalid_request_error",
                        "param": None, "code": None}}}})
            elif kind == "succeeded":
                prompt = "".join(str(m.get("content", "")) for m in body["messages"])
                text = self.answer(prompt)
                out.append({"id": f"batch_req_{pos}", "custom_id": cid, "error": None, "response": {
                    "status_code": 200, "request_id": f"req_{pos}", "body": {
                        "id": f"chatcmpl-{pos}", "object": "chat.completion", "created": int(time.time()),
                        "model": body["model"], "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                                             "message": {"role": "assistant", "content": text}}],
                        "usage": self._oa_usage(prompt, text, body)}}})
            elif kind == "errored":
                err.append({"id": f"batch_req_{pos}", "custom_id": cid, "error": None, "response": {
                    "status_code": 500, "request_id": f"req_{pos}",
                    "body": {"error": {"message": "The server had an error", "type": "server_error"}}}})
            else:
                code = "batch_expired" if kind == "expired" else "batch_cancelled"
                err.append({"id": f"batch_req_{pos}", "custom_id": cid, "response": None,
                            "error": {"code": code, "message": f"request {kind} before it ran"}})
        for lines, field in ((out, "output_file_id"), (err, "error_file_id")):
            if lines:
                fid = self._id("file-")
                self.files[fid] = "".join(json.dumps(x) + "\n" for x in lines).encode("utf-8")
                b[field] = fid
        b["status"] = status
        b["request_counts"] = {"total": len(reqs), "completed": len(out), "failed": len(err)}
        b[f"{status}_at"] = int(time.time())

    async def _oa_get(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "openai")) is not None:
            return denied
        b = self.openai.get(request.match_info["bid"])
        if b is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        with self.lock:
            self._oa_advance(b)
        return web.json_response(self._oa_public(b))

    async def _oa_cancel(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "openai")) is not None:
            return denied
        b = self.openai.get(request.match_info["bid"])
        if b is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        with self.lock:
            if b["status"] in ("validating", "in_progress", "finalizing"):
                b["status"], b["cancelling_at"] = "cancelling", int(time.time())
        return web.json_response(self._oa_public(b))

    async def _oa_list(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "openai")) is not None:
            return denied
        data = [self._oa_public(b) for b in sorted(self.openai.values(), key=lambda b: b["id"], reverse=True)]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    # -- Anthropic message batches -----------------------------------------------------------------------------
    async def _an_create(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "anthropic")) is not None:
            return denied
        doc = await request.json()
        reqs = doc.get("requests")
        seen = set()
        for r in reqs if isinstance(reqs, list) else [None]:
            p = r.get("params") if isinstance(r, dict) else None
            cid = r.get("custom_id") if isinstance(r, dict) else None
            if not (isinstance(cid, str) and _CUSTOM_ID.match(cid)) or cid in seen or not isinstance(p, dict) or \
                    not {"model", "max_tokens", "messages"} <= set(p):
                return web.json_response({"type": "error", "error": {
                    "type": "invalid_request_error", "message": f"invalid request {cid!r}"}}, status=400)
            seen.add(cid)
        bid = self._id("msgbatch_")
        now = time.time()
        with self.lock:
            for r in reqs:
                self.submitted["anthropic"][r["custom_id"]] += 1
                self.bodies.append(r["params"])
            self.created.append(bid)
            self.anthropic[bid] = {"id": bid, "type": "message_batch", "processing_status": "in_progress",
                                   "created_at": now, "expires_at": now + 86400, "ended_at": None,
                                   "cancel_initiated_at": None, "archived_at": None, "_requests": reqs,
                                   "_step": 0, "_results": None,
                                   "_steps": self.slow.get(len(self.created) - 1, self.steps)}
        await asyncio.sleep(self.create_delay)
        return web.json_response(self._an_public(self.anthropic[bid], request))

    def _an_public(self, b: dict, request: web.Request) -> dict:
        n = len(b["_requests"])
        res = b["_results"]
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if res is not None:
            counts = {"processing": 0, **{k: sum(1 for r in res if r["result"]["type"] == k)
                                          for k in ("succeeded", "errored", "canceled", "expired")}}
        url = f"http://{request.host}/v1/messages/batches/{b['id']}/results" if res is not None else None
        return {"id": b["id"], "type": "message_batch", "processing_status": b["processing_status"],
                "request_counts": counts, "created_at": _iso(b["created_at"]), "expires_at": _iso(b["expires_at"]),
                "ended_at": _iso(b["ended_at"]), "cancel_initiated_at": _iso(b["cancel_initiated_at"]),
                "archived_at": None, "results_url": url}

    def _an_advance(self, b: dict) -> None:
        if self._hold.is_set() or b["processing_status"] == "ended":
            return
        b["_step"] += 1
        if b["processing_status"] == "canceling" or b["_step"] > b["_steps"]:
            self._an_finish(b, cancelled=b["processing_status"] == "canceling")

    def _oa_usage(self, prompt: str, text: str, body: dict) -> dict:
        t_in, t_out = max(1, len(prompt) // 4), max(1, len(text) // 3)
        usage = {"prompt_tokens": t_in, "completion_tokens": t_out, "total_tokens": t_in + t_out}
        if body.get("reasoning_effort"):
            hidden = len(self.thinking(prompt)) // 4
            usage.update(completion_tokens=t_out + hidden, total_tokens=t_in + t_out + hidden,
                         completion_tokens_details={"reasoning_tokens": hidden})
        return usage

    def _an_finish(self, b: dict, cancelled: bool) -> None:
        results = []
        reqs = b["_requests"]
        for pos, r in enumerate(reqs):
            cid, p = r["custom_id"], r["params"]
            kind = self._outcome("anthropic", cid, pos, len(reqs), cancelled)
            why = self.refuse(p) if self.refuse is not None and kind == "succeeded" else None
            if why is not None:
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": why}}}
            elif kind == "succeeded":
                prompt = "".join(str(m.get("content", "")) for m in p["messages"])
                text = self.answer(prompt)
                content = [{"type": "text", "text": text}]
                usage = {"input_tokens": max(1, len(prompt) // 4), "output_tokens": max(1, len(text) // 3)}
                if (p.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
                    thought = self.thinking(prompt)
                    content.insert(0, {"type": "thinking", "thinking": thought, "signature": "c2lnbmF0dXJl"})
                    usage["output_tokens"] += len(thought) // 4
                    usage["output_tokens_details"] = {"thinking_tokens": len(thought) // 4}
                result = {"type": "succeeded", "message": {
                    "id": f"msg_{pos}", "type": "message", "role": "assistant", "model": p["model"],
                    "content": content, "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}}
            elif kind == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "api_error", "message": "Internal server error"}}}
            else:
                result = {"type": "canceled" if kind == "cancelled" else "expired"}
            results.append({"custom_id": cid, "result": result})
        b["_results"] = results
        b["processing_status"], b["ended_at"] = "ended", time.time()

    async def _an_get(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "anthropic")) is not None:
            return denied
        b = self.anthropic.get(request.match_info["bid"])
        if b is None:
            return web.json_response({"type": "error", "error": {"type": "not_found_error", "message": "none"}},
                                     status=404)
        with self.lock:
            self._an_advance(b)
        return web.json_response(self._an_public(b, request))

    async def _an_cancel(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "anthropic")) is not None:
            return denied
        b = self.anthropic.get(request.match_info["bid"])
        if b is None:
            return web.json_response({"type": "error", "error": {"type": "not_found_error", "message": "none"}},
                                     status=404)
        with self.lock:
            if b["processing_status"] == "in_progress":
                b["processing_status"], b["cancel_initiated_at"] = "canceling", time.time()
        return web.json_response(self._an_public(b, request))

    async def _an_results(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "anthropic")) is not None:
            return denied
        b = self.anthropic.get(request.match_info["bid"])
        if b is None or b["_results"] is None:
            return web.json_response({"type": "error", "error": {"type": "not_found_error", "message": "none"}},
                                     status=404)
        body = "".join(json.dumps(r) + "\n" for r in b["_results"]).encode("utf-8")
        return web.Response(body=body, content_type="application/binary")

    async def _an_list(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request, "anthropic")) is not None:
            return denied
        data = [self._an_public(b, request) for b in sorted(self.anthropic.values(), key=lambda b: b["id"],
                                                             reverse=True)]
        return web.json_response({"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

"""A local OpenAI-compatible chat-completions server that behaves like a model.

`StubServer` is a stdlib `ThreadingHTTPServer` on 127.0.0.1 (a free port), run in a
background thread and used as a context manager. It answers `POST /v1/chat/completions`
with real OpenAI-shaped JSON, so `lrc execute` exercises litellm's real OpenAI client path
(HTTP, headers, JSON parsing, exception mapping) end to end.

The "model" is the triage workload's deterministic baseline policy
(`lrc.runtime.workloads.triage_ap_inbox.reference.baseline(messages, tools)`): the same
policy the embedded `lrc/baseline` model runs in-process, so a stub-served cell must score
exactly like the `lrc/baseline` cell on the same items. Other behaviours, for model-failure
tests: `garbage` (non-JSON text instead of an answer in single-shot requests) and `endless`
(always calls `list_emails` in agentic requests, so the step cap is hit); they touch
different systems, so `garbage+endless` applies both in one run. `task` serves scripted tool
calls for a seed-000 task run (`reset(task_turns=...)`: one list of calls per turn, counted
from the assistant messages of the request, so a replay gets the same turn).

Token usage is computed deterministically from the request and the reply
(ceil(chars / 4) of the canonical JSON of messages + tools, and of the reply), with a fixed
share of the prompt reported as cached (`prompt_tokens_details.cached_tokens`), so cost
accounting can be checked against exact numbers.

Every request is recorded (`StubServer.requests`): its number, the model, a digest of its
canonical JSON body, the Authorization header, whether tools were offered, timestamps, the
HTTP status sent and, for a 200, the exact response body. Scripted infrastructure faults
(`Fault`) apply per request number, to the first N matching requests, per model name or per
predicate on the request body: an HTTP status (429 with `Retry-After`, 500, 503...), a
delay, or a dropped connection. `delay` slows every request down (for kill tests).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

from lrc.runtime.workloads.triage_ap_inbox.reference import baseline

CREATED = 1764374400  # fixed: responses carry no wall-clock data
CACHED_SHARE = 4  # cached_tokens = prompt_tokens // CACHED_SHARE (a fixed, non-zero share)
GARBAGE = "Sure! Here are the labels: invoice, invoice, statement... (this is not JSON)"
BEHAVIOURS = ("baseline", "garbage", "endless", "task")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def body_digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


@dataclass
class Fault:
    """A scripted infrastructure fault.

    kind: "status" (reply `status` with an OpenAI error body and, if set, `Retry-After`),
    "drop" (close the connection without a response), "delay" (sleep `delay` seconds,
    then answer normally), or "hang" (never answer: the request is held until the server is
    reset or stopped, then its connection is closed). It applies to a request when every
    given filter matches: `requests` (1-based request numbers, counted over all requests
    since the last reset), `model` (the request's model name), `match` (a predicate on the
    parsed body); with `chance`, only to that share of them, drawn from a `random.Random(seed)`
    (a storm); and, with `first`, only to the first `first` requests that pass those filters. `echo_auth` makes a
    status fault echo the request's Authorization header in its error message, the way some
    providers echo a bad key (the runtime must redact it before anything is written).
    """

    kind: str = "status"
    status: int = 503
    retry_after: str | None = None
    delay: float = 0.0
    requests: Iterable[int] | None = None
    model: str | None = None
    match: Callable[[dict[str, Any]], bool] | None = None
    first: int | None = None
    chance: float | None = None  # apply to this share of the matching requests (seeded draw)
    seed: int = 0
    echo_auth: bool = False  # put the Authorization header into the error message (a leak test)
    #: put echo(Authorization header) into the error message: an encoded or cut key (a leak test)
    echo: Callable[[str | None], str] | None = None
    #: a status fault's error `code` and `message` as a provider words them (default: server_error / rate_limit_exceeded)
    error_code: str | None = None
    error_message: str | None = None
    hits: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("status", "drop", "delay", "hang"):
            raise ValueError(f"unknown fault kind {self.kind!r}")
        if self.requests is not None:
            self.requests = frozenset(self.requests)
        self._rng = random.Random(self.seed)

    def applies(self, number: int, body: dict[str, Any]) -> bool:
        if self.requests is not None and number not in self.requests:
            return False
        if self.model is not None and body.get("model") != self.model:
            return False
        if self.match is not None and not self.match(body):
            return False
        if self.chance is not None and self._rng.random() >= self.chance:
            return False
        if self.first is not None and self.hits >= self.first:
            return False
        self.hits += 1
        return True


@dataclass
class Record:
    number: int
    model: str | None
    digest: str
    body: dict[str, Any]
    has_tools: bool
    authorization: str | None
    started: float
    finished: float | None = None
    status: int | None = None  # None: the connection was dropped (or the client went away)
    fault: str | None = None
    response: dict[str, Any] | None = None

    @property
    def auth_present(self) -> bool:
        return bool(self.authorization)


def reply_for(body: dict[str, Any], behaviour: str, task_turns: list[list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The OpenAI chat.completion for a request, computed from the request alone (and, for the
    `task` behaviour, the scripted turns: turn N is served after N assistant messages)."""
    messages = body.get("messages") or []
    tools = body.get("tools") or None
    modes = set(behaviour.split("+"))
    raw_arguments: dict[str, str] = {}
    if "task" in modes:
        step = sum(1 for m in messages if m.get("role") == "assistant")
        turns = task_turns or []
        calls = []
        for n, c in enumerate(turns[step] if step < len(turns) else [], 1):
            call_id = f"call_{step + 1}_{n}"
            calls.append({"id": call_id, "name": c["name"], "arguments": c.get("arguments", {})})
            if "raw_arguments" in c:  # hostile: sent as this exact text, not as JSON of a dict
                raw_arguments[call_id] = c["raw_arguments"]
        content = None if calls else "Done."
    elif "garbage" in modes and tools is None:
        content, calls = GARBAGE, []
    elif "endless" in modes and tools is not None:
        step = sum(1 for m in messages if m.get("role") == "assistant") + 1
        content, calls = None, [{"id": f"call_{step}_1", "name": "list_emails", "arguments": {}}]
    else:
        reply = baseline(messages, tools)
        content = reply.content
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
    tool_calls = [{"id": c["id"], "type": "function",
                   "function": {"name": c["name"], "arguments": raw_arguments.get(c["id"], json.dumps(c["arguments"], sort_keys=True))}}
                  for c in calls]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    prompt_tokens = estimate_tokens(canonical({"messages": messages, "tools": tools}))
    completion_tokens = estimate_tokens((content or "") + "".join(
        c["function"]["name"] + c["function"]["arguments"] for c in tool_calls))
    return {
        "id": "chatcmpl-" + body_digest(body)[:24],
        "object": "chat.completion",
        "created": CREATED,
        "model": body.get("model"),
        "system_fingerprint": "fp_lrc_stub",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": prompt_tokens // CACHED_SHARE, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
    }


def triage_call_key(r: Record) -> tuple[str, str, int]:
    """(system, item, step) of a triage request, read from its body, as the journal keys a call
    (its run key's system and item, and its step): how a test sets the server's log, the
    provider's bill, beside the journal."""
    batches = set(re.findall(r"AP-B(\d\d)", json.dumps(r.body["messages"])))
    assert len(batches) == 1
    step = 1 + sum(m["role"] == "assistant" for m in r.body["messages"])
    return ("agentic" if r.has_tools else "single-shot", f"ap-batch-{batches.pop()}", step)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real provider
    timeout = 10  # an idle keep-alive connection ends its thread after this many seconds
    server: "_HTTPServer"

    def setup(self) -> None:
        super().setup()
        self.server.stub._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.stub._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
        pass

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode("utf-8"), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802
        self._send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        stub = self.server.stub
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        record, fault, behaviour, delay = stub._admit(body, self.headers.get("Authorization"))
        try:
            if delay:
                time.sleep(delay)
            if fault is not None and fault.kind == "delay":
                time.sleep(fault.delay)
            if fault is not None and fault.kind == "hang":
                record.fault = "hang"
                stub._released.wait(timeout=120)  # set on reset() and stop()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault is not None and fault.kind == "drop":
                record.fault = "drop"
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault is not None and fault.kind == "status":
                record.fault = f"status {fault.status}"
                record.status = fault.status
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                kind = fault.error_code or ("rate_limit_exceeded" if fault.status == 429 else "server_error")
                message = fault.error_message or f"stub fault: HTTP {fault.status}"
                if fault.echo_auth:
                    message += f" (request had Authorization: {self.headers.get('Authorization')})"
                if fault.echo is not None:
                    message += f" ({fault.echo(self.headers.get('Authorization'))})"
                self._send_json(fault.status, {"error": {"message": message, "type": kind, "code": kind}}, headers)
                return
            raw_reply = stub.reply_hook(body) if stub.reply_hook is not None else None
            if raw_reply is not None:
                self._send_raw(200, raw_reply)
                record.status = 200
                record.response = {"raw": raw_reply[:200].decode("utf-8", "replace")}
                return
            response = reply_for(body, behaviour, stub.task_turns)
            self._send_json(200, response)
            record.status = 200
            record.response = response
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True  # the client went away (killed); nothing to answer
        finally:
            record.finished = time.monotonic()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, stub: "StubServer"):
        self.stub = stub
        super().__init__(("127.0.0.1", stub.wanted_port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client killed mid-request or mid-keep-alive: expected in kill tests
        super().handle_error(request, client_address)


class StubServer:
    """The server; `with StubServer() as s: ... s.api_base ...`."""

    def __init__(self, behaviour: str = "baseline", delay: float = 0.0, port: int = 0):
        self.wanted_port = port  # 0: any free port; a given one to make a server appear where nothing listened
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self.requests: list[Record] = []
        self.faults: list[Fault] = []
        self.behaviour = behaviour
        self.behaviours: dict[str, str] = {}  # per model name, overrides `behaviour`
        self.delay = delay
        #: body -> raw response bytes (sent with status 200) or None for the normal reply: a
        #: hostile provider or model, for fuzzing (the bytes need not be valid JSON at all).
        self.reply_hook: Callable[[dict[str, Any]], bytes | None] | None = None
        self.task_turns: list[list[dict[str, Any]]] = []  # the `task` behaviour's scripted tool calls
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._released = threading.Event()  # wakes requests held by a "hang" fault

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> "StubServer":
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="lrc-stub-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._released.set()
        self._httpd.shutdown()  # serve_forever returns
        with self._lock:
            conns = list(self._connections)
        for conn in conns:  # end idle keep-alive connections so their threads exit now
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()
        assert self._thread is not None
        self._thread.join(timeout=5)
        deadline = time.monotonic() + 5
        while self.handler_threads() and time.monotonic() < deadline:
            time.sleep(0.02)
        self._httpd = None

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return self._httpd.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def handler_threads(self) -> list[threading.Thread]:
        """Live request-handler threads (ThreadingMixIn names them after process_request_thread)."""
        return [t for t in threading.enumerate() if t.is_alive() and "process_request_thread" in t.name]

    def settle(self, seconds: float = 30, quiet: float = 0.25) -> None:
        """Wait until every request received so far is handled: a request a dead client sent just
        before it stopped may still be read (and counted) by a handler thread on a loaded machine,
        and must not be counted as the next client's. Only for clients that are gone: a live
        client's keep-alive connection holds its handler thread (then this waits `seconds`).

        "Received" includes a connection the kernel completed but the server has not accepted yet
        (the listening socket is readable): on a loaded machine a dead client's last requests sat
        there while no handler thread existed, and were counted after the next `reset` (a CI run
        saw a resume "make" 14 calls for 12). Settled means: no handler thread, nothing waiting to
        be accepted and no new request, for `quiet` seconds."""
        deadline = time.monotonic() + seconds
        calm_since, seen = None, self.count
        while time.monotonic() < deadline:
            busy = bool(self.handler_threads()) or self._pending_connection() or self.count != seen
            seen = self.count
            now = time.monotonic()
            if busy:
                calm_since = None
            elif calm_since is None:
                calm_since = now
            elif now - calm_since >= quiet:
                return
            time.sleep(0.01)

    def _pending_connection(self) -> bool:
        """Whether a connection waits in the listening socket's backlog, not yet accepted."""
        import select

        httpd = self._httpd
        if httpd is None:
            return False
        try:
            readable, _, _ = select.select([httpd.socket], [], [], 0)
        except (OSError, ValueError):  # closed meanwhile
            return False
        return bool(readable)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    # -- configuration ---------------------------------------------------------------------

    def reset(self, behaviour: str = "baseline", faults: Iterable[Fault] = (), delay: float = 0.0,
              behaviours: dict[str, str] | None = None,
              reply_hook: Callable[[dict[str, Any]], bytes | None] | None = None,
              task_turns: list[list[dict[str, Any]]] | None = None) -> None:
        """Forget recorded requests and set a new behaviour, faults and delay. `task_turns`:
        the tool calls the `task` behaviour serves, one list per assistant turn (each call
        `{"name", "arguments"}`, or `"raw_arguments"`: a string sent as it is)."""
        if not set(behaviour.split("+")) <= set(BEHAVIOURS):
            raise ValueError(f"unknown behaviour {behaviour!r}; known: {BEHAVIOURS}, or several joined by '+'")
        self._released.set()  # let requests held by the previous faults go
        self._released = threading.Event()
        with self._lock:
            self.requests = []
            self.faults = list(faults)
            self.behaviour = behaviour
            self.behaviours = dict(behaviours or {})
            self.delay = delay
            self.reply_hook = reply_hook
            self.task_turns = list(task_turns or [])

    def set_faults(self, faults: Iterable[Fault]) -> None:
        with self._lock:
            self.faults = list(faults)

    # -- bookkeeping (called from handler threads) -------------------------------------------

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _admit(self, body: dict[str, Any], authorization: str | None) -> tuple[Record, Fault | None, str, float]:
        with self._lock:
            number = len(self.requests) + 1
            record = Record(number=number, model=body.get("model"), digest=body_digest(body), body=body,
                            has_tools=bool(body.get("tools")), authorization=authorization, started=time.monotonic())
            self.requests.append(record)
            fault = next((f for f in self.faults if f.applies(number, body)), None)
            behaviour = self.behaviours.get(str(body.get("model")), self.behaviour)
            return record, fault, behaviour, self.delay

    # -- views for assertions ------------------------------------------------------------------

    def snapshot(self) -> list[Record]:
        with self._lock:
            return list(self.requests)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def answered(self) -> list[Record]:
        """Requests answered with a 200 (a billed call)."""
        return [r for r in self.snapshot() if r.status == 200 and r.response is not None]

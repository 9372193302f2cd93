"""A provider's HTTP response holds at most `bounded_http.MAX_RESPONSE_BYTES`, decompressed.

Found by sending odd provider replies: a gzip-compressed answer of 1 MB that inflates to 1 GB
took `lrc execute` to 2.1 GB of memory before lrc saw a byte of it (the HTTP client reads and
decompresses a whole body first), so a few such answers at concurrency 64 are an out-of-memory
kill, and the resume sends the same requests again. Now every transport litellm builds is
wrapped (runtime/models/bounded_http.py): lrc decompresses the body itself, a piece at a time,
and stops reading at the first byte past the bound; the adapter reads that as the model's
invalid output, never retried (the same request would fetch the same answer). A plain body over
the bound is a case of tests/helpers/hostile.py (`shape:body-over-the-bound`), run through the
adapter and the fuzz target with the other unreadable replies.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrc.runtime.models import bounded_http
from lrc.runtime.models.bounded_http import BoundedStream, ResponseTooLarge

KEY = "sk-lrc-test-response-bound-8f31c2"
ENVELOPE = {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"labels": ["invoice"]}'}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


def _encode(data: bytes, encoding: str, level: int = 6) -> bytes:
    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[encoding]
    c = zlib.compressobj(level, zlib.DEFLATED, wbits)
    return c.compress(data) + c.flush()


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]):
        self.chunks = chunks
        self.closed = False

    async def __aiter__(self):
        for c in self.chunks:
            yield c

    async def aclose(self) -> None:
        self.closed = True


def _read(chunks: list[bytes], encoding: str, limit: int) -> tuple[bytes, BaseException | None, int]:
    """(what the stream yielded, the exception it raised or None, the largest piece)."""
    got: list[bytes] = []

    async def go() -> BaseException | None:
        try:
            async for piece in BoundedStream(_Chunks(chunks), encoding, limit):
                got.append(piece)
        except (ResponseTooLarge, httpx.DecodingError) as exc:
            return exc
        return None

    exc = asyncio.run(go())
    return b"".join(got), exc, max((len(p) for p in got), default=0)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


@settings(max_examples=150, deadline=None)
@given(payload=st.one_of(st.binary(max_size=3000), st.text(alphabet="ab {}", max_size=6000).map(str.encode)),
       encoding=st.sampled_from(["", "identity", "gzip", "deflate", "raw-deflate"]),
       cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
       limit=st.integers(min_value=0, max_value=4000))
def test_the_stream_yields_the_body_within_the_bound_and_refuses_it_past_it(payload, encoding, cuts, limit):
    wire = payload if encoding in ("", "identity") else _encode(payload, encoding)
    header = "deflate" if encoding == "raw-deflate" else encoding
    body, exc, _ = _read(_split(wire, cuts), header, limit)
    if len(payload) <= limit and len(wire) <= limit:
        assert exc is None and body == payload
    else:
        assert isinstance(exc, ResponseTooLarge), exc
        assert len(body) <= limit and payload.startswith(body)  # never a byte past the bound


def test_a_compression_bomb_is_stopped_a_piece_past_the_bound():
    bomb = _encode(b"\0" * (64 << 20), "gzip", level=9)  # 64 MiB in ~65 KB
    body, exc, largest = _read(_split(bomb, list(range(0, len(bomb), 16384))), "gzip", 1 << 20)
    assert isinstance(exc, ResponseTooLarge) and "decompressed" in str(exc)
    assert len(body) <= 1 << 20 and largest <= bounded_http._PIECE


def test_a_body_that_cannot_be_decompressed_is_the_transports_decoding_error_as_before():
    body, exc, _ = _read([b"\x1f\x8b\x08\x00 not gzip at all"], "gzip", 1 << 20)
    assert isinstance(exc, httpx.DecodingError) and body == b""
    body, exc, _ = _read([b"{}"], "br", 1 << 20)  # not what lrc asked for
    assert isinstance(exc, httpx.DecodingError)


def test_every_transport_litellm_builds_is_bounded():
    from lrc.runtime.models.adapter import load_litellm

    load_litellm()
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    transport = AsyncHTTPHandler.create_async_transport()  # as load_litellm left it
    assert isinstance(transport, bounded_http.BoundedTransport)
    assert bounded_http.install(None)  # idempotent: already installed, not wrapped twice
    transport = AsyncHTTPHandler.create_async_transport()
    assert isinstance(transport, bounded_http.BoundedTransport)
    assert not isinstance(transport.inner, bounded_http.BoundedTransport)


# -- through the adapter, against a local server -------------------------------------------

class _Server:
    """A local OpenAI-compatible endpoint answering every request with `self.body` and
    `self.headers`; counts the requests."""

    def __init__(self) -> None:
        self.body, self.headers, self.requests = b"", {}, 0
        self.body_for: Any = None  # when set: the body for a request's body (else self.body)
        self.status = 200
        self.paths: list[str] = []
        self.connections: list[Any] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                outer.connections.append(self.connection)

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests += 1
                outer.paths.append(self.path)
                body = outer.body if outer.body_for is None else outer.body_for(sent)
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                for k, v in outer.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:  # the client stopped reading: what the bound is for
                    pass

        class Quiet(ThreadingHTTPServer):
            daemon_threads = False  # server_close() joins every handler thread (see stop)

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.http = Quiet(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stop serving and end every connection, so no handler thread outlives the module (the
        stub server's fixture counts the process's handler threads)."""
        self.http.shutdown()
        for conn in self.connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.http.server_close()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.http.server_port}/v1"


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as env:
        for name, value in {"LRC_MAX_ATTEMPTS": "3", "LRC_RETRY_BASE_SECONDS": "0", "LRC_TEST_BOUND_KEY": KEY}.items():
            env.setenv(name, value)
        s = _Server()
        yield s
        s.stop()


def _complete(server: _Server):
    from lrc.runtime.models import adapter, infra
    from lrc.runtime.operate import ModelEndpoint

    model = {"id": "openai/stub-model", "price": {"input": "1", "output": "1"}}
    endpoint = ModelEndpoint(api_base=server.api_base, api_key_env="LRC_TEST_BOUND_KEY", max_concurrency=1)
    lane = infra.ModelLane(model["id"], model, infra.InfraSettings.from_env(), infra.InfraStats(), endpoint=endpoint)
    return asyncio.run(adapter.complete(model, [{"role": "user", "content": "AP-B01"}], None, 30, lane))


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
def test_a_compressed_answer_is_read_as_before(server, encoding):
    server.body = _encode(json.dumps(ENVELOPE).encode(), encoding)
    server.headers = {"Content-Encoding": "deflate" if encoding == "raw-deflate" else encoding}
    before = server.requests
    result = _complete(server)
    assert result.invalid is None and result.message["content"] == '{"labels": ["invoice"]}', result
    assert result.usage["input"] == 7 and result.usage["output"] == 3 and server.requests == before + 1


def test_a_compressed_answer_that_inflates_past_the_bound_is_the_models_invalid_output_never_retried(server):
    # Valid JSON once inflated (the envelope, then 256 MiB of spaces): without the bound it is read
    # -- all of it, into memory -- as an ordinary answer.
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    spaces = b" " * (1 << 20)
    server.body = c.compress(json.dumps(ENVELOPE).encode()) + b"".join(c.compress(spaces) for _ in range(256)) + c.flush()
    server.headers = {"Content-Encoding": "gzip"}
    before = server.requests
    result = _complete(server)
    assert result.invalid and "more than 33,554,432 bytes" in result.invalid, result
    assert result.attempts == 1 and not result.failures and server.requests == before + 1


def test_the_hostile_plain_body_case_is_one_byte_over_the_bound():
    from helpers import hostile

    assert hostile.OVER_THE_BOUND == bounded_http.MAX_RESPONSE_BYTES + 1
    body = hostile.reply("shape:body-over-the-bound", {})
    assert json.loads(body)["choices"][0]["message"]["content"] == '{"labels": []}'  # readable, were it not so long


# -- through the operator's HTTP proxy ---------------------------------------------------------

_THROUGH_PROXY = r"""
import asyncio, os, sys
from lrc.runtime.models import adapter, infra
from lrc.runtime.operate import ModelEndpoint

model = {"id": "openai/stub-model", "price": {"input": "1", "output": "1"}}
endpoint = ModelEndpoint(api_base="http://upstream.lrc-test.invalid/v1", api_key_env="LRC_TEST_BOUND_KEY", max_concurrency=1)
lane = infra.ModelLane(model["id"], model, infra.InfraSettings.from_env(), infra.InfraStats(), endpoint=endpoint)


async def main() -> None:
    for word in ("small", "big"):
        result = await adapter.complete(model, [{"role": "user", "content": word}], None, 30, lane)
        print(word, repr(result.message.get("content")), repr(result.invalid), result.attempts)

asyncio.run(main())
"""


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_calls_go_through_the_operators_http_proxy_and_stay_bounded(server, transport):
    # An endpoint reachable only through the proxy HTTP_PROXY names (`.invalid` never resolves):
    # with httpx's transport, wrapping it had made httpx skip the environment's proxies, so every
    # call went straight to the provider (here: a connection error, retried, the run excluded).
    import os
    import subprocess
    import sys

    oversize = json.dumps(ENVELOPE).encode()[:-1] + b" " * bounded_http.MAX_RESPONSE_BYTES + b"}"
    server.body_for = lambda sent: oversize if b"big" in sent else json.dumps(ENVELOPE).encode()
    server.headers, before = {}, len(server.paths)
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env.update({"HTTP_PROXY": f"http://127.0.0.1:{server.http.server_port}", "NO_PROXY": "",
                "LRC_MAX_ATTEMPTS": "1", "LRC_TEST_BOUND_KEY": KEY})
    env.update({"DISABLE_AIOHTTP_TRANSPORT": "True"} if transport == "httpx" else {"AIOHTTP_TRUST_ENV": "True"})
    try:
        done = subprocess.run([sys.executable, "-c", _THROUGH_PROXY], env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.body_for = None
    assert done.returncode == 0, done.stderr[-2000:]
    small, big = done.stdout.splitlines()[-2:]
    assert small == """small '{"labels": ["invoice"]}' None 1""", done.stdout
    assert big.startswith("big None ") and "more than 33,554,432 bytes" in big and big.endswith(" 1"), done.stdout
    assert server.paths[before:] == ["http://upstream.lrc-test.invalid/v1/chat/completions"] * 2


# -- a redirect is never followed ----------------------------------------------------------------

@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_stops_the_execute_as_the_endpoints_configuration_and_is_never_followed(server, status):
    # Followed, the prompt went where the answer pointed (a 302 re-sent it as a GET without its
    # body) and that host's reply was graded as the model's, under the configured endpoint.
    from lrc.runtime.models import adapter

    elsewhere = _Server()
    try:
        server.status, server.body = status, b"{}"
        server.headers = {"Location": elsewhere.api_base + "/chat/completions"}
        before = server.requests
        with pytest.raises(adapter.ConfigError) as refused:
            _complete(server)
        said = str(refused.value)
        assert f"answered {status} with a redirect" in said and elsewhere.api_base in said and "never follows" in said
        assert server.requests == before + 1 and elsewhere.requests == 0 and not elsewhere.paths
    finally:
        server.status, server.headers = 200, {}
        elsewhere.stop()


def test_an_error_object_in_a_200_body_with_a_word_for_a_code_is_retried_as_an_outage(server):
    # litellm passes the word on as the status; read as a configuration error it stopped the execute
    from lrc.runtime.models import adapter

    server.body = json.dumps({"error": {"message": "The server had an error", "type": "server_error",
                                        "code": "server_error"}}).encode()
    server.headers, before = {}, server.requests
    with pytest.raises(adapter.InfraExhausted) as exhausted:
        _complete(server)
    assert server.requests == before + 3 and len(exhausted.value.failures) == 3  # LRC_MAX_ATTEMPTS=3, every one counted


@pytest.mark.parametrize("status, kept", [(200, True), (201, True), (429, False), (500, False)])
@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_the_body_of_a_successful_response_is_kept_decompressed_for_the_call_that_asked(status, kept, encoding):
    """adapter.complete reads usage and the finish reason from the body as the provider sent it
    (litellm rewrites both): the transport keeps a 2xx body, decompressed and within the bound, in
    the buffer of the context that made the request -- an error response's body is not kept, and a
    request made outside such a context keeps nothing."""
    payload = b'{"usage": {"completion_tokens": true}}'

    def handler(request: httpx.Request) -> httpx.Response:
        wire = _encode(payload, encoding) if encoding else payload
        return httpx.Response(status, content=wire, headers={"Content-Encoding": encoding} if encoding else {})

    async def go(with_buffer: bool) -> tuple[bytes, bytearray | None]:
        buffer = bytearray() if with_buffer else None
        token = bounded_http.RAW_BODY.set(buffer)
        try:
            async with httpx.AsyncClient(transport=bounded_http.BoundedTransport(httpx.MockTransport(handler))) as client:
                response = await client.post("http://provider.test/v1/chat/completions", json={})
                return response.content, buffer
        finally:
            bounded_http.RAW_BODY.reset(token)

    content, buffer = asyncio.run(go(True))
    assert content == payload
    assert bytes(buffer) == (payload if kept else b"")
    content, buffer = asyncio.run(go(False))
    assert content == payload and buffer is None


def test_a_body_longer_than_what_is_kept_is_not_kept_at_all(monkeypatch):
    """The kept copy is bounded (MAX_KEPT_BYTES, well above any reply lrc reads): a longer body
    is still delivered whole, but not kept -- never a prefix the adapter would read as the body."""
    monkeypatch.setattr(bounded_http, "MAX_KEPT_BYTES", 64)
    payload = b'{"usage": {"completion_tokens": 1}, "pad": "' + b"x" * 200 + b'"}'

    async def go() -> tuple[bytes, bytearray]:
        buffer = bytearray()
        token = bounded_http.RAW_BODY.set(buffer)
        try:
            transport = bounded_http.BoundedTransport(httpx.MockTransport(lambda request: httpx.Response(200, content=payload)))
            async with httpx.AsyncClient(transport=transport) as client:
                return (await client.post("http://provider.test/v1/chat/completions", json={})).content, buffer
        finally:
            bounded_http.RAW_BODY.reset(token)

    content, buffer = asyncio.run(go())
    assert content == payload and bytes(buffer) == b""
    assert bounded_http.MAX_KEPT_BYTES < bounded_http.MAX_RESPONSE_BYTES

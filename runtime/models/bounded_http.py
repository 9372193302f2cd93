"""A provider's HTTP response may hold at most MAX_RESPONSE_BYTES, decompressed.

Why: a provider's response is hostile input. Without a bound, the HTTP client reads a whole
body into memory before lrc sees a byte of it, and decompresses it first: one gzip-compressed
response of 1 MB that inflates to 1 GB took the process to 2.1 GB (measured, 2026-12-07), so a
few such answers at concurrency 64 end the execute with an out-of-memory kill -- and the
resume sends the same requests again, paying for them again. The reply lrc reads is at most
`adapter.MAX_REPLY_CHARS` (1,000,000) characters, at most ~6 MB as escaped JSON; no readable
answer needs more than the bound here.

How: every transport litellm builds for its HTTP clients (the OpenAI SDK's and litellm's own
handler use one factory, `AsyncHTTPHandler.create_async_transport`) is wrapped in
`BoundedTransport`, which asks for `gzip, deflate` only, decompresses the body itself with
zlib's `max_length` (never more than one piece at a time), and stops reading -- closing the
connection -- at the first byte past the bound, raised as `ResponseTooLarge`. The adapter
reads that as the model's invalid output (the response arrived; it is not retried, as the
same request would fetch the same answer). A redirect is never followed (`RedirectRefused`).
"""

from __future__ import annotations

import inspect
import zlib
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, AsyncIterator, Iterator, Mapping

import httpx

#: The most bytes a response body may hold once decompressed (and the most it may hold on the
#: wire). Well above any reply lrc can read (MAX_REPLY_CHARS escaped, plus the envelope), well
#: below what a few dozen concurrent answers may hold in memory.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
#: Decompressed bytes produced per step: what one step of a compression bomb can allocate.
_PIECE = 256 * 1024
_ACCEPTED = "gzip, deflate"

#: Where the decompressed body of a successful (2xx) response is kept for the call running in this
#: context: `adapter.complete` sets a fresh buffer around each attempt. Why: litellm converts the
#: provider's answer before lrc sees it -- a usage count of `true` becomes 1 token, a missing
#: `completion_tokens` 0 (the output priced at $0), a fractional count makes the whole reply
#: "invalid", and OpenRouter's `finish_reason: "error"` (the generation failed at the provider)
#: becomes "stop" -- so the adapter reads those few fields from the body as the provider sent it.
#: The buffer keeps at most MAX_KEPT_BYTES: a longer body is not kept at all (emptied), and its
#: fields are then litellm's reading alone -- so a hostile provider's 32 MiB answers are not held
#: twice in memory at a concurrency of 64.
RAW_BODY: ContextVar[bytearray | None] = ContextVar("lrc_raw_response_body", default=None)
#: Well above the longest reply lrc reads (adapter.MAX_REPLY_CHARS, at most ~6 MB as escaped JSON).
MAX_KEPT_BYTES = 8 * 1024 * 1024


class ResponseTooLarge(Exception):
    """The response body holds more than MAX_RESPONSE_BYTES (decompressed or on the wire)."""

    def __init__(self, limit: int, compressed: bool):
        how = "decompressed " if compressed else ""
        super().__init__(f"the response body holds more than {limit:,} bytes {how}(lrc reads at most {limit:,})")


def _decompressor(encoding: str) -> Any:
    """zlib's decompressor for a Content-Encoding lrc asked for; None for identity."""
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    if name == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # zlib-wrapped (or gzip); raw deflate below
    raise httpx.DecodingError(f"the response is encoded as {encoding[:40]!r}, which lrc did not ask for ({_ACCEPTED})")


class RedirectRefused(Exception):
    """The endpoint answered with a redirect, which lrc never follows.

    Why: followed, the prompt (and, to the same host, the key) went wherever the answer
    pointed, and whatever answered there -- a 302 turns the request into a GET without its
    body -- was journaled and graded as the model's reply, under the endpoint the manifest
    names (found 2026-12-07: a 302 to another host graded a reply to an empty request). A
    redirect is the endpoint's configuration, the same on every attempt: the adapter stops the
    execute with it (exit 1), naming where it pointed."""

    def __init__(self, status: int, location: str):
        super().__init__(f"the endpoint answered {status} with a redirect to {location[:200]!r}; lrc never follows a "
                         f"provider's redirect: set the model's api_base to the address that answers")
        self.status = status


class BoundedStream(httpx.AsyncByteStream):
    """The decompressed body of `inner`, refused past `limit` bytes (ResponseTooLarge)."""

    def __init__(self, inner: httpx.AsyncByteStream, encoding: str, limit: int, sink: bytearray | None = None):
        self._inner = inner
        self._encoding = encoding
        self._limit = limit
        self._sink = sink  # the body as read, for the adapter (RAW_BODY); None: not kept

    @staticmethod
    def _inflate(z: Any, data: bytes) -> Iterator[bytes]:
        """`data` decompressed, at most _PIECE bytes at a time (zlib.error if it is not)."""
        while data and not z.eof:
            piece = z.decompress(data, _PIECE)
            data = z.unconsumed_tail
            if piece:
                yield piece
            elif not data:
                break

    def _count(self, size: int, piece: bytes, compressed: bool) -> int:
        size += len(piece)
        if size > self._limit:
            raise ResponseTooLarge(self._limit, compressed)
        return size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()
        try:
            async for piece in self._decoded(chunks):
                if self._sink is not None:
                    if len(self._sink) + len(piece) > MAX_KEPT_BYTES:
                        self._sink.clear()  # too long to keep: not kept at all, never a prefix
                        self._sink = None
                    else:
                        self._sink += piece
                yield piece
        finally:
            # Stopping early (past the bound, or any error) ends the transport's own iteration
            # now, which closes the connection: the provider stops sending, nothing is pooled.
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()

    async def _decoded(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        z = _decompressor(self._encoding) if self._encoding else None
        # "deflate" is zlib-wrapped by the standard and raw by some servers: until the first byte
        # comes out, what came in is kept to be read again as raw deflate (as httpx does).
        retry_raw = z is not None and self._encoding.strip().lower() == "deflate"
        seen = bytearray()
        raw_size = size = 0
        async for raw in chunks:
            raw_size += len(raw)
            if raw_size > self._limit:
                raise ResponseTooLarge(self._limit, compressed=False)
            if z is None:
                size = self._count(size, raw, False)
                yield raw
                continue
            if retry_raw:
                seen += raw
            try:
                for piece in self._inflate(z, raw):
                    retry_raw = False
                    size = self._count(size, piece, True)
                    yield piece
            except zlib.error as exc:
                if not retry_raw:
                    raise httpx.DecodingError(f"the response body cannot be decompressed: {exc}") from None
                retry_raw = False
                z = zlib.decompressobj(-zlib.MAX_WBITS)
                try:
                    for piece in self._inflate(z, bytes(seen)):
                        size = self._count(size, piece, True)
                        yield piece
                except zlib.error as again:
                    raise httpx.DecodingError(f"the response body cannot be decompressed: {again}") from None
            if not retry_raw:
                seen.clear()
        if z is not None:
            tail = z.flush()
            if tail:
                size = self._count(size, tail, True)
                yield tail

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx.AsyncBaseTransport):
    """`inner`, with every response body bounded and decompressed by lrc (BoundedStream)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, limit: int = MAX_RESPONSE_BYTES):
        self.inner = inner
        self.limit = limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = _ACCEPTED
        response = await self.inner.handle_async_request(request)
        if 300 <= response.status_code < 400 and "location" in response.headers:
            location = response.headers.get("location", "")
            await response.aclose()
            raise RedirectRefused(response.status_code, location)
        encoding = response.headers.get("Content-Encoding", "")
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in (b"content-encoding", b"content-length")]
        stream = response.stream
        if not isinstance(stream, httpx.AsyncByteStream):  # pragma: no cover - every async transport streams
            raise TypeError("the transport's response has no async stream")
        sink = RAW_BODY.get() if 200 <= response.status_code < 300 else None
        if sink is not None:
            sink.clear()  # the body of this response, not of one before it
        return httpx.Response(response.status_code, headers=headers, stream=BoundedStream(stream, encoding, self.limit, sink),
                              request=request, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        # litellm reads attributes of its own transport (its session, to recycle it): pass them on.
        if name == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def install(litellm: Any) -> bool:
    """Wrap every async transport litellm creates from now on; False if this litellm release has
    no such factory (tests/test_response_bound.py fails then, so an upgrade cannot lose the bound)."""
    try:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler
    except ImportError:  # pragma: no cover - another release
        return False
    factory = AsyncHTTPHandler.__dict__.get("create_async_transport")
    if factory is None:  # pragma: no cover - another release
        return False
    if getattr(factory, "__func__", factory).__name__ == "_bounded_transport":
        return True
    original = factory.__func__ if isinstance(factory, (staticmethod, classmethod)) else factory

    signature = inspect.signature(original)

    def _bounded_transport(*args: Any, **kwargs: Any) -> httpx.AsyncBaseTransport:
        inner = original(*args, **kwargs)
        if inner is None:  # litellm's "httpx's own transport": build it, to bound it
            given = signature.bind_partial(*args, **kwargs).arguments
            context, verify = given.get("ssl_context"), given.get("ssl_verify")
            options: dict[str, Any] = {"verify": context if context is not None else verify is not False,
                                       "cert": given.get("cert")}
            if given.get("limits") is not None:
                options["limits"] = given["limits"]
            inner = httpx.AsyncHTTPTransport(**options)
        return BoundedTransport(inner)

    AsyncHTTPHandler.create_async_transport = staticmethod(_bounded_transport)  # type: ignore[method-assign]
    if "_create_async_transport" in AsyncHTTPHandler.__dict__:
        AsyncHTTPHandler._create_async_transport = staticmethod(_bounded_transport)  # type: ignore[attr-defined]
    _install_proxy_mounts(AsyncHTTPHandler)
    return True


def _install_proxy_mounts(handler: Any) -> None:
    """Keep the operator's HTTP(S)_PROXY / NO_PROXY, each proxy's transport bounded as well.

    Why: with httpx's transport (litellm's `disable_aiohttp_transport`), an explicit transport
    makes httpx skip the environment's proxies, so litellm builds them as mounts -- only for a
    transport of httpx's own classes. A BoundedTransport is none of them: without this, every
    call went straight to the provider, past the proxy the operator set (measured: the proxy saw
    no request and an endpoint reachable only through it failed as a connection error). The
    mounts are built for the transport inside, and each proxy's transport is bounded too.
    (litellm's aiohttp transport reads the proxies itself, inside the transport lrc wraps.)"""
    factory = handler.__dict__.get("create_httpx_proxy_mounts")
    if factory is None:  # pragma: no cover - another release: no mounts to keep
        return
    original = factory.__func__ if isinstance(factory, (staticmethod, classmethod)) else factory
    if original.__name__ == "_bounded_proxy_mounts":
        return

    def _bounded_proxy_mounts(transport: Any, *args: Any, **kwargs: Any) -> Mapping[str, Any] | None:
        inner = transport.inner if isinstance(transport, BoundedTransport) else transport
        mounts = original(inner, *args, **kwargs)
        if mounts is None:
            return None
        return MappingProxyType({pattern: None if proxy is None else BoundedTransport(proxy)
                                 for pattern, proxy in mounts.items()})

    handler.create_httpx_proxy_mounts = staticmethod(_bounded_proxy_mounts)
    if "_create_httpx_proxy_mounts" in handler.__dict__:
        handler._create_httpx_proxy_mounts = staticmethod(_bounded_proxy_mounts)

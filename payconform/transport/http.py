"""The wire under ``payconform.transport.sender``: an httpx transport whose requests end by a total deadline.

httpx's timeouts bound each socket operation, so a target that dribbles its answer a byte at a time (or
keeps a connection half open) holds a request forever. Here every connect, read and write of a request is
given at most the time left until the deadline the caller set with ``deadline(seconds)``; once it has
passed, the next operation fails with a timeout. Connections are pooled as usual (httpcore).
"""

from __future__ import annotations

import contextlib
import functools
import ssl
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

_DEADLINE: ContextVar[float | None] = ContextVar("payconform_deadline", default=None)

# httpcore's failures as the httpx exceptions of the same name, which callers of an httpx transport expect
_MAPPED: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = tuple(
    (getattr(httpcore, name), getattr(httpx, name)) for name in (
        "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "ConnectError", "ReadError", "WriteError",
        "RemoteProtocolError", "LocalProtocolError", "UnsupportedProtocol", "NetworkError", "TimeoutException"))

# Seconds an idle pooled connection is reused for: below the 5 s after which common servers (uvicorn, and so
# the reference) close one. Without it a request sent on a connection idle about 5 s - a worker back from a
# pacing sleep, whose chunks are 5 s - races the server's close and fails with a connection reset.
KEEPALIVE_EXPIRY = 4.0


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Everything sent and read inside the block (connect, request, whole answer) ends within ``seconds``."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left before the deadline; ``error`` once it has passed."""
    at = _DEADLINE.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the request's total deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                                 socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout),
                                                         socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@contextlib.contextmanager
def _as_httpx(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        mapped = next((ours for theirs, ours in _MAPPED if isinstance(exc, theirs)), None)
        if mapped is None:
            raise
        raise mapped(str(exc) or exc.__class__.__name__, request=request) from exc


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes], request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx(self._request):
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context per process, shared by every transport: loading the CA bundle costs more than a
    short run's requests, and a context is safe to share between connections and threads."""
    return httpx.create_ssl_context(trust_env=False)


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport over an httpcore pool whose sockets honour ``deadline``; redirects are the caller's."""

    def __init__(self) -> None:
        self._pool = httpcore.ConnectionPool(ssl_context=_tls_context(),
                                             network_backend=_Backend(), keepalive_expiry=KEEPALIVE_EXPIRY)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx(request):
            answer = self._pool.handle_request(core)
        return httpx.Response(answer.status, headers=answer.headers, stream=_Body(answer.stream, request),
                              extensions=answer.extensions)

    def close(self) -> None:
        self._pool.close()

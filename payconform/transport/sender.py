"""The one way to the target: every request the harness sends (``Api``, the fuzz phase, webhook tooling).

``Transport(target).send(method, url, headers=..., content=...)`` sends one request and returns its
``Exchange``. On the way it:

- refuses what must not be sent (``transport_guard``): another host than the target's, a live key on a
  request that could move money or write to checkout;
- paces every attempt under the target's rate limits (the run's pacer; ``paced_as`` the key sent),
  crediting the wait to the test's timeout (``payconform.pacing.timeouts``);
- signs each attempt afresh in Mode B when given a ``Signer`` (so a retry is not a replay);
- gives the request a total deadline (connect, send, whole answer: ``transport_http``) of the target's
  ``request_timeout``, and reads the answer while streaming up to ``max_body`` bytes (1 MiB by default):
  a larger one is cut there and flagged, never held whole;
- retries a 429 after ``Retry-After`` (refused before the handler ran: Limits), at most ``retries`` times,
  and holds the credential in the pacer meanwhile (every process waits); counts each attempt
  (``payconform.pacing.accounting``);
- reports each attempt to the run's breaker (``payconform.transport.breaker``) and, once it has tripped (the target
  stopped answering), sends nothing more;
- appends each attempt, redacted by the run's redactor and truncated, to the current test's transcript;
- hands each request's final ``Exchange`` to the run's observers (``RunContext.observe``): the suites note there
  what a run created, to remove it at the end.

Everything of the run it uses comes from the ``payconform.context.RunContext`` it is given (a detached one
when none is).

A hang, a dropped connection, garbage, an answer past the deadline or over the cap raises ``TargetError``
(an ``AssertionError``) naming what happened, the request line and the x-request-id.
"""

from __future__ import annotations

import json as _json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..pacing import accounting as _accounting
from . import breaker as _breaker
from .. import redact as _redact
from ..results import records as _results
from ..pacing import timeouts as _timeouts
from ..checks.expect import failure_message, shorten
from ..context import RunContext
from .guard import SafetyError, check_host, check_live_key
from ..waits import waiting_for
from .http import DeadlineTransport, deadline

MAX_BODY = 1024 * 1024  # bytes of an answer read before it is cut
TRANSCRIPT_BODY = 4096  # bytes of each body kept in the transcript
MAX_429_RETRIES = 2
MAX_RETRY_AFTER = 65.0
CREDENTIAL_PREFIXES = ("svc_test_", "svc_live_", "akid_test_", "akid_live_")
_NO_BODY: Any = object()

__all__ = ["Exchange", "RequestInfo", "SafetyError", "TargetError", "Transport", "new_idempotency_key"]


class TargetError(AssertionError):
    """The target hung, dropped the connection, answered garbage or too much.

    ``unreachable``: no connection could be made at all; ``status``, ``headers``, ``body``: what had come back
    before the attempt ended (``status`` None when nothing did; the body's first 4 KiB: a failure held by
    hypothesis or a traceback must not pin a megabyte), for tools that report rather than fail."""

    def __init__(self, message: str, *, unreachable: bool = False, status: int | None = None,
                 headers: httpx.Headers | None = None, body: bytes = b"") -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.status = status
        self.headers = headers if headers is not None else httpx.Headers()
        self.body = body


def new_idempotency_key() -> str:
    """A fresh valid ``Idempotency-Key``: ``pc-<uuid4 hex>``."""
    return f"pc-{uuid.uuid4().hex}"


def paced_as(key: str | None) -> str | None:
    """The credential whose budget a request spends: the key sent when it has the shape of one (an API key or
    a signing key id); a made-up value (a check's invalid key) authenticates nobody and spends the IP's only."""
    return key if key and key.strip().startswith(CREDENTIAL_PREFIXES) else None


def retry_after(headers: Mapping[str, str]) -> float:
    """Seconds a 429 asks to wait (``Retry-After``; 1 s when absent or unreadable, at most 65 s)."""
    try:
        seconds = float(headers.get("retry-after") or 1.0)
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _truncated(data: bytes) -> str:
    text = data[:TRANSCRIPT_BODY].decode("utf-8", errors="replace")
    return text + (f"... [truncated, {len(data)} bytes in all]" if len(data) > TRANSCRIPT_BODY else "")


@dataclass(frozen=True)
class RequestInfo:
    """What was sent: method, URL (with the query), headers, body bytes."""

    method: str
    url: str
    headers: httpx.Headers
    content: bytes

    def __repr__(self) -> str:
        return f"RequestInfo({self.method} {_redact.redact(self.url)})"

    def __iter__(self):  # allows ``method, url = ex.request``
        return iter((self.method, self.url))

    @property
    def json(self) -> Any:
        return _json.loads(self.content) if self.content else None


class Exchange:
    """One request and its answer (``truncated``: the body was cut at the transport's cap)."""

    def __init__(self, request: RequestInfo, status: int, headers: httpx.Headers, content: bytes,
                 elapsed: float, op_id: str | None = None, attempts: int = 1, *, truncated: bool = False,
                 reason: str = "", http_version: str = "HTTP/1.1") -> None:
        self.request = request
        self.status = status
        self.headers = headers
        self.content = content
        self.elapsed = elapsed
        self.op_id = op_id
        self.attempts = attempts
        self.truncated = truncated
        self.reason = reason
        self.http_version = http_version
        self._json: Any = _NO_BODY

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    @property
    def json(self) -> Any:
        """The parsed body; a ``TargetError`` naming the requirement if it is not JSON."""
        if self._json is _NO_BODY:
            try:
                if not self.content:
                    raise ValueError("empty body")
                self._json = _json.loads(self.content)
            except (ValueError, UnicodeDecodeError) as exc:
                raise TargetError(failure_message(
                    expected="a JSON body",
                    what=f"the body is not JSON ({exc.__class__.__name__}: {shorten(str(exc), 120)})",
                    ex=self, show_body=True)) from None
        return self._json

    def __repr__(self) -> str:
        return (f"Exchange({self.request.method} {_redact.redact(self.request.url)} -> {self.status}, "
                f"x-request-id={self.request_id})")


@dataclass
class _Read:
    """What one attempt got back: the answer so far, or the error that ended it."""

    status: int | None = None
    headers: httpx.Headers = field(default_factory=httpx.Headers)
    body: bytes = b""
    truncated: bool = False
    error: str | None = None
    unreachable: bool = False
    reason: str = ""
    http_version: str = "HTTP/1.1"


class Transport:
    """Sends requests to one target's host: guarded, paced, deadlined, capped, recorded."""

    def __init__(self, target: Any, *, run: RunContext | None = None, timeout: float | None = None, max_body: int = MAX_BODY,
                 sleep: Callable[[float], None] = time.sleep, http: httpx.BaseTransport | None = None) -> None:
        self.base_url = target.base_url.rstrip("/")
        self.host = urlsplit(self.base_url).netloc.lower()
        self.timeout = float(timeout if timeout is not None else getattr(target, "request_timeout", 10.0))
        self.max_body = max_body
        self.run = run if run is not None else RunContext()
        self._sleep = sleep
        self._http = httpx.Client(transport=http or DeadlineTransport(), follow_redirects=False, trust_env=False,
                                  timeout=httpx.Timeout(self.timeout), headers={"user-agent": "payconform"})

    @property
    def pacer(self) -> Any:
        return self.run.pacer

    @property
    def redactor(self) -> _redact.Redactor:
        return self.run.redactor

    def url(self, path: str) -> str:
        """``path`` relative to the base URL, or an absolute URL on the target's host (else ``SafetyError``)."""
        if path.startswith(("http://", "https://")):
            url = path
        else:
            url = self.base_url + ("/" + path.lstrip("/") if path else "")
        check_host(url, self.host)
        return url

    def close(self) -> None:
        self._http.close()

    def send(self, method: str, url: str, *, headers: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
             content: bytes = b"", params: Any = None, timeout: float | None = None, op: Mapping | None = None,
             op_id: str | None = None, retries: int = MAX_429_RETRIES, allow_live_refusal: bool = False,
             signer: Any = None) -> Exchange:
        """Send one request (``url`` from ``url()``); a 429 is resent after ``Retry-After`` up to ``retries``
        times. ``op`` is the operation's profile entry (what the live-key guard reads)."""
        __tracebackhide__ = True  # its arguments hold credentials: a traceback shows the caller's line
        method = method.upper()
        url = self.url(url)
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        # non-ASCII values (tests of header grammars) go out as UTF-8 bytes instead of failing to encode
        sent = httpx.Headers([(k, v if not isinstance(v, str) or v.isascii() else v.encode("utf-8"))
                              for k, v in pairs])
        key = sent.get("x-api-key")
        check_live_key(key, method, url, op, allow_live_refusal)
        _refuse_when_gone(self.run.breaker, method, url)
        attempts = 0
        while True:
            attempts += 1
            pacer, credential = self.pacer, paced_as(key)
            waited = pacer.acquire(credential, method, url)
            _timeouts.credit(waited)  # the run's own pacing: not the target's time
            _accounting.attempt(credential, pacer.route(method, url), exempt=pacer.exempts(credential),
                                paced_seconds=waited)
            try:
                ex = self._attempt(method, url, sent, content, params, timeout, op_id, attempts, signer)
            finally:
                pacer.settle()  # the target counted it by now: its slot frees a window from here
            if ex.status != 429:
                return self.run.observed(ex)
            _accounting.rate_limited()
            if attempts > retries:
                return self.run.observed(ex)
            seconds = retry_after(ex.headers)
            _accounting.waited(seconds)
            pacer.hold(credential, seconds)  # every worker waits it out, not only this one
            self._sleep(seconds)

    def _attempt(self, method: str, url: str, headers: httpx.Headers, body: bytes, params: Any,
                 timeout: float | None, op_id: str | None, attempt: int, signer: Any) -> Exchange:
        __tracebackhide__ = True
        limit = float(timeout) if timeout is not None else self.timeout
        request = self._http.build_request(method, url, content=body or None, params=params, headers=headers,
                                           timeout=httpx.Timeout(limit))
        _sign(request, body, signer)
        info = RequestInfo(method, str(request.url), request.headers, body)
        wall = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        started = time.monotonic()
        with waiting_for(f"the answer to {method} {info.url.removeprefix(self.base_url).split('?')[0] or '/'}"):
            read = self._read(request, limit)
        elapsed = time.monotonic() - started
        request_id = read.headers.get("x-request-id") if read.status is not None else None
        self._record(wall, info, read, request_id, elapsed, op_id, attempt)
        _report_to_breaker(self.run.breaker, read)
        if read.error is not None:
            error = TargetError(failure_message(what=f"target error: {read.error}", request=(method, info.url),
                                                request_id=request_id),
                                unreachable=read.unreachable, status=read.status, headers=read.headers,
                                body=read.body[:TRANSCRIPT_BODY])
            read.body = b""  # this frame lives on in the error's traceback
            raise error
        return Exchange(info, read.status, read.headers, read.body, elapsed, op_id=op_id, attempts=attempt,
                        truncated=read.truncated, reason=read.reason, http_version=read.http_version)

    def _read(self, request: httpx.Request, limit: float) -> _Read:
        """Send and stream the answer in, by the deadline and up to the body cap."""
        read = _Read()
        try:
            with deadline(limit):
                response = self._http.send(request, stream=True)
                try:
                    read.status, read.headers = response.status_code, response.headers
                    read.reason, read.http_version = response.reason_phrase, response.http_version
                    declared = response.headers.get("content-length")
                    if declared and declared.isdigit() and int(declared) > self.max_body:
                        read.truncated = True
                        read.error = (f"the answer declares {int(declared)} bytes (content-length), more than the "
                                      f"{self.max_body}-byte limit; the harness did not read it")
                    else:
                        self._stream_body(response, read)
                finally:
                    response.close()
        except httpx.TimeoutException as exc:
            read.error = (f"no answer within {limit:g}s ({exc.__class__.__name__})" if read.status is None
                          else f"the answer did not finish within {limit:g}s")
            read.unreachable = isinstance(exc, httpx.ConnectTimeout)
        except httpx.ConnectError as exc:
            read.error = f"could not connect to the target ({shorten(str(exc) or exc.__class__.__name__, 200)})"
            read.unreachable = True
        except httpx.RemoteProtocolError as exc:
            read.error = ("the target dropped the connection or answered something that is not HTTP "
                          f"({shorten(str(exc) or exc.__class__.__name__, 200)})")
        except httpx.TransportError as exc:
            read.error = f"transport error ({exc.__class__.__name__}: {shorten(str(exc), 200)})"
        return read

    def _stream_body(self, response: httpx.Response, read: _Read) -> None:
        buf = bytearray()
        for chunk in response.iter_bytes():
            buf += chunk
            if len(buf) > self.max_body:
                del buf[self.max_body:]
                read.truncated = True
                read.error = f"the answer is larger than {self.max_body} bytes; the harness stopped reading"
                break
        read.body = bytes(buf)

    def _record(self, wall: str, info: RequestInfo, read: _Read, request_id: str | None, elapsed: float,
                op_id: str | None, attempt: int) -> None:
        rec = _results.current()
        if rec is None:
            return
        r = self.redactor
        entry = {
            "time": wall,
            "op": op_id,
            "attempt": attempt,
            "method": info.method,
            "url": r.redact(info.url),
            "request_headers": r.headers(info.headers),
            "request_body": r.redact(_truncated(info.content)) if info.content else "",
            "status": read.status,
            "response_headers": r.headers(read.headers) if read.status is not None else {},
            "response_body": r.redact(_truncated(read.body)) if read.body else "",
            "request_id": request_id,
            "elapsed": round(elapsed, 4),
        }
        if read.error:
            entry["error"] = r.redact(read.error)
        rec.add_exchange(entry)


def _refuse_when_gone(breaker: _breaker.Breaker | None, method: str, url: str) -> None:
    """``TargetError`` without sending once the breaker has tripped: the target stopped answering."""
    why = breaker.tripped() if breaker is not None else None
    if why is not None:
        raise TargetError(failure_message(what=f"{_breaker.CAUSE} ({why}); not sent", request=(method, url)),
                          unreachable=True)


def _report_to_breaker(breaker: _breaker.Breaker | None, read: _Read) -> None:
    """An answer (even one cut at the cap) shows the target alive; anything else is a transport failure."""
    if breaker is None:
        return
    if read.error is None or read.truncated:
        breaker.answered()
    else:
        breaker.failed(read.error)


def _sign(request: httpx.Request, body: bytes, signer: Any) -> None:
    """Mode B: the signature headers for exactly what is about to be sent, when the request carries the
    signer's key id and no signature of the caller's (each attempt signs anew, with a fresh nonce)."""
    h = request.headers
    if signer is None or h.get("x-api-key") != signer.key_id or "x-svc-signature" in h or "x-svc-request-id" in h:
        return
    h.update(signer.headers(request.method, request.url.raw_path.decode("ascii"), body, h.get("idempotency-key")))

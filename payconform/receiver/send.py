"""The one way the receiver kit talks HTTP: `send()`.

Every delivery and every `--state-url` read goes through it, so the safety rules hold in one place: only the
hosts the user named are contacted, each request has a total deadline, and at most `MAX_BODY` bytes of an
answer are read (while streaming). At merge it becomes a call of the harness's single transport.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlsplit

import httpx

from ..redact import Redactor

DEADLINE_SECONDS = 5.0
MAX_BODY = 64 * 1024


class SafetyError(RuntimeError):
    """A request to a host the user did not name."""


class Unreachable(RuntimeError):
    """The receiver refused or never completed a connection: no check can run."""


@dataclass(frozen=True)
class Exchange:
    """One request and what came back (`status` None when nothing did; `error` says why)."""

    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    status: int | None
    response_headers: list[tuple[str, str]]
    response_body: bytes
    elapsed: float
    time: str
    error: str | None = None

    @property
    def accepted(self) -> bool:
        """Any 2xx (Events > Delivery and retries, rule 1)."""
        return self.status is not None and 200 <= self.status < 300

    def outcome(self) -> str:
        """`METHOD URL -> status` (or the transport error), for failure messages."""
        return f"{self.method} {self.url} -> {self.status if self.status is not None else self.error}"

    def entry(self, redactor: Redactor) -> dict:
        """The redacted transcript entry of results.json (schema `exchange`)."""
        out = {
            "time": self.time,
            "method": self.method,
            "url": redactor.redact(self.url),
            "request_headers": redactor.headers(self.request_headers),
            "request_body": redactor.redact(self.request_body),
            "status": self.status,
            "response_headers": redactor.headers(self.response_headers),
            "response_body": redactor.redact(self.response_body),
            "elapsed": round(self.elapsed, 4),
        }
        if self.error:
            out["error"] = redactor.redact(self.error)
        return out


def host_of(url: str) -> str:
    """`host[:port]` of a URL, lowercased: the unit of the allowed-hosts rule."""
    return urlsplit(url).netloc.lower()


def send(client: httpx.Client, allowed_hosts: frozenset[str], method: str, url: str, *,
         headers: list[tuple[str, str]] = (), body: bytes = b"", deadline: float = DEADLINE_SECONDS) -> Exchange:
    """Send one request; never raises for what the other side did (that is in the Exchange).

    Raises `SafetyError` for a host outside `allowed_hosts`, `Unreachable` when no connection could be made.
    """
    if host_of(url) not in allowed_hosts:
        raise SafetyError(f"refusing to contact {host_of(url)!r}: only {sorted(allowed_hosts)} were given")
    wall = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    started = time.monotonic()
    status, answer_headers, buf, error = None, [], bytearray(), None
    request = client.build_request(method, url, headers=list(headers), content=body or None,
                                   timeout=httpx.Timeout(deadline))
    try:
        resp = client.send(request, stream=True)
        try:
            status, answer_headers = resp.status_code, list(resp.headers.items())
            for chunk in resp.iter_bytes():
                buf += chunk[: MAX_BODY - len(buf)]
                if len(buf) >= MAX_BODY:
                    error = f"answer longer than {MAX_BODY} bytes: stopped reading"
                    break
                if time.monotonic() - started > deadline:
                    error = f"answer not finished within {deadline:g}s: stopped reading"
                    break
        finally:
            resp.close()
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise Unreachable(f"cannot connect to {host_of(url)}: {exc or exc.__class__.__name__}") from None
    except httpx.TimeoutException as exc:
        error = f"no answer within {deadline:g}s ({exc.__class__.__name__})"
    except httpx.TransportError as exc:
        error = f"transport error ({exc.__class__.__name__}: {exc})"
    return Exchange(method, url, list(request.headers.items()), body, status, answer_headers, bytes(buf),
                    time.monotonic() - started, wall, error)

"""The receiver kit's way out: the harness's one transport (``payconform.transport.sender``), one per host named.

Every delivery and every ``--state-url`` read goes through it, so the safety rules of a run hold here too:
only the hosts the user named are contacted, each request has a total deadline, at most ``MAX_BODY`` bytes
of an answer are read (while streaming), and transcripts are redacted. A receiver's refusal is its answer,
not an error: ``send`` reports what came back, and raises only for a host never named or never reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from types import SimpleNamespace
from urllib.parse import urlsplit

from ..redact import Redactor
from ..context import RunContext
from ..transport.sender import SafetyError, TargetError, Transport

DEADLINE_SECONDS = 5.0
MAX_BODY = 64 * 1024

__all__ = ["DEADLINE_SECONDS", "MAX_BODY", "Exchange", "SafetyError", "Sender", "Unreachable", "host_of"]


class Unreachable(RuntimeError):
    """The receiver refused or never completed a connection: no check can run."""


@dataclass(frozen=True)
class Exchange:
    """One request and what came back (``status`` None when nothing did; ``error`` says why)."""

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
        """``METHOD URL -> status`` (or the transport error), for failure messages."""
        return f"{self.method} {self.url} -> {self.status if self.status is not None else self.error}"

    def entry(self, redactor: Redactor) -> dict:
        """The redacted transcript entry of results.json (schema ``exchange``)."""
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
    """``host[:port]`` of a URL, lowercased: the unit of the allowed-hosts rule."""
    return urlsplit(url).netloc.lower()


def _first_line(exc: TargetError) -> str:
    return next((ln.removeprefix("what happened: target error: ") for ln in str(exc).splitlines()
                 if "target error" in ln), str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__)


class Sender:
    """A transport for each host the user named (the delivery URL's, the state URL's)."""

    def __init__(self, urls: list[str], redactor: Redactor, *, deadline: float = DEADLINE_SECONDS,
                 max_body: int = MAX_BODY) -> None:
        self.transports: dict[str, Transport] = {}
        for url in urls:
            parts = urlsplit(url)
            root = SimpleNamespace(base_url=f"{parts.scheme}://{parts.netloc}", request_timeout=deadline)
            self.transports.setdefault(host_of(url), Transport(root, run=RunContext(redactor=redactor),
                                                               max_body=max_body))

    def close(self) -> None:
        for transport in self.transports.values():
            transport.close()

    def send(self, method: str, url: str, *, headers: list[tuple[str, str]] = (), body: bytes = b"",
             deadline: float | None = None) -> Exchange:
        """Send one request; never raises for what the other side did (that is in the Exchange).

        Raises ``SafetyError`` for a host outside those named, ``Unreachable`` when no connection could be made.
        """
        transport = self.transports.get(host_of(url))
        if transport is None:
            raise SafetyError(f"refusing to contact {host_of(url)!r}: only {sorted(self.transports)} were given")
        wall = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        try:
            ex = transport.send(method, url, headers=list(headers), content=body, timeout=deadline, retries=0)
        except TargetError as exc:
            if exc.unreachable:
                raise Unreachable(f"cannot connect to {host_of(url)}: {_first_line(exc)}") from None
            return Exchange(method, url, list(headers), body, exc.status, list(exc.headers.items()), exc.body,
                            0.0, wall, _first_line(exc))
        return Exchange(method, url, list(ex.request.headers.items()), body, ex.status, list(ex.headers.items()),
                        ex.content, ex.elapsed, wall)

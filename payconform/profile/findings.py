"""What ``payconform profile check`` found: one ``Finding`` per profile entry it could compare.

A finding names the dotted profile entry, says whether the target matches it, what the target showed and,
where the answer tells it, the override (the fragment of the target file's ``profile:``) that fits the
target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..client import Exchange, TargetError

MATCHES, DIFFERS, UNKNOWN = "matches", "differs", "could not tell"


@dataclass
class Finding:
    entry: str
    status: str  # MATCHES, DIFFERS or UNKNOWN
    seen: str
    expected: str | None = None
    override: dict[str, Any] | None = None
    request_id: str | None = None

    def line(self) -> str:
        text = f"{self.status}: {self.entry}: {self.seen}"
        if self.status == DIFFERS and self.expected is not None:
            text += f" (the profile says {self.expected})"
        if self.request_id and self.status != MATCHES:
            text += f" [x-request-id {self.request_id}]"
        return text


@dataclass
class Report:
    """A check's findings, the entries the target does not show, the probes the budget left out, the requests
    sent, and the cause when the target could not be checked at all."""

    findings: list[Finding] = field(default_factory=list)
    untold: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    requests: int = 0
    fatal: str | None = None

    @property
    def differences(self) -> list[Finding]:
        return [f for f in self.findings if f.status == DIFFERS]


def body_of(ex: Exchange) -> Any:
    """The parsed body, or None when it is not JSON."""
    try:
        return ex.json
    except TargetError:
        return None


def error_type(ex: Exchange) -> str | None:
    body = body_of(ex)
    return body.get("type") if isinstance(body, dict) and isinstance(body.get("type"), str) else None


def shown(ex: Exchange) -> str:
    """``404 ROUTE_NOT_FOUND``: the status and the error type of an answer."""
    kind = error_type(ex)
    return f"{ex.status} {kind}" if kind else str(ex.status)

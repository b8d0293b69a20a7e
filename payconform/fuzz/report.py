"""A fuzz failure as an implementer can act on it: the requirement it breaks (with the spec's words), what
the target answered, the ``x-request-id``, the seed, and a curl reproduction with no secret in it."""

from __future__ import annotations

from typing import Any

from schemathesis.errors import FailureGroup

from ..contract import Contract
from ..checks.expect import requirement_line, shorten
from .settings import FuzzSettings
from ..redact import MASK, Redactor
from ..results.repro import API_KEY_HEADER, env_key
from ..checks.rules import Answer

MAX_FAILURE_TEXT = 1500


class SpecViolation(AssertionError):
    """Raised by the suite's custom checks: what the target did, against which requirement."""

    def __init__(self, requirement: str, what: str) -> None:
        super().__init__(f"[{requirement}] {what}")
        self.requirement = requirement
        self.what = what


def curl(case: Any, redactor: Redactor) -> str:
    """A curl command a person can paste: the credential is an environment variable, never the key
    (``payconform.results.repro``)."""
    return env_key(redactor.redact(case.as_curl_command()), ("[Filtered]", MASK))


def describe(case: Any, response: Any, group: FailureGroup, *, settings: FuzzSettings, contract: Contract,
             redactor: Redactor, operation_id: str | None, document: str) -> str:
    """What failed, against which requirement, what the target answered, a reproduction, the x-request-id."""
    own = settings.operation_requirements.get(operation_id or "", [])
    named = [rid for failure in group.exceptions for rid in _requirements_of(failure, settings)] + own
    lines = []
    for rid in dict.fromkeys(named):
        r = contract.requirements.get(rid) or {}
        lines.append(requirement_line(rid, contract.part_title(r.get("part")) if r.get("part") else None,
                                      r.get("section"), r.get("quote")))
    for failure in group.exceptions:
        inner = getattr(failure, "exception", None)
        what = inner.what if isinstance(inner, SpecViolation) else failure.message
        checks = ", ".join(getattr(failure, "checks", ()) or ())
        title = f"{failure.title} ({checks})" if checks else failure.title
        lines.append(f"what happened: {title}" + (f": {shorten(what, MAX_FAILURE_TEXT)}" if what else ""))
    lines.append(f"operation: {case.operation.label} (contract/{document}.openapi.yaml)")
    answered = shorten(response.content.decode("utf-8", "replace"), 300)
    lines.append(f"target answered: {response.status_code} {answered}")
    request_id = Answer.of(response.status_code, response.headers, b"").request_id
    lines.append(f"x-request-id: {request_id or '(none)'}")
    lines.append(f"fuzz seed: {settings.seed} (`payconform run --fuzz-seed {settings.seed}` "
                 "generates the same cases)")
    return "\n".join([redactor.redact("\n".join(lines)),
                      "reproduce (set PAYCONFORM_API_KEY to a test key; use a fresh Idempotency-Key):",
                      "  " + curl(case, redactor)])


def _requirements_of(failure: Any, settings: FuzzSettings) -> list[str]:
    inner = getattr(failure, "exception", None)
    if isinstance(inner, SpecViolation):
        return [inner.requirement]
    return [rid for check in getattr(failure, "checks", ()) or () for rid in settings.check_requirements.get(check, [])]

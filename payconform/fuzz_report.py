"""A fuzz failure as an implementer can act on it: the requirement it breaks (with the spec's words), what
the target answered, the ``x-request-id``, the seed, and a curl reproduction with no secret in it."""

from __future__ import annotations

import shlex
from typing import Any

from schemathesis.errors import FailureGroup

from .contract import Contract
from .expect import requirement_line, shorten
from .fuzz_settings import FuzzSettings
from .redact import MASK, Redactor
from .rules import Answer

API_KEY_HEADER = "x-api-key"
MAX_FAILURE_TEXT = 1500


class SpecViolation(AssertionError):
    """Raised by the suite's custom checks: what the target did, against which requirement."""

    def __init__(self, requirement: str, what: str) -> None:
        super().__init__(f"[{requirement}] {what}")
        self.requirement = requirement
        self.what = what


def curl(case: Any, redactor: Redactor) -> str:
    """A curl command a person can paste: the credential is an environment variable, never the key.

    The header is written ``"x-api-key:""$PAYCONFORM_API_KEY"`` (two quoted strings the shell joins) so
    that the report's redaction, which masks whatever follows ``x-api-key:`` up to a quote, leaves it readable.
    """
    command = redactor.redact(case.as_curl_command())
    for masked in (f"{API_KEY_HEADER}: [Filtered]", f"{API_KEY_HEADER}: {MASK}"):
        command = command.replace(shlex.quote(masked), f'"{API_KEY_HEADER}:""$PAYCONFORM_API_KEY"')
    return command


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

"""Assertions whose failure messages an implementer can act on without reading the test.

Every message starts with the current test's requirements (from its ``req`` marker), then what was
expected, what the target answered and the ``x-request-id``::

    [IDEM-CONFLICT] Endpoints > Common rules: "Same key with a different body: `409 IDEMPOTENCY_KEY_CONFLICT`."
    expected: 409 IDEMPOTENCY_KEY_CONFLICT
    target answered: POST http://127.0.0.1:8123/business/api/v1/... -> 201
    x-request-id: 7f0c...

Messages are passed through the redactor: they never carry a secret.
"""

from __future__ import annotations

from typing import Any, Iterable, NoReturn

from .. import redact as _redact
from ..results import records as _results
from . import rules as _rules
from ..results.repro import curl

MAX_DETAIL = 300
MAX_BODY = 500


class ContractViolation(AssertionError):
    """The target did something the contract does not allow."""


def requirement_line(rid: str, part: Any = None, section: Any = None, quote: Any = None) -> str:
    """``[ID] <part title> > <section>: "<quote>"`` (the part left out when the section starts with it)."""
    if part and section and str(section).startswith(str(part)):
        part = None  # the section already starts with the part's title
    where = " > ".join(str(x) for x in (part, section) if x)
    line = f"[{rid}]" + (f" {where}" if where else "")
    if quote:
        q = " ".join(str(quote).split())
        line += f': "{q}"' if where else f' "{q}"'
    return line


def requirement_lines() -> list[str]:
    """One ``requirement_line`` per requirement of the current test (its ``req`` marker)."""
    rec = _results.current()
    if rec is None or not rec.requirements:
        return []
    infos = {i.get("id"): i for i in rec.requirement_info}
    lines = []
    for rid in rec.requirements:
        info = infos.get(rid) or {}
        lines.append(requirement_line(rid, info.get("part_title") or info.get("part"), info.get("section"),
                                      info.get("quote")))
    return lines


def shorten(text: Any, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (``...`` marks the cut)."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def answered_line(ex) -> str:
    """``target answered: METHOD URL -> status type "detail"`` for an exchange; type and detail only for an
    error body (a recipient's ``type`` is not an error type)."""
    req = ex.request
    line = f"target answered: {req.method} {req.url} -> {ex.status}"
    body = _rules.Answer.of(ex.status, ex.headers, ex.content).body
    if isinstance(body, dict) and (ex.status >= 400 or "requestId" in body):
        if isinstance(body.get("type"), str):
            line += f" {body['type']}"
        if body.get("detail") is not None:
            line += f' "{shorten(body["detail"], MAX_DETAIL)}"'
    return line


def failure_message(
    *,
    expected: str | None = None,
    what: str | None = None,
    ex=None,
    problems: Iterable[str] = (),
    request: tuple[str, str] | None = None,
    request_id: str | None = None,
    show_body: bool = False,
) -> str:
    lines = requirement_lines()
    if expected:
        lines.append(f"expected: {expected}")
    if what:
        lines.append(f"what happened: {what}")
    for p in problems:
        lines.append(f"  - {p}")
    if ex is not None:
        lines.append(answered_line(ex))
        if show_body:
            body_text = ex.text if ex.content else "(empty body)"
            lines.append(f"body: {shorten(body_text, MAX_BODY)}")
        request_id = ex.request_id
        req = ex.request
        lines.append("reproduce (set PAYCONFORM_API_KEY to the test's key): "
                     + curl(req.method, req.url, req.headers.multi_items(), req.content))
    elif request is not None:
        lines.append(f"request: {request[0]} {request[1]}")
    lines.append(f"x-request-id: {request_id or '(none)'}")
    return _redact.default().redact("\n".join(lines))


def fail(what: str, ex=None, *, expected: str | None = None) -> NoReturn:
    """Fail the test: requirement + quote + what happened + the exchange + x-request-id."""
    raise ContractViolation(failure_message(expected=expected, what=what, ex=ex, show_body=ex is not None))


def _fmt_status(status: int | Iterable[int]) -> str:
    if isinstance(status, int):
        return str(status)
    return " or ".join(str(s) for s in sorted(status))


def _status_set(status: int | Iterable[int]) -> set[int]:
    return {status} if isinstance(status, int) else set(status)


def expect_status(ex, status: int | Iterable[int], what: str | None = None):
    """Fail unless the exchange's status is ``status`` (or one of a set). Returns the exchange."""
    if ex.status not in _status_set(status):
        expected = f"HTTP {_fmt_status(status)}" + (f" ({what})" if what else "")
        raise ContractViolation(failure_message(expected=expected, ex=ex, show_body=True))
    return ex


def error_body_problems(ex) -> tuple[Any, list[str]]:
    """The parsed body and the list of ways it is not a spec error body (the ``error_body`` rules)."""
    answer = _rules.Answer.of(ex.status, ex.headers, ex.content)
    return answer.body, [p.what for _, p in _rules.violations(answer, _rules.group("error_body"))]


def expect_error_body(ex, what: str | None = None) -> dict:
    """Fail unless the body is a spec error body (any catalog type). Returns the body."""
    body, problems = error_body_problems(ex)
    if problems:
        expected = "an error body {type, status, detail, requestId}" + (f" ({what})" if what else "")
        raise ContractViolation(failure_message(expected=expected, ex=ex, problems=problems, show_body=True))
    return body


def expect_error(ex, status: int | Iterable[int], type_: str | Iterable[str], what: str | None = None) -> dict:
    """Fail unless the target answered ``status`` with an error body of type ``type_``. Returns the body."""
    types = {type_} if isinstance(type_, str) else set(type_)
    type_text = type_ if isinstance(type_, str) else " or ".join(sorted(types))
    expected = f"{_fmt_status(status)} {type_text}" + (f" ({what})" if what else "")
    if ex.status not in _status_set(status):
        raise ContractViolation(failure_message(expected=expected, ex=ex, show_body=True))
    body, problems = error_body_problems(ex)
    if isinstance(body, dict) and isinstance(body.get("type"), str) and body["type"] not in types:
        problems.insert(0, f"`type` is {body['type']!r}")
    if problems:
        raise ContractViolation(failure_message(expected=expected, ex=ex, problems=problems, show_body=True))
    return body


def expect(condition: Any, what: str, ex=None) -> None:
    """Generic check: fails with requirement + spec quote + ``what`` + the exchange + x-request-id."""
    if not condition:
        raise ContractViolation(failure_message(what=what, ex=ex, show_body=ex is not None))

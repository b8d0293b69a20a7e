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

import json as _json
from typing import Any, Iterable, NoReturn

from . import contract as _contract
from . import redact as _redact
from . import results as _results

MAX_DETAIL = 300
MAX_BODY = 500


class ContractViolation(AssertionError):
    """The target did something the contract does not allow."""


def requirement_lines() -> list[str]:
    rec = _results.current()
    if rec is None or not rec.requirements:
        return []
    infos = {i.get("id"): i for i in rec.requirement_info}
    lines = []
    for rid in rec.requirements:
        info = infos.get(rid) or {}
        part = info.get("part_title") or info.get("part")
        section = info.get("section")
        quote = info.get("quote")
        if part and section and str(section).startswith(str(part)):
            part = None  # the section already starts with the part's title
        where = " > ".join(str(x) for x in (part, section) if x)
        line = f"[{rid}]"
        if where:
            line += f" {where}"
        if quote:
            q = " ".join(str(quote).split())
            line += f': "{q}"' if where else f' "{q}"'
        lines.append(line)
    return lines


def _body_json(ex) -> Any:
    try:
        return _json.loads(ex.content) if ex.content else None
    except (ValueError, UnicodeDecodeError):
        return None


def _short(text: Any, limit: int) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def answered_line(ex) -> str:
    """``target answered: METHOD URL -> status type "detail"`` for an exchange; type and detail only for an
    error body (a recipient's ``type`` is not an error type)."""
    req = ex.request
    line = f"target answered: {req.method} {req.url} -> {ex.status}"
    body = _body_json(ex)
    if isinstance(body, dict) and (ex.status >= 400 or "requestId" in body):
        if isinstance(body.get("type"), str):
            line += f" {body['type']}"
        if body.get("detail") is not None:
            line += f' "{_short(body["detail"], MAX_DETAIL)}"'
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
            lines.append(f"body: {_short(body_text, MAX_BODY)}")
        request_id = ex.request_id
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
    """The parsed body and the list of ways it is not a spec error body."""
    problems: list[str] = []
    body = _body_json(ex)
    if not isinstance(body, dict):
        if body is None:
            problems.append("the body is not JSON" if ex.content else "the body is empty")
        else:
            problems.append(f"the body is JSON {type(body).__name__}, not an object")
        return body, problems
    catalog = _contract.current()
    etype = body.get("type")
    if not isinstance(etype, str):
        problems.append(f"`type` must be a string, got {_json.dumps(etype)}")
    elif catalog is not None and catalog.errors and etype not in catalog.errors:
        problems.append(f"`type` {etype!r} is not an error type of the spec")
    status = body.get("status")
    if isinstance(status, bool) or not isinstance(status, int):
        problems.append(f"`status` must be an integer, got {_json.dumps(status)}")
    elif status != ex.status:
        problems.append(f"`status` is {status} but the HTTP status is {ex.status}")
    if not isinstance(body.get("detail"), str):
        problems.append(f"`detail` must be a string, got {_json.dumps(body.get('detail'))}")
    rid = body.get("requestId")
    if not isinstance(rid, str):
        problems.append(f"`requestId` must be a string, got {_json.dumps(rid)}")
    elif ex.request_id is None:
        problems.append("the response has no x-request-id header to match `requestId`")
    elif rid != ex.request_id:
        problems.append(f"`requestId` {rid!r} differs from the x-request-id header {ex.request_id!r}")
    if "retryable" in body:
        problems.append("the body has a `retryable` field; the spec says there is none")
    return body, problems


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

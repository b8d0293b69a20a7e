"""Custom schemathesis checks: the spec's rules that hold for every answer, run on every fuzzed response.

Registered with ``@schemathesis.check`` when this module is imported (by ``conftest.py``). Each check
raises ``SpecViolation(requirement, what)`` so that the failure names the one requirement it breaks:

- every response carries ``x-request-id`` (Conventions, Request id);
- every failure is the error body: a JSON object (Errors), ``type`` a string from the catalog, ``status`` an
  integer, ``detail`` a string, ``requestId`` present (Resources > Error body); ``status`` equal to the HTTP
  status; ``requestId`` equal to the header; no ``retryable`` member;
- the HTTP status is one the error catalog gives for that ``type`` (contract/catalog/errors.yaml);
- money fields of successful answers are decimal strings (Conventions, Money), the fields being those the
  contract declares as ``DecimalString``;
- a request whose amount is zero or negative is not accepted (Errors: BAD_REQUEST "non-positive amount").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

import schemathesis

from payconform import contract as _contract
from payconform import fuzz
from payconform.fuzz import SpecViolation

DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")

# The requirements the checks of this module and the mapped built-in checks stand for (the fuzz tests' markers).
REQUIREMENTS = (
    "ERRBODY-ALL-FAILURES", "ERRBODY-SHAPE", "ERRBODY-STATUS-MATCHES", "ERRBODY-NO-RETRYABLE",
    "CONV-REQUEST-ID-HEADER", "CONV-REQUEST-ID-BODY", "CONV-MONEY-DECIMAL-STRING",
    "ERR-VALIDATION-ERROR", "ERR-BAD-REQUEST",
)


def _header(response: Any, name: str) -> str | None:
    values = response.headers.get(name) or []
    return values[0] if values else None


def _json(response: Any) -> Any:
    try:
        return json.loads(response.content) if response.content else None
    except (ValueError, UnicodeDecodeError):
        return None


def _error_body(response: Any) -> dict | None:
    """The body of a failure answer when it is a JSON object; None for successes (and non-objects)."""
    if response.status_code < 400:
        return None
    body = _json(response)
    return body if isinstance(body, dict) else None


@schemathesis.check
def payconform_request_id_header(ctx: Any, response: Any, case: Any) -> bool | None:
    if not (_header(response, "x-request-id") or "").strip():
        raise SpecViolation("CONV-REQUEST-ID-HEADER", f"the {response.status_code} answer has no x-request-id header")
    return None


@schemathesis.check
def payconform_failure_is_error_body(ctx: Any, response: Any, case: Any) -> bool | None:
    if response.status_code >= 400 and _error_body(response) is None:
        shown = (response.content or b"")[:120].decode("utf-8", errors="replace")
        raise SpecViolation("ERRBODY-ALL-FAILURES",
                            f"the {response.status_code} answer is not a JSON object (body: {shown!r})")
    return None


@schemathesis.check
def payconform_error_body_shape(ctx: Any, response: Any, case: Any) -> bool | None:
    body = _error_body(response)
    if body is None:
        return None
    problems = []
    etype = body.get("type")
    catalog = _contract.current()
    if not isinstance(etype, str):
        problems.append(f"`type` is {json.dumps(etype)}, not a string")
    elif catalog is not None and catalog.errors and etype not in catalog.errors:
        problems.append(f"`type` {etype!r} is not an error type of the spec")
    status = body.get("status")
    if isinstance(status, bool) or not isinstance(status, int):
        problems.append(f"`status` is {json.dumps(status)}, not an integer")
    if not isinstance(body.get("detail"), str):
        problems.append(f"`detail` is {json.dumps(body.get('detail'))}, not a string")
    if not isinstance(body.get("requestId"), str):
        problems.append(f"`requestId` is {json.dumps(body.get('requestId'))}, not a string")
    if problems:
        raise SpecViolation("ERRBODY-SHAPE", f"the {response.status_code} error body: " + "; ".join(problems))
    return None


@schemathesis.check
def payconform_error_status_matches(ctx: Any, response: Any, case: Any) -> bool | None:
    body = _error_body(response)
    status = body.get("status") if body else None
    if isinstance(status, int) and not isinstance(status, bool) and status != response.status_code:
        raise SpecViolation("ERRBODY-STATUS-MATCHES",
                            f"the error body's `status` is {status} but the HTTP status is {response.status_code}")
    return None


@schemathesis.check
def payconform_error_request_id_matches(ctx: Any, response: Any, case: Any) -> bool | None:
    body = _error_body(response)
    header = _header(response, "x-request-id")
    if body and isinstance(body.get("requestId"), str) and header and body["requestId"] != header:
        raise SpecViolation("CONV-REQUEST-ID-BODY",
                            f"`requestId` {body['requestId']!r} differs from the x-request-id header {header!r}")
    return None


@schemathesis.check
def payconform_error_no_retryable(ctx: Any, response: Any, case: Any) -> bool | None:
    body = _error_body(response)
    if body and "retryable" in body:
        raise SpecViolation("ERRBODY-NO-RETRYABLE", f"the {response.status_code} error body has a `retryable` member")
    return None


@schemathesis.check
def payconform_error_status_in_catalog(ctx: Any, response: Any, case: Any) -> bool | None:
    body = _error_body(response)
    catalog = _contract.current()
    entry = catalog.errors.get(body.get("type")) if (body and catalog and isinstance(body.get("type"), str)) else None
    statuses = (entry or {}).get("statuses") or []
    if statuses and response.status_code not in statuses:
        raise SpecViolation(entry.get("requirement") or "ERRBODY-TYPE-BRANCH",
                            f"{body['type']} was answered with HTTP {response.status_code}; the error table gives "
                            + " or ".join(str(s) for s in statuses))
    return None


def _money_values(value: Any, names: frozenset[str], path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key in names and not isinstance(item, (dict, list)):
                yield where, item
            yield from _money_values(item, names, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _money_values(item, names, f"{path}[{index}]")


@schemathesis.check
def payconform_money_decimal_strings(ctx: Any, response: Any, case: Any) -> bool | None:
    session = fuzz.current()
    if session is None or not 200 <= response.status_code < 300:
        return None
    bad = [f"{where} = {json.dumps(item)}" for where, item in _money_values(_json(response), session.money_fields)
           if item is not None and not (isinstance(item, str) and DECIMAL.match(item))]
    if bad:
        raise SpecViolation("CONV-MONEY-DECIMAL-STRING", "money fields that are not decimal strings: " + ", ".join(bad))
    return None


def _non_positive(value: Any) -> bool:
    if not isinstance(value, str) or not DECIMAL.match(value):
        return False
    try:
        return Decimal(value) <= 0
    except InvalidOperation:
        return False


@schemathesis.check
def payconform_non_positive_amount_refused(ctx: Any, response: Any, case: Any) -> bool | None:
    session = fuzz.current()
    if session is None or not 200 <= response.status_code < 300 or not isinstance(case.body, dict):
        return None
    amounts = session.amount_fields(fuzz.operation_id(case.operation) or "")
    sent = {name: case.body[name] for name in amounts if _non_positive(case.body.get(name))}
    if sent:
        raise SpecViolation("ERR-BAD-REQUEST", f"a non-positive amount was accepted with {response.status_code}: "
                            + ", ".join(f"{k}={v!r}" for k, v in sent.items()))
    return None

"""Four of schemathesis' built-in checks, narrowed to what the spec says (fuzz.yaml turns the built-ins off).

- ``payconform_negative_data_rejection``: an invalid request must be refused, except where the only invalid
  values are ones the spec does not refuse: a non-integer ``limit`` (the routes give range rules only: "1-500,
  default 100, out-of-range clamped"; "1-100, default 50"; ``suites/limits`` accepts 200 for ``limit=abc``)
  and an ``X-Allow-Duplicate`` other than ``true`` ("`X-Allow-Duplicate: true` (the only accepted value)":
  another value is not accepted as leave to pay twice, and may be ignored).
- ``payconform_not_a_server_error``: no 5xx, except a status the contract documents for that operation
  (Errors: "`INTERNAL` | 500 | ... also 503 when card payments are not set up"; createBeneficiary "answers
  include 401, 403, 422, 503"; 500 ``PAYOUT_OUTCOME_UNKNOWN``, 501 ``FUNDING_NOT_APPLICABLE``, ...). The
  error-catalog check still judges the type against its status.
- ``payconform_positive_data_acceptance``: a valid request is accepted or refused with one of fuzz.yaml's
  statuses, or with a status the contract documents for that operation (422 on recipient creation and on
  payout limits - Versioning 5 -, 413 ``HISTORY_TOO_LARGE``, the documented 5xx).
- ``payconform_status_code_conformance``: an answer the contract documents, except the refusal of an API key
  on a dashboard-only operation, whose status is not shown ("All except the two API-key-readable routes are
  dashboard-session only"): 401, 403, 404 ``ROUTE_NOT_FOUND`` or 405 (its own test checks the refusal); and
  except 404 ``ROUTE_NOT_FOUND`` at a path the profile chose (``x-profile-path``: the spec does not show it, and
  the deployment may serve the operation elsewhere; a profile mismatch, told by the operation's own test).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import schemathesis
from jsonschema import Draft202012Validator
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (negative_data_rejection, positive_data_acceptance,
                                               status_code_conformance)

RANGE = "x-range"  # the contract's mark of a `limit` parameter: its range rule, the only rule the spec gives
FREE_HEADERS = frozenset({"x-allow-duplicate"})  # any other value may be ignored
LOCATIONS = {"query": "query", "headers": "header", "path_parameters": "path"}
COERCED = ("integer", "number", "boolean")
DASHBOARD_ONLY = "x-dashboard-only"  # the contract's mark of an operation an API key is refused by rule
KEY_REFUSALS = frozenset({401, 403, 404, 405})
PROFILE_PATH = "x-profile-path"  # the fuzz phase's mark of an operation whose path the profile chose


def documented(case: Any, status: int) -> bool:
    """Whether the contract lists ``status`` (or its class) among the operation's responses."""
    responses = {str(code).upper() for code in (case.operation.definition.raw.get("responses") or {})}
    return str(status) in responses or f"{status // 100}XX" in responses


def _tolerated(parameter: dict[str, Any]) -> bool:
    """An invalid value of this parameter is one the spec does not refuse."""
    if parameter.get("in") == "header":
        return str(parameter.get("name", "")).lower() in FREE_HEADERS
    return parameter.get("in") == "query" and RANGE in parameter


def _valid(value: Any, schema: dict[str, Any]) -> bool:
    """``value`` as sent (text on the wire) meets ``schema``."""
    values = value if isinstance(value, list) else [value]
    if not values:
        return False
    validator = Draft202012Validator(schema)
    for item in values:
        if isinstance(item, str) and schema.get("type") in COERCED:
            try:
                item = json.loads(item)
            except ValueError:
                return False
        if not validator.is_valid(item):
            return False
    return True


def _parameters(case: Any, attribute: str) -> Iterable[dict[str, Any]]:
    return (p.definition for p in getattr(case.operation, attribute))


def invalid_only_where_tolerated(case: Any) -> bool:
    """A negative case whose body is valid and whose every invalid or missing parameter is one the spec does
    not refuse (so the target may answer it as a valid request)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative or _body_negative(meta):
        return False
    tolerated_seen = False
    for attribute in LOCATIONS:
        sent = getattr(case, attribute) or {}
        by_name = {str(k).lower(): v for k, v in sent.items()} if attribute == "headers" else dict(sent)
        for parameter in _parameters(case, attribute):
            name = str(parameter["name"]).lower() if attribute == "headers" else parameter["name"]
            if name not in by_name:
                if parameter.get("required"):
                    return False
                continue
            if _valid(by_name[name], parameter.get("schema") or {}):
                continue
            if not _tolerated(parameter):
                return False
            tolerated_seen = True
    return tolerated_seen


def _body_negative(meta: Any) -> bool:
    return any(str(getattr(location, "value", location)) == "body" and component.mode.is_negative
               for location, component in meta.components.items())


def payconform_negative_data_rejection(ctx: Any, response: Any, case: Any) -> bool | None:
    if invalid_only_where_tolerated(case):
        return None
    return negative_data_rejection(ctx, response, case)


def payconform_not_a_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    if response.status_code >= 500 and documented(case, response.status_code):
        return None
    return not_a_server_error(ctx, response, case)


def payconform_positive_data_acceptance(ctx: Any, response: Any, case: Any) -> bool | None:
    if documented(case, response.status_code):
        return None
    return positive_data_acceptance(ctx, response, case)


def payconform_status_code_conformance(ctx: Any, response: Any, case: Any) -> bool | None:
    if case.operation.definition.raw.get(DASHBOARD_ONLY) and response.status_code in KEY_REFUSALS:
        return None
    if case.operation.definition.raw.get(PROFILE_PATH) and _route_not_found(response):
        return None
    return status_code_conformance(ctx, response, case)


def _route_not_found(response: Any) -> bool:
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return False
    return response.status_code == 404 and isinstance(body, dict) and body.get("type") == "ROUTE_NOT_FOUND"


for _check in (payconform_negative_data_rejection, payconform_not_a_server_error, payconform_positive_data_acceptance,
               payconform_status_code_conformance):
    schemathesis.check(_check)

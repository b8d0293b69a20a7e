"""Conventions, Instants: "ISO 8601; filters require a timezone."

Instants the service returns (every `...At` member of a product, a link with `expiresAt` and the audit
events) are ISO 8601 dates and times of day; a bare date is not an instant.

The instant filters come from the contract (query parameters of format date-time in the payouts OpenAPI
document: balance history `since`, balance transactions and audit events `createdAfter` /
`createdBefore`). A value without an offset is refused with a 400 of the route's type (a field error
naming it; the audit row says only "400", so BAD_REQUEST too); the same instant with `Z` or `+00:00` is
accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status, run_contract

from .._support.answers import leaves, names_field
from .._support.checkout import new_link
from .._support.instants import is_iso8601_date_time
from .._support.lists import SEEDS
from .._support.products import product_body
from .._support.types import Unique

NAIVE = "2024-01-01T00:00:00"


def _resolve(doc: dict, node: dict) -> dict:
    """Follow local `$ref`s (`#/components/parameters/...`)."""
    while "$ref" in node:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def instant_filters() -> list[Any]:
    """(operation id, parameter) for every date-time query parameter of a profile-known operation."""
    contract = run_contract()
    doc = contract.openapi("payouts")
    found = []
    for path_item in (doc.get("paths") or {}).values():
        for op in path_item.values():
            if not isinstance(op, dict) or op.get("operationId") not in contract.profile["operations"]:
                continue
            for param in op.get("parameters") or []:
                param = _resolve(doc, param)
                if param.get("in") == "query" and (param.get("schema") or {}).get("format") == "date-time":
                    found.append(pytest.param(op["operationId"], param["name"],
                                              id=f"{op['operationId']}-{param['name']}"))
    return found


@pytest.mark.breadth
@pytest.mark.req("CONV-INSTANT-TIMEZONE")
@pytest.mark.parametrize(("op_id", "param"), instant_filters())
def test_instant_filter_requires_a_timezone(api: Api, op_id: str, param: str) -> None:
    """`{param}` without an offset: 400 of the route's type, a VALIDATION_ERROR naming it in `errors`; with `Z`
    or `+00:00`: 200."""
    refused = api.op(op_id, params={param: NAIVE})
    types = SEEDS[op_id].refusal_types if op_id in SEEDS else {"VALIDATION_ERROR"}
    body = expect_error(refused, 400, types, f"{param}={NAIVE} has no timezone")
    if body.get("type") == "VALIDATION_ERROR":
        expect(names_field(body.get("errors"), param), f"`errors` does not name `{param}`", refused)
    for offset in ("Z", "+00:00"):
        expect_status(api.op(op_id, params={param: NAIVE + offset}), 200, f"{param}={NAIVE}{offset}")


@pytest.mark.req("CONV-INSTANT-ISO8601")
def test_returned_instants_are_iso8601(api: Api, contract: Contract, unique: Unique) -> None:
    """Every non-null `...At` member of a created product, a link created with `expiresAt` and the audit events
    is an ISO 8601 date and time of day (at least one is checked): extended or basic format, with or without a
    zone designator (the spec requires a timezone of filters only). A bare date (`2026-11-22`) names a day, not
    an instant, and fails."""
    answers: list[Exchange] = [
        api.op("createCheckoutProduct", json=product_body(contract, unique)),
        new_link(api, contract, unique, expiresAt="2099-01-01T00:00:00Z"),
        api.op("listAuditEvents", params={"limit": "5"}),
    ]
    checked = 0
    for ex in answers:
        expect_status(ex, {200, 201}, "an answer carrying instants")
        for path, value in leaves(ex.json):
            if path.rsplit(".", 1)[-1].endswith("At") and value is not None:
                expect(is_iso8601_date_time(value), f"`{path}` is {value!r}, not an ISO 8601 date and time", ex)
                checked += 1
    expect(checked > 0, "none of the answers carried an instant (`...At` member) to check")

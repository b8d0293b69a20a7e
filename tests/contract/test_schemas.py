"""The tolerant response schemas of `suites/_support/schemas.py`: what they accept, and what a failure says."""

from __future__ import annotations

import json

import httpx
import pytest

from payconform.client import Exchange, RequestInfo
from payconform.contract import run_contract
from payconform.checks.expect import ContractViolation
from suites._support import schemas


def _exchange(op_id: str, status: int, body: object) -> Exchange:
    request = RequestInfo("GET", "http://127.0.0.1:1/business/api/v1/x", httpx.Headers(), b"")
    return Exchange(request, status, httpx.Headers({"content-type": "application/json", "x-request-id": "req-42"}),
                    json.dumps(body).encode(), 0.01, op_id=op_id)


def test_openapi_3_0_nullable_and_closed_objects_are_made_tolerant() -> None:
    node = {"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": "string", "nullable": True}, "b": {"$ref": "#/components/schemas/X", "nullable": True},
        "c": {"type": "string", "enum": ["x"], "x-versioning-added": "enum-values"}}}
    out = schemas._tolerant(node, "urn:doc")
    assert "additionalProperties" not in out
    assert out["properties"]["a"]["type"] == ["string", "null"]
    assert out["properties"]["b"] == {"anyOf": [{"$ref": "urn:doc#/components/schemas/X"}, {"type": "null"}]}
    assert "enum" not in out["properties"]["c"]


def test_a_recipient_may_hold_nulls_the_prose_allows_and_added_fields() -> None:
    contract = run_contract()
    _, schema = schemas.response_schema(contract, "getBeneficiary", 200)
    recipient = {"id": "r1", "email": None, "country": None, "extra": {"any": 1},
                 "paymentMethods": [{"id": "m1", "kind": "fiat", "status": "pending", "destinationAccountId": None}]}
    assert schemas.problems(contract, schema, recipient) == []


def test_a_failure_names_the_path_what_was_sent_and_the_request_id() -> None:
    ex = _exchange("getBeneficiary", 200, {"id": "r1", "type": "INDIVIDUAL", "screenedAt": "yesterday"})
    with pytest.raises(ContractViolation) as caught:
        schemas.expect_schema(ex)
    message = str(caught.value)
    assert "at `$.type`" in message and '"INDIVIDUAL"' in message
    assert "at `$.screenedAt`" in message and '"yesterday"' in message
    assert "x-request-id: req-42" in message


def test_an_unshown_answer_is_checked_only_as_the_profile_reads_it() -> None:
    with pytest.raises(LookupError, match="operations.createPayout.response"):
        schemas.expect_schema(_exchange("createPayout", 201, {"payoutId": "p1"}))
    with pytest.raises(ContractViolation, match=r"operations\.createBeneficiary\.response"):
        schemas.expect_schema(_exchange("createBeneficiary", 201, {"name": "no id"}))

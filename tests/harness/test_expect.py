import json

import httpx
import pytest

from payconform import contract as contract_mod
from payconform import redact
from payconform.results import records as results
from payconform.client import Exchange, RequestInfo
from payconform.contract import Contract
from payconform.checks.expect import ContractViolation, expect, expect_error, expect_error_body, expect_status

KEY = "svc_test_" + "a" * 32 + "_" + "B" * 43
URL = "http://127.0.0.1:9/business/api/v1/checkout/organizations/ck1/products"
QUOTE = "Same key with a different body: `409 IDEMPOTENCY_KEY_CONFLICT`."


def exchange(status, body, request_id="rid-123", method="POST"):
    content = json.dumps(body).encode() if not isinstance(body, bytes) else body
    headers = httpx.Headers({"x-request-id": request_id} if request_id else {})
    req = RequestInfo(method, URL, httpx.Headers({"x-api-key": KEY}), b"{}")
    return Exchange(req, status, headers, content, 0.01)


def err(status, type_, rid="rid-123", **extra):
    return {"type": type_, "status": status, "detail": "nope", "requestId": rid, **extra}


@pytest.fixture(autouse=True)
def context():
    rec = results.TestRecord(nodeid="t", requirements=["IDEM-CONFLICT", "CONV-REQUEST-ID"], requirement_info=[
        {"id": "IDEM-CONFLICT", "part_title": "Endpoints", "section": "Common rules", "quote": QUOTE},
        {"id": "CONV-REQUEST-ID", "part_title": "Conventions", "section": "Request id", "quote": "Every error body carries requestId."},
    ])
    token = results.use_record(rec)
    old = contract_mod.current()
    contract_mod.set_current(Contract(errors={"IDEMPOTENCY_KEY_CONFLICT": {"type": "IDEMPOTENCY_KEY_CONFLICT"},
                                              "VALIDATION_ERROR": {"type": "VALIDATION_ERROR"}}))
    yield rec
    contract_mod.set_current(old)
    results.reset_record(token)


def test_expect_status_message():
    ex = exchange(201, {"id": "p1", "leak": KEY})
    with pytest.raises(ContractViolation) as exc:
        expect_status(ex, 409)
    msg = str(exc.value)
    lines = msg.splitlines()
    assert lines[0] == f'[IDEM-CONFLICT] Endpoints > Common rules: "{QUOTE}"'
    assert lines[1].startswith("[CONV-REQUEST-ID] Conventions > Request id:")
    assert "expected: HTTP 409" in msg
    assert f"target answered: POST {URL} -> 201" in msg
    assert "x-request-id: rid-123" in msg
    assert KEY not in msg and "svc_test_****" in msg
    assert expect_status(exchange(200, {}), {200, 202}).status == 200


def test_expect_error_ok_and_wrong_type():
    assert expect_error(exchange(409, err(409, "IDEMPOTENCY_KEY_CONFLICT")), 409, "IDEMPOTENCY_KEY_CONFLICT")["type"]
    with pytest.raises(ContractViolation) as exc:
        expect_error(exchange(409, err(409, "VALIDATION_ERROR")), 409, "IDEMPOTENCY_KEY_CONFLICT")
    msg = str(exc.value)
    assert "expected: 409 IDEMPOTENCY_KEY_CONFLICT" in msg and "`type` is 'VALIDATION_ERROR'" in msg
    assert '-> 409 VALIDATION_ERROR "nope"' in msg
    with pytest.raises(ContractViolation, match="expected: 409 IDEMPOTENCY_KEY_CONFLICT"):
        expect_error(exchange(201, {"id": 1}), 409, "IDEMPOTENCY_KEY_CONFLICT")


@pytest.mark.parametrize("body, problem", [
    ({"type": 5, "status": 400, "detail": "x", "requestId": "rid-123"}, "`type` must be a string"),
    (err(400, "NOT_A_SPEC_TYPE"), "not an error type of the spec"),
    (err(409, "VALIDATION_ERROR"), "`status` is 409 but the HTTP status is 400"),
    ({"type": "VALIDATION_ERROR", "status": "400", "detail": "x", "requestId": "rid-123"}, "`status` must be an integer"),
    ({"type": "VALIDATION_ERROR", "status": 400, "detail": ["x"], "requestId": "rid-123"}, "`detail` must be a string"),
    (err(400, "VALIDATION_ERROR", rid="other"), "differs from the x-request-id header"),
    (err(400, "VALIDATION_ERROR", retryable=False), "`retryable`"),
    ([1, 2], "not an object"),
    (b"<html>", "not JSON"),
])
def test_error_body_problems(body, problem):
    with pytest.raises(ContractViolation) as exc:
        expect_error_body(exchange(400, body))
    assert problem in str(exc.value)


def test_error_body_needs_header():
    with pytest.raises(ContractViolation, match="no x-request-id header"):
        expect_error_body(exchange(400, err(400, "VALIDATION_ERROR"), request_id=None))
    assert expect_error_body(exchange(400, err(400, "VALIDATION_ERROR")))["type"] == "VALIDATION_ERROR"


def test_generic_expect_and_secrets():
    redact.default().add("operator-secret-999")
    ex = exchange(200, {"status": "paid", "note": "operator-secret-999"})
    expect(True, "fine", ex)
    with pytest.raises(ContractViolation) as exc:
        expect(False, f"status was 'paid', not 'pending' (key {KEY})", ex)
    msg = str(exc.value)
    assert "what happened: status was 'paid'" in msg and "[IDEM-CONFLICT]" in msg and "x-request-id: rid-123" in msg
    assert KEY not in msg and "operator-secret-999" not in msg


def test_without_requirements():
    results.use_record(None)
    with pytest.raises(ContractViolation) as exc:
        expect(False, "bad")
    assert str(exc.value).splitlines()[0] == "what happened: bad"

"""Cross-cutting conventions: request ids, error bodies, unknown routes, malformed bodies, rate limits."""

from __future__ import annotations

from payconform.reference.core.operation import Reply

from .helpers import API, PRODUCT, assert_error, operator

RECIPIENTS = "/recipients/{orgId}"


def test_unknown_route_and_method(client, org):
    assert_error(client.get(API + "/nope"), 404, "ROUTE_NOT_FOUND")
    assert_error(client.get("/"), 404, "ROUTE_NOT_FOUND")
    assert_error(org.call("PUT", RECIPIENTS), 404, "ROUTE_NOT_FOUND")
    assert_error(org.call("GET", RECIPIENTS + "/"), 404, "ROUTE_NOT_FOUND")


def test_malformed_and_mistyped_bodies(org):
    body = assert_error(org.call("POST", RECIPIENTS, content=b'{"name": '), 400, "VALIDATION_ERROR")
    assert body["errors"] == [{"field": "body", "reason": "malformed JSON"}]
    assert_error(org.call("POST", RECIPIENTS, content=b"[1, 2]"), 400, "VALIDATION_ERROR")
    assert_error(org.call("POST", RECIPIENTS, content=b'{"name": NaN}'), 400, "VALIDATION_ERROR")
    assert_error(org.call("POST", RECIPIENTS, content=b"[" * 100000), 400, "VALIDATION_ERROR")
    body = assert_error(org.call("POST", RECIPIENTS, json={"name": 5, "country": "usa", "type": "robot"}), 400,
                        "VALIDATION_ERROR")
    assert {e["field"] for e in body["errors"]} == {"name", "email", "country", "type"}


def test_success_carries_request_id_and_json(org):
    r = org.call("GET", RECIPIENTS)
    assert r.status_code == 200 and r.headers["x-request-id"].startswith("req_")
    assert r.headers["content-type"] == "application/json"


def test_unexpected_exception_is_a_500_error_body(ref, org):
    def boom(handler):
        def handler_that_fails(call):
            raise RuntimeError("boom")
        return handler_that_fails

    ref.wrap_handler("createCheckoutProduct", boom)
    r = org.call("POST", "/checkout/organizations/{orgId}/products", json=PRODUCT, idem="k1")
    assert_error(r, 500, "INTERNAL")
    assert "boom" not in r.text and "Traceback" not in r.text
    ref.wrap_handler("createCheckoutProduct", lambda h: lambda call: Reply(201, {"ok": True}))
    assert org.call("POST", "/checkout/organizations/{orgId}/products", json=PRODUCT, idem="k1").status_code == 201


def test_rate_limit_and_authoritative_retry_after(org):
    for _ in range(100):
        assert org.call("GET", RECIPIENTS).status_code == 200
    r = org.call("GET", RECIPIENTS)
    assert_error(r, 429, "RATE_LIMITED")
    retry_after = int(r.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    # Retry-After is the remaining wait rounded up: (retry_after - 1, retry_after] s. Two seconds short of it
    # leaves more than one second, which real time on a loaded machine does not use up between two calls.
    early = max(retry_after - 2, 0)
    operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": early})
    assert org.call("GET", RECIPIENTS).status_code == 429
    operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": retry_after - early})
    assert org.call("GET", RECIPIENTS).status_code == 200


def test_operator_token(client):
    assert client.get("/_operator/health").json() == {"ok": True}
    assert_error(client.post("/_operator/orgs", json={}), 401, "UNAUTHORIZED")
    r = client.post("/_operator/orgs", json={}, headers={"x-operator-token": "wrong"})
    assert_error(r, 401, "UNAUTHORIZED")
    assert_error(operator(client, "PATCH", "/orgs/nope", {"verified": True}), 404, "NOT_FOUND")
    assert_error(operator(client, "POST", "/faults", {"org_id": "x", "operation": "nope", "kind": "delay"}), 400,
                 "VALIDATION_ERROR")


def test_operator_actions_are_audited(org):
    read_only = org.issue(scopes=["read"])
    rows = org.call("GET", "/payments/organizations/{orgId}/audit-events", key=read_only).json()["data"]
    assert [r["action"] for r in rows] == ["api_key.create", "api_key.create"]
    assert all(r["actorUserId"] == "operator" and r["apiKeyPrefix"] is None for r in rows)

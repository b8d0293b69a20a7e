"""Idempotency keys: replay, conflict, 4xx release, in progress, tombstones, the duplicate-body guard."""

from __future__ import annotations

import asyncio

import httpx

from payconform.reference.app import build_app

from .helpers import API, PRODUCT, RECIPIENT, assert_error, new_org, operator, unique

PRODUCTS = "/checkout/organizations/{orgId}/products"
PAYOUTS = "/payments/organizations/{orgId}/payouts"


def test_header_required_and_grammar(org):
    assert_error(org.call("POST", PRODUCTS, json=PRODUCT), 400, "IDEMPOTENCY_KEY_REQUIRED")
    for bad in ("has space", "x" * 256, "key/slash", "ü".encode(), ""):
        assert_error(org.call("POST", PRODUCTS, json=PRODUCT, idem=bad), 400, "IDEMPOTENCY_KEY_INVALID")
    assert org.call("POST", PRODUCTS, json=PRODUCT, idem="A-z_0.9:" + "x" * 247).status_code == 201
    # optional on recipient create: runs without, but a malformed one is still refused
    assert org.call("POST", "/recipients/{orgId}", json=RECIPIENT).status_code == 201
    assert_error(org.call("POST", "/recipients/{orgId}", json=RECIPIENT, idem="bad key"), 400,
                 "IDEMPOTENCY_KEY_INVALID")


def test_replay_returns_the_stored_answer_and_runs_once(org):
    first = org.call("POST", PRODUCTS, json=PRODUCT, idem="k1")
    again = org.call("POST", PRODUCTS, content=b'{"unitAmount": "25.00", "currency":"USD","name":"Widget"}',
                     idem="k1")
    assert first.status_code == again.status_code == 201
    assert first.content == again.content
    assert first.headers["x-request-id"] != again.headers["x-request-id"]
    assert len(org.call("GET", PRODUCTS).json()["data"]) == 1


def test_same_key_other_request_conflicts(org):
    assert org.call("POST", PRODUCTS, json=PRODUCT, idem="k1").status_code == 201
    assert_error(org.call("POST", PRODUCTS, json={**PRODUCT, "name": "Other"}, idem="k1"), 409,
                 "IDEMPOTENCY_KEY_CONFLICT")
    assert_error(org.call("POST", "/recipients/{orgId}", json=RECIPIENT, idem="k1"), 409, "IDEMPOTENCY_KEY_CONFLICT")


def test_a_4xx_releases_the_key(org):
    assert_error(org.call("POST", PRODUCTS, json={**PRODUCT, "unitAmount": "0"}, idem="k1"), 400, "BAD_REQUEST")
    assert org.call("POST", PRODUCTS, json=PRODUCT, idem="k1").status_code == 201


def test_records_expire_into_tombstones(org):
    assert org.call("POST", PRODUCTS, json=PRODUCT, idem="k1").status_code == 201
    operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": 7 * 86400})
    body = assert_error(org.call("POST", PRODUCTS, json=PRODUCT, idem="k1"), 409, "IDEMPOTENCY_KEY_CONFLICT")
    assert "expired" in body["detail"]
    assert len(org.call("GET", PRODUCTS).json()["data"]) == 1


def test_idempotency_unavailable_fault_runs_nothing(org):
    operator(org.client, "POST", "/faults", {"org_id": org.id, "operation": "createCheckoutProduct",
                                             "kind": "idempotency_unavailable", "count": 1})
    assert_error(org.call("POST", PRODUCTS, json=PRODUCT, idem="k1"), 503, "IDEMPOTENCY_UNAVAILABLE")
    assert org.call("GET", PRODUCTS).json()["data"] == []
    assert org.call("POST", PRODUCTS, json=PRODUCT, idem="k1").status_code == 201


def test_identical_request_in_progress(ref, client):
    org = new_org(client)
    operator(client, "POST", "/faults", {"org_id": org.id, "operation": "createCheckoutProduct",
                                         "kind": "delay", "seconds": 0.3, "count": 1})

    async def both() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=build_app(ref))
        async with httpx.AsyncClient(transport=transport, base_url="http://ref") as c:
            url = API + PRODUCTS.replace("{orgId}", org.id)
            headers = {"x-api-key": org.key, "Idempotency-Key": "slow"}
            first = asyncio.create_task(c.post(url, json=PRODUCT, headers=headers))
            await asyncio.sleep(0.1)
            second = await c.post(url, json=PRODUCT, headers=headers)
            other = await c.post(url, json={**PRODUCT, "name": "Else"}, headers=headers)
            return [await first, second, other]

    first, second, other = asyncio.run(both())
    assert first.status_code == 201
    assert_error(second, 409, "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
    assert_error(other, 409, "IDEMPOTENCY_KEY_CONFLICT")


def _payout_setup(org) -> dict:
    assert org.call("POST", "/payments/organizations/{orgId}/sandbox/funding", idem=unique("fund"),
                    json={"amount": "1000.00", "currency": "USD"}).status_code == 200
    recipient = org.call("POST", "/recipients/{orgId}", json=RECIPIENT).json()
    return {"destinationAccountId": recipient["paymentMethods"][0]["destinationAccountId"], "sourceAmount": "10.00",
            "sourceCurrency": "USD", "destinationCurrency": "USD", "reference": unique("ref")}


def test_duplicate_body_guard(org):
    body = _payout_setup(org)
    first = org.call("POST", PAYOUTS, json=body, idem="p1")
    assert first.status_code == 201
    dup = assert_error(org.call("POST", PAYOUTS, json=body, idem="p2"), 409, "DUPLICATE_REQUEST_DETECTED")
    assert dup["originalIdempotencyKey"] == "p1"
    assert dup["originalPayoutId"] == first.json()["payoutId"]
    assert org.call("POST", PAYOUTS, json=body, idem="p1").json() == first.json()
    assert_error(org.call("POST", PAYOUTS, json=body, idem="p3", headers={"X-Allow-Duplicate": "yes"}), 400,
                 "VALIDATION_ERROR")
    again = org.call("POST", PAYOUTS, json=body, idem="p2", headers={"X-Allow-Duplicate": "true"})
    assert again.status_code == 201 and again.json()["payoutId"] != first.json()["payoutId"]
    operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": 15 * 60 + 1})
    assert org.call("POST", PAYOUTS, json=body, idem="p4").status_code == 201

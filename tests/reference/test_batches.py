"""The reference's payout batches: the run on the organization's clock, confirm, cancel and their refusals."""

from __future__ import annotations

from starlette.testclient import TestClient

from payconform.reference.app import build_app
from payconform.reference.reference import Config, Reference

from .helpers import RECIPIENT, Org, assert_error, new_org, operator

P = "/payments/organizations/{orgId}"
BATCHES = P + "/payouts/batches"


def _client() -> TestClient:
    return TestClient(build_app(Reference(Config(operator_token="op-token-for-tests"))), client=("127.0.0.1", 50000))


def _destination(org: Org, account: str) -> str:
    body = {**RECIPIENT, "paymentMethod": {**RECIPIENT["paymentMethod"], "recipientDetails": {
        "accountNumber": account, "routingNumber": "021000021"}}}
    r = org.call("POST", "/recipients/{orgId}", json=body, idem=f"rcp-{account}")
    assert r.status_code == 201, r.text
    return r.json()["paymentMethods"][0]["destinationAccountId"]


def _line(destination: str, reference: str, amount: str = "10.00") -> dict:
    return {"destinationAccountId": destination, "sourceAmount": amount, "sourceCurrency": "USD",
            "destinationCurrency": "USD", "reference": reference}


def _advance(org: Org, seconds: float) -> None:
    assert operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": seconds}).status_code == 200



def test_a_run_from_creation_to_completion():
    with _client() as client:
        org = new_org(client)
        assert org.call("POST", P + "/sandbox/funding", json={"amount": "1000.00", "currency": "USD"},
                        idem="fund").status_code == 200
        good = _destination(org, "11110000")
        lines = [_line(good, "a"), _line("nope", "b"), _line(good, "c", "2000.00")]
        r = org.call("POST", BATCHES, json={"externalReferenceId": "run-1", "items": lines}, idem="b1")
        assert r.status_code == 202, r.text
        batch = r.json()
        assert batch["status"] == "received" and batch["externalReferenceId"] == "run-1"
        path = f"{BATCHES}/{batch['id']}"
        assert_error(org.call("POST", path + "/confirm", idem="c0"), 409, "PAYOUT_BATCH_NOT_CONFIRMABLE")
        _advance(org, 10)
        assert org.call("GET", path).json()["status"] == "validating"
        _advance(org, 10)
        assert org.call("GET", path).json()["status"] == "awaiting_confirmation"
        invalid = org.call("GET", path + "/items", json=None).json()["data"]
        assert [i["status"] for i in invalid] == ["valid", "invalid", "valid"]
        only = org.call("GET", path + "/items?status=invalid").json()["data"]
        assert len(only) == 1 and only[0]["errors"]
        r = org.call("POST", path + "/confirm", idem="c1")
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "completed"
        assert r.json()["counts"] == {"total": 3, "invalid": 1, "created": 1, "createFailed": 1}
        failed = org.call("GET", path + "/items?status=create_failed").json()["data"]
        assert failed[0]["errors"][0]["type"] == "INSUFFICIENT_BALANCE"
        created = org.call("GET", path + "/items?status=created").json()["data"]
        assert org.call("GET", P + f"/orders/{created[0]['payoutId']}").json()["status"] == "pending"
        assert_error(org.call("POST", path + "/cancel", idem="x1"), 409, "PAYOUT_BATCH_NOT_CANCELABLE")
        types = [e["type"] for e in org.call("GET", P + "/events").json()["data"] if e["type"].startswith("payout_b")]
        assert types == ["payout_batch.awaiting_confirmation", "payout_batch.completed"]


def test_refusals_cancel_and_listing():
    with _client() as client:
        org = new_org(client)
        good = _destination(org, "22220000")
        body = {"externalReferenceId": "run-2", "items": [_line(good, "a")]}
        first = org.call("POST", BATCHES, json=body, idem="b1").json()
        dup = org.call("POST", BATCHES, json={**body, "items": [_line(good, "z")]}, idem="b2")
        assert assert_error(dup, 409, "PAYOUT_BATCH_DUPLICATE_REFERENCE")["originalBatchId"] == first["id"]
        assert_error(org.call("POST", BATCHES, json={"externalReferenceId": "x", "items": []}, idem="b3"), 400,
                     "VALIDATION_ERROR")
        # the envelope is refused; a line object that breaks the line's rules becomes an `invalid` item instead
        assert_error(org.call("POST", BATCHES, json={"externalReferenceId": "y", "items": [_line(good, "b"), "line"]},
                              idem="b5"), 400, "VALIDATION_ERROR")
        odd = org.call("POST", BATCHES, json={"externalReferenceId": "w", "items": [{"sourceAmount": -1}]}, idem="b6")
        assert odd.status_code == 202, odd.text
        assert_error(org.call("GET", f"{BATCHES}/nope"), 404, "BATCH_NOT_FOUND")
        assert_error(org.call("GET", f"{BATCHES}/{first['id']}/items?status=odd"), 400, "VALIDATION_ERROR")
        r = org.call("POST", f"{BATCHES}/{first['id']}/cancel", idem="x1")
        assert r.status_code == 200 and r.json()["status"] == "canceled"
        assert_error(org.call("POST", f"{BATCHES}/{first['id']}/confirm", idem="c1"), 409,
                     "PAYOUT_BATCH_NOT_CONFIRMABLE")
        listed = org.call("GET", BATCHES).json()
        assert [b["id"] for b in listed["data"]] == [odd.json()["id"], first["id"]] and "nextCursor" not in listed
        operator(client, "PATCH", f"/orgs/{org.id}", {"features": ["developer"]})
        assert_error(org.call("POST", BATCHES, json={**body, "externalReferenceId": "run-3"}, idem="b4"), 403,
                     "MASS_PAYOUTS_DISABLED")


def test_a_run_over_the_threshold_waits_for_its_approval():
    with _client() as client:
        org = new_org(client)
        good = _destination(org, "33330000")
        body = {"externalReferenceId": "run-4", "items": [_line(good, "a", "3000.00"), _line(good, "b", "3000.00")]}
        batch = org.call("POST", BATCHES, json=body, idem="b1").json()
        _advance(org, 20)
        refused = assert_error(org.call("POST", f"{BATCHES}/{batch['id']}/confirm", idem="c1"), 409,
                               "PAYOUT_BATCH_AWAITING_APPROVAL")
        approval = org.call("GET", P + f"/payouts/approvals/{refused['approvalId']}").json()
        assert approval["kind"] == "batch" and approval["amount"] == "6000.00"
        assert operator(client, "POST", f"/orgs/{org.id}/approvals/{refused['approvalId']}/approve").json()[
            "status"] == "approved"
        r = org.call("POST", f"{BATCHES}/{batch['id']}/confirm", idem="c2")
        assert r.status_code == 200 and r.json()["status"] == "completed"


def test_an_injected_fault_breaks_the_run():
    with _client() as client:
        org = new_org(client)
        good = _destination(org, "44440000")
        batch = org.call("POST", BATCHES, json={"externalReferenceId": "run-5", "items": [_line(good, "a")]},
                         idem="b1").json()
        _advance(org, 20)
        assert operator(client, "POST", "/faults", {"org_id": org.id, "operation": "payoutBatchRun", "kind": "error",
                                                    "type": "INTERNAL"}).status_code == 201
        r = org.call("POST", f"{BATCHES}/{batch['id']}/confirm", idem="c1")
        assert r.status_code == 200 and r.json()["status"] == "failed"
        assert not org.call("GET", P + "/orders?reference=a").json()["data"]

"""Mode B in the reference: signing keys, signed requests, the challenge flow and key rotation."""

from __future__ import annotations

import json
import time

from payconform.signer import Signer, generate_private_key_pem, public_key_pem

from .helpers import API, PRODUCT, assert_error, operator

PRODUCTS = "/checkout/organizations/{orgId}/products"
BALANCE = "/payments/organizations/{orgId}/balance"


def _register(org, **body):
    pem = generate_private_key_pem()
    r = operator(org.client, "POST", f"/orgs/{org.id}/signing-keys",
                 {"mode": "test", "public_key_pem": public_key_pem(pem), **body})
    assert r.status_code == 201, r.text
    return Signer(r.json()["id"], pem)


def _signed(org, signer, method, path, *, body=b"", idem=None, **kw):
    path = API + path.replace("{orgId}", org.id)
    headers = signer.headers(method, path, body, idem, **kw)
    if idem:
        headers["Idempotency-Key"] = idem
    if body:
        headers["content-type"] = "application/json"
    return org.client.request(method, path, content=body or None, headers=headers)


def test_registration_gives_an_akid_and_refuses_private_keys_and_both_kinds(org):
    signer = _register(org)
    assert signer.key_id.startswith("akid_test_")
    private = generate_private_key_pem()
    r = operator(org.client, "POST", f"/orgs/{org.id}/signing-keys", {"public_key_pem": private})
    assert_error(r, 400, "VALIDATION_ERROR")
    r = operator(org.client, "POST", f"/orgs/{org.id}/signing-keys",
                 {"public_key_pem": public_key_pem(private), "stamp_key": "stamp-1"})
    assert_error(r, 400, "VALIDATION_ERROR")
    assert operator(org.client, "POST", f"/orgs/{org.id}/signing-keys", {"stamp_key": "stamp-1"}).status_code == 201


def test_pasted_private_key_of_a_registered_key_is_flagged(org):
    pem = generate_private_key_pem()
    key_id = operator(org.client, "POST", f"/orgs/{org.id}/signing-keys",
                      {"public_key_pem": public_key_pem(pem)}).json()["id"]
    r = operator(org.client, "POST", f"/orgs/{org.id}/signing-keys", {"public_key_pem": pem})
    assert key_id in assert_error(r, 400, "VALIDATION_ERROR")["errors"][0]["reason"]
    rows = org.call("GET", "/payments/organizations/{orgId}/audit-events?action=signing_key.private_key_refused")
    assert [row["resourceId"] for row in rows.json()["data"]] == [key_id]


def test_signed_read_and_write(org):
    signer = _register(org)
    assert _signed(org, signer, "GET", BALANCE + "?x=1").status_code == 200
    body = json.dumps({**PRODUCT, "name": "Café ✓"}, ensure_ascii=False).encode()
    assert _signed(org, signer, "POST", PRODUCTS, body=body, idem="k1").status_code == 201


def test_every_signature_mismatch_gets_one_answer(org):
    signer = _register(org)
    other = Signer(signer.key_id, generate_private_key_pem())
    good = signer.headers("GET", API + BALANCE.replace("{orgId}", org.id), b"", None)
    answers = set()
    for headers in ({**good, "X-Svc-Signature": "not base64!"}, {**good, "X-Svc-Signature": "AAAA"},
                    other.headers("GET", API + BALANCE.replace("{orgId}", org.id), b"", None)):
        r = org.client.get(API + BALANCE.replace("{orgId}", org.id), headers=headers)
        body = assert_error(r, 401, "SIGNATURE_INVALID")
        answers.add((body["detail"], r.status_code))
    assert len(answers) == 1


def test_freshness_and_nonce(org):
    signer = _register(org)
    stale = _signed(org, signer, "GET", BALANCE, timestamp=int(time.time()) - 301)
    assert_error(stale, 401, "SIGNATURE_TIMESTAMP_SKEW")
    assert _signed(org, signer, "GET", BALANCE, nonce="n-1").status_code == 200
    assert_error(_signed(org, signer, "GET", BALANCE, nonce="n-1"), 401, "SIGNATURE_REPLAYED")
    headers = signer.headers("GET", API + BALANCE.replace("{orgId}", org.id), b"", None)
    del headers["X-Svc-Nonce"]
    assert_error(org.client.get(API + BALANCE.replace("{orgId}", org.id), headers=headers), 401, "SIGNATURE_REQUIRED")


def test_unknown_key_id_is_unauthorized(org):
    r = org.client.get(API + BALANCE.replace("{orgId}", org.id), headers={"X-Api-Key": "akid_test_" + "0" * 24})
    assert_error(r, 401, "UNAUTHORIZED")


def test_challenge_flow(ref, org):
    signer = _register(org)
    path = API + PRODUCTS.replace("{orgId}", org.id)
    body = json.dumps(PRODUCT).encode()
    headers = {"X-Api-Key": signer.key_id, "Idempotency-Key": "c1", "content-type": "application/json"}
    r = org.client.post(path, content=body, headers=headers)
    assert r.status_code == 202
    challenge = r.json()
    assert challenge["type"] == "SIGNATURE_CHALLENGE" and challenge["requestId"] == r.headers["x-request-id"]
    answer = {**headers, "X-Svc-Request-Id": challenge["requestId"],
              "X-Svc-Signature": signer.answer_challenge(challenge["payloadToSign"])}
    other = org.client.post(path, content=json.dumps({**PRODUCT, "name": "Other"}).encode(), headers=answer)
    assert_error(other, 401, "SIGNATURE_INVALID")
    assert org.client.post(path, content=body, headers=answer).status_code == 201
    assert_error(org.client.post(path, content=body, headers=answer), 401, "SIGNATURE_REPLAYED")
    late = org.client.post(path, content=body, headers=headers).json()
    ref.clock.advance(org.id, 301)
    answer = {**headers, "X-Svc-Request-Id": late["requestId"],
              "X-Svc-Signature": signer.answer_challenge(late["payloadToSign"])}
    assert_error(org.client.post(path, content=body, headers=answer), 401, "SIGNATURE_TIMESTAMP_SKEW")


def test_rotation_overlap_and_expired_keys(ref, org):
    key = operator(org.client, "POST", f"/orgs/{org.id}/keys", {"mode": "test"}).json()
    r = operator(org.client, "POST", f"/orgs/{org.id}/keys/{key['id']}/rotate")
    assert r.status_code == 201, r.text
    successor = r.json()
    ref.clock.advance(org.id, 23 * 3600)
    assert org.call("GET", BALANCE, key=key["key"]).status_code == 200
    ref.clock.advance(org.id, 2 * 3600)
    assert_error(org.call("GET", BALANCE, key=key["key"]), 401, "KEY_EXPIRED")
    assert org.call("GET", BALANCE, key=successor["key"]).status_code == 200
    assert_error(operator(org.client, "POST", f"/orgs/{org.id}/keys/{key['id']}/rotate"), 401, "KEY_EXPIRED")


def test_signing_key_rotation(ref, org):
    old = _register(org)
    new_pem = generate_private_key_pem()
    r = operator(org.client, "POST", f"/orgs/{org.id}/signing-keys/{old.key_id}/rotate",
                 {"public_key_pem": public_key_pem(new_pem)})
    assert r.status_code == 201, r.text
    new = Signer(r.json()["id"], new_pem)
    assert _signed(org, old, "GET", BALANCE).status_code == 200
    assert _signed(org, new, "GET", BALANCE).status_code == 200
    ref.clock.advance(org.id, 25 * 3600)
    later = int(time.time()) + 25 * 3600
    assert_error(_signed(org, old, "GET", BALANCE, timestamp=later), 401, "KEY_EXPIRED")
    assert _signed(org, new, "GET", BALANCE, timestamp=later).status_code == 200


def test_api_key_cannot_rotate(org):
    r = org.call("POST", "/organizations/{orgId}/api-keys/key_x/rotate")
    assert_error(r, 403, "FORBIDDEN")

"""API keys: format, indistinguishable 401s, expiry, pinning, and the 403s in order."""

from __future__ import annotations

from payconform.reference.authentication.auth import KEY_FORMAT

from .helpers import PRODUCT, RECIPIENT, assert_error, new_org, operator, unique


def test_issued_keys_have_the_spec_format(org):
    match = KEY_FORMAT.match(org.key)
    assert match and len(org.key.split("_", 3)[3]) == 43


def test_every_bad_key_gets_the_same_401(org):
    revoked = operator(org.client, "POST", f"/orgs/{org.id}/keys", {"mode": "test"}).json()
    assert operator(org.client, "POST", f"/orgs/{org.id}/keys/{revoked['id']}/revoke").status_code == 200
    candidates = {
        "missing": None,
        "malformed": "not-a-key",
        "unknown": "svc_test_" + "0" * 32 + "_" + "A" * 43,
        "revoked": revoked["key"],
        "incomplete": org.key[: len("svc_test_") + 32],
        "wrong secret": org.key[:-1] + ("A" if org.key[-1] != "A" else "B"),
        "wrong mode prefix": org.key.replace("svc_test_", "svc_live_", 1),
    }
    bodies = set()
    for key in candidates.values():
        r = org.call("GET", "/recipients/{orgId}", key=key)
        assert_error(r, 401, "UNAUTHORIZED")
        bodies.add(r.content.replace(r.headers["x-request-id"].encode(), b""))
    assert len(bodies) == 1, bodies


def test_expired_and_pinned_keys(org):
    expired = org.issue(expires_at="2020-01-01T00:00:00Z")
    assert_error(org.call("GET", "/recipients/{orgId}", key=expired), 401, "KEY_EXPIRED")
    pinned = org.issue(pinned_ips=["192.0.2.10"])
    assert_error(org.call("GET", "/recipients/{orgId}", key=pinned), 401, "KEY_IP_NOT_ALLOWED")
    local = org.issue(pinned_ips=["127.0.0.0/8"])
    assert org.call("GET", "/recipients/{orgId}", key=local).status_code == 200


def test_key_expires_on_the_org_clock(org):
    short = org.issue(expires_in_days=1)
    assert org.call("GET", "/recipients/{orgId}", key=short).status_code == 200
    operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": 86401})
    assert_error(org.call("GET", "/recipients/{orgId}", key=short), 401, "KEY_EXPIRED")


def test_wrong_and_unknown_org_are_forbidden(client, org):
    other = new_org(client)
    assert_error(org.call("GET", f"/recipients/{other.id}"), 403, "FORBIDDEN")
    assert_error(org.call("GET", "/recipients/cnosuchorganization0000000"), 403, "FORBIDDEN")


def test_suspended_org_is_blocked(client, org):
    operator(client, "PATCH", f"/orgs/{org.id}", {"suspended": True})
    assert_error(org.call("GET", "/recipients/{orgId}"), 403, "ACCOUNT_BLOCKED")


def test_read_only_key(org):
    read_only = org.issue(scopes=["read"])
    assert org.call("GET", "/recipients/{orgId}", key=read_only).status_code == 200
    assert_error(org.call("POST", "/recipients/{orgId}", json=RECIPIENT, key=read_only), 403, "INSUFFICIENT_SCOPE")
    created = org.call("POST", "/recipients/{orgId}", json=RECIPIENT).json()
    details = f"/recipients/{{orgId}}/{created['id']}/methods/{created['paymentMethods'][0]['id']}/details"
    assert_error(org.call("GET", details, key=read_only), 403, "INSUFFICIENT_SCOPE")
    full = org.call("GET", details)
    assert full.status_code == 200 and full.json()["recipientDetails"]["routingNumber"] == "021000021"


def test_live_key_cannot_write_before_verification(client):
    org = new_org(client, verified=False)
    live = org.issue(mode="live")
    assert org.call("GET", "/recipients/{orgId}", key=live).status_code == 200
    assert_error(org.call("POST", "/recipients/{orgId}", json=RECIPIENT, key=live), 403, "LIVE_KEY_ORG_NOT_APPROVED")


def test_live_key_sees_live_data_only(client, org):
    live = org.issue(mode="live")
    assert org.call("POST", "/recipients/{orgId}", json=RECIPIENT).status_code == 201
    assert org.call("GET", "/recipients/{orgId}", key=live).json()["data"] == []
    r = org.call("POST", "/payments/organizations/{orgId}/sandbox/funding", key=live, idem=unique("f"),
                 json={"amount": "10.00", "currency": "USD"})
    assert_error(r, 400, "LIVE_MODE_UNSUPPORTED")


def test_checkout_refused_until_payments_enabled(client):
    org = new_org(client, payments_enabled=False)
    body = assert_error(org.call("POST", "/checkout/organizations/{orgId}/products", json=PRODUCT, idem="k"),
                        403, "FORBIDDEN")
    assert "verification" in body["detail"]
    assert org.call("GET", "/recipients/{orgId}").status_code == 200


def test_scope_pairing_and_expiry_limits(org):
    for body in ({"scopes": ["read", "refunds"]}, {"scopes": ["read", "crypto_payouts"]},
                 {"expires_in_days": 800}, {"expires_at": "2099-01-01T00:00:00Z"}, {"scopes": []}):
        r = operator(org.client, "POST", f"/orgs/{org.id}/keys", {"mode": "test", **body})
        assert_error(r, 400, "VALIDATION_ERROR")
    ok = operator(org.client, "POST", f"/orgs/{org.id}/keys", {"scopes": ["read", "write", "refunds"]})
    assert ok.status_code == 201

"""Helpers for the reference server's own unit tests: operator calls, organizations, error assertions."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from starlette.testclient import TestClient

OPERATOR_TOKEN = "op-token-for-tests"
API = "/business/api/v1"
_keys = itertools.count()


def operator(client: TestClient, method: str, path: str, body: dict[str, Any] | None = None):
    return client.request(method, "/_operator" + path, json=body, headers={"x-operator-token": OPERATOR_TOKEN})


@dataclass
class Org:
    """An organization with a read+write test key; `call` sends an API request with it."""

    client: TestClient
    id: str
    key: str

    def issue(self, **body: Any) -> str:
        r = operator(self.client, "POST", f"/orgs/{self.id}/keys", {"mode": "test", **body})
        assert r.status_code == 201, r.text
        return r.json()["key"]

    def call(self, method: str, path: str, *, json: Any = None, key: str | None = "default",
             idem: str | None = None, headers: dict[str, str] | None = None, content: bytes | None = None):
        h = dict(headers or {})
        if key is not None:
            h["x-api-key"] = self.key if key == "default" else key
        if idem is not None:
            h["Idempotency-Key"] = idem
        return self.client.request(method, API + path.replace("{orgId}", self.id), json=json, content=content,
                                   headers=h)


def new_org(client: TestClient, **flags: Any) -> Org:
    r = operator(client, "POST", "/orgs", flags)
    assert r.status_code == 201, r.text
    org_id = r.json()["orgId"]
    r = operator(client, "POST", f"/orgs/{org_id}/keys", {"mode": "test", "scopes": ["read", "write"]})
    assert r.status_code == 201, r.text
    return Org(client, org_id, r.json()["key"])


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_keys)}"


PRODUCT = {"name": "Widget", "currency": "USD", "unitAmount": "25.00"}
RECIPIENT = {
    "name": "Ada Lovelace", "email": "ada@example.com", "phone": "+15550100", "country": "US", "type": "individual",
    "paymentMethod": {"kind": "fiat", "currency": "USD",
                      "recipientDetails": {"accountNumber": "123456789", "routingNumber": "021000021"}},
}


def assert_error(response, status: int, type_: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == type_, body
    assert body["status"] == status
    assert isinstance(body["detail"], str)
    assert body["requestId"] == response.headers["x-request-id"]
    assert "retryable" not in body
    assert response.headers["content-type"] == "application/json"
    return body

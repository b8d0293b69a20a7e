"""Authentication > Mode A rule 2: "Nothing is signed in this mode. The key is the whole credential": a write
that carries the key in `x-api-key` and no signature, timestamp or nonce header is served, and what it
made reads back.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_status

from .._support.products import product_body
from .._support.profile import success

SIGNED_MODE_HEADERS = ("x-svc-signature", "x-svc-timestamp", "x-svc-nonce", "x-svc-request-id")


@pytest.mark.req("AUTH-NOTHING-SIGNED")
@pytest.mark.needs("api_key")
def test_unsigned_write_with_the_key_alone(api: Api, contract: Contract, unique) -> None:
    """A product create with the key alone (no Mode B header): created, and readable by its id."""
    ex = api.op("createCheckoutProduct", json=product_body(contract, unique))
    sent = sorted(name for name in SIGNED_MODE_HEADERS if name in ex.request.headers)
    expect(not sent and "x-api-key" in ex.request.headers, f"the request carried {sent}; this test sends the key"
           " alone", ex)
    expect_status(ex, success(contract, "createCheckoutProduct"), "a product create with the key alone")
    expect_status(api.op("getCheckoutProduct", productId=ex.json.get("id")), 200,
                  "reading back the product made by an unsigned request")

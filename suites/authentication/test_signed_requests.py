"""Authentication > Mode B rules 1-3: signed requests with the registered key pair are served.

Reads and writes signed by the harness (`payconform.signer`) over the exact bytes and path sent: a write
whose body has non-ASCII bytes, a read whose query string needs percent-encoding, and the high-S twin of a
valid signature (the spec does not require low S, so a server must accept either half).
"""

from __future__ import annotations

import re

import pytest
from cryptography.hazmat.primitives.asymmetric import utils

from payconform.suite import P256_ORDER, Api, Contract, Target, expect, expect_status

from .._support.signing import b64, product_create, sign_lines

KEY_ID = re.compile(r"^akid_(live|test)_\S+$")


@pytest.mark.req("SIGN-P256-KEYPAIR", "SIGN-HEADERS")
@pytest.mark.needs("signing_key")
def test_signed_read_is_served(signed_api: Api) -> None:
    """GET balance signed with the registered key: 200."""
    expect_status(signed_api.op("getBalance"), 200, "a signed read with the registered key")


@pytest.mark.req("SIGN-P256-KEYPAIR", "SIGN-EXACT-BYTES", "SIGN-STRING")
@pytest.mark.needs("signing_key")
def test_signed_write_with_non_ascii_body_is_served(signed_api: Api, contract: Contract, unique) -> None:
    """A product create whose name is non-ASCII (multi-byte UTF-8 in the signed body, an idempotency key on
    line 5): 201, and the product carries the name byte for byte."""
    name = f"Café Ünïcødé ✓ 東京 {unique('prod')}"
    ex = signed_api.op("createCheckoutProduct", json={**contract.operation("createCheckoutProduct")["body"],
                                                       "name": name})
    expect_status(ex, 201, "a signed write whose body has non-ASCII bytes")
    expect(isinstance(ex.json, dict) and ex.json.get("name") == name,
           f"the created product's name is not {name!r}", ex)


@pytest.mark.req("SIGN-STRING", "SIGN-P256-KEYPAIR")
@pytest.mark.needs("signing_key")
def test_signed_read_with_query_string_is_served(signed_api: Api) -> None:
    """GET audit events with a query string (percent-encoded as sent, signed as part of the path): 200."""
    ex = signed_api.op("listAuditEvents", params={"limit": "5", "action": "payconform check é/ü"})
    expect("?" in ex.request.url, "the harness sent no query string", ex)
    expect_status(ex, 200, "a signed read whose path has a query string")


@pytest.mark.req("SIGN-KEY-ID-FORMAT")
@pytest.mark.needs("signing_key")
def test_key_id_format(target: Target) -> None:
    """The key id registered for the target looks like `akid_test_...` (or `akid_live_...`)."""
    key_id = str(target.credential("signing_key_id"))
    expect(KEY_ID.match(key_id), f"the signing key id {key_id[:12]}... does not look like akid_test_... or "
                                 "akid_live_...")


@pytest.mark.req("SIGN-HEADERS", "SIGN-P256-KEYPAIR")
@pytest.mark.needs("signing_key")
def test_high_s_twin_is_accepted(signed_api: Api, contract: Contract, unique) -> None:
    """(r, n - s) is as valid an ECDSA signature as (r, s); the spec does not require low S. A write signed with
    the high-S twin is served (201)."""
    _, req = product_create(signed_api, contract, unique)
    r, s = utils.decode_dss_signature(sign_lines(signed_api.signer, req.lines(signed_api.signer.key_id)))
    high_s = utils.encode_dss_signature(r, max(s, P256_ORDER - s))
    ex = req.send(signed_api, req.headers(signed_api.signer.key_id, b64(high_s)))
    expect_status(ex, 201, "a write signed with the high-S twin of a valid signature")

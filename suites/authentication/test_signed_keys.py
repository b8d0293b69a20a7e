"""Authentication > Mode B rules 1, 6 and 8: what a signing key registers, and the key rules that apply to a
signed request as in Mode A (expiry, pinning, read-only scope).

Registering a key is a dashboard action: through the operator adapter, on fresh organizations.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from payconform.suite import (
    Contract,
    OperatorError,
    expect_error,
    expect_status,
    fail,
    generate_private_key_pem,
    public_key_pem,
)

from .._support.signing import (
    expect_not_run,
    expect_operator_refuses,
    expect_signature_error,
    product_create,
    send_signed,
)

PINNED_ADDRESS = "192.0.2.10"  # TEST-NET-1: never the suite's own address


@pytest.mark.req("SIGN-PRIVATE-KEY-REFUSED")
@pytest.mark.needs("operator")
def test_pasted_private_key_is_refused(operator, fresh_org) -> None:
    """Registering a PEM private key where the public half belongs is refused."""
    org = fresh_org()
    private_key = generate_private_key_pem()
    expect_operator_refuses(lambda: operator.register_signing_key(org.org_id, public_key_pem=private_key),
                            "a private key registered as a signing key")
    operator.register_signing_key(org.org_id, public_key_pem=public_key_pem(private_key))  # its public half is fine


@pytest.mark.req("SIGN-P256-KEYPAIR")
@pytest.mark.needs("operator")
def test_public_key_with_crlf_line_ends_is_registered(signing_keys) -> None:
    """"the public half (any P-256 SPKI public key) is registered": the same SPKI PEM with CRLF line ends (a
    line end RFC 7468 allows, as it allows LF) registers, and a read signed with its private half is served."""
    try:
        org = signing_keys.register(layout=lambda pem: pem.replace("\n", "\r\n"))
    except OperatorError as exc:
        fail(f"SIGN-P256-KEYPAIR: \"the public half (any P-256 SPKI public key) is registered\", but the operator "
             f"refused a P-256 SPKI public key whose PEM lines end in CRLF: {exc}")
    expect_status(org.api.op("getBalance"), 200, "a read signed with a key registered as a PEM with CRLF line ends")


@pytest.mark.req("SIGN-PEM-OR-STAMP")
@pytest.mark.needs("operator")
def test_pem_and_stamp_key_together_are_refused(operator, fresh_org) -> None:
    """A key registers a PEM public key or a stamp key, never both: both at once are refused (the stamp
    key's format is not shown; any string stands for it)."""
    org = fresh_org()
    pem = public_key_pem(generate_private_key_pem())
    expect_operator_refuses(
        lambda: operator.register_signing_key(org.org_id, public_key_pem=pem, stamp_key="payconform-stamp"),
        "a key registering a PEM public key and a stamp key together")


@pytest.mark.req("SIGN-PEM-OR-STAMP")
@pytest.mark.needs("operator")
def test_key_without_pem_or_stamp_is_refused(operator, fresh_org) -> None:
    """A key registers either a PEM public key or a stamp key: a key registering neither is refused."""
    org = fresh_org()
    expect_operator_refuses(lambda: operator.register_signing_key(org.org_id),
                            "a key registering neither a PEM public key nor a stamp key")


@pytest.mark.req("SIGN-ERROR-TYPES", "ERR-KEY-EXPIRED")
@pytest.mark.needs("operator")
def test_expired_signing_key(signing_keys, contract: Contract, unique) -> None:
    """A signing key registered with an expiry in the past: a correctly signed create is refused with KEY_EXPIRED
    (any 4xx: "HTTP statuses of these other than the 202 challenge: not shown") and creates nothing."""
    past = (datetime.now(timezone.utc) - timedelta(days=1)).isoformat(timespec="seconds").replace("+00:00", "Z")
    org = signing_keys.register(expires_at=past)
    body, req = product_create(org.api, contract, unique)
    expect_signature_error(send_signed(org.api, org.signer, req), "KEY_EXPIRED", "a request signed with an expired key")
    expect_not_run(org.org.api, body, "a request signed with an expired key")


@pytest.mark.req("SIGN-ERROR-TYPES", "ERR-KEY-IP-NOT-ALLOWED")
@pytest.mark.needs("operator")
def test_pinned_signing_key(signing_keys, contract: Contract, unique) -> None:
    """A signing key pinned to an address the suite never uses: a correctly signed create is refused with
    KEY_IP_NOT_ALLOWED (any 4xx, as for every Mode B error but the challenge) and creates nothing."""
    org = signing_keys.register(pinned_ips=[PINNED_ADDRESS])
    body, req = product_create(org.api, contract, unique)
    expect_signature_error(send_signed(org.api, org.signer, req), "KEY_IP_NOT_ALLOWED",
                           "a request signed with a key pinned to another address")
    expect_not_run(org.org.api, body, "a request signed with a pinned key from elsewhere")


@pytest.mark.req("SIGN-READ-ONLY-KEYS")
@pytest.mark.needs("operator")
def test_read_only_signing_key(signing_keys, contract: Contract, unique) -> None:
    """A signing key with scope read only: a signed read is served, a signed create answers 403
    INSUFFICIENT_SCOPE and creates nothing."""
    org = signing_keys.register(scopes=["read"])
    expect_status(org.api.op("getBalance"), 200, "a read signed with a read-only key")
    body, req = product_create(org.api, contract, unique)
    expect_error(send_signed(org.api, org.signer, req), 403, "INSUFFICIENT_SCOPE",
                 "a write signed with a read-only key")
    expect_not_run(org.org.api, body, "a write signed with a read-only key")

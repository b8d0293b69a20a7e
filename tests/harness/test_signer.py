"""The Mode B signer: the seven-line string byte for byte, DER signatures that verify, the headers."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

from payconform.signer import (
    P256_ORDER,
    Signer,
    body_digest,
    generate_private_key_pem,
    public_key_pem,
    signed_string,
)

KEY_ID = "akid_test_0123456789abcdef"
# '{"name":"Café ✓"}' as UTF-8; its SHA-256 computed outside Python with `printf ... | sha256sum`.
BODY = b'{"name":"Caf\xc3\xa9 \xe2\x9c\x93"}'
BODY_SHA256 = "2a6db6b2b505b2312af60962088cf9fcb39ece83466b4e88d4d97f588a1d1b09"
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
PATH = "/business/api/v1/checkout/organizations/ckorg/products?limit=5&x=a%20b"


@pytest.fixture(scope="module")
def private_pem() -> str:
    return generate_private_key_pem()


def _public(private_pem: str) -> ec.EllipticCurvePublicKey:
    key = serialization.load_pem_public_key(public_key_pem(private_pem).encode())
    assert isinstance(key, ec.EllipticCurvePublicKey)
    return key


def _verifies(public: ec.EllipticCurvePublicKey, der: bytes, data: bytes) -> bool:
    try:
        public.verify(der, data, ec.ECDSA(hashes.SHA256()))
    except Exception:  # noqa: BLE001 - InvalidSignature or a DER parse error: does not verify
        return False
    return True


def test_signed_string_is_the_seven_lines_byte_for_byte() -> None:
    expected = (b"akid_test_0123456789abcdef\n"
                b"POST\n"
                b"/business/api/v1/checkout/organizations/ckorg/products?limit=5&x=a%20b\n"
                + BODY_SHA256.encode() + b"\n"
                b"pc-idem-1\n"
                b"1700000000\n"
                b"nonce-1")
    assert signed_string(KEY_ID, "post", PATH, BODY, "pc-idem-1", "1700000000", "nonce-1") == expected


def test_missing_idempotency_key_and_body_give_an_empty_line_and_the_empty_digest() -> None:
    data = signed_string(KEY_ID, "GET", "/business/api/v1/x", b"", None, "1", "n")
    assert data.split(b"\n") == [KEY_ID.encode(), b"GET", b"/business/api/v1/x", EMPTY_SHA256.encode(), b"", b"1",
                                 b"n"]
    assert body_digest(b"") == EMPTY_SHA256


def test_signature_is_low_s_der_that_verifies(private_pem: str) -> None:
    signer = Signer(KEY_ID, private_pem)
    public = _public(private_pem)
    for i in range(20):  # ECDSA draws S from either half: normalization must hold every time
        data = f"message {i}".encode()
        der = signer.sign(data)
        r, s = utils.decode_dss_signature(der)
        assert utils.encode_dss_signature(r, s) == der, "canonical DER"
        assert 0 < s <= P256_ORDER // 2
        assert _verifies(public, der, data)
        assert not _verifies(public, der, data + b"x")


def test_headers_carry_the_values_signed(private_pem: str) -> None:
    signer = Signer(KEY_ID, private_pem)
    headers = signer.headers("POST", PATH, BODY, "pc-idem-1", timestamp=1700000000, nonce="nonce-1")
    assert set(headers) == {"X-Api-Key", "X-Svc-Signature", "X-Svc-Timestamp", "X-Svc-Nonce"}
    assert headers["X-Api-Key"] == KEY_ID
    assert headers["X-Svc-Timestamp"] == "1700000000" and headers["X-Svc-Nonce"] == "nonce-1"
    der = base64.b64decode(headers["X-Svc-Signature"], validate=True)
    data = signed_string(KEY_ID, "POST", PATH, BODY, "pc-idem-1", "1700000000", "nonce-1")
    assert _verifies(_public(private_pem), der, data)


def test_headers_default_to_now_and_a_fresh_nonce(private_pem: str) -> None:
    signer = Signer(KEY_ID, private_pem)
    first = signer.headers("GET", "/business/api/v1/x", b"", None)
    second = signer.headers("GET", "/business/api/v1/x", b"", None)
    assert first["X-Svc-Timestamp"].isdigit()
    assert first["X-Svc-Nonce"] != second["X-Svc-Nonce"]


def test_challenge_answer_signs_the_payload_as_utf8(private_pem: str) -> None:
    payload = "akid_test_x\nPOST\n/business/api/v1/p\nabc\n\n1\nreq_1 ✓"
    der = base64.b64decode(Signer(KEY_ID, private_pem).answer_challenge(payload))
    assert _verifies(_public(private_pem), der, payload.encode("utf-8"))


def test_public_half_is_spki_pem(private_pem: str) -> None:
    pem = public_key_pem(private_pem)
    assert pem.startswith("-----BEGIN PUBLIC KEY-----") and "PRIVATE" not in pem


def test_only_p256_keys_sign() -> None:
    p384 = ec.generate_private_key(ec.SECP384R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    with pytest.raises(ValueError, match="P-256"):
        Signer(KEY_ID, p384)


def test_repr_hides_the_private_key(private_pem: str) -> None:
    assert "PRIVATE" not in repr(Signer(KEY_ID, private_pem))


# -- the client signs what it sends -------------------------------------------------------------------------


def _capturing_api(credential: str, private_pem: str, seen: list, **kw):
    import httpx

    from payconform.client import Api
    from payconform.contract import Contract
    from payconform.target import Target

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={}, headers={"x-request-id": "r1"})

    target = Target.from_dict({"base_url": "http://target.test/business/api/v1", "org_id": "ckorg1",
                               "credentials": {"signing_key_id": KEY_ID, "signing_private_key": private_pem}})
    return Api(target, credential, contract=Contract(profile={"operations": {}}),
               transport=httpx.MockTransport(handler), **kw)


def test_client_signs_the_exact_bytes_and_raw_path_under_the_targets_key(private_pem: str) -> None:
    seen: list = []
    api = _capturing_api(KEY_ID, private_pem, seen)
    api.post("/checkout/organizations/{orgId}/products?q=caf%C3%A9", json={"name": "Café ✓"}, idempotency_key="pc-1")
    sent = seen[0]
    assert sent.headers["x-api-key"] == KEY_ID
    data = signed_string(KEY_ID, "POST", sent.url.raw_path.decode(), sent.content, "pc-1",
                         sent.headers["x-svc-timestamp"], sent.headers["x-svc-nonce"])
    assert sent.url.raw_path.decode() == "/business/api/v1/checkout/organizations/ckorg1/products?q=caf%C3%A9"
    assert _verifies(_public(private_pem), base64.b64decode(sent.headers["x-svc-signature"]), data)


def test_client_leaves_caller_signatures_and_other_credentials_alone(private_pem: str) -> None:
    seen: list = []
    api = _capturing_api(KEY_ID, private_pem, seen)
    api.get("/x", headers={"X-Svc-Signature": "mine"})
    api.get("/x", headers={"X-Svc-Request-Id": "req_1", "X-Svc-Signature": "answer"})
    api.get("/x", credential=None)
    assert [r.headers.get("x-svc-signature") for r in seen] == ["mine", "answer", None]
    other: list = []
    _capturing_api("svc_test_" + "a" * 32 + "_" + "B" * 43, private_pem, other).get("/x")
    assert "x-svc-signature" not in other[0].headers


def test_client_signs_with_an_explicit_signer_and_refuses_live_key_ids_on_writes(private_pem: str) -> None:
    from payconform.client import SafetyError

    seen: list = []
    signer = Signer("akid_test_other", private_pem, clock=lambda: 1700000000.0)
    _capturing_api("akid_test_other", private_pem, seen, signer=signer).get("/x")
    assert seen[0].headers["x-svc-timestamp"] == "1700000000"
    live = _capturing_api("akid_live_abc", private_pem, seen)
    with pytest.raises(SafetyError):
        live.post("/payments/organizations/{orgId}/payouts", json={})

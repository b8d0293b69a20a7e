"""Mode B request signing (Authentication > Mode B: signed requests), built on ``cryptography``.

The spec fixes three things and this module does exactly those:

- the signed string: seven newline-separated lines, in this order: key id; HTTP method in upper case; full
  request path including the API prefix and query string; lowercase hex SHA-256 of the body; idempotency
  key (empty string if none); timestamp; nonce (``signed_string``);
- the signature: base64 of the DER-encoded ECDSA P-256 over SHA-256 signature (``Signer.sign``);
- the headers: ``X-Api-Key`` (key id), ``X-Svc-Signature``, ``X-Svc-Timestamp`` (Unix seconds, the value
  signed), ``X-Svc-Nonce`` (unique, the value signed) (``Signer.headers``).

The suite signs "the exact bytes sent": ``payconform.client.Api`` calls ``Signer.headers`` with the body
bytes and the raw path httpx is about to send, after every other header (the idempotency key) is final.

Signatures are normalized to low S. The spec does not require low S, and a server must accept either
(the suite checks the high-S twin separately); normalizing makes every other test independent of the
coin flip of which half ECDSA happens to produce.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

# Order n of the P-256 group (SEC 2, secp256r1); `cryptography` does not expose it.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551

HEADER_KEY = "X-Api-Key"
HEADER_SIGNATURE = "X-Svc-Signature"
HEADER_TIMESTAMP = "X-Svc-Timestamp"
HEADER_NONCE = "X-Svc-Nonce"
HEADER_REQUEST_ID = "X-Svc-Request-Id"


def body_digest(body: bytes) -> str:
    """Line 4 of the signed string: lowercase hex SHA-256 of the body bytes (of b"" when there is none)."""
    return hashlib.sha256(body).hexdigest()


def signed_string(key_id: str, method: str, path: str, body: bytes, idempotency_key: str | None,
                  timestamp: str, nonce: str) -> bytes:
    """The seven lines the spec orders, joined by newlines (no trailing newline), as UTF-8 bytes."""
    lines = [key_id, method.upper(), path, body_digest(body), idempotency_key or "", timestamp, nonce]
    return "\n".join(lines).encode("utf-8")


def new_nonce() -> str:
    """A unique string: 128 random bits in hex."""
    return secrets.token_hex(16)


def generate_private_key_pem() -> str:
    """A fresh P-256 private key as PKCS#8 PEM (what a key holder keeps)."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode("ascii")


def public_key_pem(private_key_pem: str) -> str:
    """The SPKI PEM public half of a private key (what gets registered)."""
    key = serialization.load_pem_private_key(private_key_pem.encode("ascii"), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


class Signer:
    """Signs requests for one registered key: its key id and the PEM private half.

    ``clock`` gives the Unix time stamped on requests: the wall clock, or, for a test that moved an
    organization's clock through the operator, that organization's time (the server checks freshness
    against it).
    """

    def __init__(self, key_id: str, private_key_pem: str, clock: Callable[[], float] = time.time) -> None:
        key = serialization.load_pem_private_key(private_key_pem.encode("ascii"), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
            raise ValueError("a Mode B signing key must be a P-256 (secp256r1) private key")
        self.key_id = key_id
        self.clock = clock
        self._key = key

    def __repr__(self) -> str:  # never show the private key
        return f"Signer({self.key_id[:10]}...)"

    def sign(self, data: bytes) -> bytes:
        """DER-encoded ECDSA P-256/SHA-256 signature of ``data``, normalized to low S."""
        r, s = utils.decode_dss_signature(self._key.sign(data, ec.ECDSA(hashes.SHA256())))
        return utils.encode_dss_signature(r, min(s, P256_ORDER - s))

    def sign_b64(self, data: bytes) -> str:
        """``X-Svc-Signature`` value for ``data``: base64 (standard alphabet, padded) of the DER signature."""
        return base64.b64encode(self.sign(data)).decode("ascii")

    def headers(self, method: str, path: str, body: bytes, idempotency_key: str | None, *,
                timestamp: int | None = None, nonce: str | None = None) -> dict[str, str]:
        """The four headers of a signed request whose request line is ``method path`` (path with the API
        prefix and query, exactly as sent) and whose body is ``body``."""
        ts = str(int(self.clock()) if timestamp is None else timestamp)
        nonce = new_nonce() if nonce is None else nonce
        data = signed_string(self.key_id, method, path, body, idempotency_key, ts, nonce)
        return {HEADER_KEY: self.key_id, HEADER_SIGNATURE: self.sign_b64(data), HEADER_TIMESTAMP: ts,
                HEADER_NONCE: nonce}

    def answer_challenge(self, payload_to_sign: str) -> str:
        """``X-Svc-Signature`` for a challenge: the signature of ``payloadToSign`` as UTF-8 bytes."""
        return self.sign_b64(payload_to_sign.encode("utf-8"))

"""Mutants of the Authentication part about signed requests: the signature header, its canonical lines,
the ECDSA checks and the signing keys themselves (the freshness rules are in `freshness.py`).

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

import binascii
from cryptography.hazmat.primitives.asymmetric import utils

from ...core.errors import ApiError
from ...reference import API_PREFIX
from ...authentication.signing import KeyMaterialError, SigningKey, public_half, signed_path
from ..registry import mutant

if TYPE_CHECKING:
    from ...reference import Reference
    from datetime import datetime
    from starlette.requests import Request


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


Verify = Callable[[SigningKey, str, bytes], bool]


def _der(signature: str) -> bytes | None:
    """The signature header's bytes, or None when it is not base64."""
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None


def _strict_rs(signature: str) -> tuple[int, int] | None:
    der = _der(signature)
    try:
        return utils.decode_dss_signature(der) if der is not None else None
    except ValueError:
        return None


def _as_der(rs: tuple[int, int] | None) -> str | None:
    return base64.b64encode(utils.encode_dss_signature(*rs)).decode() if rs is not None else None


def _also(ref: Reference, rescue: Callable[[SigningKey, str, bytes, Verify], bool]) -> None:
    """`verify` also accepts what `rescue(key, signature, data, strict_verify)` accepts."""
    strict: Verify = ref.signing.verify
    ref.signing.verify = lambda key, signature, data: (  # type: ignore[method-assign]
        strict(key, signature, data) or rescue(key, signature, data, strict))


def _line_variant(ref: Reference, line: int, change: Callable[[str], str]) -> None:
    """`verify` also accepts a signature over the string with line `line` (0-based) changed by `change`."""

    def rescue(key: SigningKey, signature: str, data: bytes, strict: Verify) -> bool:
        lines = data.decode("utf-8", "replace").split("\n")
        if len(lines) != 7:
            return False
        lines[line] = change(lines[line])
        return strict(key, signature, "\n".join(lines).encode("utf-8"))

    _also(ref, rescue)


def _lenient_rs(der: bytes) -> tuple[int, int]:
    """BER-style reading: any tags and sequence length, long-form lengths, unsigned and non-minimal
    integers, trailing bytes ignored. IndexError/ValueError when even that fails."""

    def length(i: int) -> tuple[int, int]:
        if der[i] < 0x80:
            return der[i], i + 1
        n = der[i] & 0x7F
        return int.from_bytes(der[i + 1:i + 1 + n], "big"), i + 1 + n

    _, i = length(1)
    values = []
    for _ in range(2):
        size, i = length(i + 1)
        values.append(int.from_bytes(der[i:i + size], "big"))
        i += size
    return values[0], values[1]


CheckSigned = Callable[[SigningKey, "Request", bytes, str, "datetime"], None]


def _on_invalid(ref: Reference, reword: Callable[[SigningKey, Request, bytes, str], str | None]) -> None:
    """A SIGNATURE_INVALID refusal gets the detail `reword(...)` returns, when it returns one."""
    original: CheckSigned = ref.signing.check_signed

    def check_signed(key: SigningKey, request: Request, body: bytes, signature: str, now: datetime) -> None:
        try:
            original(key, request, body, signature, now)
        except ApiError as err:
            detail = reword(key, request, body, signature) if err.type == "SIGNATURE_INVALID" else None
            if detail is not None:
                err.detail = detail
            raise

    ref.signing.check_signed = check_signed  # type: ignore[method-assign]


KeyMaterial = Callable[[str | None, str | None], tuple[str | None, str | None]]


def _looser_keys(ref: Reference, loosen: Callable[[SigningKey], SigningKey]) -> None:
    original = ref.signing.find
    ref.signing.find = lambda key_id: (  # type: ignore[method-assign]
        loosen(key) if (key := original(key_id)) is not None else None)


@mutant("sig-path-without-prefix", reqs=["SIGN-STRING", "SIGN-P256-KEYPAIR"],
        doc="The signed path line leaves out the API prefix `/business/api/v1`.")
def sig_path_without_prefix(ref: Reference) -> None:
    ref.signing.signed_path = lambda request: signed_path(request).removeprefix(API_PREFIX)


@mutant("sig-query-not-signed", reqs=["SIGN-STRING"],
        doc="The signed path line leaves out the query string.")
def sig_query_not_signed(ref: Reference) -> None:
    ref.signing.signed_path = lambda request: signed_path(request).split("?", 1)[0]


@mutant("sig-method-any-case", reqs=["SIGN-STRING"],
        doc="A signature over the method line in lower case is accepted too.")
def sig_method_any_case(ref: Reference) -> None:
    _line_variant(ref, 1, str.lower)


@mutant("sig-body-digest-any-case", reqs=["SIGN-STRING"],
        doc="A signature over the body digest in upper-case hex is accepted too.")
def sig_body_digest_any_case(ref: Reference) -> None:
    _line_variant(ref, 3, str.upper)


@mutant("sig-idempotency-line-optional", reqs=["SIGN-STRING"],
        doc="A signature with an empty idempotency line is accepted even when an Idempotency-Key was sent.")
def sig_idempotency_line_optional(ref: Reference) -> None:
    _line_variant(ref, 4, lambda _: "")


@mutant("sig-not-verified", reqs=["SIGN-STRING", "SIGN-EXACT-BYTES", "SIGN-HEADERS", "ERR-SIGNATURE-INVALID"],
        doc="Any well-formed DER signature is accepted; it is never checked against the signed string.")
def sig_not_verified(ref: Reference) -> None:
    ref.signing.verify = lambda key, signature, data: _strict_rs(signature) is not None  # type: ignore[method-assign]


@mutant("sig-body-canonicalized", reqs=["SIGN-EXACT-BYTES"],
        doc="The body digest is taken over the JSON re-serialized compactly, not over the bytes received.")
def sig_body_canonicalized(ref: Reference) -> None:
    original = ref.signing.string_to_sign

    def string_to_sign(key_id: str, request: Request, body: bytes, timestamp: str, nonce: str) -> bytes:
        try:
            body = json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        except ValueError:
            pass
        return original(key_id, request, body, timestamp, nonce)

    ref.signing.string_to_sign = string_to_sign  # type: ignore[method-assign]


@mutant("sig-der-lenient", reqs=["ERR-SIGNATURE-INVALID", "SIGN-HEADERS"],
        doc="The signature is parsed as loose BER (long-form and wrong lengths, trailing bytes, missing or extra "
            "leading zeros, other integer tags) before it is verified.")
def sig_der_lenient(ref: Reference) -> None:
    def rescue(key: SigningKey, signature: str, data: bytes, strict: Verify) -> bool:
        der = _der(signature)
        try:
            canonical = _as_der(_lenient_rs(der)) if der else None
        except (IndexError, ValueError):
            return False
        return canonical is not None and strict(key, canonical, data)

    _also(ref, rescue)


@mutant("sig-raw-rs-accepted", reqs=["SIGN-HEADERS", "ERR-SIGNATURE-INVALID"],
        doc="A raw 64-byte r||s signature is accepted as well as DER.")
def sig_raw_rs_accepted(ref: Reference) -> None:
    def rescue(key: SigningKey, signature: str, data: bytes, strict: Verify) -> bool:
        raw = _der(signature)
        if raw is None or len(raw) != 64:
            return False
        canonical = _as_der((int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")))
        return canonical is not None and strict(key, canonical, data)

    _also(ref, rescue)


@mutant("sig-r-s-reduced-mod-n", reqs=["ERR-SIGNATURE-INVALID"],
        doc="r and s are reduced modulo the group order before verifying, so (r + n, s) passes for (r, s).")
def sig_r_s_reduced_mod_n(ref: Reference) -> None:
    def rescue(key: SigningKey, signature: str, data: bytes, strict: Verify) -> bool:
        rs = _strict_rs(signature)
        if rs is None or not all(v % P256_ORDER for v in rs):
            return False
        return strict(key, _as_der((rs[0] % P256_ORDER, rs[1] % P256_ORDER)) or "", data)

    _also(ref, rescue)


@mutant("sig-low-s-only", reqs=["SIGN-HEADERS"],
        doc="A signature whose S is in the upper half (the high-S twin of a valid one) is refused.")
def sig_low_s_only(ref: Reference) -> None:
    strict: Verify = ref.signing.verify

    def verify(key: SigningKey, signature: str, data: bytes) -> bool:
        rs = _strict_rs(signature)
        return rs is not None and rs[1] <= P256_ORDER // 2 and strict(key, signature, data)

    ref.signing.verify = verify  # type: ignore[method-assign]


@mutant("sig-der-error-distinct", reqs=["ERR-SIGNATURE-INVALID"],
        doc="A signature that is not DER answers SIGNATURE_INVALID with its own detail (\"not DER-encoded\").")
def sig_der_error_distinct(ref: Reference) -> None:
    _on_invalid(ref, lambda key, request, body, signature:
                "The signature is not a DER-encoded ECDSA signature." if _strict_rs(signature) is None else None)


@mutant("sig-wrong-key-distinct", reqs=["ERR-SIGNATURE-INVALID"],
        doc="A signature made with another registered key of the organization says so in its detail.")
def sig_wrong_key_distinct(ref: Reference) -> None:
    def reword(key: SigningKey, request: Request, body: bytes, signature: str) -> str | None:
        data = ref.signing.string_to_sign(key.id, request, body, request.headers.get("x-svc-timestamp", ""),
                                          request.headers.get("x-svc-nonce", ""))
        others = [k for k in ref.signing.of_org(key.org_id) if k.id != key.id]
        if any(ref.signing.verify(other, signature, data) for other in others):
            return "The request was signed with another key of this organization."
        return None

    _on_invalid(ref, reword)


@mutant("private-key-registrable", reqs=["SIGN-PRIVATE-KEY-REFUSED"],
        doc="A pasted private key is accepted: its public half is registered.")
def private_key_registrable(ref: Reference) -> None:
    original: KeyMaterial = ref.signing.key_material

    def key_material(pem: str | None, stamp: str | None) -> tuple[str | None, str | None]:
        return original(public_half(pem) if pem and "PRIVATE KEY" in pem else pem, stamp)

    ref.signing.key_material = key_material  # type: ignore[method-assign]


@mutant("pem-and-stamp-accepted", reqs=["SIGN-PEM-OR-STAMP"],
        doc="A key may register a PEM public key and a stamp key together.")
def pem_and_stamp_accepted(ref: Reference) -> None:
    original: KeyMaterial = ref.signing.key_material

    def key_material(pem: str | None, stamp: str | None) -> tuple[str | None, str | None]:
        return (original(pem, None)[0], stamp) if pem is not None and stamp is not None else original(pem, stamp)

    ref.signing.key_material = key_material  # type: ignore[method-assign]


@mutant("signing-key-pem-lf-only", reqs=["SIGN-P256-KEYPAIR"],
        doc="A P-256 SPKI public key whose PEM lines end in CRLF is refused: only LF line ends are read.")
def signing_key_pem_lf_only(ref: Reference) -> None:
    original: KeyMaterial = ref.signing.key_material

    def key_material(pem: str | None, stamp: str | None) -> tuple[str | None, str | None]:
        if pem is not None and "\r" in pem:
            raise KeyMaterialError("public_key_pem", "must be a PEM SubjectPublicKeyInfo public key")
        return original(pem, stamp)

    ref.signing.key_material = key_material  # type: ignore[method-assign]


@mutant("signing-key-without-material", reqs=["SIGN-PEM-OR-STAMP"],
        doc="A key may be registered with neither a PEM public key nor a stamp key.")
def signing_key_without_material(ref: Reference) -> None:
    original: KeyMaterial = ref.signing.key_material

    def key_material(pem: str | None, stamp: str | None) -> tuple[str | None, str | None]:
        return (None, None) if pem is None and stamp is None else original(pem, stamp)

    ref.signing.key_material = key_material  # type: ignore[method-assign]


@mutant("signing-key-id-unprefixed", reqs=["SIGN-KEY-ID-FORMAT"],
        doc="Signing key ids look like `sk_test_<hex>` instead of `akid_test_...`.")
def signing_key_id_unprefixed(ref: Reference) -> None:
    ref.signing.new_key_id = lambda mode: f"sk_{mode}_{secrets.token_hex(12)}"  # type: ignore[method-assign]
    ref.signing.applies = lambda request: request.headers.get(  # type: ignore[method-assign]
        "x-api-key", "").startswith(("akid_", "sk_"))


@mutant("signing-key-expiry-ignored", reqs=["SIGN-ERROR-TYPES"],
        doc="An expired signing key keeps working (Mode B skips the expiry check).")
def signing_key_expiry_ignored(ref: Reference) -> None:
    _looser_keys(ref, lambda key: dataclasses.replace(key, expires_at="9999-12-31T00:00:00.000Z"))


@mutant("signing-key-pinning-ignored", reqs=["SIGN-ERROR-TYPES"],
        doc="A pinned signing key works from any address (Mode B skips the pinning check).")
def signing_key_pinning_ignored(ref: Reference) -> None:
    _looser_keys(ref, lambda key: dataclasses.replace(key, pinned_ips=()))


@mutant("signing-key-scopes-ignored", reqs=["SIGN-READ-ONLY-KEYS"],
        doc="A read-only signing key may write (Mode B ignores the key's scopes).")
def signing_key_scopes_ignored(ref: Reference) -> None:
    _looser_keys(ref, lambda key: dataclasses.replace(key, scopes=key.scopes | {"write"}))


@mutant("signature-errors-all-invalid", reqs=["SIGN-ERROR-TYPES"],
        doc="Every signature refusal answers SIGNATURE_INVALID: a replayed nonce and a stale timestamp lose their "
            "own types (SIGNATURE_REPLAYED, SIGNATURE_TIMESTAMP_SKEW).")
def signature_errors_all_invalid(ref: Reference) -> None:
    check_signed = ref.signing.check_signed

    def check(key: SigningKey, request: Request, body: bytes, signature: str, now: datetime) -> None:
        try:
            check_signed(key, request, body, signature, now)
        except ApiError as err:
            if err.type in ("SIGNATURE_REPLAYED", "SIGNATURE_TIMESTAMP_SKEW"):
                raise ApiError("SIGNATURE_INVALID") from err
            raise

    ref.signing.check_signed = check  # type: ignore[method-assign]

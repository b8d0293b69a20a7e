"""Signed requests for the Mode B suites (Authentication > Mode B: signed requests).

Signed requests built by hand, so that exactly one part can be wrong; malformed signatures; and the checks
every refusal shares: a signature error type (their statuses are not shown, so any 4xx), one answer for
every mismatch cause, and nothing run, checked by reading back.

The write used throughout is a checkout product create: product names are unique among active products
(Endpoints > Checkout: POST /products "409 name already exists", PATCH /products/{productId} "409 another
active product has the name"), so after a refused create of name N, renaming a product to N with a working
Mode A key must answer 200 (a 409 shows the refused request ran after all; the first check of a worker makes
that product, a create of N that must answer 201), and after an accepted one a create of N must answer 409.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable
from urllib.parse import quote, urlsplit

from payconform.suite import (
    HEADER_NONCE,
    HEADER_REQUEST_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    Api,
    Contract,
    Exchange,
    OperatorError,
    Signer,
    body_digest,
    expect,
    expect_error,
    expect_status,
    fail,
    generate_private_key_pem,
    new_nonce,
)

from .products import expect_name_free, product_body
from .types import Unique

PRODUCTS = "/checkout/organizations/{orgId}/products"
SIGNATURE_ERRORS = ("SIGNATURE_REQUIRED", "SIGNATURE_INVALID", "SIGNATURE_REPLAYED", "SIGNATURE_TIMESTAMP_SKEW")
ANY_STATUS_NOT_SHOWN = "a 4xx (the spec does not show the status of signature errors other than the 202)"


@dataclass(frozen=True)
class SignedRequest:
    """One request as it will be sent under a signing key: what the seven lines are made of."""

    method: str
    path: str  # relative to base_url, organization filled in, query included
    raw_path: str  # the path as sent: the API prefix, the path, the query
    body: bytes = b""
    idempotency_key: str | None = None
    timestamp: str = field(default_factory=lambda: str(int(time.time())))
    nonce: str = field(default_factory=new_nonce)

    def lines(self, key_id: str) -> list[str]:
        """The seven lines of the spec, in its order."""
        return [key_id, self.method.upper(), self.raw_path, body_digest(self.body), self.idempotency_key or "",
                self.timestamp, self.nonce]

    def headers(self, key_id: str, signature: str) -> dict[str, str]:
        headers = {"X-Api-Key": key_id, HEADER_SIGNATURE: signature, HEADER_TIMESTAMP: self.timestamp,
                   HEADER_NONCE: self.nonce}
        if self.idempotency_key is not None:
            headers["Idempotency-Key"] = self.idempotency_key
        if self.body:
            headers["content-type"] = "application/json"
        return headers

    def send(self, api: Api, headers: dict[str, str], body: bytes | None = None) -> Exchange:
        """Send exactly these headers (nothing added by the client) with this body, or `body` instead."""
        content = self.body if body is None else body
        return api.request(self.method, self.path, content=content or None, headers=headers, idempotency_key=None,
                           credential=None)


def signed_request(api: Api, method: str, path: str, body: bytes = b"", *, idempotency_key: str | None = None,
                   timestamp: int | None = None) -> SignedRequest:
    """A request on `api`'s target and organization; `path` may hold `{orgId}` and a query string."""
    path = path.replace("{orgId}", quote(str(api.org_id), safe=""))
    raw_path = urlsplit(api.base_url).path.rstrip("/") + "/" + path.lstrip("/")
    req = SignedRequest(method, path, raw_path, body, idempotency_key)
    return replace(req, timestamp=str(timestamp)) if timestamp is not None else req


def sign_lines(signer: Signer, lines: list[str]) -> bytes:
    """The signer's DER signature of these lines joined as the spec joins them."""
    return signer.sign("\n".join(lines).encode("utf-8"))


def b64(der: bytes) -> str:
    return base64.b64encode(der).decode("ascii")


def send_signed(api: Api, signer: Signer, req: SignedRequest, *,
                lines: Callable[[list[str]], list[str]] = lambda lines: lines) -> Exchange:
    """Send `req` signed by `signer` over its seven lines, changed by `lines` first (to sign something else)."""
    return req.send(api, req.headers(signer.key_id, b64(sign_lines(signer, lines(req.lines(signer.key_id))))))


# -- the product create every refusal is read back with ---------------------------------------------------


def product_create(api: Api, contract: Contract, unique: Unique, *, query: str = "",
                   **fields: Any) -> tuple[dict[str, Any], SignedRequest]:
    """A product body with a unique name and the signed request that creates it (compact JSON, a fresh
    idempotency key)."""
    body = product_body(contract, unique, **fields)
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return body, signed_request(api, "POST", PRODUCTS + query, raw, idempotency_key=f"pc-{secrets.token_hex(12)}")


def expect_not_run(mode_a: Api, body: dict[str, Any], what: str) -> None:
    """The product the refused request asked for does not exist (`products.expect_name_free`, with a Mode A key)."""
    expect_name_free(mode_a, body, f"{what}, with a Mode A key")


def expect_ran_once(mode_a: Api, body: dict[str, Any], what: str) -> None:
    """The product exists: a create of its name with a Mode A key answers 409 (name taken)."""
    again = mode_a.op("createCheckoutProduct", json=body)
    expect_status(again, 409, f"creating product {body['name']!r} again with a Mode A key after {what}: the "
                              "request must have created it")


# -- refusals ---------------------------------------------------------------------------------------------


def expect_signature_error(ex: Exchange, types: str | tuple[str, ...], what: str) -> dict[str, Any]:
    """A refusal with one of the signature error `types`, any 4xx status, the error body."""
    expect(400 <= ex.status < 500, f"{what}: expected {ANY_STATUS_NOT_SHOWN} with type {types}, got {ex.status}",
           ex)
    return expect_error(ex, ex.status, types, what)


def expect_challenge_body(ex: Exchange) -> dict[str, Any]:
    """Mode B rule 4 shows the 202 body as `{type: SIGNATURE_CHALLENGE, requestId, payloadToSign}`: not an error
    body, so no `status` or `detail` is demanded, and its `requestId` (the id echoed in `X-Svc-Request-Id`) need
    not equal the x-request-id header, which every response still carries."""
    body = ex.json if isinstance(ex.json, dict) else {}
    expect(isinstance(ex.json, dict), "the 202 challenge body is not a JSON object", ex)
    expect(body.get("type") == "SIGNATURE_CHALLENGE", f"the 202 body's type is {body.get('type')!r}", ex)
    for name in ("requestId", "payloadToSign"):
        expect(isinstance(body.get(name), str) and body[name], f"the challenge has no `{name}` string", ex)
    expect(ex.request_id is not None, "the 202 challenge has no x-request-id header", ex)
    return body


def expect_stale_challenge_refused(ex: Exchange, challenge: dict[str, Any], what: str) -> None:
    """A used, rebound or expired challenge: the spec shows no answer for it, so a signature error (any 4xx) or
    a new 202 challenge (another `requestId`; nothing ran) are both accepted."""
    if ex.status == 202:
        fresh = expect_challenge_body(ex)
        expect(fresh["requestId"] != challenge["requestId"],
               f"{what}: answered 202 with the same challenge {challenge['requestId']!r} (accepted: a signature "
               f"error, {ANY_STATUS_NOT_SHOWN}, or a new challenge)", ex)
        return
    expect_signature_error(ex, SIGNATURE_ERRORS, f"{what} (a new 202 challenge is also accepted)")


@dataclass(frozen=True)
class Answer:
    """What a caller can tell apart in a refusal: status, type, detail and the body's field names."""

    status: int
    type: Any
    detail: Any
    fields: tuple[str, ...]

    @classmethod
    def of(cls, ex: Exchange) -> Answer:
        body = ex.json if isinstance(ex.json, dict) else {}
        return cls(ex.status, body.get("type"), body.get("detail"), tuple(sorted(set(body) - {"requestId"})))


def expect_same_answer(ex: Exchange, baseline: Answer, cause: str) -> None:
    """SIGNATURE_INVALID is "one answer for every mismatch cause": this refusal matches the baseline."""
    got = Answer.of(ex)
    expect(got == baseline, f"{cause} answered {got} but a signature by an unregistered key answered {baseline}: "
                            "the answers must be indistinguishable", ex)


def unregistered_signer(key_id: str) -> Signer:
    """A valid P-256 key the target never saw, signing under `key_id`."""
    return Signer(key_id, generate_private_key_pem())


def challenge_answer(signer: Signer, challenge: dict[str, Any], headers: dict[str, str]) -> dict[str, str]:
    """The resend headers: the original ones plus `X-Svc-Request-Id` and the signature of `payloadToSign`."""
    return {**headers, HEADER_REQUEST_ID: str(challenge["requestId"]),
            HEADER_SIGNATURE: signer.answer_challenge(str(challenge["payloadToSign"]))}


def expect_operator_refuses(action: Callable[[], Any], what: str) -> None:
    """A dashboard action (through the operator adapter) the spec says is refused raises OperatorError."""
    try:
        action()
    except OperatorError:
        return
    fail(f"the operator accepted {what}; it must be refused")

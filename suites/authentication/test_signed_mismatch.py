"""Authentication > Mode B rules 2, 3 and 6: every signature that does not match answers SIGNATURE_INVALID,
"one answer for every mismatch cause", and nothing runs.

Each case signs a product create (or, for the query line, a read) with one thing wrong: one of the seven
lines, the body, the encoding of the signature (raw r||s, the malformed-DER families Wycheproof catalogues,
truncation), or the key. Each answer must equal the answer to a signature by an unregistered key (the
`invalid_answer` baseline: same status, type, detail and body fields). The status itself is not shown in the
spec: any 4xx is accepted. Where it is 401 or 403 ("A 401 or 403 means nothing ran", Endpoints rule 1) the
key cases read back that the product does not exist; a perturbed case, answered exactly as the baseline,
spends no read on it. An empty `X-Svc-Signature` may also be read as no signature at all: rule 4 answers that
with the 202 challenge ("nothing ran"), and rule 6 lists SIGNATURE_REQUIRED; either is accepted, and read back.
"""

from __future__ import annotations

import json
import secrets
from typing import Callable

import pytest
from cryptography.hazmat.primitives.asymmetric import utils

from payconform.suite import P256_ORDER, Api, Contract, Signer

from .._support.signing import (
    Answer,
    b64,
    expect_challenge_body,
    expect_not_run,
    expect_same_answer,
    expect_signature_error,
    product_create,
    send_signed,
    sign_lines,
    signed_request,
    unregistered_signer,
)

Lines = Callable[[list[str]], list[str]]
API_PREFIX = "/business/api/v1"


def _line(index: int, change: Callable[[str], str]) -> Lines:
    def perturb(lines: list[str]) -> list[str]:
        return [change(v) if i == index else v for i, v in enumerate(lines)]

    return perturb


def _swap(a: int, b: int) -> Lines:
    def perturb(lines: list[str]) -> list[str]:
        out = list(lines)
        out[a], out[b] = out[b], out[a]
        return out

    return perturb


# case -> (how the signed lines differ from the request sent, the requirements it checks)
LINE_CASES: dict[str, tuple[Lines, tuple[str, ...]]] = {
    "key-id-of-another-key": (_line(0, lambda v: v.rsplit("_", 1)[0] + "_" + secrets.token_hex(12)), ()),
    "method-in-lower-case": (_line(1, str.lower), ()),
    "path-without-api-prefix": (_line(2, lambda v: v.replace(API_PREFIX, "", 1)), ()),
    "body-digest-in-upper-case": (_line(3, str.upper), ()),
    "body-digest-of-other-bytes": (_line(3, lambda v: v[::-1]), ("SIGN-EXACT-BYTES",)),
    "idempotency-key-left-empty": (_line(4, lambda v: ""), ()),
    "timestamp-other-than-header": (_line(5, lambda v: str(int(v) - 1)), ("SIGN-HEADERS",)),
    "nonce-other-than-header": (_line(6, lambda v: v + "x"), ("SIGN-HEADERS",)),
    "timestamp-and-nonce-swapped": (_swap(5, 6), ()),
    "trailing-newline": (lambda lines: [*lines[:-1], lines[-1] + "\n"], ()),
}


def _case(name: str, reqs: tuple[str, ...]) -> pytest.param:
    return pytest.param(name, id=name, marks=[pytest.mark.req("SIGN-STRING", "ERR-SIGNATURE-INVALID", *reqs)])


def _refused(ex, invalid_answer: Answer, cause: str) -> None:
    expect_signature_error(ex, "SIGNATURE_INVALID", cause)
    expect_same_answer(ex, invalid_answer, cause)


def _refused_and_not_run(ex, invalid_answer: Answer, api: Api, body: dict, cause: str) -> None:
    _refused(ex, invalid_answer, cause)
    if ex.status in (401, 403):
        expect_not_run(api, body, cause)


@pytest.mark.needs("signing_key")
@pytest.mark.parametrize("case", [_case(name, reqs) for name, (_, reqs) in LINE_CASES.items()])
def test_each_line_perturbed(case: str, signed_api: Api, contract: Contract, unique, invalid_answer: Answer) -> None:
    """A create signed over the seven lines with one changed (the headers and body as the lines should be)."""
    _, req = product_create(signed_api, contract, unique)
    ex = send_signed(signed_api, signed_api.signer, req, lines=LINE_CASES[case][0])
    _refused(ex, invalid_answer, f"a signature over the lines with {case}")


@pytest.mark.smoke
@pytest.mark.req("SIGN-STRING", "ERR-SIGNATURE-INVALID")
@pytest.mark.needs("signing_key")
def test_query_string_left_out_of_the_path_line(signed_api: Api, invalid_answer: Answer) -> None:
    """A read whose path has a query string, signed over the path without it."""
    req = signed_request(signed_api, "GET", "/payments/organizations/{orgId}/audit-events?limit=5")
    ex = send_signed(signed_api, signed_api.signer, req, lines=_line(2, lambda v: v.split("?", 1)[0]))
    _refused(ex, invalid_answer, "a signature over the path without its query string")


@pytest.mark.req("SIGN-EXACT-BYTES", "ERR-SIGNATURE-INVALID")
@pytest.mark.needs("signing_key")
@pytest.mark.parametrize("change", ["one-byte-changed", "same-json-other-bytes"])
def test_body_sent_differs_from_body_signed(change: str, signed_api: Api, contract: Contract, unique,
                                            invalid_answer: Answer) -> None:
    """The signature is over the body as signed; the body sent differs by one byte, or is the same JSON value
    serialized with spaces. The exact bytes sent must be signed."""
    body, req = product_create(signed_api, contract, unique)
    if change == "one-byte-changed":  # the name's first letter
        at = req.body.index(b'"name":"') + len(b'"name":"')
        other = b"Q" if req.body[at:at + 1] != b"Q" else b"R"
        sent = req.body[:at] + other + req.body[at + 1:]
    else:
        sent = json.dumps(body, ensure_ascii=False).encode("utf-8")
    signature = b64(sign_lines(signed_api.signer, req.lines(signed_api.signer.key_id)))
    ex = req.send(signed_api, req.headers(signed_api.signer.key_id, signature), body=sent)
    _refused(ex, invalid_answer, f"a body sent that differs from the body signed ({change})")


# -- the encoding of the signature --------------------------------------------------------------------------


def _int(value: int, lead: bytes = b"", minimal: bool = True) -> bytes:
    """DER INTEGER content bytes of a non-negative value (minimal: with its sign byte when needed)."""
    raw = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
    if minimal and raw[0] & 0x80:
        raw = b"\x00" + raw
    return lead + raw


def _tlv(tag: int, content: bytes, long_form: bool = False) -> bytes:
    length = bytes([0x81, len(content)]) if long_form else bytes([len(content)])
    return bytes([tag]) + length + content


def _seq(r: bytes, s: bytes, *, r_tag: int = 0x02, r_long: bool = False, seq_long: bool = False,
         seq_delta: int = 0) -> bytes:
    content = _tlv(r_tag, r, r_long) + _tlv(0x02, s)
    return bytes([0x30, len(content) + seq_delta]) + content if not seq_long else _tlv(0x30, content, True)


# family -> how to make it from a valid (r, s) and its DER bytes
DER_FAMILIES: dict[str, Callable[[int, int, bytes], bytes]] = {
    "raw-r-concat-s": lambda r, s, der: r.to_bytes(32, "big") + s.to_bytes(32, "big"),
    "sequence-length-too-long": lambda r, s, der: _seq(_int(r), _int(s), seq_delta=1),
    "sequence-length-too-short": lambda r, s, der: _seq(_int(r), _int(s), seq_delta=-1),
    "sequence-long-form-length": lambda r, s, der: _seq(_int(r), _int(s), seq_long=True),
    "integer-long-form-length": lambda r, s, der: _seq(_int(r), _int(s), r_long=True),
    "integer-wrong-tag": lambda r, s, der: _seq(_int(r), _int(s), r_tag=0x03),
    "trailing-garbage": lambda r, s, der: der + b"\x00",
    "missing-leading-zero": lambda r, s, der: _seq(_int(r, minimal=False), _int(s)),
    "extra-leading-zero": lambda r, s, der: _seq(_int(r, lead=b"\x00"), _int(s)),
    "r-zero": lambda r, s, der: utils.encode_dss_signature(0, s),
    "s-zero": lambda r, s, der: utils.encode_dss_signature(r, 0),
    "r-plus-order": lambda r, s, der: utils.encode_dss_signature(r + P256_ORDER, s),
    "s-plus-order": lambda r, s, der: utils.encode_dss_signature(r, s + P256_ORDER),
    "truncated-by-one-byte": lambda r, s, der: der[:-1],
    "truncated-to-half": lambda r, s, der: der[: len(der) // 2],
    "empty": lambda r, s, der: b"",
}


def _signature_with_high_r(signer: Signer, data: bytes) -> tuple[int, int, bytes]:
    """A valid signature whose r has its top bit set, so that "missing leading zero" means something
    (ECDSA draws r at random: half the signatures qualify)."""
    while True:
        der = signer.sign(data)
        r, s = utils.decode_dss_signature(der)
        if r >> 255:
            return r, s, der


EMPTY_READINGS = ("accepted: the unregistered-key baseline (a mismatch), the 202 challenge of a request 'sent without "
                  "a signature' (rule 4), or a SIGNATURE_REQUIRED refusal (rule 6)")


def _empty_signature_answered(ex, invalid_answer: Answer, request: pytest.FixtureRequest, body: dict) -> None:
    """An `X-Svc-Signature` with an empty value: a mismatch answered as the baseline, or no signature, answered
    with the challenge (read back with a Mode A key: nothing ran) or SIGNATURE_REQUIRED (where 401 or 403, read
    back too)."""
    cause = "an empty X-Svc-Signature header"
    if ex.status == 202:
        expect_challenge_body(ex)
        expect_not_run(request.getfixturevalue("api"), body,
                       f"{cause} answered as unsigned with the 202 challenge ({EMPTY_READINGS})")
        return
    if isinstance(ex.json, dict) and ex.json.get("type") == "SIGNATURE_REQUIRED":
        expect_signature_error(ex, "SIGNATURE_REQUIRED", f"{cause}, refused as unsigned ({EMPTY_READINGS})")
        if ex.status in (401, 403):
            expect_not_run(request.getfixturevalue("api"), body,
                           f"{cause} refused as unsigned with SIGNATURE_REQUIRED ({EMPTY_READINGS})")
        return
    _refused(ex, invalid_answer, f"{cause}, a mismatch ({EMPTY_READINGS})")


@pytest.mark.req("SIGN-HEADERS", "ERR-SIGNATURE-INVALID")
@pytest.mark.needs("signing_key")
@pytest.mark.parametrize("family", list(DER_FAMILIES))
def test_malformed_signature_encoding(family: str, signed_api: Api, contract: Contract, unique,
                                      invalid_answer: Answer, request: pytest.FixtureRequest) -> None:
    """A valid signature of the right lines, re-encoded wrongly: the header must carry base64 of the DER
    encoding, nothing else. An empty header may be read as no signature (`_empty_signature_answered`)."""
    body, req = product_create(signed_api, contract, unique)
    data = "\n".join(req.lines(signed_api.signer.key_id)).encode("utf-8")
    r, s, der = _signature_with_high_r(signed_api.signer, data)
    ex = req.send(signed_api, req.headers(signed_api.signer.key_id, b64(DER_FAMILIES[family](r, s, der))))
    if family == "empty":
        _empty_signature_answered(ex, invalid_answer, request, body)
        return
    _refused(ex, invalid_answer, f"a signature encoded as {family}")


# -- the key ------------------------------------------------------------------------------------------------


@pytest.mark.req("ERR-SIGNATURE-INVALID", "SIGN-P256-KEYPAIR")
@pytest.mark.needs("signing_key")
def test_signature_by_an_unregistered_key(signed_api: Api, api: Api, contract: Contract, unique,
                                          invalid_answer: Answer) -> None:
    """The right lines signed with a P-256 key the target never saw, under the target's key id."""
    body, req = product_create(signed_api, contract, unique)
    ex = send_signed(signed_api, unregistered_signer(signed_api.signer.key_id), req)
    _refused_and_not_run(ex, invalid_answer, api, body, "a signature by an unregistered key")


@pytest.mark.req("ERR-SIGNATURE-INVALID")
@pytest.mark.needs("operator")
def test_signature_by_another_registered_key(signing_keys, contract: Contract, unique) -> None:
    """Two keys of one organization: a request under key A signed with key B's private half answers exactly
    what a signature by an unregistered key answers (the server must not tell which key signed)."""
    a = signing_keys.register()
    b = signing_keys.register(a.org)
    body, req = product_create(a.api, contract, unique)
    baseline = send_signed(a.api, unregistered_signer(a.key_id), product_create(a.api, contract, unique)[1])
    expect_signature_error(baseline, "SIGNATURE_INVALID", "a signature by an unregistered key")
    ex = send_signed(a.api, Signer(a.key_id, b.private_key_pem), req)
    _refused_and_not_run(ex, Answer.of(baseline), a.org.api, body, "a signature by another registered key")

"""Authentication > Mode B rule 4 and the Limits row Signature challenge lifetime: the challenge flow.

A request under a signing key without a signature answers `202 {type: SIGNATURE_CHALLENGE, requestId,
payloadToSign}` and runs nothing; the same request resent with `X-Svc-Request-Id` and `X-Svc-Signature`
(over `payloadToSign`) runs once. A challenge is bound to the method, path and body it was issued for, is
single use and expires in five minutes. The spec names no error type for a reused, rebound or expired
challenge: any signature error type (any 4xx) or a new 202 challenge is accepted there, as long as nothing
runs. The 202 body is the one shown, not an error body: no `status` or `detail` is demanded of it.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, expect_status

from .._support.signing import (
    SignedRequest,
    challenge_answer,
    expect_challenge_body,
    expect_not_run,
    expect_ran_once,
    expect_stale_challenge_refused,
    product_create,
)
from .._support.realtime import is_real, next_step, real_clock, waits_minutes


def _unsigned(req: SignedRequest, key_id: str) -> dict[str, str]:
    """The request's headers under the key id, without any signature header."""
    headers = {"X-Api-Key": key_id, "content-type": "application/json"}
    if req.idempotency_key is not None:
        headers["Idempotency-Key"] = req.idempotency_key
    return headers


def _challenge(unsigning: Api, req: SignedRequest, key_id: str) -> tuple[Exchange, dict[str, Any]]:
    """Send `req` unsigned, through a client that does not sign (a Mode A one): the 202 challenge and its body."""
    ex = req.send(unsigning, _unsigned(req, key_id))
    expect_status(ex, 202, "a request under a signing key without a signature (the challenge)")
    return ex, expect_challenge_body(ex)


@pytest.mark.smoke
@pytest.mark.req("SIGN-CHALLENGE-202", "ERR-SIGNATURE-CHALLENGE", "SIGN-CHALLENGE-NOTHING-RAN")
@pytest.mark.needs("signing_key")
def test_unsigned_request_is_challenged_and_nothing_runs(signed_api: Api, api: Api, contract: Contract,
                                                         unique) -> None:
    """An unsigned create under the key id: 202 SIGNATURE_CHALLENGE with `requestId` and `payloadToSign`,
    and the product does not exist."""
    body, req = product_create(signed_api, contract, unique)
    _challenge(api, req, signed_api.signer.key_id)
    expect_not_run(api, body, "the 202 challenge")


@pytest.mark.req("SIGN-CHALLENGE-RESEND", "SIGN-CHALLENGE-202")
@pytest.mark.needs("signing_key")
def test_answered_challenge_runs_the_request_once(signed_api: Api, api: Api, contract: Contract, unique) -> None:
    """The same create resent with `X-Svc-Request-Id` and the signature of `payloadToSign`: 201, and the
    product exists."""
    body, req = product_create(signed_api, contract, unique)
    key_id = signed_api.signer.key_id
    _, challenge = _challenge(api, req, key_id)
    ex = req.send(signed_api, challenge_answer(signed_api.signer, challenge, _unsigned(req, key_id)))
    expect_status(ex, 201, "the challenged create resent with the challenge's signature")
    expect_ran_once(api, body, "the answered challenge")


@pytest.mark.req("SIGN-CHALLENGE-RESEND")
@pytest.mark.needs("signing_key")
def test_challenge_answered_with_another_signature_is_refused(signed_api: Api, api: Api, contract: Contract,
                                                               unique) -> None:
    """The challenged create resent with `X-Svc-Request-Id` but the signature of another string than
    `payloadToSign` (one character added): refused with a signature error (or a new 202 challenge), and the
    product does not exist: the resend must carry the signature of `payloadToSign`."""
    body, req = product_create(signed_api, contract, unique)
    key_id = signed_api.signer.key_id
    _, challenge = _challenge(api, req, key_id)
    other = {**challenge, "payloadToSign": f"{challenge['payloadToSign']}\n"}
    ex = req.send(signed_api, challenge_answer(signed_api.signer, other, _unsigned(req, key_id)))
    expect_stale_challenge_refused(ex, challenge, "a challenge answered with the signature of another string")
    expect_not_run(api, body, "a challenge answered with the signature of another string")


@pytest.mark.smoke
@pytest.mark.req("SIGN-CHALLENGE-SINGLE-USE", "SIGN-CHALLENGE-LIFETIME")
@pytest.mark.needs("signing_key")
def test_challenge_is_single_use(signed_api: Api, api: Api, contract: Contract, unique) -> None:
    """The answered challenge sent a second time is refused with a signature error (an idempotent replay of
    the 201 would mean the challenge was accepted again)."""
    _, req = product_create(signed_api, contract, unique)
    key_id = signed_api.signer.key_id
    _, challenge = _challenge(api, req, key_id)
    answer = challenge_answer(signed_api.signer, challenge, _unsigned(req, key_id))
    expect_status(req.send(signed_api, answer), 201, "the first answer to the challenge")
    expect_stale_challenge_refused(req.send(signed_api, answer), challenge, "the same challenge answered again")


@pytest.mark.req("SIGN-CHALLENGE-BOUND")
@pytest.mark.needs("signing_key")
@pytest.mark.parametrize("other", ["body", "path"])
def test_challenge_is_bound_to_its_request(other: str, signed_api: Api, api: Api, contract: Contract,
                                           unique) -> None:
    """A challenge issued for one create, answered on a create of another product (other body) or on the same
    create with a query string added (other path): refused with a signature error, and the product the
    answered request asks for does not exist."""
    body, req = product_create(signed_api, contract, unique)
    key_id = signed_api.signer.key_id
    _, challenge = _challenge(api, req, key_id)
    if other == "body":
        body, other_product = product_create(signed_api, contract, unique)
        moved = replace(req, body=other_product.body)
    else:
        query = "?payconform=other-path"
        moved = replace(req, path=req.path + query, raw_path=req.raw_path + query)
    ex = moved.send(signed_api, challenge_answer(signed_api.signer, challenge, _unsigned(moved, key_id)))
    expect_stale_challenge_refused(ex, challenge, f"a challenge answered on a request with another {other}")
    expect_not_run(api, body, f"a challenge answered on another {other}")


@pytest.mark.req("SIGN-CHALLENGE-EXPIRY", "SIGN-CHALLENGE-LIFETIME")
@waits_minutes
def test_challenge_expires_after_five_minutes(request: pytest.FixtureRequest, run_slow: bool, contract: Contract,
                                              unique) -> None:
    """Two challenges issued together: the first answered four minutes after issue runs (201); the second
    answered six minutes after issue is refused with a signature error and runs nothing. On a fresh
    organization's clock with a key registered there, or in real time under the target's own signing key."""
    keyed = _keyed(request, run_slow)
    started = time.monotonic()
    _, req = product_create(keyed.signing, contract, unique)
    _, challenge = _challenge(keyed.unsigning, req, keyed.key_id)
    late_body, late = product_create(keyed.signing, contract, unique)
    _, late_challenge = _challenge(keyed.unsigning, late, keyed.key_id)
    issued = time.monotonic() - started
    keyed.step(ANSWERED_IN_TIME, started, ANSWERED_IN_TIME)
    with keyed.at_once():
        ex = req.send(keyed.signing, challenge_answer(keyed.signer, challenge, _unsigned(req, keyed.key_id)))
    expect_status(ex, 201, "a challenge answered four minutes after it was issued")
    keyed.step(ANSWERED_LATE - ANSWERED_IN_TIME, started, issued + ANSWERED_LATE)
    with keyed.at_once():
        ex = late.send(keyed.signing, challenge_answer(keyed.signer, late_challenge, _unsigned(late, keyed.key_id)))
    expect_stale_challenge_refused(ex, late_challenge, "a challenge answered six minutes after it was issued")
    expect_not_run(keyed.unsigning, late_body, "an expired challenge")


ANSWERED_IN_TIME, ANSWERED_LATE = 240, 360  # seconds after issue, either side of the five minutes


@dataclass
class _Keyed:
    """A signing key and where its challenges age: `signing` signs with it, `unsigning` is a Mode A client of
    its organization, `step` lets time pass (`realtime.next_step`)."""

    signing: Api
    unsigning: Api
    key_id: str
    signer: Any
    clock: Any
    org_id: str
    on_clock: Any = None  # the fresh organization's SignedOrg, whose signer follows its clock

    def step(self, seconds: float, started: float, elapsed: float) -> None:
        if self.on_clock is not None:
            self.on_clock.advance(self.clock, seconds)
        else:
            next_step(self.clock, self.org_id, seconds, started, elapsed)

    def at_once(self) -> Any:
        return self.unsigning.run.urgent() if is_real(self.clock) else contextlib.nullcontext()


def _keyed(request: pytest.FixtureRequest, run_slow: bool) -> _Keyed:
    """A key registered in a fresh organization whose clock is moved, where the operator can; else the
    target's signing key in real time (under `--run-slow`)."""
    try:
        clock = request.getfixturevalue("clock")
        org = request.getfixturevalue("signing_keys").register()
    except pytest.skip.Exception:
        clock = real_clock(ANSWERED_LATE, run_slow)
        signing = request.getfixturevalue("signed_api")
        unsigning = request.getfixturevalue("api")
        return _Keyed(signing, unsigning, signing.signer.key_id, signing.signer, clock, str(unsigning.org_id))
    return _Keyed(org.api, org.org.api, org.key_id, org.signer, clock, org.org.org_id, org)

"""Mutants of the Authentication part about a signed request's freshness: the timestamp window, single-use
nonces and the challenge flow.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from ...authentication.auth import Principal
from ...authentication.signing import TIMESTAMP, SigningKey
from ...core.errors import ApiError
from ...core.requestid import request_id_of
from ...core.responses import Outgoing
from ..registry import mutant

if TYPE_CHECKING:
    from datetime import datetime

    from starlette.requests import Request

    from ...reference import Reference


def _without_line(payload: str, line: int) -> list[str]:
    lines = payload.split("\n")
    return lines[:line] + lines[line + 1:]


def _answered_after_running(ref: Reference) -> dict[str, ApiError]:
    """Requests (by request id) that run as if accepted and whose answer is then replaced by the refusal the
    caller stores here: what a server that checks after executing sends back."""
    refusals: dict[str, ApiError] = {}

    def answer(out: Outgoing) -> None:
        err = refusals.pop(out.request_id, None)
        if err is not None:
            out.status, out.is_error, out.body = err.status, True, ref.render_error(err, out.request_id)

    ref.response_filters.insert(0, answer)
    return refusals


@mutant("skew-window-10-minutes", reqs=["SIGN-TIMESTAMP-SKEW", "ERR-SIGNATURE-TIMESTAMP-SKEW",
                                        "SIGN-TIMESTAMP-WINDOW"],
        doc="Signed timestamps are accepted within ten minutes of server time instead of five.")
def skew_window_10_minutes(ref: Reference) -> None:
    ref.signing.skew = timedelta(minutes=10)


@mutant("skew-window-2-minutes", reqs=["SIGN-TIMESTAMP-SKEW", "SIGN-TIMESTAMP-WINDOW"],
        doc="Signed timestamps are accepted within two minutes of server time only, instead of five.")
def skew_window_2_minutes(ref: Reference) -> None:
    ref.signing.skew = timedelta(minutes=2)


@mutant("skew-future-unchecked", reqs=["SIGN-TIMESTAMP-SKEW"],
        doc="Only timestamps in the past are checked; any future timestamp is fresh.")
def skew_future_unchecked(ref: Reference) -> None:
    ref.signing.fresh = lambda timestamp, now: bool(  # type: ignore[method-assign]
        TIMESTAMP.match(timestamp)) and now.timestamp() - int(timestamp) <= ref.signing.skew.total_seconds()


@mutant("nonce-not-remembered", reqs=["SIGN-NONCE-ONCE", "ERR-SIGNATURE-REPLAYED", "SIGN-REPLAY-NOT-RUN"],
        doc="Nonces are never remembered: an identical signed request runs again.")
def nonce_not_remembered(ref: Reference) -> None:
    ref.signing.spend_nonce = lambda key_id, nonce, forget_after, now: True  # type: ignore[method-assign]


@mutant("nonce-spent-with-its-signature", reqs=["SIGN-NONCE-ONCE"],
        doc="A nonce is remembered with the signature it came with: another request signed with a used nonce runs.")
def nonce_spent_with_its_signature(ref: Reference) -> None:
    check_signed, spend_nonce = ref.signing.check_signed, ref.signing.spend_nonce
    signed: list[str] = [""]

    def check(key: SigningKey, request: Request, body: bytes, signature: str, now: datetime) -> None:
        signed[0] = signature
        check_signed(key, request, body, signature, now)

    ref.signing.check_signed = check  # type: ignore[method-assign]
    ref.signing.spend_nonce = lambda key_id, nonce, forget_after, now: spend_nonce(  # type: ignore[method-assign]
        key_id, f"{nonce} {signed[0]}", forget_after, now)


@mutant("replayed-request-runs", reqs=["SIGN-NONCE-ONCE", "SIGN-REPLAY-NOT-RUN"],
        doc="A signed request whose nonce was used runs again; only its answer is SIGNATURE_REPLAYED.")
def replayed_request_runs(ref: Reference) -> None:
    check_signed = ref.signing.check_signed
    replayed = _answered_after_running(ref)

    def check(key: SigningKey, request: Request, body: bytes, signature: str, now: datetime) -> None:
        try:
            check_signed(key, request, body, signature, now)
        except ApiError as err:
            if err.type != "SIGNATURE_REPLAYED":
                raise
            replayed[request_id_of(request)] = err

    ref.signing.check_signed = check  # type: ignore[method-assign]


@mutant("challenge-missing", reqs=["SIGN-CHALLENGE-202", "ERR-SIGNATURE-CHALLENGE", "SIGN-CHALLENGE-RESEND"],
        doc="An unsigned request under a signing key answers 401 SIGNATURE_REQUIRED; no challenge is issued.")
def challenge_missing(ref: Reference) -> None:
    ref.challenges.issue = lambda key_id, challenge_id, rebuild, now: ApiError(  # type: ignore[method-assign]
        "SIGNATURE_REQUIRED")


@mutant("challenge-401", reqs=["SIGN-CHALLENGE-202"],
        doc="The challenge body `{type: SIGNATURE_CHALLENGE, requestId, payloadToSign}` comes with 401, not 202.")
def challenge_401(ref: Reference) -> None:
    issue = ref.challenges.issue
    ref.challenges.issue = lambda *args: ApiError("SIGNATURE_CHALLENGE", status=401, **issue(*args).extra)  # type: ignore[method-assign]


@mutant("challenge-runs-request", reqs=["SIGN-CHALLENGE-NOTHING-RAN"],
        doc="The unsigned request runs; then its answer is replaced by the 202 challenge.")
def challenge_runs_request(ref: Reference) -> None:
    original = ref.signing.authenticate
    challenged = _answered_after_running(ref)

    async def authenticate(request: Request) -> Principal:
        try:
            return await original(request)
        except ApiError as err:
            key = ref.signing.find(request.headers.get("x-api-key"))
            if err.type != "SIGNATURE_CHALLENGE" or key is None:
                raise
            challenged[request_id_of(request)] = err
            return Principal(key.id, key.org_id, key.mode, key.id, key.scopes)

    ref.signing.authenticate = authenticate  # type: ignore[method-assign]


@mutant("challenge-answer-signature-unchecked", reqs=["SIGN-CHALLENGE-RESEND"],
        doc="A resend naming a challenge in `X-Svc-Request-Id` runs whatever `X-Svc-Signature` it carries: the "
            "signature of `payloadToSign` is not checked.")
def challenge_answer_signature_unchecked(ref: Reference) -> None:
    redeem = ref.challenges.redeem
    ref.challenges.redeem = lambda key_id, challenge_id, rebuild, verifies, now: redeem(  # type: ignore[method-assign]
        key_id, challenge_id, rebuild, lambda data: True, now)


@mutant("challenge-not-bound-to-body", reqs=["SIGN-CHALLENGE-BOUND"],
        doc="A challenge answer is accepted for a request with another body.")
def challenge_not_bound_to_body(ref: Reference) -> None:
    ref.challenges.binds = lambda issued, resent: _without_line(issued, 3) == _without_line(resent, 3)  # type: ignore[method-assign]


@mutant("challenge-not-bound-to-path", reqs=["SIGN-CHALLENGE-BOUND"],
        doc="A challenge answer is accepted for a request with another path (or query string).")
def challenge_not_bound_to_path(ref: Reference) -> None:
    ref.challenges.binds = lambda issued, resent: _without_line(issued, 2) == _without_line(resent, 2)  # type: ignore[method-assign]


@mutant("challenge-reusable", reqs=["SIGN-CHALLENGE-SINGLE-USE", "SIGN-CHALLENGE-LIFETIME"],
        doc="An answered challenge can be answered again.")
def challenge_reusable(ref: Reference) -> None:
    original = ref.challenges.redeem

    def redeem(*args: object) -> None:
        try:
            original(*args)  # type: ignore[arg-type]
        except ApiError as err:
            if err.type != "SIGNATURE_REPLAYED":
                raise

    ref.challenges.redeem = redeem  # type: ignore[method-assign]


@mutant("challenge-never-expires", reqs=["SIGN-CHALLENGE-EXPIRY", "SIGN-CHALLENGE-LIFETIME"],
        doc="Challenges never expire (ten years instead of five minutes).")
def challenge_never_expires(ref: Reference) -> None:
    ref.challenges.lifetime = timedelta(days=3650)

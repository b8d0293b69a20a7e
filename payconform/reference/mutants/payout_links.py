"""Mutants of hosted payout links: the bearer token, expiry, single use, the refusals of the submit route.

Each patches one rule of this server's `ref.payout_links` (or the submit operation) and nothing else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import ApiError
from ..operation import Call, Reply
from . import mutant
from .approvals import without_policy
from .recipients import Handler, around

if TYPE_CHECKING:
    import sqlite3

    from ..reference import Reference

SUBMIT = "submitPayoutLink"


@mutant("plink-needs-credential", reqs=["PLINK-NO-CREDENTIAL"],
        doc="The submit route authenticates an API key like every other route: without one it is 401.")
def _(ref: Reference) -> None:
    ref.operations[SUBMIT] = dataclasses.replace(ref.operations[SUBMIT], bearer=None)


@mutant("plink-submit-answers-link", reqs=["PLINK-SUBMIT"],
        doc="A successful submit answers the link (id and status) instead of the payout.")
def _(ref: Reference) -> None:
    @around(ref, SUBMIT)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        link = ref.payout_links.find(call.params["token"])
        return Reply(reply.status, {"id": link["id"] if link else None, "status": "submitted"}, reply.resource_id)


@mutant("plink-resubmit-pays-again", reqs=["PLINK-ALREADY-SUBMITTED"],
        doc="A submitted link stays open: a second submit sends a second payout.")
def _(ref: Reference) -> None:
    ref.payout_links.spend = lambda row, payout_id, now: None  # type: ignore[method-assign]


@mutant("plink-validation-spends-link", reqs=["PLINK-VALIDATION-SPENDABLE"],
        doc="A submit refused with VALIDATION_ERROR fails the link, so the corrected submit is unusable.")
def _(ref: Reference) -> None:
    @around(ref, SUBMIT)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            link = ref.payout_links.find(call.params["token"])
            if err.type != "VALIDATION_ERROR" or link is None:
                raise
            ref.payout_links.fail(link, err, call.now)
            err.keeps_writes = True
            raise


@mutant("plink-failed-link-spendable", reqs=["PLINK-UNUSABLE", "ERR-PAYOUT-LINK-UNUSABLE"],
        doc="A payout refused at execution answers its own error and leaves the link spendable.")
def _(ref: Reference) -> None:
    ref.payout_links.fail = lambda row, refused, now: refused  # type: ignore[method-assign]


@mutant("plink-ignores-approval-policy", reqs=["PLINK-USE-POST-PAYOUTS"],
        doc="A link's payout is sent whatever the approval threshold or velocity cap.")
def _(ref: Reference) -> None:
    without_policy(ref, SUBMIT)


@mutant("plink-no-expiry", reqs=["PLINK-NOT-FOUND"],
        doc="A link stays spendable after its expiresAt.")
def _(ref: Reference) -> None:
    ref.payout_links.expired = lambda row, now: False  # type: ignore[method-assign]


@mutant("plink-signature-unchecked", reqs=["PLINK-NOT-FOUND"],
        doc="A token's signature is not checked: a forged token naming a real link spends it.")
def _(ref: Reference) -> None:
    ref.payout_links.verify = lambda token: token.rpartition(".")[0] or None  # type: ignore[method-assign]


def refuse_expired(ref: Reference, refusal: Callable[[], ApiError]) -> None:
    """A submit of an expired link is refused with `refusal()` instead of the common 404."""
    expired = ref.payout_links.expired

    def refused(row: sqlite3.Row, now: datetime) -> bool:
        if expired(row, now):
            raise refusal()
        return False

    ref.payout_links.expired = refused  # type: ignore[method-assign]


@mutant("plink-expired-404-distinct", reqs=["PLINK-404-ALIKE"],
        doc="An expired link's 404 says it expired, telling it apart from forged and unknown tokens.")
def _(ref: Reference) -> None:
    refuse_expired(ref, lambda: ApiError("NOT_FOUND", "This payout link has expired."))


@mutant("plink-destination-unchecked", reqs=["PLINK-DESTINATION-NOT-FOUND"],
        doc="An account unknown to the network (sandbox: ending 0404) is paid instead of refused.")
def _(ref: Reference) -> None:
    ref.payout_links.unknown_account_tail = None


@mutant("plink-no-rate-limit", reqs=["PLINK-RATE-LIMITED"],
        doc="Submits to one payout link are never rate limited.")
def _(ref: Reference) -> None:
    ref.ratelimit.per_bearer_limit = 10**9


@mutant("plink-always-configured", reqs=["PLINK-UNAVAILABLE", "ERR-PAYOUT-LINKS-UNAVAILABLE"],
        doc="Hosted payout links work for an organization that has them not configured.")
def _(ref: Reference) -> None:
    ref.payout_links.configured = lambda org_id: True  # type: ignore[method-assign]

"""The payout link refusals: `PAYOUT_LINK_UNUSABLE`, `USE_POST_PAYOUTS`, `PAYOUT_LINKS_UNAVAILABLE`, and the one
404 for expired, spent, forged and unknown links.

"400 `PAYOUT_LINK_UNUSABLE` (being spent or failed; not spendable); 403 `USE_POST_PAYOUTS` (approval threshold
or velocity cap; nothing sent); ... 503 `PAYOUT_LINKS_UNAVAILABLE`" (Endpoints > Hosted payout link) and "A 404
on a payout link route covers expired, spent, forged and unknown links alike." (Errors > Batch and payout link
errors). What fails a link at execution, which amount meets the approval policy, how links become "not
configured" and a link's lifetime are not shown: the profile's `sandbox.payout_links` and `sandbox.approval`.

"Spent" meets "A second submit returns the original payout with `status: already_submitted`": a spent link
resubmitted may answer either that original payout or the same 404 as the others. "Expired" is stated twice: the
submit route's "404 `NOT_FOUND` (expired, spent, forged or unknown token)" and the Errors table's
"`PAYOUT_LINK_UNUSABLE` | 400 | ... Expired, spent, or failed at execution": an expired link may answer either,
and only the 404s are compared body for body.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import DEFAULT_FEATURES, Api, Contract, Exchange, expect, expect_error, expect_status
from payconform.suite import Kind, Needs

from .._support.approvals import threshold
from .._support.balance import keep_funded
from .._support.payout_links import (
    create_link,
    expect_second_submit,
    expiring_in,
    forged,
    nothing_sent,
    paid,
    settings,
    submission,
    submit,
    unknown_token,
)
from .._support.payouts import create_payout
from .._support.profile import success
from .._support.realtime import REAL_TIME, Timed
from .._support.types import Unique

LINK_LIFETIME = 3600  # seconds; the test's own `expiresAt`
NEAR_EXPIRY = 15  # seconds; the `expiresAt` of a link left to expire in real time


EXPIRED_ANSWERS = ("404 NOT_FOUND ('404 `NOT_FOUND` (expired, spent, forged or unknown token)') or 400 "
                   "PAYOUT_LINK_UNUSABLE ('`PAYOUT_LINK_UNUSABLE` | 400 | ... Expired, spent, or failed at execution')")


def _shape(ex: Exchange) -> dict[str, Any]:
    """What a caller can tell apart in an answer: its status and body, less the per-request `requestId`."""
    body = ex.json if isinstance(ex.json, dict) else {}
    return {"status": ex.status, **{k: v for k, v in body.items() if k != "requestId"}}


@pytest.mark.req("PLINK-404-ALIKE", "PLINK-NOT-FOUND")
@pytest.mark.needs("profile")
def test_expired_forged_unknown_and_spent_links_answer_alike(timed: Timed, anon: Api, contract: Contract,
                                                             unique: Unique) -> None:
    """A forged token and an unknown one answer the same 404 NOT_FOUND, body for body; an expired link (its
    `expiresAt` passed on the organization's clock, or in real time on the target's own organization for a link
    made to expire in seconds) answers that 404 too, or 400 PAYOUT_LINK_UNUSABLE (the Errors table: "Expired,
    spent, or failed at execution"); a spent link answers that 404 too, or its original payout, or 400
    PAYOUT_LINK_UNUSABLE ("being spent or failed; not spendable")."""
    org, clock = timed, timed.clock
    lifetime = NEAR_EXPIRY if clock is REAL_TIME else LINK_LIFETIME
    keep_funded(org.api, contract)
    expiring = create_link(org.api, contract, unique, **{settings(contract)["expires_at_field"]: expiring_in(lifetime)},
                           refused_skips=None if clock is not REAL_TIME else
                           Needs(Kind.CLOCK, f"the target refuses a payout link expiring {lifetime} s ahead"))
    spent = create_link(org.api, contract, unique)
    original = paid(expect_status(submit(anon, spent.token, submission(contract, spent, unique)), 201,
                                  "spending a link"), spent)
    clock.advance(org.org_id, 2 * lifetime)
    expired = submit(anon, expiring.token, submission(contract, expiring, unique))
    answers = {
        "a forged token": submit(anon, forged(spent.token), submission(contract, spent, unique)),
        "an unknown token": submit(anon, unknown_token(), submission(contract, spent, unique)),
    }
    for what, ex in answers.items():
        expect_error(ex, 404, "NOT_FOUND", f"submitting {what}")
    if expired.status == 400:
        expect_error(expired, 400, "PAYOUT_LINK_UNUSABLE", f"submitting an expired link (accepted: {EXPIRED_ANSWERS}; "
                                                           "seen: the Errors table's 400)")
        reading = "an expired link answered 400 PAYOUT_LINK_UNUSABLE, the Errors table's reading"
    else:
        expect_error(expired, 404, "NOT_FOUND", f"submitting an expired link (accepted: {EXPIRED_ANSWERS})")
        answers = {"an expired link": expired, **answers}
        reading = "an expired link answered the 404, the submit route's reading"
    expected = _shape(answers["a forged token"])
    for what, ex in answers.items():
        expect(_shape(ex) == expected, f"{what} answers {_shape(ex)}, a forged token {expected}: they differ "
                                       f"({reading})", ex)
    again = submit(anon, spent.token, submission(contract, spent, unique))
    if again.status == 404:
        expect(_shape(again) == expected, f"the spent link answers {_shape(again)}, unlike a forged token's "
                                          f"{expected} ({reading})", again)
        return
    expect_second_submit(again, original["payoutId"], success(contract, "submitPayoutLink"))


@pytest.mark.smoke
@pytest.mark.req("PLINK-UNUSABLE", "ERR-PAYOUT-LINK-UNUSABLE")
@pytest.mark.needs("operator", "profile")
def test_a_link_failed_at_execution_is_unusable(fresh_org, anon: Api, contract: Contract, unique: Unique) -> None:
    """A submit whose payout the empty balance of a fresh organization cannot cover fails the link (profile):
    400 PAYOUT_LINK_UNUSABLE, and again once the balance would cover it; nothing is sent."""
    org = fresh_org()
    link = create_link(org.api, contract, unique)
    expect_error(submit(anon, link.token, submission(contract, link, unique)), 400, "PAYOUT_LINK_UNUSABLE",
                 "submitting a link whose payout the balance cannot cover (profile: failed at execution)")
    keep_funded(org.api, contract)
    expect_error(submit(anon, link.token, submission(contract, link, unique)), 400, "PAYOUT_LINK_UNUSABLE",
                 "submitting the failed link again once the balance covers it")
    nothing_sent(org.api, contract, link, "the failed link answered PAYOUT_LINK_UNUSABLE")


@pytest.mark.req("PLINK-USE-POST-PAYOUTS")
@pytest.mark.needs("profile")
def test_a_link_over_the_approval_threshold_is_refused(api: Api, anon: Api, contract: Contract,
                                                       unique: Unique) -> None:
    """A link for the approval threshold (as the policy shows it, else the profile's `sandbox.approval`): 403
    USE_POST_PAYOUTS, nothing sent."""
    amount = threshold(api, contract)
    link = create_link(api, contract, unique, sourceAmount=amount)
    expect_error(submit(anon, link.token, submission(contract, link, unique)), 403, "USE_POST_PAYOUTS",
                 f"submitting a link for {amount} (at the approval threshold)")
    nothing_sent(api, contract, link, "the submit answered USE_POST_PAYOUTS")


@pytest.mark.req("PLINK-USE-POST-PAYOUTS")
@pytest.mark.needs("operator", "profile")
def test_a_link_over_the_velocity_cap_is_refused(fresh_org, operator, anon: Api, contract: Contract,
                                                 unique: Unique) -> None:
    """With no threshold and a velocity cap of one payout an hour (set by the operator), a link submitted after
    the first payout: 403 USE_POST_PAYOUTS ("approval threshold or velocity cap; nothing sent"), nothing sent."""
    org = fresh_org()
    operator.set_approval_policy(org.org_id, threshold=None, velocity_cap={"count": 1, "window_seconds": 3600})
    keep_funded(org.api, contract)
    create_payout(org.api, contract, unique)
    link = create_link(org.api, contract, unique)
    expect_error(submit(anon, link.token, submission(contract, link, unique)), 403, "USE_POST_PAYOUTS",
                 "submitting a link once a velocity cap of one payout an hour is reached")
    nothing_sent(org.api, contract, link, "the submit over the velocity cap answered USE_POST_PAYOUTS")


@pytest.mark.smoke
@pytest.mark.req("PLINK-UNAVAILABLE", "ERR-PAYOUT-LINKS-UNAVAILABLE")
@pytest.mark.needs("operator", "profile")
def test_unconfigured_links_are_unavailable(fresh_org, operator, anon: Api, contract: Contract,
                                            unique: Unique) -> None:
    """Once hosted payout links are not configured for the organization (profile: an operator feature), submit
    and create answer 503 PAYOUT_LINKS_UNAVAILABLE; nothing is sent."""
    org = fresh_org()
    keep_funded(org.api, contract)
    link = create_link(org.api, contract, unique)
    operator.update_org(org.org_id, features=[*DEFAULT_FEATURES, settings(contract)["unconfigured_feature"]])
    expect_error(submit(anon, link.token, submission(contract, link, unique)), 503, "PAYOUT_LINKS_UNAVAILABLE",
                 "submitting a link of an organization without hosted payout links")
    expect_error(org.api.op("createPayoutLink", json=link.sent), 503, "PAYOUT_LINKS_UNAVAILABLE",
                 "creating a link in an organization without hosted payout links")
    nothing_sent(org.api, contract, link, "hosted payout links are unavailable")

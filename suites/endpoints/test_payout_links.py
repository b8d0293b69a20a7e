"""Endpoints > Hosted payout link: `POST /payout-links/{token}/submit`, which takes no credential.

"No credential; the path token is an opaque signed bearer token. Body: `esignConsent` (boolean), `name`,
`email`, `details` (corridor account fields), `recipientType` (`individual` or business). 201: the payout.
A second submit returns the original payout with `status: already_submitted`. 400 `VALIDATION_ERROR` leaves
the link spendable; ... 404 `NOT_FOUND` (expired, spent, forged or unknown token) or
`DESTINATION_ACCOUNT_NOT_FOUND`; 429; ..."

Links are made through the profile's `createPayoutLink` (not shown by the spec) in the target's organization,
kept funded (`keep_funded`) so that a payout can be sent. The sandbox inputs for the unknown destination and the link's
429 limit are the profile's (`sandbox.payout_links`). A second submit may answer the original payout (any of the
profile's success statuses; its status is not shown), 404 `NOT_FOUND` or 400 `PAYOUT_LINK_UNUSABLE`.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status

from .._support.accounts import with_account_tail
from .._support.balance import keep_funded
from .._support.payout_links import (
    create_link,
    expect_second_submit,
    forged,
    paid,
    settings,
    submission,
    submit,
    unknown_token,
)
from .._support.payouts import payouts_with_reference, read_payout
from .._support.profile import success
from .._support.types import Unique


@pytest.mark.parametrize("recipient_type", ["individual", "business"])
@pytest.mark.req("PLINK-NO-CREDENTIAL", "PLINK-SUBMIT")
@pytest.mark.needs("profile")
def test_submit_without_a_credential_makes_the_payout(api: Api, anon: Api, contract: Contract, unique: Unique,
                                                      recipient_type: str) -> None:
    """Submitted with no `x-api-key`, for either `recipientType` ("`individual` or business"), a link answers 201
    with the payout, readable at GET /orders/{payoutId}."""
    keep_funded(api, contract)
    link = create_link(api, contract, unique)
    ex = submit(anon, link.token, submission(contract, link, unique, recipientType=recipient_type))
    expect("x-api-key" not in ex.request.headers, "setup: the submit was sent with an x-api-key")
    expect_status(ex, 201, f"submitting a payout link with no credential for a `recipientType: {recipient_type}`")
    payout = paid(ex, link)
    read_payout(api, payout["payoutId"])


@pytest.mark.req("PLINK-ALREADY-SUBMITTED")
@pytest.mark.needs("profile")
def test_a_second_submit_returns_the_original_payout(api: Api, anon: Api, contract: Contract,
                                                     unique: Unique) -> None:
    """The same submission again sends nothing more. The spec says it twice: "A second submit returns the original
    payout with `status: already_submitted`", and a spent link answers "404 `NOT_FOUND` (expired, spent, forged or
    unknown token)" or "400 `PAYOUT_LINK_UNUSABLE` (being spent ...)". All three readings are accepted."""
    keep_funded(api, contract)
    link = create_link(api, contract, unique)
    body = submission(contract, link, unique)
    first = paid(expect_status(submit(anon, link.token, body), 201, "the first submit"), link)
    again = submit(anon, link.token, body)
    expect_second_submit(again, first["payoutId"], success(contract, "submitPayoutLink"))
    found = payouts_with_reference(api, contract, link.reference)
    others = [p.get("payoutId") for p in found if p.get("payoutId") != first["payoutId"]]
    expect(not others, f"the second submit sent another payout: {others}", again)


@pytest.mark.req("PLINK-VALIDATION-SPENDABLE")
@pytest.mark.needs("profile")
def test_a_validation_error_leaves_the_link_spendable(api: Api, anon: Api, contract: Contract,
                                                      unique: Unique) -> None:
    """A submit without the corridor's account fields is 400 VALIDATION_ERROR; the corrected submit pays."""
    keep_funded(api, contract)
    link = create_link(api, contract, unique)
    expect_error(submit(anon, link.token, submission(contract, link, unique, details={})), 400, "VALIDATION_ERROR",
                 "submitting a payout link with empty `details`")
    ex = submit(anon, link.token, submission(contract, link, unique))
    expect_status(ex, 201, "submitting the same link again with its account details")
    paid(ex, link)


@pytest.mark.req("PLINK-NOT-FOUND")
@pytest.mark.needs("profile")
def test_forged_and_unknown_tokens_are_not_found(api: Api, anon: Api, contract: Contract, unique: Unique) -> None:
    """A real token with its last character changed, and a random one: 404 NOT_FOUND, nothing paid."""
    keep_funded(api, contract)
    link = create_link(api, contract, unique)
    body = submission(contract, link, unique)
    for token, what in ((forged(link.token), "a forged token (a real one, last character changed)"),
                        (unknown_token(), "an unknown token")):
        expect_error(submit(anon, token, body), 404, "NOT_FOUND", f"submitting {what}")


@pytest.mark.req("PLINK-DESTINATION-NOT-FOUND")
@pytest.mark.needs("profile")
def test_an_unknown_destination_account_is_not_found(api: Api, anon: Api, contract: Contract,
                                                     unique: Unique) -> None:
    """An account the network does not know (profile: its identifier ends in the documented digits):
    404 DESTINATION_ACCOUNT_NOT_FOUND."""
    keep_funded(api, contract)
    link = create_link(api, contract, unique)
    rule = settings(contract)["destination_not_found"]
    body = submission(contract, link, unique)
    body["details"] = with_account_tail(body["details"], rule["value"])
    expect_error(submit(anon, link.token, body), 404, rule["error"],
                 f"submitting an account ending in {rule['value']} (profile: unknown to the network)")


@pytest.mark.req("PLINK-RATE-LIMITED")
@pytest.mark.needs("profile", "isolation")
def test_submits_beyond_the_link_limit_are_429(api: Api, anon: Api, contract: Contract, unique: Unique) -> None:
    """Invalid submits to one link (each leaves it spendable) reach 429 RATE_LIMITED with `Retry-After`
    within the profile's per-link limit."""
    link = create_link(api, contract, unique)
    body = submission(contract, link, unique, details={})
    budget = settings(contract)["rate_limit"]["per_link"] + 5
    for _ in range(budget):
        ex = submit(anon, link.token, body, raw=True)
        if ex.status == 429:
            break
        expect_error(ex, 400, "VALIDATION_ERROR", "an invalid submit below the link's rate limit")
    expect_error(ex, 429, "RATE_LIMITED", f"{budget} submits to one payout link within a minute")
    retry_after = ex.headers.get("retry-after", "")
    expect(retry_after.isdigit() and int(retry_after) > 0,
           f"the 429 carries `Retry-After: {retry_after}`, not a number of seconds", ex)

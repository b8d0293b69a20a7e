"""Hosted payout links: made with an API key, submitted with no credential.

Link creation is not shown by the spec ("Link creation (`createPayoutLink` ...): path and body not shown"): its
path and body come from the profile, and so do the sandbox inputs that reach the submit route's answers
(`sandbox.payout_links`). The submit body is the spec's (`esignConsent`, `name`, `email`, `details`,
`recipientType`) with a fresh account of the link's corridor. The token is opaque: a forged one is a real
token with its last character changed, an unknown one is random.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status, fill
from payconform.suite import Needs

from .accounts import account_details
from .answers import member
from .money import as_decimal
from .payouts import payouts_with_reference
from .profile import success
from .types import Unique


class Link(NamedTuple):
    token: str
    sent: dict[str, Any]  # the createPayoutLink body

    @property
    def reference(self) -> str:
        return self.sent["reference"]


def settings(contract: Contract) -> dict[str, Any]:
    """The profile's `sandbox.payout_links` (what reaches each answer in the sandbox)."""
    return contract.profile["sandbox"]["payout_links"]


def create_link(api: Api, contract: Contract, unique: Unique, *, refused_skips: Needs | None = None,
                **fields: Any) -> Link:
    """A payout link through the profile's `createPayoutLink`; `fields` override its body. With
    `refused_skips`, a 400 refusal of those fields skips the test for that need instead of failing it."""
    body = fill(contract.operation("createPayoutLink").get("body") or {}, {"unique": unique("plink")})
    body.update(fields)
    ex = api.op("createPayoutLink", json=body)
    if refused_skips and ex.status == 400:
        refused_skips.adding(f"(answered {ex.status})").skip()
    expect_status(ex, success(contract, "createPayoutLink"), "creating a payout link (profile: createPayoutLink)")
    token = member(ex, "token")
    expect(isinstance(token, str) and token != "", "the created payout link's bearer `token` is not a string", ex)
    return Link(token, body)


def expiring_in(seconds: float) -> str:
    """An `expiresAt` that many seconds from now (the profile's `expires_at_field`)."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="seconds")


def submission(contract: Contract, link: Link, unique: Unique, **fields: Any) -> dict[str, Any]:
    """The spec's submit body with a fresh account of the link's corridor; `fields` override it."""
    body = fill(contract.operation("submitPayoutLink").get("body") or {}, {"unique": unique("payee")})
    body["details"] = account_details(contract, link.sent["destinationCurrency"])
    body.update(fields)
    return body


def submit(anon: Api, token: str, body: dict[str, Any], **kw: Any) -> Exchange:
    """POST /payout-links/{token}/submit with no credential."""
    return anon.op("submitPayoutLink", token=token, json=body, **kw)


def forged(token: str) -> str:
    """The token with its last character changed: what an altered signature looks like to the server."""
    return token[:-1] + ("A" if token[-1] != "A" else "B")


def unknown_token() -> str:
    return secrets.token_urlsafe(40)


def paid(ex: Exchange, link: Link) -> dict[str, Any]:
    """The payout a submit answered: a `payoutId` and the link's source amount and currency."""
    payout = ex.json if isinstance(ex.json, dict) else {}
    expect(isinstance(payout.get("payoutId"), str) and payout["payoutId"] != "",
           "the submit answer is not a payout: it has no `payoutId`", ex)
    amount = payout.get("sourceAmount")
    expect(as_decimal(amount) == Decimal(link.sent["sourceAmount"])
           and payout.get("sourceCurrency") == link.sent["sourceCurrency"],
           f"the payout sends {amount} {payout.get('sourceCurrency')}, not the link's "
           f"{link.sent['sourceAmount']} {link.sent['sourceCurrency']}", ex)
    return payout


SPENT_ANSWERS = "the original payout with `status: already_submitted`, 404 NOT_FOUND or 400 PAYOUT_LINK_UNUSABLE"


def expect_second_submit(ex: Exchange, payout_id: str, statuses: list[int]) -> None:
    """A second submit of a spent link: the spec allows the original payout marked `already_submitted`, the
    404 of a spent token, or 400 PAYOUT_LINK_UNUSABLE (each refusal a full error body)."""
    if ex.status in (400, 404):
        expect_error(ex, ex.status, "PAYOUT_LINK_UNUSABLE" if ex.status == 400 else "NOT_FOUND",
                     f"submitting a spent link again (accepted: {SPENT_ANSWERS})")
        return
    expect_status(ex, statuses, f"submitting a spent link again (accepted: {SPENT_ANSWERS})")
    answer = ex.json if isinstance(ex.json, dict) else {}
    expect(answer.get("payoutId") == payout_id and answer.get("status") == "already_submitted",
           f"the second submit answered payout {answer.get('payoutId')!r} with status {answer.get('status')!r}, "
           f"not the original {payout_id!r} with status 'already_submitted' (accepted: {SPENT_ANSWERS})", ex)


def nothing_sent(api: Api, contract: Contract, link: Link, what: str) -> None:
    """No payout carries the link's reference (`GET /orders?reference=`)."""
    found = [p.get("payoutId") for p in payouts_with_reference(api, contract, link.reference)]
    expect(not found, f"{what}, yet payouts {found} carry the link's reference {link.reference!r}")

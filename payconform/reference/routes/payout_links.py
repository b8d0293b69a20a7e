"""Hosted payout links over the API (Endpoints > Hosted payout link): create with an API key, submit without one.

`createPayoutLink` (path and body from the profile: `sourceAmount`, `sourceCurrency`, `destinationCurrency`,
`country`?, `reference`, `expiresAt`?) answers 201 with the link, its bearer `token` and the `url` to submit
to. `submitPayoutLink` is authorized by the token alone (`ref.payout_links.authenticate`, which answers the
404s, the link's 429 and the 503); its body names the end user (`name`, `email`, `recipientType`), their
account (`details`, the fields of the link's corridor) and `esignConsent`, which must be true.

Sandbox (profile `sandbox.payout_links`): an account identifier ending in `0404` is unknown to the network
(404 DESTINATION_ACCOUNT_NOT_FOUND, the link stays spendable); a link whose amount meets the approval
policy answers 403 USE_POST_PAYOUTS (nothing sent, still spendable); a payout refused at execution (the
balance does not cover it) fails the link. The rules: `payout_links.py`.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..resources import payout_links
from ..resources.payout_links import PayoutLinkServer
from ..authentication.auth import Principal
from ..resources.corridors import RATES, kind_of, read_details
from ..core.errors import ApiError, field_error
from ..core.operation import Call, Operation, Reply
from ..resources.payouts import SOURCE_CURRENCIES
from ..resources.recipients import TYPES, Method
from ..core.validate import COUNTRIES, EMAIL, check

if TYPE_CHECKING:
    from starlette.requests import Request


SUBMIT = "/payout-links/{token}/submit"
DEFAULT_COUNTRY = "US"  # the recipient's country when the link names none


def link_json(call: Call, row: sqlite3.Row) -> dict[str, Any]:
    token = call.ref.payout_links.token(row["id"])
    prefix = call.path.split("/payments/", 1)[0]
    body: dict[str, Any] = {
        "id": row["id"],
        "token": token,
        "url": f"http://{call.headers.get('host', 'localhost')}{prefix}" + SUBMIT.format(token=token),
        "status": row["status"],
        "sourceAmount": row["source_amount"],
        "sourceCurrency": row["source_currency"],
        "destinationCurrency": row["destination_currency"],
        "country": row["country"],
        "reference": row["reference"],
        "expiresAt": row["expires_at"],
        "createdAt": row["created_at"],
    }
    if row["payout_id"]:
        body["payoutId"] = row["payout_id"]
    return body


def create_link(call: Call) -> Reply:
    call.ref.payout_links.check_configured(call.org_id)
    c = check(call.json())
    amount = c.amount("sourceAmount", required=True)
    source_currency = c.string("sourceCurrency", required=True, choices=SOURCE_CURRENCIES)
    destination_currency = c.string("destinationCurrency", required=True, choices=tuple(RATES))
    country = c.string("country", nullable=True, choices=COUNTRIES) or DEFAULT_COUNTRY
    reference = c.string("reference", required=True)
    expires_at = c.instant("expiresAt", nullable=True) or call.now + call.ref.payout_links.lifetime
    c.done()
    assert amount is not None and source_currency and destination_currency and reference
    if amount <= 0:
        raise ApiError("BAD_REQUEST", "sourceAmount must be positive.")
    if expires_at <= call.now:
        raise field_error("expiresAt", "must be in the future")
    row = payout_links.create(call, amount, source_currency, destination_currency, country, reference, expires_at)
    return Reply(201, link_json(call, row), row["id"])


def _submission(call: Call, link: sqlite3.Row) -> tuple[dict[str, Any], Method]:
    """The end user's contact details and account (the link's corridor), every failed field in one 400."""
    c = check(call.json())
    consent = c.boolean("esignConsent", required=True)
    name = c.string("name", required=True)
    email = c.string("email", required=True, pattern=EMAIL, max_len=254)
    recipient_type = c.string("recipientType", required=True, choices=TYPES)
    details_checker = c.nested("details", required=True)
    currency = link["destination_currency"]
    kind = kind_of(currency)
    details = read_details(details_checker, kind, currency) if details_checker else None
    if consent is False:
        c.fail("esignConsent", "must be true")
    c.done()
    assert details is not None
    contact = {"name": name, "email": email, "country": link["country"], "type": recipient_type}
    return contact, (kind, currency, details)


def submit_link(call: Call) -> Reply:
    link = call.ref.payout_links.find(call.params["token"])
    assert link is not None  # the bearer resolved it
    earlier = payout_links.earlier_outcome(call, link)
    if earlier is not None:
        return earlier
    contact, method = _submission(call, link)
    return payout_links.submit(call, link, contact, method)


def _bearer(ref: PayoutLinkServer, request: Request) -> Principal:
    return ref.payout_links.authenticate(request)


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("createPayoutLink", "POST", P + "/payout-links", create_link, idempotency="optional",
              takes_body=True, audit="payout_link.create"),
    Operation("submitPayoutLink", "POST", SUBMIT, submit_link, idempotency="required", takes_body=True,
              bearer=_bearer),
]

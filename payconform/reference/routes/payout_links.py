"""Hosted payout links (Endpoints > Hosted payout link): create with an API key, submit without one.

`createPayoutLink` (path and body from the profile: `sourceAmount`, `sourceCurrency`, `destinationCurrency`,
`country`?, `reference`, `expiresAt`?) answers 201 with the link, its bearer `token` and the `url` to submit
to. `submitPayoutLink` is authorized by the token alone (`ref.payout_links.authenticate`, which answers the
404s, the link's 429 and the 503); its body names the end user (`name`, `email`, `recipientType`), their
account (`details`, the fields of the link's corridor) and `esignConsent`, which must be true. The payout it
makes is a real payout (`payouts.place`) to a recipient registered from those details (or the recipient
already holding that account), with the link's amount, currencies and reference.

Sandbox (profile `sandbox.payout_links`): an account identifier ending in `0404` is unknown to the network
(404 DESTINATION_ACCOUNT_NOT_FOUND, the link stays spendable); a link whose amount meets the approval
policy answers 403 USE_POST_PAYOUTS (nothing sent, still spendable); a payout refused at execution (the
balance does not cover it) fails the link.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .. import ids
from ..auth import Principal
from ..clock import iso
from ..corridors import CURRENCIES, RATES, account_fingerprint, kind_of, read_details
from ..errors import ApiError, field_error
from ..operation import Call, Operation, Reply
from ..payout_links import FAILED, OPEN, SUBMITTED
from ..store import dumps
from ..validate import COUNTRIES, EMAIL, check
from .payouts import SOURCE_CURRENCIES, PayoutOrder, find, payout_json, place
from .recipients import TYPES, insert_method, insert_recipient, linked_method

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..reference import Reference

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
    if destination_currency in CURRENCIES["crypto"] and "crypto_payouts" not in call.principal.scopes:
        raise ApiError("CRYPTO_PAYOUTS_DISABLED")
    link_id = ids.new_id("plink")
    now = iso(call.now)
    call.ref.store.run(
        "INSERT INTO payout_links (id, org_id, mode, source_amount, source_currency, destination_currency, country,"
        " reference, scopes, status, expires_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (link_id, call.org_id, call.mode, str(amount), source_currency, destination_currency, country, reference,
         dumps(sorted(call.principal.scopes)), OPEN, iso(expires_at), now, now),
    )
    row = call.ref.store.one("SELECT * FROM payout_links WHERE id = ?", (link_id,))
    assert row is not None
    return Reply(201, link_json(call, row), link_id)


def _submission(call: Call, link: sqlite3.Row) -> tuple[dict[str, Any], tuple[str, str, dict[str, str]]]:
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


def _payable_account(call: Call, contact: dict[str, Any], method: tuple[str, str, dict[str, str]]) -> str:
    """The destinationAccountId of the account: the method already holding it, or a new recipient with it."""
    fingerprint = account_fingerprint(*method)
    if linked_method(call, fingerprint) is None:
        insert_method(call, insert_recipient(call, contact), method)
    held = linked_method(call, fingerprint)
    assert held is not None
    return held["destination_account_id"]


def submit_link(call: Call) -> Reply:
    links = call.ref.payout_links
    link = links.find(call.params["token"])
    assert link is not None  # the bearer resolved it
    if link["status"] == SUBMITTED:
        payout = payout_json(find(call, link["payout_id"]))
        return Reply(200, {**payout, "status": "already_submitted"}, link["payout_id"])
    if link["status"] == FAILED:
        raise ApiError("PAYOUT_LINK_UNUSABLE",
                       f"This link's payout failed at execution ({link['error_type']}); links are single use.")
    contact, method = _submission(call, link)
    if links.unknown_account(method[2]):
        raise ApiError("DESTINATION_ACCOUNT_NOT_FOUND", "The network does not know this account.")
    amount = Decimal(link["source_amount"])
    if call.ref.approvals.applies(call, amount):
        raise ApiError("USE_POST_PAYOUTS")
    order = PayoutOrder(_payable_account(call, contact, method), amount, link["source_currency"],
                        link["destination_currency"], link["reference"])
    try:
        reply = place(call, order, approved=True)
    except ApiError as refused:
        raise links.fail(link, refused, call.now) from None
    assert reply.resource_id is not None
    links.spend(link, reply.resource_id, call.now)
    return reply


def _bearer(ref: Reference, request: Request) -> Principal:
    return ref.payout_links.authenticate(request)


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("createPayoutLink", "POST", P + "/payout-links", create_link, idempotency="optional",
              takes_body=True, audit="payout_link.create"),
    Operation("submitPayoutLink", "POST", SUBMIT, submit_link, idempotency="required", takes_body=True,
              bearer=_bearer),
]

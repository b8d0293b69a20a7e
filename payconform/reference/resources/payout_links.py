"""Hosted payout links: signed opaque bearer tokens, expiry on the organization's clock, single use.

A link is made with an API key (`createPayoutLink`, a profile route) for an amount and currencies; the end
user spends it without a credential (`POST /payout-links/{token}/submit`) by supplying their own account
details, which makes a real payout. The token is `<link id>.<signature>`, the signature an HMAC-SHA256 of
the link id under a secret of this server (kept in `server_secrets`), so an altered or invented token is
refused without trusting anything in it; no token is stored.

Expired (its `expiresAt` passed on the organization's clock), forged and unknown tokens all get the one
404 of `not_found()`, the same type and detail, so a caller cannot tell them apart (Errors > Batch and payout
link errors). A spent link answers the original payout with `status: already_submitted` until it expires.
A link whose payout is refused at execution is `failed` for good: PAYOUT_LINK_UNUSABLE, then and on every
later submit. Hosted payout links are configured for every organization unless the operator lists the
feature `payout_links_unconfigured`; then both routes answer 503 PAYOUT_LINKS_UNAVAILABLE.

Statuses: `open` -> `submitted` (the payout made) | `failed`. Every rule is an attribute or method of the
instance (`ref.payout_links`), so a mutant changes one server only; `create` and `submit` are the two flows,
and the payout a submit makes is a real payout (`payouts.place`) to a recipient registered from the end
user's details (or the recipient already holding that account).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import sqlite3
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from starlette.requests import Request

from ..core import ids
from ..authentication.auth import Principal
from ..core.clock import Clock, iso
from .corridors import CURRENCIES, account_fingerprint
from ..core.errors import ApiError
from ..core.ids import same_signature
from ..states.lifecycle import ACCOUNT_FIELDS
from ..core.operation import Call, Reply
from ..core.orgs import get_org
from .payout_view import payout_json
from .payouts import PayoutOrder, PayoutServer, find, place
from ..limits.ratelimit import RateLimiter
from .recipients import Method, insert_method, insert_recipient, linked_method
from ..core.store import Store, dumps

OPEN, SUBMITTED, FAILED = "open", "submitted", "failed"
UNCONFIGURED = "payout_links_unconfigured"  # profile sandbox.payout_links.unconfigured_feature
NOT_FOUND_DETAIL = "No payout link at this address can be used (links expire and are single use)."


class PayoutLinkServer(PayoutServer, Protocol):
    """What a hosted payout link reaches besides placing its payout: the link rules themselves."""

    payout_links: PayoutLinks


class PayoutLinks:
    def __init__(self, store: Store, clock: Clock, ratelimit: RateLimiter) -> None:
        self.store = store
        self.clock = clock
        self.ratelimit = ratelimit
        self.lifetime = timedelta(days=7)  # profile sandbox.payout_links: when the body sets no expiresAt
        self.unconfigured_feature = UNCONFIGURED
        self.unknown_account_tail: str | None = "0404"  # profile sandbox.payout_links.destination_not_found
        self._secret = self._load_secret()

    def _load_secret(self) -> bytes:
        with self.store.tx():
            row = self.store.one("SELECT value FROM server_secrets WHERE name = 'payout_link'")
            if row is None:
                value = secrets.token_hex(32)
                self.store.run("INSERT INTO server_secrets (name, value) VALUES ('payout_link', ?)", (value,))
                return bytes.fromhex(value)
        return bytes.fromhex(row["value"])

    # -- tokens ---------------------------------------------------------------------------------

    def _signature(self, link_id: str) -> str:
        digest = hmac.new(self._secret, f"payout-link:{link_id}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def token(self, link_id: str) -> str:
        return f"{link_id}.{self._signature(link_id)}"

    def verify(self, token: str) -> str | None:
        """The link id a token was issued for, or None when it was not signed by this server."""
        link_id, _, signature = token.rpartition(".")
        if not link_id or not link_id.isascii() or not same_signature(signature, self._signature(link_id)):
            return None
        return link_id

    # -- the rules ------------------------------------------------------------------------------

    def not_found(self) -> ApiError:
        """The one answer for an expired, spent-and-expired, forged or unknown token."""
        return ApiError("NOT_FOUND", NOT_FOUND_DETAIL)

    def configured(self, org_id: str) -> bool:
        org = get_org(self.store, org_id)
        return org is not None and self.unconfigured_feature not in org.features

    def check_configured(self, org_id: str) -> None:
        if not self.configured(org_id):
            raise ApiError("PAYOUT_LINKS_UNAVAILABLE",
                           "Hosted payout links are not configured for this organization.")

    def unknown_account(self, details: dict[str, str]) -> bool:
        """Sandbox: an account identifier ending in `unknown_account_tail` is unknown to the network."""
        tail = self.unknown_account_tail
        return tail is not None and any(details.get(f, "").endswith(tail) for f in ACCOUNT_FIELDS)

    def expired(self, row: sqlite3.Row, now: datetime) -> bool:
        return row["expires_at"] <= iso(now)

    def find(self, token: str) -> sqlite3.Row | None:
        link_id = self.verify(token)
        if link_id is None:
            return None
        return self.store.one("SELECT * FROM payout_links WHERE id = ?", (link_id,))

    def authenticate(self, request: Request) -> Principal:
        """The submit route's bearer: the link's organization, mode and the scopes of the key that made it.

        Refusals, before anything runs: 404 (forged, unknown, expired), 429 (the link's own limit, counted on
        the organization's clock), 503 (links not configured for the organization).
        """
        row = self.find(request.path_params["token"])
        if row is None:
            raise self.not_found()
        self.ratelimit.check_bearer(row["id"], row["org_id"])
        self.check_configured(row["org_id"])
        if self.expired(row, self.clock.now(row["org_id"])):
            raise self.not_found()
        return Principal(f"payout-link:{row['id']}", row["org_id"], row["mode"], "",
                         frozenset(json.loads(row["scopes"])))

    def spend(self, row: sqlite3.Row, payout_id: str, now: datetime) -> None:
        self.store.run("UPDATE payout_links SET status = ?, payout_id = ?, updated_at = ? WHERE id = ?",
                       (SUBMITTED, payout_id, iso(now), row["id"]))

    def fail(self, row: sqlite3.Row, refused: ApiError, now: datetime) -> ApiError:
        """The link's payout was refused at execution: the link is failed for good; the error to answer."""
        self.store.run("UPDATE payout_links SET status = ?, error_type = ?, updated_at = ? WHERE id = ?",
                       (FAILED, refused.type, iso(now), row["id"]))
        return unusable(f"The payout of this link could not be executed ({refused.type}); links are single use.")


def unusable(detail: str) -> ApiError:
    """400 PAYOUT_LINK_UNUSABLE, kept with whatever the handler wrote (the link's failure is the outcome)."""
    err = ApiError("PAYOUT_LINK_UNUSABLE", detail)
    err.keeps_writes = True
    return err


def create(call: Call[PayoutLinkServer], amount: Decimal, source_currency: str, destination_currency: str, country: str,
           reference: str, expires_at: datetime) -> sqlite3.Row:
    """A new `open` link carrying the creating key's scopes (a crypto link needs `crypto_payouts`)."""
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
    return row


def earlier_outcome(call: Call[PayoutLinkServer], link: sqlite3.Row) -> Reply | None:
    """What a link that was already used answers, before its body is read: a spent link its payout
    (`status: already_submitted`); a failed one PAYOUT_LINK_UNUSABLE. None for a link still to be used."""
    if link["status"] == SUBMITTED:
        payout = payout_json(find(call, link["payout_id"]))
        return Reply(200, {**payout, "status": "already_submitted"}, link["payout_id"])
    if link["status"] == FAILED:
        raise ApiError("PAYOUT_LINK_UNUSABLE",
                       f"This link's payout failed at execution ({link['error_type']}); links are single use.")
    return None


def _payable_account(call: Call[PayoutLinkServer], contact: dict[str, Any], method: Method) -> str:
    """The destinationAccountId of the account: the method already holding it, or a new recipient with it."""
    fingerprint = account_fingerprint(*method)
    if linked_method(call, fingerprint) is None:
        insert_method(call, insert_recipient(call, contact), method)
    held = linked_method(call, fingerprint)
    assert held is not None
    return held["destination_account_id"]


def submit(call: Call[PayoutLinkServer], link: sqlite3.Row, contact: dict[str, Any], method: Method) -> Reply:
    """Spend an open link: the payout of its amount to the end user's account, or the refusal (a payout refused
    at execution fails the link)."""
    links = call.ref.payout_links
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

"""Tolerated variants of the Endpoints part for Checkout, products and recipients.

The whole suite must pass under each of them.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ....core.errors import ApiError
from ....resources.links import find_link, share_url
from ....core.operation import Reply
from ....resources.payments import payment_json, payments_limit, settle_link
from ....resources.recipients import recipient_json
from ...patching import Handler, around, body
from ...registry import variant
from ...rewrites import rewrite_replies

if TYPE_CHECKING:
    from ....core.operation import Call
    from ....reference import Reference


def _as_rows(table: Any) -> list[dict[str, Any]]:
    """The scenario table as rows `{minorUnitsEnding, outcome}`, every scalar of the original kept as text."""
    rows = table.get("data") if isinstance(table, dict) else None
    return [{"minorUnitsEnding": row.get("suffix"), "outcome": {k: v for k, v in row.items() if k != "suffix"}}
            for row in rows or [] if isinstance(row, dict)]


def _second(row: Any) -> str:
    return str(row["created_at"])[:19]  # ISO 8601 to the whole second


class _NoPages(dict):
    """A record of card pages that stays empty: no unanswered attempt ever left one."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _after_next_midnight(expires_at: str, now: str) -> bool:
    """A nightly job: the link expires at the first UTC midnight after its `expiresAt`."""
    at = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    midnight = (at + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return datetime.fromisoformat(now.replace("Z", "+00:00")) >= midnight


CARD_CURRENCIES = frozenset({"USD"})


@variant("zero-price-products",
         doc="A product priced 0 is taken: BAD_REQUEST's 'non-positive amount' is one of its examples, and no price "
             "limit is shown for a product's `unitAmount` (a negative price is still refused).")
def zero_price_products(ref: Reference) -> None:
    ref.checkout.zero_price_products = True


@variant("sandbox-scenarios-other-shape",
         doc="GET /sandbox/scenarios answers a bare array of `{minorUnitsEnding, outcome}` rows: the route is only "
             "'Table of amount-driven sandbox outcomes'; its shape is not shown.")
def sandbox_scenarios_other_shape(ref: Reference) -> None:
    rewrite_replies(ref, "getSandboxScenarios", lambda reply: dataclasses.replace(reply, body=_as_rows(reply.body)))


@variant("payments-ties-by-id",
         doc="A link's payments carry `createdAt` to the whole second and are listed newest first with payments of "
             "the same second in ascending id order, not creation order: the route says 'Newest first, "
             "cursor-paged' and gives no tie rule.")
def payments_ties_by_id(ref: Reference) -> None:
    def ties_by_id(call: Call) -> Reply:
        link = find_link(call, call.params["linkId"])
        settle_link(call, link["id"])
        rows = sorted(call.ref.store.all("SELECT * FROM checkout_payments WHERE org_id = ? AND mode = ?"
                                         " AND link_id = ?", (call.org_id, call.mode, link["id"])),
                      key=lambda r: r["id"])
        rows.sort(key=_second, reverse=True)
        scope, cursor = f"payments-by-second:{call.org_id}:{link['id']}", call.query.get("cursor")
        start = int(call.ref.cursors.decode(scope, cursor)) if cursor else 0
        end = start + payments_limit(call.query.get("limit"))
        body: dict[str, Any] = {"data": [{**payment_json(call, r), "createdAt": _second(r) + "Z"}
                                         for r in rows[start:end]]}
        if end < len(rows):
            body["nextCursor"] = call.ref.cursors.encode(scope, end)
        return Reply(200, body)

    ref.wrap_handler("listCheckoutPayments", lambda _: ties_by_id)


@variant("processor-timeout-no-card-page",
         doc="A publish the card processor did not answer leaves no card page, so a draft repriced afterwards "
             "publishes (200) once the attempt has cleared: '500 `INTERNAL` when the card processor did not "
             "answer (the card page may exist ...)'.")
def processor_timeout_no_card_page(ref: Reference) -> None:
    ref.checkout.card_pages = _NoPages()


@variant("simulate-cap-10",
         doc="A link takes at most 10 simulated payments; the 11th answers 400 BAD_REQUEST: 'when the link cannot "
             "take a payment (... or already at the maximum number of simulated payments)' gives no maximum.")
def simulate_cap_10(ref: Reference) -> None:
    ref.checkout.max_simulated_payments = 10


@variant("links-expire-nightly",
         doc="A sent link whose `expiresAt` has passed reads `sent` until a nightly job moves it to `expired` at the "
             "next UTC midnight: 'What moves a link to `expired`: not shown.'")
def links_expire_nightly(ref: Reference) -> None:
    ref.checkout.expiry_due = _after_next_midnight  # type: ignore[method-assign]


@variant("card-payments-usd-only",
         doc="Card payments are set up for USD only: publishing a link in another currency answers 503 INTERNAL with "
             "the reason in `detail`, the link unchanged (on create with `publish`, `publishError.type: INTERNAL`): "
             "'503 `INTERNAL` when card payments are not set up or the processor refused (reason in `detail`; link "
             "unchanged)'; '`INTERNAL` | 500 | ... also 503 when card payments are not set up'.")
def card_payments_usd_only(ref: Reference) -> None:
    call_processor = ref.checkout.call_processor

    def set_up_for_usd(call: Call, link_id: str, total: str) -> None:
        row = call.ref.store.one("SELECT currency FROM links WHERE id = ?", (link_id,))
        if row is not None and row["currency"] not in CARD_CURRENCIES:
            raise ApiError("INTERNAL", f"Card payments are not set up for {row['currency']} in this organization.",
                           status=503)
        call_processor(call, link_id, total)

    ref.checkout.call_processor = set_up_for_usd  # type: ignore[method-assign]


@variant("draft-share-url",
         doc="Every link carries its `shareUrl` from creation, drafts too; the page at it is served only once the "
             "link is `sent`: Resources > Checkout link lists `shareUrl` among the link's fields without tying it "
             "to a status, and the publish row says only '`shareUrl` serves the page'.")
def draft_share_url(ref: Reference) -> None:
    def from_creation(create: Handler) -> Handler:
        def created(call: Call) -> Reply:
            reply = create(call)
            if 200 <= reply.status < 300 and reply.resource_id:
                call.ref.store.run("UPDATE links SET share_url = COALESCE(share_url, ?) WHERE id = ?",
                                   (share_url(call, reply.resource_id), reply.resource_id))
                if isinstance(reply.body, dict):
                    reply.body["shareUrl"] = find_link(call, reply.resource_id)["share_url"]
            return reply
        return created

    ref.wrap_handler("createCheckoutLink", from_creation)


@variant("simulate-duplicate-guard",
         doc="POST /links/{linkId}/payments/simulate is guarded as a money write: an identical body under a new "
             "Idempotency-Key within 15 minutes answers 409 DUPLICATE_REQUEST_DETECTED, nothing executed: 'An "
             "identical body under a different key within 15 minutes: `409 DUPLICATE_REQUEST_DETECTED`, nothing "
             "executed' (Endpoints rule 3), a guard the Limits table scopes to 'money writes' without saying "
             "whether a simulated payment is one.")
def simulate_duplicate_guard(ref: Reference) -> None:
    ref.operations["simulateCheckoutPayment"] = dataclasses.replace(ref.operations["simulateCheckoutPayment"],
                                                                    money_write=True)


@variant("recipient-provider-unavailable-non-ascii",
         doc="The payout-account provider cannot register a recipient whose `name` has a character outside ASCII: "
             "503 PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE, nothing saved. createBeneficiary 'answers include ... 503' "
             "and the error table gives the type 503 ('The account could not be registered; nothing was saved').")
def recipient_provider_unavailable_non_ascii(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def create_beneficiary(original: Handler, call: Call) -> Reply:
        name = body(call).get("name")
        if isinstance(name, str) and not name.isascii():
            raise ApiError("PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE", "the provider cannot register this name")
        return original(call)


@variant("recipient-delete-repeatable",
         doc="Deleting a recipient that is already deleted answers 200 again with the recipient and its first "
             "`deletedAt`: 'Delete a recipient (`deleteBeneficiary`; 200, 404)' does not say which a deleted one "
             "gets, and a recipient carries `deletedAt` (a delete may be soft).")
def recipient_delete_repeatable(ref: Reference) -> None:
    @around(ref, "deleteBeneficiary")
    def delete_beneficiary(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            deleted = ref.store.one(
                "SELECT * FROM recipients WHERE id = ? AND org_id = ? AND mode = ? AND deleted_at IS NOT NULL",
                (call.params["recipientId"], call.org_id, call.mode))
            if err.type != "NOT_FOUND" or deleted is None:
                raise
            return Reply(200, recipient_json(call, deleted), deleted["id"])

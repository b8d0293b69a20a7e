"""Tolerated variants of the checkout sandbox: shapes, limits and triggers the spec leaves open."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import ApiError
from ..links import find_link, share_url
from ..operation import Reply
from ..payments import payment_json, payments_limit, settle_link
from . import variant
from .rewrites import rewrite_replies

if TYPE_CHECKING:
    from ..operation import Call
    from ..reference import Handler, Reference


def _as_rows(table: Any) -> list[dict[str, Any]]:
    """The scenario table as rows `{minorUnitsEnding, outcome}`, every scalar of the original kept as text."""
    rows = table.get("data") if isinstance(table, dict) else None
    return [{"minorUnitsEnding": row.get("suffix"), "outcome": {k: v for k, v in row.items() if k != "suffix"}}
            for row in rows or [] if isinstance(row, dict)]


@variant("sandbox-scenarios-other-shape",
         doc="GET /sandbox/scenarios answers a bare array of `{minorUnitsEnding, outcome}` rows: the route is only "
             "'Table of amount-driven sandbox outcomes'; its shape is not shown.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "getSandboxScenarios", lambda reply: dataclasses.replace(reply, body=_as_rows(reply.body)))


def _second(row: Any) -> str:
    return str(row["created_at"])[:19]  # ISO 8601 to the whole second


@variant("payments-ties-by-id",
         doc="A link's payments carry `createdAt` to the whole second and are listed newest first with payments of "
             "the same second in ascending id order, not creation order: the route says 'Newest first, "
             "cursor-paged' and gives no tie rule.")
def _(ref: Reference) -> None:
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


class _NoPages(dict):
    """A record of card pages that stays empty: no unanswered attempt ever left one."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


@variant("processor-timeout-no-card-page",
         doc="A publish the card processor did not answer leaves no card page, so a draft repriced afterwards "
             "publishes (200) once the attempt has cleared: '500 `INTERNAL` when the card processor did not "
             "answer (the card page may exist ...)'.")
def _(ref: Reference) -> None:
    ref.checkout.card_pages = _NoPages()


@variant("simulate-cap-10",
         doc="A link takes at most 10 simulated payments; the 11th answers 400 BAD_REQUEST: 'when the link cannot "
             "take a payment (... or already at the maximum number of simulated payments)' gives no maximum.")
def _(ref: Reference) -> None:
    ref.checkout.max_simulated_payments = 10


def _after_next_midnight(expires_at: str, now: str) -> bool:
    """A nightly job: the link expires at the first UTC midnight after its `expiresAt`."""
    at = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    midnight = (at + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return datetime.fromisoformat(now.replace("Z", "+00:00")) >= midnight


@variant("links-expire-nightly",
         doc="A sent link whose `expiresAt` has passed reads `sent` until a nightly job moves it to `expired` at the "
             "next UTC midnight: 'What moves a link to `expired`: not shown.'")
def _(ref: Reference) -> None:
    ref.checkout.expiry_due = _after_next_midnight  # type: ignore[method-assign]


CARD_CURRENCIES = frozenset({"USD"})


@variant("card-payments-usd-only",
         doc="Card payments are set up for USD only: publishing a link in another currency answers 503 INTERNAL with "
             "the reason in `detail`, the link unchanged (on create with `publish`, `publishError.type: INTERNAL`): "
             "'503 `INTERNAL` when card payments are not set up or the processor refused (reason in `detail`; link "
             "unchanged)'; '`INTERNAL` | 500 | ... also 503 when card payments are not set up'.")
def _(ref: Reference) -> None:
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
def _(ref: Reference) -> None:
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
def _(ref: Reference) -> None:
    ref.operations["simulateCheckoutPayment"] = dataclasses.replace(ref.operations["simulateCheckoutPayment"],
                                                                    money_write=True)

"""Checkout links (States > Checkout link): priced from products, published through the card processor.

A link made from a product copies the product's name and price at that moment (later product edits do
not reprice it) while description and image are read live. Every product a link is made from counts it
in `linkCount` until the link is deleted. Publishing calls the simulated card processor
(`ref.checkout.call_processor`); a failed publish during create is kept as `publishError`. What moves
a link to `expired` is not shown; here a `sent` link whose `expiresAt` has passed (on the organization's
clock) reads `expired`, while an expired draft stays a draft that answers LINK_EXPIRED on publish. An edit
while a publish of the link is in flight answers 409 CONFLICT, as a second publish does.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from ..core import ids
from ..states.checkout import CheckoutRules, CheckoutServer
from ..core.clock import Clock, iso
from ..core.errors import ApiError
from ..core.money import fmt
from ..core.operation import Call
from .products import find_product, unit_amount
from ..core.store import dumps

PUBLIC_PAGE = "/pay/{linkId}"
Requested = list[tuple[str, int]]  # (productId, quantity) per item


class LinkServer(CheckoutServer, Protocol):
    """What a checkout link reaches: the organization's clock and the checkout rules (expiry, processor)."""

    clock: Clock
    checkout: CheckoutRules


def _live_product(call: Call[LinkServer], product_id: str) -> sqlite3.Row | None:
    return call.ref.store.one("SELECT description, image_url FROM products WHERE id = ?", (product_id,))


def link_json(call: Call[LinkServer], row: sqlite3.Row) -> dict[str, Any]:
    items = []
    for item in json.loads(row["items"]):
        product = _live_product(call, item["productId"])
        items.append({**item, "description": product["description"] if product else None,
                      "imageUrl": product["image_url"] if product else None})
    body = {
        "id": row["id"],
        "status": row["status"],
        "productId": row["product_id"],
        "items": items,
        "currency": row["currency"],
        "totalAmount": row["total_amount"],
        "expiresAt": row["expires_at"],
        "shareUrl": row["share_url"],
        "rails": ["card"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }
    if row["publish_error"]:
        body["publishError"] = json.loads(row["publish_error"])
    return body


def _priced(call: Call[LinkServer], requested: Requested) -> tuple[list[dict[str, Any]], str, str]:
    """Items copying each product's name and price now, the link's currency and its total."""
    items, currencies, total = [], set(), Decimal(0)
    for product_id, quantity in requested:
        product = find_product(call, product_id)
        if product["archived"]:
            raise ApiError("BAD_REQUEST", f"Product {product_id} is archived; new links cannot be made from it.")
        items.append({"productId": product_id, "name": product["name"], "unitAmount": product["unit_amount"],
                      "currency": product["currency"], "quantity": quantity})
        currencies.add(product["currency"])
        total += unit_amount(product) * quantity
    if len(currencies) > 1:
        raise ApiError("BAD_REQUEST", "All items of a link must share one currency.")
    return items, currencies.pop(), fmt(total)


def _count_links(call: Call[LinkServer], items: list[dict[str, Any]], delta: int) -> None:
    for product_id in {item["productId"] for item in items}:
        call.ref.store.run("UPDATE products SET link_count = link_count + ? WHERE id = ?", (delta, product_id))


def create(call: Call[LinkServer], requested: Requested, product_id: str | None, expires_at: datetime | None,
           publish: bool | None) -> sqlite3.Row:
    """A draft priced now (published at once when asked; a failed publish is kept as `publishError`)."""
    items, currency, total = _priced(call, requested)
    link_id, now = ids.new_id("lnk"), iso(call.now)
    call.ref.store.run(
        "INSERT INTO links (id, org_id, mode, product_id, items, currency, total_amount, status, expires_at,"
        " created_at, updated_at) VALUES (?,?,?,?,?,?,?,'draft',?,?,?)",
        (link_id, call.org_id, call.mode, product_id, dumps(items), currency, total,
         iso(expires_at) if expires_at else None, now, now),
    )
    _count_links(call, items, 1)
    if publish:
        try:
            _publish(call, find_link(call, link_id))
        except ApiError as err:
            call.ref.store.run("UPDATE links SET publish_error = ? WHERE id = ?",
                               (dumps({"type": err.type, "detail": err.detail}), link_id))
    return find_link(call, link_id)


def find_link(call: Call[LinkServer], link_id: str) -> sqlite3.Row:
    """The link of this organization and mode, `sent` turned `expired` once its `expiresAt` has passed."""
    row = call.ref.store.one(
        "SELECT * FROM links WHERE id = ? AND org_id = ? AND mode = ? AND deleted_at IS NULL",
        (link_id, call.org_id, call.mode),
    )
    if row is None:
        raise ApiError("NOT_FOUND", "No such link in this organization.")
    return expire_if_due(call.ref, row, iso(call.now))


def expire_if_due(ref: LinkServer, row: sqlite3.Row, now: str) -> sqlite3.Row:
    """The row, `sent` turned `expired` when `ref.checkout.expiry_due` says its `expiresAt` has come."""
    store = ref.store
    if row["status"] == "sent" and row["expires_at"] and ref.checkout.expiry_due(row["expires_at"], now):
        store.run("UPDATE links SET status = 'expired', updated_at = ? WHERE id = ?", (row["expires_at"], row["id"]))
        return store.one("SELECT * FROM links WHERE id = ?", (row["id"],))  # type: ignore[return-value]
    return row


def public_link(ref: LinkServer, link_id: str) -> sqlite3.Row | None:
    """The link behind a public page (any organization: the URL is the credential), expired if due."""
    row = ref.store.one("SELECT * FROM links WHERE id = ? AND deleted_at IS NULL", (link_id,))
    if row is None:
        return None
    return expire_if_due(ref, row, iso(ref.clock.now(row["org_id"])))


def update(call: Call[LinkServer], link_id: str, *, reprice: tuple[Requested, str | None] | None, set_expiry: bool,
           expires_at: datetime | None) -> sqlite3.Row:
    """Edit a draft: a new `expiresAt` (`set_expiry`; None clears it) and/or reprice it from
    `(requested items, productId)`. The link."""
    row = find_link(call, link_id)
    if call.ref.checkout.publish_running(call, row["id"]):
        raise ApiError("CONFLICT", "A publish of this link is in flight; re-read it before editing.")
    if row["status"] != "draft":
        raise ApiError("BAD_REQUEST", f"The link is {row['status']}; only a draft can be edited.")
    if set_expiry:
        call.ref.store.run("UPDATE links SET expires_at = ? WHERE id = ?",
                           (iso(expires_at) if expires_at else None, row["id"]))
    if reprice is not None:
        requested, product_id = reprice
        items, currency, total = _priced(call, requested)
        _count_links(call, json.loads(row["items"]), -1)
        _count_links(call, items, 1)
        call.ref.store.run("UPDATE links SET product_id = ?, items = ?, currency = ?, total_amount = ? WHERE id = ?",
                           (product_id, dumps(items), currency, total, row["id"]))
    call.ref.store.run("UPDATE links SET updated_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    return find_link(call, row["id"])


def share_url(call: Call[LinkServer], link_id: str) -> str:
    """The public page, served by this server outside the API prefix."""
    host = call.headers.get("host", "localhost")
    return f"http://{host}" + PUBLIC_PAGE.format(linkId=link_id)


def _publish(call: Call[LinkServer], row: sqlite3.Row) -> None:
    """draft -> sent: expiry first (before any processor call), then conflicts, then the card processor."""
    if row["status"] == "sent":
        return
    if row["status"] != "draft":
        raise ApiError("BAD_REQUEST", f"A {row['status']} link cannot be published again.")
    if row["expires_at"] and row["expires_at"] <= iso(call.now):
        raise ApiError("LINK_EXPIRED", "The draft's expiresAt has passed; PATCH a later one (or null) and publish.")
    rules = call.ref.checkout
    blocked = rules.publish_blocked(row["id"], row["total_amount"], call.now)
    if blocked is None and rules.publish_in_flight(call, row["id"]):
        blocked = "Another publish or edit of this link is in flight; re-read it."
    if blocked is not None:
        raise ApiError("CONFLICT", blocked)
    rules.call_processor(call, row["id"], row["total_amount"])
    call.ref.store.run("UPDATE links SET status = 'sent', share_url = ?, publish_error = NULL, updated_at = ?"
                       " WHERE id = ?", (share_url(call, row["id"]), iso(call.now), row["id"]))


def publish(call: Call[LinkServer], link_id: str) -> sqlite3.Row:
    row = find_link(call, link_id)
    _publish(call, row)
    return find_link(call, row["id"])


def pause(call: Call[LinkServer], link_id: str) -> sqlite3.Row:
    """draft or sent -> cancelled (permanent; payments untouched); expired is returned as is."""
    row = find_link(call, link_id)
    if row["status"] in ("draft", "sent"):
        call.ref.store.run("UPDATE links SET status = 'cancelled', updated_at = ? WHERE id = ?",
                           (iso(call.now), row["id"]))
    return find_link(call, row["id"])


def delete(call: Call[LinkServer], link_id: str) -> sqlite3.Row:
    """Delete a draft (a link that was live cannot be); the link as it was."""
    row = find_link(call, link_id)
    if row["status"] != "draft":
        raise ApiError("BAD_REQUEST", "Only a draft link can be deleted; a link that was live cannot.")
    call.ref.store.run("UPDATE links SET deleted_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    _count_links(call, json.loads(row["items"]), -1)
    return row

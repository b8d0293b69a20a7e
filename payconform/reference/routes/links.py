"""Checkout links over the API, prefix `/checkout/organizations/{orgId}/links`: create, list, read, update,
publish, pause, delete (the rules: `links.py`)."""

from __future__ import annotations


from ..resources import links
from ..core.clock import iso
from ..core.errors import ApiError
from ..resources.links import expire_if_due, find_link, link_json
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page
from ..core.validate import Checker, check

MAX_ITEMS = 20


def _requested_items(c: Checker) -> links.Requested:
    """[(productId, quantity)] from `productId` or `items` (exactly one of the two; null counts as absent)."""
    has_product, has_items = c.obj.get("productId") is not None, c.obj.get("items") is not None
    if has_product and has_items:
        raise ApiError("BAD_REQUEST", "Send productId or items, not both.")
    product_id = c.string("productId", max_len=100)
    raw_items = c.obj.get("items")
    if not has_product and not has_items:
        c.fail("productId", "productId or items is required")
    if product_id is not None:
        return [(product_id, 1)]
    if not isinstance(raw_items, list) or not 1 <= len(raw_items) <= MAX_ITEMS:
        if has_items:
            c.fail("items", f"must be a list of 1-{MAX_ITEMS} items")
        return []
    requested = []
    for i, raw in enumerate(raw_items):
        if not isinstance(raw, dict):
            c.fail(f"items[{i}]", "must be an object")
            continue
        item = Checker(raw, f"items[{i}].")
        item.errors = c.errors
        pid = item.string("productId", required=True, max_len=100)
        quantity = item.integer("quantity", low=1, high=1000)
        if pid is not None:
            requested.append((pid, quantity or 1))
    return requested


def create_link(call: Call) -> Reply:
    c = check(call.json())
    requested = _requested_items(c)
    expires_at = c.instant("expiresAt", nullable=True)
    publish = c.boolean("publish")
    c.done()
    row = links.create(call, requested, c.obj.get("productId"), expires_at, publish)
    return Reply(201, link_json(call, row), row["id"])


def get_link(call: Call) -> Reply:
    return Reply(200, link_json(call, find_link(call, call.params["linkId"])))


def list_links(call: Call) -> Reply:
    q = call.query
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="links", scope=f"links:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ? AND deleted_at IS NULL", params=(call.org_id, call.mode),
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"),
    )
    now = iso(call.now)
    return Reply(200, page(call, [link_json(call, expire_if_due(call.ref, r, now)) for r in rows], next_cursor))


def update_link(call: Call) -> Reply:
    """PATCH a draft: `expiresAt` (a later one or null), or reprice it with `productId` / `items`."""
    c = check(call.json())
    reprice = c.present("productId") or c.present("items")
    requested = _requested_items(c) if reprice else []
    expires_at = c.instant("expiresAt", nullable=True)
    c.done()
    row = links.update(call, call.params["linkId"], reprice=(requested, c.obj.get("productId")) if reprice else None,
                       set_expiry=c.present("expiresAt"), expires_at=expires_at)
    return Reply(200, link_json(call, row), row["id"])


def publish_link(call: Call) -> Reply:
    row = links.publish(call, call.params["linkId"])
    return Reply(200, link_json(call, row), row["id"])


def pause_link(call: Call) -> Reply:
    row = links.pause(call, call.params["linkId"])
    return Reply(200, link_json(call, row), row["id"])


def delete_link(call: Call) -> Reply:
    row = links.delete(call, call.params["linkId"])
    return Reply(200, {**link_json(call, row), "deleted": True}, row["id"])


P = "/checkout/organizations/{orgId}/links"
OPERATIONS = [
    Operation("createCheckoutLink", "POST", P, create_link, idempotency="required", takes_body=True),
    Operation("listCheckoutLinks", "GET", P, list_links),
    Operation("getCheckoutLink", "GET", P + "/{linkId}", get_link),
    Operation("updateCheckoutLink", "PATCH", P + "/{linkId}", update_link, idempotency="required", takes_body=True),
    Operation("publishCheckoutLink", "POST", P + "/{linkId}/publish", publish_link, idempotency="required"),
    Operation("pauseCheckoutLink", "POST", P + "/{linkId}/pause", pause_link, idempotency="required"),
    Operation("deleteCheckoutLink", "DELETE", P + "/{linkId}", delete_link, idempotency="required"),
]

"""Mutants of the Resources part for Checkout products, links, payments and refunds.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ...core.clock import iso, parse_instant
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ..patching import Handler, around, body
from ..registry import mutant
from ..rewrites import data_rows, rewrite_replies

if TYPE_CHECKING:
    from ...reference import Reference

LINK_ANSWERS = ("createCheckoutLink", "getCheckoutLink", "listCheckoutLinks", "updateCheckoutLink",
                "publishCheckoutLink", "pauseCheckoutLink")


def _rewrite_links(ref: Reference, change: Callable[[dict[str, Any]], None]) -> None:
    """Every link the link routes answer (the body, or each row of the list) goes through `change`."""
    def each(reply: Reply) -> Reply:
        for link in data_rows(reply) or ([reply.body] if isinstance(reply.body, dict) else []):
            change(link)
        return reply

    for op_id in LINK_ANSWERS:
        rewrite_replies(ref, op_id, each)


@mutant("payment-decimals-wrong", reqs=["PAY-FIELDS", "CONV-MONEY-CHECKOUT-BASE-UNITS"],
        doc="Payment reads report `decimals: 3` beside base units counted in hundredths.")
def payment_decimals_wrong(ref: Reference) -> None:
    def shift(value: Any) -> None:
        if isinstance(value, dict):
            if "amountBase" in value and value.get("decimals") == 2:
                value["decimals"] = 3
            for item in value.values():
                shift(item)
        elif isinstance(value, list):
            for item in value:
                shift(item)

    ref.response_filters.append(lambda out: shift(out.body))


@mutant("link-product-and-items-accepted", reqs=["LINK-PRODUCT-XOR-ITEMS"],
        doc="A link create with both `productId` and `items` ignores `items` instead of answering BAD_REQUEST.")
def link_product_and_items_accepted(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def create_checkout_link(original: Handler, call: Call) -> Reply:
        sent = body(call)
        if sent.get("productId") is not None:
            sent.pop("items", None)
        return original(call)


@mutant("publish-on-create-ignored", reqs=["LINK-PUBLISH-ON-CREATE"],
        doc="`publish: true` on create leaves the link a draft, without `publishError`.")
def publish_on_create_ignored(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def create_checkout_link(original: Handler, call: Call) -> Reply:
        body(call).pop("publish", None)
        return original(call)


@mutant("failed-publish-on-create-is-an-error", reqs=["LINK-PUBLISH-ON-CREATE"],
        doc="A create whose publish failed answers the publish error instead of 201 with `publishError`.")
def failed_publish_on_create_is_an_error(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def create_checkout_link(original: Handler, call: Call) -> Reply:
        reply = original(call)
        failed = reply.body.get("publishError")
        if failed:
            raise ApiError(failed["type"], failed.get("detail"), status=503)
        return reply


@mutant("link-follows-product-price", reqs=["PROD-LINK-COPIES"],
        doc="A link's items show the product's current price instead of the price when the link was made.")
def link_follows_product_price(ref: Reference) -> None:
    @around(ref, "getCheckoutLink")
    def get_checkout_link(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for item in reply.body["items"]:
            row = ref.store.one("SELECT unit_amount FROM products WHERE id = ?", (item["productId"],))
            item["unitAmount"] = row["unit_amount"] if row else item["unitAmount"]
        return reply


@mutant("link-description-frozen", reqs=["PROD-LINK-COPIES"],
        doc="A link's items keep the product description of when the link was made instead of reading it live.")
def link_description_frozen(ref: Reference) -> None:
    frozen: dict[str, list] = {}

    @around(ref, "createCheckoutLink")
    def create_checkout_link(original: Handler, call: Call) -> Reply:
        reply = original(call)
        frozen[reply.body["id"]] = [item["description"] for item in reply.body["items"]]
        return reply

    @around(ref, "getCheckoutLink")
    def get_checkout_link(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for item, description in zip(reply.body["items"], frozen.get(reply.body["id"], []), strict=False):
            item["description"] = description
        return reply


@mutant("link-without-product-id", reqs=["LINK-FIELDS"],
        doc="A link made from a product does not name it: `productId` is left out, the product only in `items`.")
def link_without_product_id(ref: Reference) -> None:
    _rewrite_links(ref, lambda link: link.pop("productId", None))


@mutant("link-default-expiry", reqs=["LINK-FIELDS"],
        doc="A link made without `expiresAt` reads an expiry 30 days after its creation instead of null.")
def link_default_expiry(ref: Reference) -> None:
    def expiring(link: dict[str, Any]) -> None:
        created = parse_instant(str(link.get("createdAt")))
        if link.get("expiresAt") is None and created is not None:
            link["expiresAt"] = iso(created + timedelta(days=30))

    _rewrite_links(ref, expiring)


@mutant("link-status-canceled", reqs=["LINK-STATUS-VALUES"],
        doc="A paused link reads `canceled`, spelled as payouts spell it, not `cancelled`.")
def link_status_canceled(ref: Reference) -> None:
    def respelled(link: dict[str, Any]) -> None:
        if link.get("status") == "cancelled":
            link["status"] = "canceled"

    _rewrite_links(ref, respelled)

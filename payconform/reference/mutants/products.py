"""Mutants of the checkout product rows: create, name uniqueness among active products, PATCH, archive,
delete while linked, links copying name and price, 404 across organizations, and Endpoints rule 2.

Each wraps one operation's handler (`around`, from the recipients mutants) on this server instance only.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Iterator

from ..errors import ApiError, validation_error
from ..operation import Call, Operation, Reply
from . import mutant, variant
from .recipients import Handler, around, body

if TYPE_CHECKING:
    from ..auth import Principal
    from ..reference import Reference

PRODUCT_OPS = ("getCheckoutProduct", "updateCheckoutProduct", "deleteCheckoutProduct")


@contextlib.contextmanager
def name_clash_hidden(ref: Reference, call: Call, name: object) -> Iterator[None]:
    """Active products of the organization named `name` count as archived while the block runs."""
    rows = ref.store.all("SELECT id FROM products WHERE org_id = ? AND mode = ? AND name = ? AND archived = 0"
                         " AND deleted_at IS NULL", (call.org_id, call.mode, str(name)))
    ids = [r["id"] for r in rows if r["id"] != call.params.get("productId")]
    for pid in ids:
        ref.store.run("UPDATE products SET archived = 1 WHERE id = ?", (pid,))
    try:
        yield
    finally:
        for pid in ids:
            ref.store.run("UPDATE products SET archived = 0 WHERE id = ?", (pid,))


@mutant("product-create-ignores-description", reqs=["PROD-CREATE"],
        doc="POST /products answers 201 but drops the `description` sent.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        body(call).pop("description", None)
        return original(call)


@mutant("product-duplicate-names-allowed", reqs=["PROD-CREATE-CONFLICT", "PROD-NAME-UNIQUE"],
        doc="POST /products with the name of an active product answers 201 instead of 409.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        with name_clash_hidden(ref, call, body(call).get("name")):
            return original(call)


@mutant("product-rename-to-taken-name-allowed", reqs=["PROD-UPDATE-NAME-CONFLICT"],
        doc="PATCH /products/{productId} to the name of another active product answers 200 instead of 409.")
def _(ref: Reference) -> None:
    @around(ref, "updateCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        with name_clash_hidden(ref, call, body(call).get("name")):
            return original(call)


@mutant("archived-name-still-taken", reqs=["PROD-NAME-UNIQUE"],
        doc="Names are unique among all products: the name of an archived product cannot be used again (409).")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        if ref.store.one("SELECT id FROM products WHERE org_id = ? AND mode = ? AND name = ? AND deleted_at IS NULL",
                         (call.org_id, call.mode, str(body(call).get("name")))):
            raise ApiError("CONFLICT", "A product already has this name.")
        return original(call)


@mutant("product-patch-clears-omitted-description", reqs=["PROD-UPDATE"],
        doc="PATCH /products/{productId} treats an omitted `description` as null (replace, not update).")
def _(ref: Reference) -> None:
    @around(ref, "updateCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        body(call).setdefault("description", None)
        return original(call)


@mutant("archived-product-still-links", reqs=["PROD-ARCHIVE"],
        doc="A new checkout link can be made from an archived product.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        pid = str(body(call).get("productId"))
        archived = ref.store.one("SELECT archived FROM products WHERE id = ?", (pid,))
        ref.store.run("UPDATE products SET archived = 0 WHERE id = ?", (pid,))
        try:
            return original(call)
        finally:
            ref.store.run("UPDATE products SET archived = ? WHERE id = ?", (archived[0] if archived else 0, pid))


@mutant("product-delete-noop", reqs=["PROD-DELETE"],
        doc="DELETE /products/{productId} answers 200 but the product stays.")
def _(ref: Reference) -> None:
    @around(ref, "deleteCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        return ref.operations["getCheckoutProduct"].handler(call)


@mutant("product-delete-with-links-allowed", reqs=["PROD-DELETE-LINKCOUNT"],
        doc="DELETE /products/{productId} deletes a product links were made from instead of 409.")
def _(ref: Reference) -> None:
    @around(ref, "deleteCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE products SET link_count = 0 WHERE id = ? AND org_id = ?",
                      (call.params["productId"], call.org_id))
        return original(call)


@mutant("link-follows-product-price", reqs=["PROD-LINK-COPIES"],
        doc="A link's items show the product's current price instead of the price when the link was made.")
def _(ref: Reference) -> None:
    @around(ref, "getCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for item in reply.body["items"]:
            row = ref.store.one("SELECT unit_amount FROM products WHERE id = ?", (item["productId"],))
            item["unitAmount"] = row["unit_amount"] if row else item["unitAmount"]
        return reply


@mutant("link-description-frozen", reqs=["PROD-LINK-COPIES"],
        doc="A link's items keep the product description of when the link was made instead of reading it live.")
def _(ref: Reference) -> None:
    frozen: dict[str, list] = {}

    @around(ref, "createCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        frozen[reply.body["id"]] = [item["description"] for item in reply.body["items"]]
        return reply

    @around(ref, "getCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for item, description in zip(reply.body["items"], frozen.get(reply.body["id"], []), strict=False):
            item["description"] = description
        return reply


@mutant("product-of-another-org-visible", reqs=["CHK-404-FOREIGN"],
        doc="A product id of another organization is found (read, updated, deleted) under this organization's path.")
def _(ref: Reference) -> None:
    @around(ref, *PRODUCT_OPS)
    def _(original: Handler, call: Call) -> Reply:
        owner = ref.store.one("SELECT org_id FROM products WHERE id = ? AND mode = ?",
                              (call.params["productId"], call.mode))
        if owner is not None:
            call.org_id = owner["org_id"]
        return original(call)


@mutant("product-not-found-as-400", reqs=["ERR-NOT-FOUND", "CHK-404-FOREIGN", "PROD-DELETE"],
        doc="Product routes answer an unknown or deleted product id with 400 VALIDATION_ERROR, not 404.")
def _(ref: Reference) -> None:
    @around(ref, *PRODUCT_OPS)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "NOT_FOUND":
                raise validation_error([{"field": "productId", "reason": "unknown"}]) from None
            raise


@mutant("unverified-org-checkout-allowed", reqs=["CHK-VERIFICATION-REQUIRED"],
        doc="Checkout calls work before the business has completed verification to accept payments.")
def _(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(principal, org_id, dataclasses.replace(op, payments_gate=False))

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@variant("zero-price-products",
         doc="A product priced 0 is taken: BAD_REQUEST's 'non-positive amount' is one of its examples, and no price "
             "limit is shown for a product's `unitAmount` (a negative price is still refused).")
def _(ref: Reference) -> None:
    ref.checkout.zero_price_products = True


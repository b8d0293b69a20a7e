"""Checkout products over the API, prefix `/checkout/organizations/{orgId}/products` (rules: `products.py`)."""

from __future__ import annotations

import re
from typing import Any

from ..resources import products
from ..core.errors import ApiError
from ..core.money import fmt
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page
from ..resources.products import find_product, product_json
from ..core.validate import CURRENCY, Checker, check

URL = re.compile(r"^https?://\S+$")


def _fields(c: Checker, *, create: bool, free: bool = False) -> dict[str, Any]:
    """The body as product columns; on create every field the product needs is required. `free`: a price of 0
    is taken (the spec shows no price limits), else refused as a non-positive amount."""
    values: dict[str, Any] = {}
    name = c.string("name", required=create)
    currency = c.string("currency", required=create, pattern=CURRENCY, max_len=3)
    amount = c.amount("unitAmount", required=create)
    for field, column, rules in (("description", "description", {"max_len": 2000, "min_len": 0}),
                                 ("imageUrl", "image_url", {"max_len": 2000, "pattern": URL})):
        if c.present(field):
            values[column] = c.string(field, nullable=True, **rules)  # type: ignore[arg-type]
    archived = None if create else c.boolean("archived")
    c.done()
    if amount is not None and (amount < 0 or (amount == 0 and not free)):
        raise ApiError("BAD_REQUEST", "unitAmount must be positive.")
    values.update({k: v for k, v in (("name", name), ("currency", currency), ("archived", archived)) if v is not None})
    if amount is not None:
        values["unit_amount"] = fmt(amount)
    return values


def create_product(call: Call) -> Reply:
    fields = _fields(check(call.json()), create=True, free=call.ref.checkout.zero_price_products)
    row = products.create(call, fields)
    return Reply(201, product_json(row), row["id"])


def update_product(call: Call) -> Reply:
    fields = _fields(check(call.json()), create=False, free=call.ref.checkout.zero_price_products)
    row = products.update(call, call.params["productId"], fields)
    return Reply(200, product_json(row), row["id"])


def delete_product(call: Call) -> Reply:
    row = products.delete(call, call.params["productId"])
    return Reply(200, {**product_json(row), "deleted": True}, row["id"])


def get_product(call: Call) -> Reply:
    return Reply(200, product_json(find_product(call, call.params["productId"])))


def list_products(call: Call) -> Reply:
    """Active products by default; `includeArchived=true` lists archived ones too."""
    q = call.query
    limit = q.limit(default=20, low=1, high=100)
    include = q.get("includeArchived")
    if include not in (None, "true", "false"):
        raise ApiError("VALIDATION_ERROR", errors=[{"field": "includeArchived", "reason": "true or false"}])
    where = "org_id = ? AND mode = ? AND deleted_at IS NULL" + ("" if include == "true" else " AND archived = 0")
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="products", scope=f"products:{call.org_id}:{call.mode}:{include}",
        where=where, params=(call.org_id, call.mode), limit=limit, cursor=q.get("cursor"),
    )
    return Reply(200, page(call, [product_json(r) for r in rows], next_cursor))


P = "/checkout/organizations/{orgId}/products"
OPERATIONS = [
    Operation("createCheckoutProduct", "POST", P, create_product, idempotency="required", takes_body=True),
    Operation("listCheckoutProducts", "GET", P, list_products),
    Operation("getCheckoutProduct", "GET", P + "/{productId}", get_product),
    Operation("updateCheckoutProduct", "PATCH", P + "/{productId}", update_product, idempotency="required",
              takes_body=True),
    Operation("deleteCheckoutProduct", "DELETE", P + "/{productId}", delete_product, idempotency="required"),
]

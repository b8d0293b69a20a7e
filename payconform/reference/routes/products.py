"""Checkout products, prefix `/checkout/organizations/{orgId}/products`.

A product has one fixed price. Its name is unique among active (not archived, not deleted) products.
Archiving hides it from the default list and refuses new links; deleting is allowed only while no link
was made from it (`linkCount` 0).
"""

from __future__ import annotations

import re
import sqlite3
from decimal import Decimal
from typing import Any

from .. import ids
from ..clock import iso
from ..errors import ApiError
from ..money import fmt
from ..operation import Call, Operation, Reply
from ..paging import by_seq
from ..validate import CURRENCY, Checker, check

URL = re.compile(r"^https?://\S+$")


def product_json(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "currency": row["currency"],
        "unitAmount": row["unit_amount"],
        "description": row["description"],
        "imageUrl": row["image_url"],
        "archived": bool(row["archived"]),
        "linkCount": row["link_count"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def find_product(call: Call, product_id: str) -> sqlite3.Row:
    row = call.ref.store.one(
        "SELECT * FROM products WHERE id = ? AND org_id = ? AND mode = ? AND deleted_at IS NULL",
        (product_id, call.org_id, call.mode),
    )
    if row is None:
        raise ApiError("NOT_FOUND", "No such product in this organization.")
    return row


def _fields(c: Checker, *, create: bool) -> dict[str, Any]:
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
    if amount is not None and amount <= 0:
        raise ApiError("BAD_REQUEST", "unitAmount must be positive.")
    values.update({k: v for k, v in (("name", name), ("currency", currency), ("archived", archived)) if v is not None})
    if amount is not None:
        values["unit_amount"] = fmt(amount)
    return values


def _check_name_free(call: Call, name: str, product_id: str | None) -> None:
    clash = call.ref.store.one(
        "SELECT id FROM products WHERE org_id = ? AND mode = ? AND name = ? AND archived = 0"
        " AND deleted_at IS NULL AND id IS NOT ?",
        (call.org_id, call.mode, name, product_id),
    )
    if clash is not None:
        raise ApiError("CONFLICT", "An active product already has this name.")


def create_product(call: Call) -> Reply:
    values = _fields(check(call.json()), create=True)
    _check_name_free(call, values["name"], None)
    product_id, now = ids.new_id("prod"), iso(call.now)
    call.ref.store.run(
        "INSERT INTO products (id, org_id, mode, name, currency, unit_amount, description, image_url, created_at,"
        " updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (product_id, call.org_id, call.mode, values["name"], values["currency"], values["unit_amount"],
         values.get("description"), values.get("image_url"), now, now),
    )
    return Reply(201, product_json(find_product(call, product_id)), product_id)


def update_product(call: Call) -> Reply:
    values = _fields(check(call.json()), create=False)
    row = find_product(call, call.params["productId"])
    archived = values.get("archived", bool(row["archived"]))
    if not archived:
        _check_name_free(call, values.get("name", row["name"]), row["id"])
    for column, value in values.items():
        call.ref.store.run(f"UPDATE products SET {column} = ? WHERE id = ?", (value, row["id"]))
    call.ref.store.run("UPDATE products SET updated_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    return Reply(200, product_json(find_product(call, row["id"])), row["id"])


def delete_product(call: Call) -> Reply:
    row = find_product(call, call.params["productId"])
    if row["link_count"]:
        raise ApiError("CONFLICT", "Links were made from this product; archive it instead.")
    call.ref.store.run("UPDATE products SET deleted_at = ? WHERE id = ?", (iso(call.now), row["id"]))
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
    body: dict[str, Any] = {"data": [product_json(r) for r in rows]}
    if next_cursor:
        body["nextCursor"] = next_cursor
    return Reply(200, body)


def unit_amount(row: sqlite3.Row) -> Decimal:
    return Decimal(row["unit_amount"])


P = "/checkout/organizations/{orgId}/products"
OPERATIONS = [
    Operation("createCheckoutProduct", "POST", P, create_product, idempotency="required", takes_body=True),
    Operation("listCheckoutProducts", "GET", P, list_products),
    Operation("getCheckoutProduct", "GET", P + "/{productId}", get_product),
    Operation("updateCheckoutProduct", "PATCH", P + "/{productId}", update_product, idempotency="required",
              takes_body=True),
    Operation("deleteCheckoutProduct", "DELETE", P + "/{productId}", delete_product, idempotency="required"),
]

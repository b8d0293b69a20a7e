"""Checkout products: one fixed price each, a name unique among active products, deletable while unlinked.

Archiving hides a product from the default list and refuses new links; deleting is allowed only while no
link was made from it (`linkCount` 0). Checkout links (`links.py`) read products through `find_product`.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from typing import Any

from ..core import ids
from ..core.clock import iso
from ..core.errors import ApiError
from ..core.operation import Call, StoreServer


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


def find_product(call: Call[StoreServer], product_id: str) -> sqlite3.Row:
    row = call.ref.store.one(
        "SELECT * FROM products WHERE id = ? AND org_id = ? AND mode = ? AND deleted_at IS NULL",
        (product_id, call.org_id, call.mode),
    )
    if row is None:
        raise ApiError("NOT_FOUND", "No such product in this organization.")
    return row


def unit_amount(row: sqlite3.Row) -> Decimal:
    return Decimal(row["unit_amount"])


def _check_name_free(call: Call[StoreServer], name: str, product_id: str | None) -> None:
    clash = call.ref.store.one(
        "SELECT id FROM products WHERE org_id = ? AND mode = ? AND name = ? AND archived = 0"
        " AND deleted_at IS NULL AND id IS NOT ?",
        (call.org_id, call.mode, name, product_id),
    )
    if clash is not None:
        raise ApiError("CONFLICT", "An active product already has this name.")


def create(call: Call[StoreServer], values: dict[str, Any]) -> sqlite3.Row:
    """A new product from validated columns (`name`, `currency`, `unit_amount`, `description`?, `image_url`?)."""
    _check_name_free(call, values["name"], None)
    product_id, now = ids.new_id("prod"), iso(call.now)
    call.ref.store.run(
        "INSERT INTO products (id, org_id, mode, name, currency, unit_amount, description, image_url, created_at,"
        " updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (product_id, call.org_id, call.mode, values["name"], values["currency"], values["unit_amount"],
         values.get("description"), values.get("image_url"), now, now),
    )
    return find_product(call, product_id)


def update(call: Call[StoreServer], product_id: str, values: dict[str, Any]) -> sqlite3.Row:
    """Write the validated columns; an active product keeps its name unique. The product."""
    row = find_product(call, product_id)
    archived = values.get("archived", bool(row["archived"]))
    if not archived:
        _check_name_free(call, values.get("name", row["name"]), row["id"])
    for column, value in values.items():
        call.ref.store.run(f"UPDATE products SET {column} = ? WHERE id = ?", (value, row["id"]))
    call.ref.store.run("UPDATE products SET updated_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    return find_product(call, row["id"])


def delete(call: Call[StoreServer], product_id: str) -> sqlite3.Row:
    """Delete a product no link was made from; the product as it was."""
    row = find_product(call, product_id)
    if row["link_count"]:
        raise ApiError("CONFLICT", "Links were made from this product; archive it instead.")
    call.ref.store.run("UPDATE products SET deleted_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    return row

"""Checkout products made through the profile's `createCheckoutProduct` body with a unique name (product
names are unique among active products, so a name also tells whether a create ran)."""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, Contract, Exchange, expect, expect_status, fill

from . import runwide
from .profile import items, setup_call
from .types import Unique, shared_scope


def product_body(contract: Contract, unique: Unique, **fields: Any) -> dict[str, Any]:
    """The profile's `createCheckoutProduct` body with a unique name; `fields` override."""
    template = contract.operation("createCheckoutProduct").get("body") or {}
    body = fill(template, {"unique": unique("prod")})
    body.update(fields)
    return body


def post_product(api: Api, body: dict[str, Any]) -> Exchange:
    """Create a product from `body`; the 201 answer, which carries an `id`."""
    ex = api.op("createCheckoutProduct", json=body)
    expect_status(ex, 201, "creating a product")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the created product has no `id`", ex)
    return ex


def create_product(api: Api, contract: Contract, unique: Unique, **fields: Any) -> dict[str, Any]:
    """A new product (the created object) from `product_body(contract, unique, **fields)`."""
    return post_product(api, product_body(contract, unique, **fields)).json


def products_named(api: Api, contract: Contract, name: str) -> list[dict]:
    """Products called ``name`` on the first page of the product list (for small, fresh organizations)."""
    ex = setup_call(api, contract, "listCheckoutProducts")
    return [p for p in items(contract, "listCheckoutProducts", ex) if p.get("name") == name]


def expect_name_free(api: Api, body: dict[str, Any], what: str) -> None:
    """No active product is called ``body["name"]``, so the refused create of ``body`` did not run (Endpoints >
    Checkout: POST /products "409 name already exists", PATCH /products/{productId} "409 another active product
    has the name"): the run's name holder (`runwide`, per organization and mode), renamed to it, answers 200;
    the first time, a create of ``body`` answers 201 and becomes the holder. A rename leaves no row for the
    run's cleanup to remove, where a create per check left one."""
    ran = "the refused request must not have run"
    created: list[Exchange] = []

    def create() -> str | None:
        ex = api.op("createCheckoutProduct", json=body)
        expect_status(ex, 201, f"creating product {body['name']!r} after {what}: {ran} (a 409 means it created "
                               "the product)")
        created.append(ex)
        return ex.json.get("id") if isinstance(ex.json, dict) else None

    holder = runwide.shared(shared_scope(api), "name holder", create, lambda made: isinstance(made, str))
    if created:
        return
    ex = api.op("updateCheckoutProduct", productId=holder, json={"name": body["name"]})
    expect_status(ex, 200, f"renaming a product to {body['name']!r} after {what}: {ran} (a 409, another active "
                           "product has the name, means it created the product)")

"""Resources, Checkout product: `name`, `currency`, `unitAmount` (decimal string), `description`,
`archived` (boolean), `linkCount`. The image field's name is not given and is not checked."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_status

from .._support.answers import member
from .._support.products import post_product, product_body
from .._support.schemas import expect_schema
from .._support.types import Unique


def expect_product(ex: Exchange, sent: dict) -> None:
    """A product just created from ``sent``: the OpenAPI `Product` types, its fields as sent, not archived, no
    links yet."""
    expect_schema(ex)
    for name in ("name", "currency"):
        expect(member(ex, name) == sent[name], f"`{name}` is {member(ex, name)!r}; {sent[name]!r} was sent", ex)
    amount = member(ex, "unitAmount")
    expect(Decimal(amount) == Decimal(sent["unitAmount"]),
           f"`unitAmount` is {amount!r}; the decimal string {sent['unitAmount']!r} was sent", ex)
    if "description" in ex.json:
        expect(ex.json["description"] == sent["description"],
               f"`description` is {ex.json['description']!r}; {sent['description']!r} was sent", ex)
    expect(member(ex, "archived") is False, f"`archived` is {member(ex, 'archived')!r}, not false", ex)
    expect(member(ex, "linkCount") == 0, f"`linkCount` is {member(ex, 'linkCount')!r}; no link was made yet", ex)


@pytest.mark.req("PROD-FIELDS")
def test_product_fields(api: Api, contract: Contract, unique: Unique) -> None:
    """The create answer and a read of the product carry its fields with the OpenAPI types, as sent."""
    sent = product_body(contract, unique)
    created = post_product(api, sent)
    read = expect_status(api.op("getCheckoutProduct", productId=member(created, "id")), 200, "read the product")
    for ex in (created, read):
        expect_product(ex, sent)

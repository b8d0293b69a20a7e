"""Endpoints > Checkout, the product rows (POST /products, PATCH and DELETE /products/{productId}), and
Resources > Checkout product (name unique among active products; links copy name and price).

Reads of a product (`getCheckoutProduct`) and links (`createCheckoutLink`, `getCheckoutLink`) come from
the profile: their paths are not shown.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_error_body, expect_status

from .._support.answers import scalars
from .._support.checkout import create_link, link_exchange, publish
from .._support.money import as_decimal
from .._support.products import create_product, post_product, product_body


def _read(api: Api, product_id: str) -> dict[str, Any]:
    ex = api.op("getCheckoutProduct", productId=product_id)
    expect_status(ex, 200, "reading the product")
    return ex.json


def _patch(api: Api, product_id: str, change: dict[str, Any]) -> dict[str, Any]:
    ex = api.op("updateCheckoutProduct", productId=product_id, json=change)
    expect_status(ex, 200, f"PATCH {sorted(change)}")
    return ex.json


def _expect_conflict(ex, what: str) -> None:
    """A 409 with an error body: the spec names no type for a taken product name or a linked product's delete,
    so any type is accepted."""
    expect_status(ex, 409, what)
    expect_error_body(ex, what)


def _same_name_body(contract: Contract, unique, taken: dict[str, Any]) -> dict[str, Any]:
    """A create body that shares only its name with the body `taken`: another price and description, so that
    only the name rule can refuse it (a guard against a repeated body under a new key cannot)."""
    price = Decimal(str(taken["unitAmount"])) + 1
    return product_body(contract, unique, name=taken["name"], unitAmount=f"{price:.2f}",
                        description=unique("other product"))


@pytest.mark.req("PROD-CREATE")
def test_create_product(api: Api, contract: Contract, unique) -> None:
    """201: the product with the name, currency, price and description sent, not archived; a read agrees."""
    body = product_body(contract, unique, currency="USD", unitAmount="42.50", description=unique("desc"))
    ex = api.op("createCheckoutProduct", json=body)
    expect_status(ex, 201)
    for source, got in (("create answer", ex.json), ("read", _read(api, ex.json.get("id")))):
        for field in ("name", "currency", "description"):
            expect(got.get(field) == body[field],
                   f"{source}: `{field}` is {got.get(field)!r}, {body[field]!r} was sent", ex)
        expect(as_decimal(got.get("unitAmount")) == Decimal("42.50"),
               f"{source}: `unitAmount` is {got.get('unitAmount')!r}, \"42.50\" was sent", ex)
        expect(got.get("archived") is False, f"{source}: a new product reads `archived` {got.get('archived')!r}", ex)


@pytest.mark.req("PROD-CREATE-CONFLICT", "PROD-NAME-UNIQUE")
def test_duplicate_active_name_is_409(api: Api, contract: Contract, unique) -> None:
    """A second product with the name of an active one, at another price and with another description: 409 (an
    error body; the spec names no type, so any is accepted)."""
    first = product_body(contract, unique)
    post_product(api, first)
    _expect_conflict(api.op("createCheckoutProduct", json=_same_name_body(contract, unique, first)),
                     f"creating another product named {first['name']!r} (another price and description) while the "
                     "first is active")


@pytest.mark.req("PROD-NAME-UNIQUE", "PROD-ARCHIVE")
def test_archived_name_can_be_reused(api: Api, contract: Contract, unique) -> None:
    """Names are unique among *active* products: once a product is archived its name may be used again (by a
    product that differs in price and description, so no guard against a repeated body is in play)."""
    first = product_body(contract, unique)
    _patch(api, post_product(api, first).json["id"], {"archived": True})
    ex = api.op("createCheckoutProduct", json=_same_name_body(contract, unique, first))
    expect_status(ex, 201, "the name of an archived product is free")


@pytest.mark.req("PROD-UPDATE")
def test_patch_changes_only_what_is_sent(api: Api, contract: Contract, unique) -> None:
    """Every field is optional: a PATCH of `description` alone changes it and nothing else; a PATCH of
    name and price changes those. 200 each time, and reads agree."""
    created = create_product(api, contract, unique, unitAmount="10.00")
    description = unique("desc")
    answered = _patch(api, created["id"], {"description": description})
    got = _read(api, created["id"])
    for source, product in (("PATCH answer", answered), ("read", got)):
        expect(product.get("description") == description, f"{source}: `description` is {product.get('description')!r}")
        expect(product.get("name") == created["name"] and as_decimal(product.get("unitAmount")) == Decimal("10.00"),
               f"{source}: a PATCH of description changed name or price: {product!r}")
    name = unique("renamed")
    _patch(api, created["id"], {"name": name, "unitAmount": "12.00"})
    got = _read(api, created["id"])
    expect(got.get("name") == name and as_decimal(got.get("unitAmount")) == Decimal("12.00"),
           f"after a PATCH of name and price the product reads {got.get('name')!r} / {got.get('unitAmount')!r}")
    expect(got.get("description") == description, f"a PATCH of name and price changed description: {got!r}")


@pytest.mark.req("PROD-UPDATE-NAME-CONFLICT", "PROD-NAME-UNIQUE")
def test_rename_to_active_name_is_409(api: Api, contract: Contract, unique) -> None:
    """PATCH to the name of another active product: 409, and the name stays."""
    taken = create_product(api, contract, unique)
    other = create_product(api, contract, unique)
    ex = api.op("updateCheckoutProduct", productId=other["id"], json={"name": taken["name"]})
    _expect_conflict(ex, f"renaming a product to {taken['name']!r}, the name of another active product")
    expect(_read(api, other["id"]).get("name") == other["name"], "a refused rename changed the name", ex)


@pytest.mark.req("PROD-ARCHIVE")
def test_archive_refuses_new_links_keeps_old(api: Api, contract: Contract, unique) -> None:
    """`archived: true`: 200; a new link from the product is refused (an error; no type named); the links made
    before, a draft and a published (`sent`) one, are untouched ("existing links untouched")."""
    product = create_product(api, contract, unique)
    draft = create_link(api, contract, product["id"])
    sent = publish(api, create_link(api, contract, product["id"])["id"])
    expect_status(sent, 200, "publishing a link before the product is archived")
    archived = _patch(api, product["id"], {"archived": True})
    expect(archived.get("archived") is True, f"the PATCH answer reads `archived` {archived.get('archived')!r}")
    refused = link_exchange(api, contract, product["id"])
    expect(400 <= refused.status < 500, "a link from an archived product was not refused", refused)
    expect_error_body(refused)
    for link in (draft, sent.json):
        ex = api.op("getCheckoutLink", linkId=link["id"])
        expect_status(ex, 200, f"reading a {link.get('status')} link made before the product was archived")
        expect(ex.json.get("status") == link.get("status") and ex.json.get("productId") == link.get("productId"),
               f"archiving the product changed link {link['id']}: it read status {link.get('status')!r}, productId "
               f"{link.get('productId')!r}; it reads {ex.json.get('status')!r}, {ex.json.get('productId')!r}", ex)


@pytest.mark.req("PROD-DELETE")
def test_delete_product_without_links(api: Api, contract: Contract, unique) -> None:
    """DELETE of a product no link was made from: 200; afterwards it no longer exists (404 NOT_FOUND)."""
    product = create_product(api, contract, unique)
    expect_status(api.op("deleteCheckoutProduct", productId=product["id"]), 200)
    expect_error(api.op("getCheckoutProduct", productId=product["id"]), 404, "NOT_FOUND", "reading a deleted product")


@pytest.mark.req("PROD-DELETE-LINKCOUNT")
def test_delete_product_with_a_link_is_409(api: Api, contract: Contract, unique) -> None:
    """Once a link was made from a product (`linkCount` above 0), DELETE answers 409 and the product stays."""
    product = create_product(api, contract, unique)
    create_link(api, contract, product["id"])
    ex = api.op("deleteCheckoutProduct", productId=product["id"])
    _expect_conflict(ex, "deleting a product a link was made from")
    expect(_read(api, product["id"]).get("name") == product["name"], "a refused DELETE removed the product", ex)


def _link_after_product_edit(api: Api, contract: Contract, unique) -> tuple[dict, dict, dict, dict]:
    """A link made from a product, then the product renamed, repriced and redescribed.
    Returns (product before, change, link as created, link read after the change)."""
    product = create_product(api, contract, unique, unitAmount="123.45", description=unique("before"))
    link = create_link(api, contract, product["id"])
    change = {"name": unique("after"), "unitAmount": "678.91", "description": unique("after-desc")}
    _patch(api, product["id"], change)
    ex = api.op("getCheckoutLink", linkId=link["id"])
    expect_status(ex, 200, "reading the link after the product changed")
    return product, change, link, ex.json


def _carries_price(link: dict, price: str) -> bool:
    """The link shows `price` as a decimal string or in base units (cents)."""
    cents = str(int(Decimal(price) * 100))
    return any(v == cents or as_decimal(v) == Decimal(price) for v in scalars(link))


@pytest.mark.req("PROD-LINK-COPIES")
def test_link_keeps_name_and_price(api: Api, contract: Contract, unique) -> None:
    """A link copies the product's name and price when made: a later rename and reprice do not alter it."""
    product, change, _, link = _link_after_product_edit(api, contract, unique)
    shown = set(scalars(link))
    expect(product["name"] in shown and change["name"] not in shown,
           f"the link should keep name {product['name']!r}, not the later {change['name']!r}: {link!r}")
    expect(_carries_price(link, "123.45") and not _carries_price(link, "678.91"),
           f"the link should keep price 123.45, not the later 678.91: {link!r}")


@pytest.mark.req("PROD-LINK-COPIES")
def test_link_reads_description_live(api: Api, contract: Contract, unique) -> None:
    """Description is read live: after the product's description changes, a link that showed it shows the new
    one and never the old."""
    product, change, created, link = _link_after_product_edit(api, contract, unique)
    shown = set(scalars(link))
    expect(product["description"] not in shown,
           f"the link still shows the product's old description {product['description']!r}: {link!r}")
    if product["description"] in set(scalars(created)):
        expect(change["description"] in shown,
               f"the link showed the description when made but not the new one {change['description']!r}: {link!r}")


@pytest.mark.req("CHK-404-FOREIGN", "ERR-NOT-FOUND")
def test_unknown_product_is_404(api: Api, unique) -> None:
    """A product id that does not exist in the organization: 404 NOT_FOUND on PATCH and DELETE."""
    missing = unique("prod-none")
    expect_error(api.op("updateCheckoutProduct", productId=missing, json={"description": "x"}), 404, "NOT_FOUND")
    expect_error(api.op("deleteCheckoutProduct", productId=missing), 404, "NOT_FOUND")


@pytest.mark.needs("operator")
@pytest.mark.req("CHK-404-FOREIGN", "ERR-NOT-FOUND")
def test_product_of_another_organization_is_404(api: Api, fresh_org, contract: Contract, unique) -> None:
    """A product that belongs to another organization, addressed under this one: 404 NOT_FOUND on read,
    PATCH and DELETE; the owner's product is unchanged."""
    owner = fresh_org()
    product = create_product(owner.api, contract, unique)
    expect_error(api.op("getCheckoutProduct", productId=product["id"]), 404, "NOT_FOUND")
    expect_error(api.op("updateCheckoutProduct", productId=product["id"], json={"name": unique("x")}), 404, "NOT_FOUND")
    expect_error(api.op("deleteCheckoutProduct", productId=product["id"]), 404, "NOT_FOUND")
    expect(_read(owner.api, product["id"]).get("name") == product["name"],
           "another organization's PATCH or DELETE changed the product")

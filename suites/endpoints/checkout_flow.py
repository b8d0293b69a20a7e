"""Checkout links and payments driven through the API, for the checkout endpoint, state and refund suites.

Link create/read/update/list are profile operations (their paths are not shown); the sandbox totals that
pick a payment scenario (`.02` settles later, `.04` is charged back) come from the profile's
`sandbox.checkout_payment`, which quotes the spec; the refund amount's field name is the profile's too.
Payment reads are in base units: `amountBase` with `decimals` (`15000` with `decimals: 2` is 150.00), read
with `Decimal`, never floats.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_status

from .factories import create_product, fill, success

Unique = Callable[[str], str]


def example_total(contract: Contract, scenario: str) -> str:
    """A link total for `paid`, `settles_later` or `charged_back` (profile `sandbox.checkout_payment`)."""
    return str(contract.profile["sandbox"]["checkout_payment"]["example_totals"][scenario])


def new_link(api: Api, contract: Contract, unique: Unique, total: str = "150.00", **fields: Any) -> Exchange:
    """Create a link (profile body) from a fresh product priced `total`; `fields` override the body."""
    product = create_product(api, contract, unique, unitAmount=total)
    template = contract.operation("createCheckoutLink").get("body") or {"productId": "{productId}"}
    body = fill(template, {"productId": product["id"]})
    body.update(fields)
    return api.op("createCheckoutLink", json=body)


def draft(api: Api, contract: Contract, unique: Unique, total: str = "150.00", **fields: Any) -> dict[str, Any]:
    ex = new_link(api, contract, unique, total, **fields)
    expect_status(ex, success(contract, "createCheckoutLink"), "creating a checkout link")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the created link has no `id`", ex)
    return ex.json


def publish(api: Api, link_id: str) -> Exchange:
    return api.op("publishCheckoutLink", linkId=link_id)


def pause(api: Api, link_id: str) -> Exchange:
    return api.op("pauseCheckoutLink", linkId=link_id)


def read_link(api: Api, link_id: str) -> dict[str, Any]:
    ex = api.op("getCheckoutLink", linkId=link_id)
    expect_status(ex, 200, "reading the link")
    return ex.json


def sent_link(api: Api, contract: Contract, unique: Unique, total: str = "150.00", **fields: Any) -> dict[str, Any]:
    """A published link (`sent`)."""
    link = draft(api, contract, unique, total, **fields)
    ex = publish(api, link["id"])
    expect_status(ex, 200, "publishing a draft")
    expect(ex.json.get("status") == "sent", f"the published link reads status {ex.json.get('status')!r}", ex)
    return ex.json


def simulate(api: Api, link_id: str, reference: str, **headers_and_kw: Any) -> Exchange:
    return api.op("simulateCheckoutPayment", linkId=link_id,
                  json={"reference": reference, "clientReferenceId": reference}, **headers_and_kw)


def payment(api: Api, contract: Contract, unique: Unique, total: str = "150.00") -> tuple[str, dict[str, Any]]:
    """(link id, payment): a simulated payment on a fresh sent link priced `total`."""
    link = sent_link(api, contract, unique, total)
    ex = simulate(api, link["id"], unique("pref"))
    expect_status(ex, 200, "simulating a payment on a sent link")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the simulated payment has no `id`", ex)
    return link["id"], ex.json


def force(api: Api, payment_id: str, action: str) -> Exchange:
    return api.op("simulateCheckoutPaymentOutcome", paymentId=payment_id, json={"action": action})


def list_payments(api: Api, link_id: str, **params: Any) -> Exchange:
    ex = api.op("listCheckoutPayments", linkId=link_id, params=params or None)
    expect_status(ex, 200, f"listing the payments of a link with {params or 'no parameters'}")
    return ex


def page_items(contract: Contract, ex: Exchange) -> list[dict[str, Any]]:
    """The items of a payments page (key from the profile: the spec does not show it)."""
    key = (contract.operation("listCheckoutPayments").get("page") or {}).get("items", "data")
    items = ex.json.get(key) if isinstance(ex.json, dict) else None
    expect(isinstance(items, list), f"the payments page has no `{key}` list", ex)
    return items  # type: ignore[return-value]


def read_payment(api: Api, contract: Contract, link_id: str, payment_id: str) -> dict[str, Any]:
    """The payment as the authoritative read (GET /links/{linkId}/payments) shows it."""
    ex = list_payments(api, link_id, limit="100")
    found = [p for p in page_items(contract, ex) if isinstance(p, dict) and p.get("id") == payment_id]
    expect(len(found) == 1, f"payment {payment_id!r} is listed {len(found)} times on its link", ex)
    return found[0]


def money(payment_or_refund: dict[str, Any], field: str, decimals: Any = None) -> Decimal:
    """A base-unit string field as an amount: `15000` with `decimals: 2` is Decimal("150.00")."""
    raw, places = payment_or_refund.get(field), payment_or_refund.get("decimals", decimals)
    expect(isinstance(raw, str) and raw.isdigit(), f"`{field}` is {raw!r}, not a base-unit string of digits")
    expect(isinstance(places, int) and not isinstance(places, bool), f"`decimals` is {places!r}, not an integer")
    return Decimal(raw).scaleb(-places)


def refund_body(contract: Contract, amount_base: str | None) -> dict[str, Any]:
    """The refund body: the profile's amount field (base units), omitted to refund the rest."""
    template = contract.operation("refundCheckoutPayment").get("body") or {"amount": ""}
    field = next(iter(template))
    return {} if amount_base is None else {field: amount_base}


def refund(api: Api, contract: Contract, payment_id: str, amount_base: str | None = None, **kw: Any) -> Exchange:
    return api.op("refundCheckoutPayment", paymentId=payment_id, json=refund_body(contract, amount_base), **kw)

"""Setup shared by the idempotency, duplicate-guard and limits suites.

Test data (recipients, products, links, sandbox top-ups) comes from `suites/endpoints/factories.py`, built
from the profile's example bodies; this module adds what keyed writes need: payouts to a funded destination,
read-backs (`GET /orders?reference=`, the product list), the comparison of a replay with its original, and
product creates under an exact `Idempotency-Key`. A failed setup step reports the test's requirements with
what the target answered.
"""

from __future__ import annotations

from typing import Any, Callable

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_error, expect_status

from ..endpoints.factories import corridor_of, create_recipient, fill, fund_sandbox, method_body, product_body, success

Unique = Callable[[str], str]
KEY_CONFLICT_TYPES = ("IDEMPOTENCY_KEY_CONFLICT", "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")


def body(contract: Contract, op_id: str, **values: str) -> Any:
    """The profile's example body of ``op_id`` with its ``{name}`` placeholders filled from ``values``."""
    return fill(contract.operation(op_id).get("body") or {}, values)


def items(contract: Contract, op_id: str, ex: Exchange) -> list[dict]:
    """The items of a list answer, where the profile's `page.items` says they are."""
    key = (contract.operation(op_id).get("page") or {}).get("items", "data")
    data = ex.json if key is None else (ex.json or {}).get(key)
    expect(isinstance(data, list), f"the list answer has no `{key}` array", ex)
    return data


def send(api: Api, contract: Contract, op_id: str, **kw: Any) -> Exchange:
    """Call ``op_id`` and require one of its success statuses (a setup step)."""
    ex = api.op(op_id, **kw)
    expect_status(ex, success(contract, op_id), f"setup: {op_id}")
    return ex


def add_method_body(contract: Contract) -> dict:
    """An add-payment-method body in the corridor of the profile's example, on a fresh account."""
    return method_body(contract, corridor_of(contract, contract.operation("addBeneficiaryMethod").get("body") or {}))


def products_named(api: Api, contract: Contract, name: str) -> list[dict]:
    """Products called ``name`` on the first page of the product list (for small, fresh organizations)."""
    ex = send(api, contract, "listCheckoutProducts")
    return [p for p in items(contract, "listCheckoutProducts", ex) if p.get("name") == name]


def payable_destination(api: Api, contract: Contract, unique: Unique) -> str:
    """Tops up the sandbox balance and creates a recipient; the `destinationAccountId` to pay."""
    fund_sandbox(api, contract)
    methods = create_recipient(api, contract, unique).get("paymentMethods") or []
    expect(methods and methods[0].get("destinationAccountId"),
           "setup: the new recipient has no paymentMethods[0].destinationAccountId")
    return methods[0]["destinationAccountId"]


def payout_body(contract: Contract, destination: str, reference: str) -> dict:
    return body(contract, "createPayout", destinationAccountId=destination, unique=reference)


def create_payout(api: Api, contract: Contract, payload: dict, key: str, **kw: Any) -> Exchange:
    """A payout under ``key`` that must be accepted and end in a payout (it carries `payoutId`)."""
    ex = send(api, contract, "createPayout", json=payload, idempotency_key=key, **kw)
    expect(isinstance(ex.json.get("payoutId"), str), "the accepted payout carries no `payoutId`", ex)
    return ex


def payouts_with_reference(api: Api, contract: Contract, reference: str) -> list[dict]:
    """The payouts `GET /orders?reference=` finds for ``reference``."""
    ex = api.op("listOrders", params={"reference": reference})
    expect_status(ex, 200, "GET /orders?reference=")
    return items(contract, "listOrders", ex)


def same_response(first: Exchange, again: Exchange) -> bool:
    """Whether ``again`` repeats ``first``: same status, and every field of the first body unchanged."""
    a, b = first.json, again.json
    return first.status == again.status and isinstance(b, dict) and all(b.get(k) == v for k, v in a.items())


def keyed_product(api: Api, contract: Contract, unique: Unique, key: str) -> Exchange:
    """A product create (a checkout write, so keyed) sent with exactly ``key`` as `Idempotency-Key`."""
    return api.op("createCheckoutProduct", json=product_body(contract, unique), idempotency_key=key)


def expect_key_accepted(ex: Exchange, contract: Contract, what: str) -> None:
    """The key was taken as a key: the write ran, or (a short key used before) the key is known (409)."""
    if ex.status == 409:
        expect_error(ex, 409, KEY_CONFLICT_TYPES, f"{what}; a key already in use may answer 409")
    else:
        expect_status(ex, success(contract, "createCheckoutProduct"), what)

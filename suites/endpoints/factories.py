"""Test data for the recipient and checkout product suites, built from the contract's profile.

Bodies of operations the spec does not show (`createBeneficiary`, `createCheckoutLink`, `createPayout`,
`fundSandbox`) come from the profile's examples with their `"{placeholder}"` strings filled in; payment
method bodies use the spec's shape (`kind`, `currency`, `recipientDetails`) with the profile's corridor
examples, whose account identifiers are made unique so that no two tests share an account.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable, Iterator

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.contract import current as current_contract
from payconform.expect import expect, expect_status
from payconform.placeholders import fill, leading_digits


def _digits(n: int) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(n))


def _account_number() -> str:
    """Unique in the leading digits; ends in 0000, which picks no special sandbox payout scenario."""
    return leading_digits() + "0000"


def _iban() -> str:
    """A German IBAN with valid ISO 13616 check digits and a random account part ending in 0000 (no
    sandbox scenario)."""
    bban = _digits(14) + "0000"
    check = 98 - int(bban + "131400") % 97  # "DE00" moved to the end, letters as numbers (D=13, E=14)
    return f"DE{check:02d}{bban}"


def _evm_address() -> str:
    """Random, ending in 0000 (no sandbox scenario)."""
    return "0x" + secrets.token_hex(18) + "0000"


# Account identifier fields of the profile's corridors, and how to make a fresh one.
UNIQUE_FIELDS: dict[str, Callable[[], str]] = {
    "accountNumber": _account_number,
    "iban": _iban,
    "address": _evm_address,
}


def contract_now() -> Contract:
    """The run's contract (target profile merged) at collection time, or the repository's."""
    return current_contract() or Contract.load()


def scalars(obj: Any) -> Iterator[str]:
    """Every string or number inside a JSON value, as text (for "does the answer carry X" checks)."""
    if isinstance(obj, dict):
        for v in obj.values():
            yield from scalars(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from scalars(v)
    elif isinstance(obj, (str, int, float)) and not isinstance(obj, bool):
        yield str(obj)


def success(contract: Contract, op_id: str) -> set[int]:
    return set(contract.operation(op_id).get("success") or [200, 201])


def corridors(contract: Contract) -> dict[str, dict]:
    return dict(contract.profile.get("corridors") or {})


def account_details(contract: Contract, corridor: str) -> dict[str, str]:
    """The corridor's example account fields with a fresh account identifier."""
    details = dict(corridors(contract)[corridor]["example"])
    for name, make in UNIQUE_FIELDS.items():
        if name in details:
            details[name] = make()
    return details


def method_body(contract: Contract, corridor: str, details: dict[str, str] | None = None) -> dict[str, Any]:
    """An add-payment-method body (Endpoints > Recipients: `kind`, `currency`, `recipientDetails`)."""
    row = corridors(contract)[corridor]
    return {"kind": row["kind"], "currency": row["currency"],
            "recipientDetails": details if details is not None else account_details(contract, corridor)}


def recipient_body(contract: Contract, unique: Callable[[str], str], **fields: Any) -> dict[str, Any]:
    """The profile's `createBeneficiary` body with a unique name, external id and account; `fields` override."""
    template = contract.operation("createBeneficiary").get("body") or {}
    body = fill(template, {"unique": unique("rcp"), "unique digits": leading_digits()})
    body.update(fields)
    return body


def post_recipient(api: Api, contract: Contract, body: dict[str, Any]) -> dict[str, Any]:
    """Create a recipient from `body` through the profile and return it (it has an `id`)."""
    ex = api.op("createBeneficiary", json=body)
    expect_status(ex, success(contract, "createBeneficiary"), "creating a recipient")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the created recipient has no `id`", ex)
    return ex.json


def create_recipient(api: Api, contract: Contract, unique: Callable[[str], str], **fields: Any) -> dict[str, Any]:
    return post_recipient(api, contract, recipient_body(contract, unique, **fields))


def account_identifiers(obj: Any) -> set[str]:
    """The account identifiers (`accountNumber`, `iban`, `address`) anywhere inside a JSON value."""
    found: set[str] = set()
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in UNIQUE_FIELDS and isinstance(value, str):
                found.add(value)
            else:
                found |= account_identifiers(value)
    elif isinstance(obj, list):
        for value in obj:
            found |= account_identifiers(value)
    return found


def corridor_of(contract: Contract, method: dict[str, Any]) -> str:
    """The profile corridor of a method: the one of its currency, else the first of its kind."""
    rows = corridors(contract)
    for key in ("currency", "kind"):
        match = next((name for name, row in rows.items() if row.get(key) == method.get(key)), None)
        if match is not None:
            return match
    return next(iter(rows))


def read_recipient(api: Api, recipient_id: str) -> dict[str, Any]:
    """GET /{recipientId}: 200 and that recipient."""
    ex = api.op("getBeneficiary", recipientId=recipient_id)
    expect_status(ex, 200, "reading the recipient")
    expect(isinstance(ex.json, dict) and ex.json.get("id") == recipient_id,
           f"reading recipient {recipient_id!r} answered {ex.json!r}", ex)
    return ex.json


def add_method(api: Api, recipient_id: str, body: dict[str, Any]) -> Exchange:
    return api.op("addBeneficiaryMethod", recipientId=recipient_id, json=body)


def method_ids(recipient: dict[str, Any]) -> list[str]:
    return [m.get("id") for m in recipient.get("paymentMethods") or [] if isinstance(m, dict)]


def find_method(recipient: dict[str, Any], method_id: str) -> dict[str, Any] | None:
    return next((m for m in recipient.get("paymentMethods") or [] if isinstance(m, dict) and m.get("id") == method_id),
                None)


def added_method(ex: Exchange) -> dict[str, Any]:
    """The method an add-method answer names in `method` (an object with `id`, or the id itself)."""
    expect_status(ex, 201, "adding a payment method")
    named = ex.json.get("method") if isinstance(ex.json, dict) else None
    method_id = named.get("id") if isinstance(named, dict) else named
    expect(isinstance(method_id, str),
           f"the add-method answer does not name the new method in `method` (got {named!r})", ex)
    method = find_method(ex.json, method_id)
    expect(method is not None, f"`method` names {method_id!r}, which is not in `paymentMethods`", ex)
    return method  # type: ignore[return-value]


def product_body(contract: Contract, unique: Callable[[str], str], **fields: Any) -> dict[str, Any]:
    """The profile's `createCheckoutProduct` body with a unique name; `fields` override."""
    template = contract.operation("createCheckoutProduct").get("body") or {}
    body = fill(template, {"unique": unique("prod")})
    body.update(fields)
    return body


def create_product(api: Api, contract: Contract, unique: Callable[[str], str], **fields: Any) -> dict[str, Any]:
    ex = api.op("createCheckoutProduct", json=product_body(contract, unique, **fields))
    expect_status(ex, 201, "creating a product")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the created product has no `id`", ex)
    return ex.json


def link_exchange(api: Api, contract: Contract, product_id: str) -> Exchange:
    """Create a checkout link from one product through the profile's `createCheckoutLink`."""
    template = contract.operation("createCheckoutLink").get("body") or {"productId": "{productId}"}
    return api.op("createCheckoutLink", json=fill(template, {"productId": product_id}))


def create_link(api: Api, contract: Contract, product_id: str) -> dict[str, Any]:
    ex = link_exchange(api, contract, product_id)
    expect_status(ex, success(contract, "createCheckoutLink"), "creating a checkout link from a product")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the created link has no `id`", ex)
    return ex.json


def fund_sandbox(api: Api, contract: Contract) -> None:
    ex = api.op("fundSandbox", json=fill(contract.operation("fundSandbox").get("body") or {}, {}))
    expect_status(ex, success(contract, "fundSandbox"), "topping up the sandbox balance")


def pay(api: Api, contract: Contract, unique: Callable[[str], str], destination_account_id: str) -> Exchange:
    """A payout through the profile's `createPayout` body to `destination_account_id`."""
    template = contract.operation("createPayout").get("body") or {}
    body = fill(template, {"unique": unique("po"), "destinationAccountId": destination_account_id})
    return api.op("createPayout", json=body)


def top_up(api: Api, contract: Contract, amount: str) -> Exchange:
    """A sandbox top-up of `amount` USD through the profile's `fundSandbox`; distinct amounts keep the
    duplicate-body guard out of the way and make each top-up recognizable in the ledger."""
    body = fill(contract.operation("fundSandbox").get("body") or {}, {})
    ex = api.op("fundSandbox", json={**body, "amount": amount})
    expect_status(ex, success(contract, "fundSandbox"), f"topping up the sandbox balance by {amount}")
    return ex


def refused_recipient_update(api: Api, unique: Callable[[str], str]) -> Exchange:
    """The cheapest audited mutation: a recipient change refused (404, no such recipient). The spec audits
    "recipients changed ... whether it succeeded or was refused"; the answer's x-request-id finds the row."""
    ex = api.op("updateBeneficiary", recipientId=unique("rcp-missing"), json={"name": unique("name")})
    expect_status(ex, 404, "changing a recipient that does not exist")
    return ex

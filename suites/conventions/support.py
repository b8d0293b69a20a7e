"""Shared by the conventions and resources suites: sample answers, test data, small matchers.

A ``Sample`` is the fewest requests that end in one documented answer: a success, or a refusal whose
`type` the spec names for that situation. Tests that must hold on every response (content type, request
id, error body) run over the samples instead of each inventing its own requests.

Request bodies start from the profile's examples (contract/profile.default.yaml) and get unique names and
account details, so tests never collide with each other or with earlier runs.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_status

Unique = Callable[[str], str]

DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


def is_decimal_string(value: Any) -> bool:
    """A JSON string holding a plain decimal number ("150.00", "-3"), never a JSON number."""
    return isinstance(value, str) and DECIMAL.match(value) is not None


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) for every scalar inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def is_json_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def names_field(errors: Any, field: str) -> bool:
    """Whether a body's `errors` array has an entry naming ``field``.

    The spec names the content ("a field name such as `cursor` with a reason") but not the entry's keys,
    so any string of an entry counts when it is the field's name or a path ending in it (`body.unitAmount`).
    """
    if not isinstance(errors, list):
        return False
    path_end = re.compile(rf"(^|[.\[/]){re.escape(field)}\]?$")
    for entry in errors:
        values = entry.values() if isinstance(entry, dict) else [entry]
        if any(isinstance(v, str) and path_end.search(v) for v in values):
            return True
    return False


def member(ex: Exchange, *path: str | int) -> Any:
    """The value at ``path`` in the exchange's JSON body; a failure naming the path when it is missing."""
    value: Any = ex.json
    for depth, step in enumerate(path):
        here = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[: depth + 1]).lstrip(".")
        present = (isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value)) or (
            isinstance(step, str) and isinstance(value, dict) and step in value)
        expect(present, f"the answer has no `{here}`", ex)
        value = value[step]
    return value


# ------------------------------------------------------------------------------------------ test data


def _iban(country: str) -> str:
    """A fresh IBAN with valid check digits (ISO 13616 mod 97) and an 18-digit numeric BBAN."""
    bban = "".join(secrets.choice("0123456789") for _ in range(18))
    letters = "".join(str(ord(c) - ord("A") + 10) for c in country)
    check = 98 - int(bban + letters + "00") % 97
    return f"{country}{check:02d}{bban}"


def account_details(contract: Contract, corridor: str) -> dict[str, str]:
    """The profile's example account for ``corridor`` with the identifying field made unique.

    Account numbers end in `0000`: the profile's sandbox payout scenarios read the last four characters,
    and `0000` selects the ordinary path.
    """
    example = dict(contract.profile["corridors"][corridor]["example"])
    if "accountNumber" in example:
        example["accountNumber"] = "".join(secrets.choice("0123456789") for _ in range(10)) + "0000"
    if "iban" in example:
        example["iban"] = _iban(example["iban"][:2])
    if "address" in example:
        example["address"] = "0x" + secrets.token_hex(20)
    return example


def payment_method(contract: Contract, corridor: str) -> dict[str, Any]:
    """`{kind, currency, recipientDetails}` for a new account in ``corridor``."""
    row = contract.profile["corridors"][corridor]
    return {"kind": row["kind"], "currency": row["currency"],
            "recipientDetails": account_details(contract, corridor)}


def recipient_body(contract: Contract, unique: Unique, corridor: str = "USD") -> dict[str, Any]:
    """A createBeneficiary body (profile example) with a unique name, externalId and account."""
    body = dict(contract.operation("createBeneficiary")["body"])
    body.update(name=unique("rcp"), externalId=unique("ext"), paymentMethod=payment_method(contract, corridor))
    return body


def create_recipient(api: Api, contract: Contract, unique: Unique, corridor: str = "USD") -> tuple[dict, Exchange]:
    """Create a recipient with one method in ``corridor``; returns (body sent, the 2xx exchange)."""
    body = recipient_body(contract, unique, corridor)
    return body, expect_status(api.op("createBeneficiary", json=body), {201, 200}, "create a recipient (profile)")


def product_body(contract: Contract, unique: Unique) -> dict[str, Any]:
    """A createCheckoutProduct body (profile example) with a unique name."""
    body = dict(contract.operation("createCheckoutProduct")["body"])
    body["name"] = unique("prod")
    return body


def create_product(api: Api, contract: Contract, unique: Unique) -> tuple[dict, Exchange]:
    """Create a checkout product; returns (body sent, the 201 exchange)."""
    body = product_body(contract, unique)
    return body, expect_status(api.op("createCheckoutProduct", json=body), 201, "create a product")


# ------------------------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class Sample:
    """``send(api, contract, unique)`` ends in ``status`` (and error ``type``, None for a success)."""

    name: str
    status: int
    type: str | None
    send: Callable[[Api, Contract, Unique], Exchange]

    def __str__(self) -> str:
        return self.name


def _idempotency_conflict(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """Same Idempotency-Key, different body: the first creates, the second is 409 IDEMPOTENCY_KEY_CONFLICT."""
    key = unique("idem")
    body = product_body(contract, unique)
    expect_status(api.op("createCheckoutProduct", json=body, idempotency_key=key), 201, "the first request")
    return api.op("createCheckoutProduct", json={**body, "name": unique("prod")}, idempotency_key=key)


def _other_org(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """A read of another organization's balance: 403 FORBIDDEN (Authentication, Mode A rule 5)."""
    if api.other_org_id is None:
        pytest.skip("needs other_org_id")
    return api.op("getBalance", orgId=api.other_org_id)


SUCCESSES = [
    Sample("get-200", 200, None, lambda api, contract, unique: api.op("getBalance")),
    Sample("post-201", 201, None,
           lambda api, contract, unique: api.op("createCheckoutProduct", json=product_body(contract, unique))),
]

REFUSALS = [
    Sample("no-key-401", 401, "UNAUTHORIZED",
           lambda api, contract, unique: api.op("getBalance", credential=None)),
    Sample("other-org-403", 403, "FORBIDDEN", _other_org),
    Sample("unknown-route-404", 404, "ROUTE_NOT_FOUND",
           lambda api, contract, unique: api.get(f"/payments/organizations/{{orgId}}/{unique('no-such-route')}")),
    Sample("unknown-id-404", 404, "NOT_FOUND",
           lambda api, contract, unique: api.op("getBeneficiary", recipientId=unique("no-such-recipient"))),
    Sample("validation-400", 400, "VALIDATION_ERROR",
           lambda api, contract, unique: api.op("listBalanceTransactions", params={"type": unique("no-such-type")})),
    Sample("no-idempotency-key-400", 400, "IDEMPOTENCY_KEY_REQUIRED",
           lambda api, contract, unique: api.op("createCheckoutProduct", json=product_body(contract, unique),
                                                idempotency_key=None)),
    Sample("idempotency-conflict-409", 409, "IDEMPOTENCY_KEY_CONFLICT", _idempotency_conflict),
]

SAMPLES = SUCCESSES + REFUSALS

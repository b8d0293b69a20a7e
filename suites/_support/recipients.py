"""Recipients (beneficiaries) and their payment methods, made through the profile.

`createBeneficiary` is not shown by the spec: its body is the profile's example with a unique name, external
id and account; payment method bodies use the spec's shape with the profile's corridor examples.
"""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, Contract, Exchange, expect, expect_status, fill, leading_digits

from . import runwide
from .accounts import method_body
from .answers import member
from .profile import corridor_of, success
from .types import Scope, Unique, shared_scope

_UNTOUCHED: dict[Scope, dict[str, Any]] = {}  # per organization and mode: the recipient refusals are tried on


def recipient_body(contract: Contract, unique: Unique, **fields: Any) -> dict[str, Any]:
    """The profile's `createBeneficiary` body with a unique name, external id and account; `fields` override
    (`paymentMethod=method_body(contract, corridor)` for another corridor)."""
    template = contract.operation("createBeneficiary").get("body") or {}
    body = fill(template, {"unique": unique("rcp"), "unique digits": leading_digits()})
    body.update(fields)
    return body


def post_recipient(api: Api, contract: Contract, body: dict[str, Any]) -> Exchange:
    """Create a recipient from `body` through the profile; the success answer, which carries an `id`."""
    ex = api.op("createBeneficiary", json=body)
    expect_status(ex, success(contract, "createBeneficiary"), "creating a recipient")
    expect(isinstance(member(ex, "id"), str), "the created recipient's `id` is not a string", ex)
    return ex


def create_recipient(api: Api, contract: Contract, unique: Unique, **fields: Any) -> dict[str, Any]:
    """A new recipient (the created object) from `recipient_body(contract, unique, **fields)`."""
    return post_recipient(api, contract, recipient_body(contract, unique, **fields)).json


def read_only_recipient(api: Api, contract: Contract, unique: Unique,
                        corridor: str = "USD") -> tuple[dict[str, Any], Exchange]:
    """(body sent, create answer) of the run's recipient in ``corridor`` that tests only read (its fields, its
    method's details, a read by id or external id): made once per organization, mode and corridor, whichever
    test asks first (`runwide`), instead of a recipient per test and its delete at the end of the run. Its
    `type` and `email` are not the profile example's, so a read shows the values sent, not defaults."""

    def make() -> dict[str, Any]:
        sent = recipient_body(contract, unique, paymentMethod=method_body(contract, corridor), type="business",
                              email="payee.read@example.com")
        return {"sent": sent, "created": runwide.exchange_json(post_recipient(api, contract, sent))}

    made = runwide.shared(shared_scope(api), f"recipient read in corridor {corridor}", make)
    return made["sent"], runwide.exchange_of(made["created"])


def read_recipient(api: Api, recipient_id: str) -> dict[str, Any]:
    """GET /{recipientId}: 200 and that recipient."""
    ex = api.op("getBeneficiary", recipientId=recipient_id)
    expect_status(ex, 200, "reading the recipient")
    expect(isinstance(ex.json, dict) and ex.json.get("id") == recipient_id,
           f"reading recipient {recipient_id!r} answered {ex.json!r}", ex)
    return ex.json


def add_method(api: Api, recipient_id: str, body: dict[str, Any]) -> Exchange:
    return api.op("addBeneficiaryMethod", recipientId=recipient_id, json=body)


def add_method_body(contract: Contract) -> dict:
    """An add-payment-method body in the corridor of the profile's example, on a fresh account."""
    return method_body(contract, corridor_of(contract, contract.operation("addBeneficiaryMethod").get("body") or {}))


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


def first_destination(recipient: dict[str, Any]) -> str:
    """The `destinationAccountId` of a new recipient's first method (what a payout to it names)."""
    methods = recipient.get("paymentMethods") or []
    expect(methods and methods[0].get("destinationAccountId"),
           "setup: the new recipient has no paymentMethods[0].destinationAccountId")
    return methods[0]["destinationAccountId"]


def refused_recipient_update(api: Api, unique: Unique) -> Exchange:
    """The cheapest audited mutation: a recipient change refused (404, no such recipient). The spec audits
    "recipients changed ... whether it succeeded or was refused"; the answer's x-request-id finds the row."""
    ex = api.op("updateBeneficiary", recipientId=unique("rcp-missing"), json={"name": unique("name")})
    expect_status(ex, 404, "changing a recipient that does not exist")
    return ex


def untouched_recipient(api: Api, contract: Contract, unique: Unique) -> dict[str, Any]:
    """A recipient the tests of refused method changes share (a refusal must leave it as it was), as last read:
    made once per organization and mode in this worker (`_UNTOUCHED`); each test compares its own read after
    the refusal (`reread`) with this. A recipient per test cost its create and the run's cleanup delete. Not
    shared by the run (`runwide`): a target may legally take a method the profile thought incomplete (a
    defaulted `chain`), and another worker's last reading would not know of it."""
    shared = shared_scope(api)
    if shared not in _UNTOUCHED:
        _UNTOUCHED[shared] = create_recipient(api, contract, unique)
    return _UNTOUCHED[shared]


def reread(api: Api, recipient: dict[str, Any]) -> dict[str, Any]:
    """Read the shared recipient again right after a test's request, before any check, and keep the reading
    as the state the next test starts from (so a change one test caused fails that test only)."""
    got = read_recipient(api, recipient["id"])
    _UNTOUCHED[shared_scope(api)] = got
    return got

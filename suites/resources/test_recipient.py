"""Resources, Recipient (beneficiary): field names, `type` and method values, `method` on add-method answers.

The spec names the fields but gives no types beyond the enumerations, and never says a field is always
there: the types are the OpenAPI `Recipient` and `PaymentMethod` schemas, made tolerant by
`_support.schemas` (a named field may be absent, except `id`, which addresses the recipient, and the methods
just created; where the prose gives no type, null is accepted). Corridors (fiat and crypto) come from the
profile.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_status, run_contract

from .._support.accounts import method_body
from .._support.answers import member
from .._support.profile import corridors
from .._support.recipients import post_recipient, read_only_recipient, recipient_body
from .._support.schemas import expect_component, expect_schema
from .._support.types import Unique

KINDS = ("fiat", "crypto")
CORRIDORS = list(corridors(run_contract()))


def expect_recipient(ex: Exchange, sent: dict) -> None:
    """The answer is a recipient as the OpenAPI `Recipient` describes it (tolerant: named fields may be absent,
    strings or null, instants, `type` individual|business), with a non-empty `id` and the `type` sent."""
    recipient = expect_schema(ex)
    expect(member(ex, "id") != "", "the recipient's `id` is empty", ex)
    if "type" in recipient:
        expect(recipient["type"] == sent["type"], f"`type` is {recipient['type']!r}; {sent['type']!r} was sent", ex)


def expect_method(ex: Exchange, method: Any, kind: str, where: str) -> None:
    """A payment method as the OpenAPI `PaymentMethod` describes it (string `id`, `status` from the three, string
    `destinationAccountId` or null), of the `kind` created, with a non-empty `id`."""
    expect_component(ex, method, "PaymentMethod", where)
    expect(method["id"] != "", f"{where} has an empty `id`", ex)
    expect(method.get("kind") == kind, f"{where}.kind is {method.get('kind')!r}; a {kind} method was created", ex)


def created_and_read(api: Api, contract: Contract, unique: Unique, corridor: str) -> tuple[dict, list[Exchange]]:
    """The run's recipient in ``corridor`` (`read_only_recipient`) read back: (body sent, [create answer, read])."""
    sent, answer = read_only_recipient(api, contract, unique, corridor)
    read = expect_status(api.op("getBeneficiary", recipientId=member(answer, "id")), 200, "read the recipient")
    return sent, [answer, read]


@pytest.mark.req("RCP-FIELDS")
def test_recipient_fields(api: Api, contract: Contract, unique: Unique) -> None:
    """The create answer and a read match the OpenAPI `Recipient` (tolerant) and carry the `type` sent."""
    sent, answers = created_and_read(api, contract, unique, "USD")
    for ex in answers:
        expect_recipient(ex, sent)


@pytest.mark.breadth
@pytest.mark.req("RCP-METHOD-FIELDS")
@pytest.mark.parametrize("corridor", CORRIDORS)
def test_payment_method_fields(api: Api, contract: Contract, unique: Unique, corridor: str) -> None:
    """`paymentMethods[]` lists the one method created, with `id`, `kind`, `status`, `destinationAccountId`."""
    sent, answers = created_and_read(api, contract, unique, corridor)
    for ex in answers:
        methods = member(ex, "paymentMethods")
        expect(isinstance(methods, list) and len(methods) == 1,
               f"`paymentMethods` is {methods!r}, not a list of the one method created", ex)
        expect_method(ex, methods[0], sent["paymentMethod"]["kind"], "paymentMethods[0]")


@pytest.mark.breadth
@pytest.mark.req("RCP-METHOD-DETAILS-KIND")
@pytest.mark.parametrize("corridor", CORRIDORS)
def test_method_details_kind(api: Api, contract: Contract, unique: Unique, corridor: str) -> None:
    """A method's details read returns `kind` `fiat` or `crypto`: the kind the method was created with."""
    sent, answer = read_only_recipient(api, contract, unique, corridor)
    details = expect_status(api.op("getBeneficiaryMethodDetails", recipientId=member(answer, "id"),
                                   methodId=member(answer, "paymentMethods", 0, "id")), 200, "read method details")
    kind = member(details, "kind")
    expect(kind in KINDS and kind == sent["paymentMethod"]["kind"],
           f"the details read answers kind {kind!r}; a {sent['paymentMethod']['kind']} method was created", details)


@pytest.mark.req("RCP-FIELDS", "RCP-ADD-METHOD-RESPONSE")
def test_add_method_answer_names_the_new_method(api: Api, contract: Contract, unique: Unique) -> None:
    """The 201 is the whole recipient, `method` is the method just added, and the earlier one is still listed."""
    sent = recipient_body(contract, unique, paymentMethod=method_body(contract, "USD"))
    created = post_recipient(api, contract, sent)
    recipient_id, first_id = member(created, "id"), member(created, "paymentMethods", 0, "id")
    added = expect_status(api.op("addBeneficiaryMethod", recipientId=recipient_id,
                                 json=method_body(contract, "EUR")), 201, "add a EUR method")
    expect_recipient(added, sent)
    expect(member(added, "id") == recipient_id, f"the answer is recipient {member(added, 'id')!r}", added)
    method = member(added, "method")
    expect_method(added, method, "fiat", "method")
    listed = [m.get("id") for m in member(added, "paymentMethods") if isinstance(m, dict)]
    expect(method["id"] != first_id, "`method` names the recipient's earlier method, not the one just added", added)
    expect(method["id"] in listed and first_id in listed,
           f"`paymentMethods` ids {listed} should hold the earlier method {first_id!r} and the new {method['id']!r}",
           added)

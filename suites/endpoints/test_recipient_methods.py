"""Endpoints > Recipients: a recipient's payment methods — add, delete, read details — and
`BANK_ACCOUNT_ALREADY_LINKED`.

Method bodies use the spec's shape (`kind`, `currency`, `recipientDetails`); the account fields of each
corridor come from the profile, with a fresh account identifier per method.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_error_body, expect_status, run_contract
from payconform.suite import Kind, Needs

from .._support.accounts import account_details, account_identifiers, method_body
from .._support.answers import scalars
from .._support.balance import fund_sandbox
from .._support.payouts import pay
from .._support.profile import corridors, success
from .._support.recipients import (
    add_method,
    added_method,
    create_recipient,
    method_ids,
    read_recipient,
    reread,
    untouched_recipient,
)

# (corridor, account field) for every field of every corridor of the profile
MISSING_FIELDS = [(name, field) for name, row in corridors(run_contract()).items()
                  for field in (row.get("example") or {})]

# one corridor of each kind the profile lists (`fiat`, `crypto`): a method of each kind is added
KIND_CORRIDORS = {row.get("kind"): name for name, row in corridors(run_contract()).items()}


def _signature(method: dict[str, Any]) -> tuple:
    """What must not change on a method another operation did not touch (its status may move on its own)."""
    return method.get("id"), method.get("kind"), method.get("destinationAccountId")


@pytest.mark.parametrize("corridor", sorted(KIND_CORRIDORS.values()))
@pytest.mark.req("RCP-ADD-METHOD", "RCP-ADD-METHOD-RESPONSE")
def test_add_method_answers_whole_recipient(api: Api, contract: Contract, unique, corridor: str) -> None:
    """Of each kind ("`kind` (`fiat` or `crypto`)"), 201: the whole recipient with `method` naming the new
    method, which is in `paymentMethods` next to the earlier one; a read shows both."""
    created = create_recipient(api, contract, unique)
    body = method_body(contract, corridor)
    ex = add_method(api, created["id"], body)
    method = added_method(ex)
    expect(ex.json.get("id") == created["id"], f"the answer is recipient {ex.json.get('id')!r}", ex)
    expect(method["id"] not in method_ids(created), "`method` names a method the recipient already had", ex)
    expect(method.get("kind") == body["kind"], f"the new {body['kind']} method reads kind {method.get('kind')!r}", ex)
    expect(set(method_ids(created)) < set(method_ids(ex.json)), "the earlier methods are not in the answer", ex)
    read = read_recipient(api, created["id"])
    expect(set(method_ids(read)) == set(method_ids(ex.json)),
           f"a read shows methods {method_ids(read)}; the add-method answer showed {method_ids(ex.json)}")


@pytest.mark.breadth
@pytest.mark.parametrize(("corridor", "field"), MISSING_FIELDS)
@pytest.mark.req("RCP-ADD-METHOD-VALIDATION")
def test_add_method_missing_corridor_field_is_400(api: Api, contract: Contract, unique, corridor: str,
                                                  field: str) -> None:
    """A method without one of its corridor's account fields: 400 naming the field in `errors` (entries of any
    shape); nothing added. A field the profile gives as a choice (`chain`) may be defaulted: then it skips."""
    created = untouched_recipient(api, contract, unique)
    details = account_details(contract, corridor)
    del details[field]
    ex = add_method(api, created["id"], method_body(contract, corridor, details))
    after = reread(api, created)
    choice = str(corridors(contract)[corridor].get("recipientDetails", {}).get(field, ""))
    if 200 <= ex.status < 300 and "|" in choice and not choice.startswith("<"):
        Needs(Kind.PROFILE, f"the target defaulted `{field}` ({choice}); the profile (corridors.{corridor}."
              "recipientDetails) lists it, the spec does not say it is required").skip()
    expect_status(ex, 400)
    body = expect_error_body(ex)
    named = [e for e in body.get("errors") or []
             if any(isinstance(v, str) and field in v for v in (e.values() if isinstance(e, dict) else [e]))]
    expect(named, f"`errors` does not name the missing field {field!r}: {body.get('errors')!r}", ex)
    expect(method_ids(after) == method_ids(created), "a refused method was added", ex)


@pytest.mark.req("RCP-ADD-METHOD-UNKNOWN", "ERR-NOT-FOUND")
def test_add_method_unknown_recipient_is_404(api: Api, contract: Contract, unique) -> None:
    """Adding a method to a recipient id that names nothing: 404 NOT_FOUND."""
    expect_error(add_method(api, unique("rcp-none"), method_body(contract, "EUR")), 404, "NOT_FOUND")


@pytest.mark.req("RCP-ADD-METHOD-UNKNOWN", "RCP-DELETE")
def test_add_method_deleted_recipient_is_404(api: Api, contract: Contract, unique) -> None:
    """Adding a method to a deleted recipient: 404."""
    created = create_recipient(api, contract, unique)
    expect_status(api.op("deleteBeneficiary", recipientId=created["id"]), 200, "deleting the recipient")
    ex = add_method(api, created["id"], method_body(contract, "EUR"))
    expect_status(ex, 404)
    expect_error_body(ex)


@pytest.mark.smoke
@pytest.mark.req("RCP-BANK-ACCOUNT-ALREADY-LINKED", "ERR-BANK-ACCOUNT-ALREADY-LINKED", "ERRBODY-EXISTING-IDS")
def test_account_already_on_another_recipient(api: Api, contract: Contract, unique) -> None:
    """The account of recipient A added to recipient B: 409 BANK_ACCOUNT_ALREADY_LINKED with
    `existingRecipientId` / `existingMethodId` naming A and its method; B gains nothing."""
    body = method_body(contract, "EUR")
    holder = create_recipient(api, contract, unique)
    held = added_method(add_method(api, holder["id"], body))
    other = create_recipient(api, contract, unique)
    ex = add_method(api, other["id"], body)
    err = expect_error(ex, 409, "BANK_ACCOUNT_ALREADY_LINKED")
    expect(err.get("existingRecipientId") == holder["id"] and err.get("existingMethodId") == held["id"],
           f"existingRecipientId / existingMethodId are {err.get('existingRecipientId')!r} / "
           f"{err.get('existingMethodId')!r}; the account is on {holder['id']!r} / {held['id']!r}", ex)
    expect(method_ids(read_recipient(api, other["id"])) == method_ids(other), "the refused method was added", ex)


@pytest.mark.req("RCP-DELETE-METHOD", "RCP-DELETE-METHOD-OTHERS-UNTOUCHED")
def test_delete_one_method(api: Api, contract: Contract, unique) -> None:
    """DELETE of one method: 200 with the recipient without it; the other method is untouched, also on read."""
    created = create_recipient(api, contract, unique)
    kept = created["paymentMethods"][0]
    gone = added_method(add_method(api, created["id"], method_body(contract, "EUR")))
    ex = api.op("deleteBeneficiaryMethod", recipientId=created["id"], methodId=gone["id"])
    expect_status(ex, 200)
    for source, got in (("DELETE answer", ex.json), ("read after DELETE", read_recipient(api, created["id"]))):
        expect(gone["id"] not in method_ids(got), f"{source}: the deleted method is still listed", ex)
        expect([_signature(m) for m in got.get("paymentMethods") or []] == [_signature(kept)],
               f"{source}: the other method changed or went: {got.get('paymentMethods')!r}; before: {kept!r}", ex)


@pytest.mark.req("RCP-DELETE-METHOD-UNKNOWN", "ERR-NOT-FOUND")
def test_delete_unknown_method_is_404(api: Api, contract: Contract, unique) -> None:
    """DELETE of a method the recipient does not have: 404 NOT_FOUND, and its methods stay."""
    created = untouched_recipient(api, contract, unique)
    ex = api.op("deleteBeneficiaryMethod", recipientId=created["id"], methodId=unique("pm-none"))
    after = reread(api, created)
    expect_error(ex, 404, "NOT_FOUND")
    expect(method_ids(after) == method_ids(created), "a refused DELETE removed a method", ex)


@pytest.mark.req("RCP-DELETE-METHOD-UNKNOWN", "ERR-NOT-FOUND")
def test_delete_method_of_unknown_recipient_is_404(api: Api, contract: Contract, unique) -> None:
    """DELETE of a real method under a recipient id that names nothing: 404 NOT_FOUND, and the method stays."""
    created = untouched_recipient(api, contract, unique)
    expect(method_ids(created), "setup: the shared recipient has no payment method left to name")
    method_id = method_ids(created)[0]
    ex = api.op("deleteBeneficiaryMethod", recipientId=unique("rcp-none"), methodId=method_id)
    after = reread(api, created)
    expect_error(ex, 404, "NOT_FOUND")
    expect(method_id in method_ids(after), "the method went with a refused DELETE", ex)


@pytest.mark.smoke
@pytest.mark.req("RCP-DELETE-METHOD-NOT-PAYABLE", "ERR-DESTINATION-ACCOUNT-NOT-FOUND")
def test_deleted_method_is_not_payable(api: Api, contract: Contract, unique) -> None:
    """A method's `destinationAccountId` is payable, and once the method is deleted a payout to it answers
    404 DESTINATION_ACCOUNT_NOT_FOUND."""
    created = create_recipient(api, contract, unique)
    method = added_method(add_method(api, created["id"], method_body(contract, "USD")))
    fund_sandbox(api, contract)
    expect_status(pay(api, contract, unique, method["destinationAccountId"]), success(contract, "createPayout"),
                  "a payout to the method before it is deleted")
    expect_status(api.op("deleteBeneficiaryMethod", recipientId=created["id"], methodId=method["id"]), 200,
                  "deleting the method")
    expect_error(pay(api, contract, unique, method["destinationAccountId"]), 404, "DESTINATION_ACCOUNT_NOT_FOUND")


@pytest.mark.parametrize("corridor", ["USD", "USDC"])
@pytest.mark.req("RCP-METHOD-DETAILS", "RCP-METHOD-DETAILS-KIND")
def test_method_details(api: Api, contract: Contract, unique, corridor: str) -> None:
    """A method's details read: 200 with `kind` (fiat or crypto, as created) and its account fields."""
    created = create_recipient(api, contract, unique)
    body = method_body(contract, corridor)
    method = added_method(add_method(api, created["id"], body))
    ex = api.op("getBeneficiaryMethodDetails", recipientId=created["id"], methodId=method["id"])
    expect_status(ex, 200)
    expect(ex.json.get("kind") == body["kind"],
           f"details of a {body['kind']} method read kind {ex.json.get('kind')!r}", ex)
    missing = account_identifiers(body) - set(scalars(ex.json))
    expect(not missing, f"the details do not carry the account {sorted(missing)}", ex)


@pytest.mark.needs("read_only_key")
@pytest.mark.req("AUTH-READ-ONLY-NO-DETAILS", "RCP-METHOD-DETAILS")
def test_read_only_key_cannot_read_full_details(api: Api, api_as, contract: Contract, unique) -> None:
    """A read-only key cannot read full account details: 403 INSUFFICIENT_SCOPE (Authentication, `read` only),
    or at most an answer that does not carry the account."""
    created = create_recipient(api, contract, unique)
    body = method_body(contract, "USD")
    method = added_method(add_method(api, created["id"], body))
    ex = api_as("read_only_key").op("getBeneficiaryMethodDetails", recipientId=created["id"], methodId=method["id"])
    if ex.status == 200:
        shown = account_identifiers(body) & set(scalars(ex.json))
        expect(not shown, f"a read-only key read the full account {sorted(shown)}", ex)
    else:
        expect_error(ex, 403, "INSUFFICIENT_SCOPE")

"""Mutants of the Endpoints part for a recipient's payment methods: adding, deleting and reading their
details.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from ...resources.corridors import FIELDS
from ...core.errors import ApiError, validation_error
from ...core.operation import Call, Reply
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.requests import read_recipient

if TYPE_CHECKING:
    from ...reference import Reference


# a value that passes each corridor account field's check (corridors.FIELDS)
FILLERS = {"accountNumber": "000000000000", "routingNumber": "000000000", "iban": "DE00000000000000000000",
           "address": "0x" + "0" * 40, "chain": "ethereum"}


@mutant("add-method-not-saved", reqs=["RCP-ADD-METHOD"],
        doc="POST /{recipientId}/methods answers 201 with the new method, which is never saved.")
def add_method_not_saved(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE payment_methods SET deleted_at = created_at WHERE id = ?", (reply.body["method"]["id"],))
        return reply


@mutant("add-method-fiat-only", reqs=["RCP-ADD-METHOD"],
        doc="POST /{recipientId}/methods takes bank accounts only: `kind: crypto` is refused (400 VALIDATION_ERROR).")
def add_method_fiat_only(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        if body(call).get("kind") == "crypto":
            raise validation_error([{"field": "kind", "reason": "must be fiat"}])
        return original(call)


@mutant("add-method-without-method", reqs=["RCP-ADD-METHOD-RESPONSE"],
        doc="The add-method 201 is the recipient without `method` naming the new one.")
def add_method_without_method(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body={k: v for k, v in reply.body.items() if k != "method"})


@mutant("missing-corridor-field-accepted", reqs=["RCP-ADD-METHOD-VALIDATION"],
        doc="A method missing a corridor account field is saved with a filler value instead of a 400.")
def missing_corridor_field_accepted(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        details = body(call).get("recipientDetails")
        if isinstance(details, dict):
            for field in FIELDS.get((body(call).get("kind"), body(call).get("currency")), ()):
                details.setdefault(field, FILLERS[field])
        return original(call)


@mutant("missing-chain-names-address", reqs=["RCP-ADD-METHOD-VALIDATION"],
        doc="A crypto method sent without `chain` is refused with a VALIDATION_ERROR that names `address`, not the "
            "missing `chain`.")
def missing_chain_names_address(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        details = body(call).get("recipientDetails")
        if isinstance(details, dict) and "address" in details and "chain" not in details:
            raise validation_error([{"field": "recipientDetails.address", "reason": "unsupported network"}])
        return original(call)


@mutant("already-linked-check-off", reqs=["RCP-BANK-ACCOUNT-ALREADY-LINKED", "ERR-BANK-ACCOUNT-ALREADY-LINKED"],
        doc="An account already on another recipient is linked again (201) instead of 409 BANK_ACCOUNT_ALREADY_LINKED.")
def already_linked_check_off(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "BANK_ACCOUNT_ALREADY_LINKED":
                raise
            ref.store.run("UPDATE payment_methods SET fingerprint = fingerprint || ':shadowed' WHERE id = ?",
                          (err.extra["existingMethodId"],))
            return original(call)


@mutant("already-linked-without-existing-ids",
        reqs=["RCP-BANK-ACCOUNT-ALREADY-LINKED", "ERR-BANK-ACCOUNT-ALREADY-LINKED", "ERRBODY-EXISTING-IDS"],
        doc="409 BANK_ACCOUNT_ALREADY_LINKED carries no `existingRecipientId` / `existingMethodId`.")
def already_linked_without_existing_ids(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "BANK_ACCOUNT_ALREADY_LINKED":
                err.extra.clear()
            raise


@mutant("method-delete-noop", reqs=["RCP-DELETE-METHOD"],
        doc="DELETE /{recipientId}/methods/{methodId} answers 200 with the recipient, method still there.")
def method_delete_noop(ref: Reference) -> None:
    @around(ref, "deleteBeneficiaryMethod")
    def delete_beneficiary_method(original: Handler, call: Call) -> Reply:
        return read_recipient(ref, call)


@mutant("method-delete-removes-all", reqs=["RCP-DELETE-METHOD-OTHERS-UNTOUCHED"],
        doc="Deleting one payment method deletes every method of the recipient.")
def method_delete_removes_all(ref: Reference) -> None:
    @around(ref, "deleteBeneficiaryMethod")
    def delete_beneficiary_method(original: Handler, call: Call) -> Reply:
        original(call)
        ref.store.run("UPDATE payment_methods SET deleted_at = created_at WHERE recipient_id = ?",
                      (call.params["recipientId"],))
        return read_recipient(ref, call)


@mutant("deleted-method-still-payable", reqs=["RCP-DELETE-METHOD-NOT-PAYABLE", "ERR-DESTINATION-ACCOUNT-NOT-FOUND"],
        doc="A payout to the destinationAccountId of a deleted method revives the method and pays it.")
def deleted_method_still_payable(ref: Reference) -> None:
    @around(ref, "createPayout")
    def create_payout(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE payment_methods SET deleted_at = NULL WHERE destination_account_id = ?",
                      (str(body(call).get("destinationAccountId")),))
        return original(call)


@mutant("method-details-masked", reqs=["RCP-METHOD-DETAILS"],
        doc="Method details answer masked account fields (`****`) even to a read+write key.")
def method_details_masked(ref: Reference) -> None:
    @around(ref, "getBeneficiaryMethodDetails")
    def get_beneficiary_method_details(original: Handler, call: Call) -> Reply:
        reply = original(call)
        masked = {k: "****" + v[-2:] for k, v in reply.body["recipientDetails"].items()}
        return dataclasses.replace(reply, body={**reply.body, "recipientDetails": masked})


@mutant("method-details-kind-always-fiat", reqs=["RCP-METHOD-DETAILS", "RCP-METHOD-DETAILS-KIND"],
        doc="Method details answer `kind: fiat` for crypto methods too.")
def method_details_kind_always_fiat(ref: Reference) -> None:
    @around(ref, "getBeneficiaryMethodDetails")
    def get_beneficiary_method_details(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body={**reply.body, "kind": "fiat"})


@mutant("method-details-read-only-allowed", reqs=["AUTH-READ-ONLY-NO-DETAILS"],
        doc="A read-only key reads full account details (no `write` scope needed).")
def method_details_read_only_allowed(ref: Reference) -> None:
    op = ref.operations["getBeneficiaryMethodDetails"]
    ref.operations[op.op_id] = dataclasses.replace(op, scopes=())


@mutant("method-details-kind-bank", reqs=["RCP-METHOD-DETAILS-KIND"],
        doc="A method's details read answers `kind: bank` instead of `fiat` or `crypto`.")
def method_details_kind_bank(ref: Reference) -> None:
    def wrap(handler: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        def run(call: Call) -> Reply:
            reply = handler(call)
            return dataclasses.replace(reply, body={**reply.body, "kind": "bank"})
        return run

    ref.wrap_handler("getBeneficiaryMethodDetails", wrap)

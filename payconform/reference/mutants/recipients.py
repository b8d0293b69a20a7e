"""Mutants of the Recipients endpoints: contact PATCH rules, delete, payment methods, method details,
`BANK_ACCOUNT_ALREADY_LINKED` and `BENEFICIARY_EXTERNAL_ID_CONFLICT`.

Each wraps one operation's handler (`around`) on this server instance only.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable

from ..corridors import FIELDS
from ..errors import ApiError, validation_error
from ..operation import Call, Reply
from ..store import dumps
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]
RECIPIENT_OPS = ("getBeneficiary", "getBeneficiaryByExternalId", "updateBeneficiary", "deleteBeneficiary",
                 "addBeneficiaryMethod", "deleteBeneficiaryMethod", "getBeneficiaryMethodDetails")
# a value that passes each corridor account field's check (corridors.FIELDS)
FILLERS = {"accountNumber": "000000000000", "routingNumber": "000000000", "iban": "DE00000000000000000000",
           "address": "0x" + "0" * 40, "chain": "ethereum"}


def around(ref: Reference, *op_ids: str) -> Callable[[Callable[[Handler, Call], Reply]], None]:
    """Decorator: `f(original, call)` becomes the handler of each operation in `op_ids`."""
    def install(f: Callable[[Handler, Call], Reply]) -> None:
        for op_id in op_ids:
            ref.wrap_handler(op_id, lambda original: lambda call: f(original, call))
    return install


def body(call: Call) -> dict[str, Any]:
    """The parsed request body (the object handlers read), or an empty dict."""
    parsed = call.json()
    return parsed if isinstance(parsed, dict) else {}


def read_recipient(ref: Reference, call: Call) -> Reply:
    return ref.operations["getBeneficiary"].handler(call)


@mutant("recipient-create-ignores-type", reqs=["RCP-CREATE"],
        doc="createBeneficiary stores every recipient as `individual`, whatever `type` was sent.")
def _(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        if "type" in body(call):
            body(call)["type"] = "individual"
        return original(call)


@mutant("recipient-read-omits-methods", reqs=["RCP-READ"],
        doc="GET /{recipientId} answers the recipient with an empty `paymentMethods`.")
def _(ref: Reference) -> None:
    @around(ref, "getBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body={**reply.body, "paymentMethods": []})


@mutant("recipient-external-id-read-by-id", reqs=["RCP-READ-EXTERNAL"],
        doc="GET /external/{externalId} looks the value up as a recipient id, so a real externalId answers 404.")
def _(ref: Reference) -> None:
    @around(ref, "getBeneficiaryByExternalId")
    def _(original: Handler, call: Call) -> Reply:
        call.params["recipientId"] = call.params["externalId"]
        return read_recipient(ref, call)


@mutant("recipient-not-found-as-400",
        reqs=["ERR-NOT-FOUND", "RCP-READ", "RCP-READ-EXTERNAL", "RCP-PATCH-RESPONSE", "RCP-DELETE",
              "RCP-ADD-METHOD-UNKNOWN", "RCP-DELETE-METHOD-UNKNOWN"],
        doc="Recipient routes answer an unknown or deleted recipient or method with 400 VALIDATION_ERROR, not 404.")
def _(ref: Reference) -> None:
    @around(ref, *RECIPIENT_OPS)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "NOT_FOUND":
                raise validation_error([{"field": "recipientId", "reason": "unknown"}]) from None
            raise


@mutant("patch-drops-email", reqs=["RCP-PATCH-CONTACT-ONLY"],
        doc="PATCH /{recipientId} answers 200 but never changes `email`.")
def _(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        body(call).pop("email", None)
        return original(call)


@mutant("patch-empty-name-clears", reqs=["RCP-PATCH-EMPTY-IGNORED"],
        doc="PATCH with `name: \"\"` empties the name instead of ignoring it.")
def _(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if body(call).get("name") == "":
            ref.store.run("UPDATE recipients SET name = '' WHERE id = ?", (call.params["recipientId"],))
        return reply


@mutant("patch-empty-phone-ignored", reqs=["RCP-PATCH-PHONE-CLEARS"],
        doc="PATCH with `phone: \"\"` leaves the phone as it was instead of clearing it.")
def _(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        if body(call).get("phone") == "":
            del body(call)["phone"]
        return original(call)


@mutant("patch-edits-account", reqs=["RCP-PATCH-ACCOUNT-NOT-EDITABLE"],
        doc="PATCH with `paymentMethod.recipientDetails` rewrites the account behind the recipient's methods.")
def _(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        sent = body(call)
        method = sent.pop("paymentMethod", None)
        sent.pop("recipientDetails", None)
        if isinstance(method, dict) and isinstance(method.get("recipientDetails"), dict):
            ref.store.run("UPDATE payment_methods SET details = ? WHERE recipient_id = ?",
                          (dumps(method["recipientDetails"]), call.params["recipientId"]))
        return original(call)


@mutant("patch-accepts-any-type", reqs=["RCP-PATCH-RESPONSE"],
        doc="PATCH with a `type` other than individual or business answers 200 (the value is dropped).")
def _(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        if body(call).get("type") not in (None, "individual", "business"):
            del body(call)["type"]
        return original(call)


@mutant("recipient-delete-noop", reqs=["RCP-DELETE"],
        doc="DELETE /{recipientId} answers 200 but the recipient stays, readable and without `deletedAt`.")
def _(ref: Reference) -> None:
    @around(ref, "deleteBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        return read_recipient(ref, call)


@mutant("add-method-not-saved", reqs=["RCP-ADD-METHOD"],
        doc="POST /{recipientId}/methods answers 201 with the new method, which is never saved.")
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE payment_methods SET deleted_at = created_at WHERE id = ?", (reply.body["method"]["id"],))
        return reply


@mutant("add-method-without-method", reqs=["RCP-ADD-METHOD-RESPONSE"],
        doc="The add-method 201 is the recipient without `method` naming the new one.")
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body={k: v for k, v in reply.body.items() if k != "method"})


@mutant("missing-corridor-field-accepted", reqs=["RCP-ADD-METHOD-VALIDATION"],
        doc="A method missing a corridor account field is saved with a filler value instead of a 400.")
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        details = body(call).get("recipientDetails")
        if isinstance(details, dict):
            for field in FIELDS.get((body(call).get("kind"), body(call).get("currency")), ()):
                details.setdefault(field, FILLERS[field])
        return original(call)


@mutant("missing-chain-names-address", reqs=["RCP-ADD-METHOD-VALIDATION"],
        doc="A crypto method sent without `chain` is refused with a VALIDATION_ERROR that names `address`, not the "
            "missing `chain`.")
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        details = body(call).get("recipientDetails")
        if isinstance(details, dict) and "address" in details and "chain" not in details:
            raise validation_error([{"field": "recipientDetails.address", "reason": "unsupported network"}])
        return original(call)


@mutant("add-method-to-deleted-recipient", reqs=["RCP-ADD-METHOD-UNKNOWN"],
        doc="A payment method can be added to a deleted recipient (201 instead of 404).")
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        rid = call.params["recipientId"]
        row = ref.store.one("SELECT deleted_at FROM recipients WHERE id = ?", (rid,))
        ref.store.run("UPDATE recipients SET deleted_at = NULL WHERE id = ?", (rid,))
        try:
            return original(call)
        finally:
            restored = row["deleted_at"] if row else None
            ref.store.run("UPDATE recipients SET deleted_at = ? WHERE id = ?", (restored, rid))


@mutant("already-linked-check-off", reqs=["RCP-BANK-ACCOUNT-ALREADY-LINKED", "ERR-BANK-ACCOUNT-ALREADY-LINKED"],
        doc="An account already on another recipient is linked again (201) instead of 409 BANK_ACCOUNT_ALREADY_LINKED.")
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
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
def _(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "BANK_ACCOUNT_ALREADY_LINKED":
                err.extra.clear()
            raise


@mutant("method-delete-noop", reqs=["RCP-DELETE-METHOD"],
        doc="DELETE /{recipientId}/methods/{methodId} answers 200 with the recipient, method still there.")
def _(ref: Reference) -> None:
    @around(ref, "deleteBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        return read_recipient(ref, call)


@mutant("method-delete-removes-all", reqs=["RCP-DELETE-METHOD-OTHERS-UNTOUCHED"],
        doc="Deleting one payment method deletes every method of the recipient.")
def _(ref: Reference) -> None:
    @around(ref, "deleteBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        original(call)
        ref.store.run("UPDATE payment_methods SET deleted_at = created_at WHERE recipient_id = ?",
                      (call.params["recipientId"],))
        return read_recipient(ref, call)


@mutant("method-delete-unknown-200", reqs=["RCP-DELETE-METHOD-UNKNOWN"],
        doc="Deleting a method the recipient does not have answers 200 with the recipient instead of 404.")
def _(ref: Reference) -> None:
    @around(ref, "deleteBeneficiaryMethod")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "NOT_FOUND":
                raise
            return read_recipient(ref, call)


@mutant("deleted-method-still-payable", reqs=["RCP-DELETE-METHOD-NOT-PAYABLE", "ERR-DESTINATION-ACCOUNT-NOT-FOUND"],
        doc="A payout to the destinationAccountId of a deleted method revives the method and pays it.")
def _(ref: Reference) -> None:
    @around(ref, "createPayout")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE payment_methods SET deleted_at = NULL WHERE destination_account_id = ?",
                      (str(body(call).get("destinationAccountId")),))
        return original(call)


@mutant("method-details-masked", reqs=["RCP-METHOD-DETAILS"],
        doc="Method details answer masked account fields (`****`) even to a read+write key.")
def _(ref: Reference) -> None:
    @around(ref, "getBeneficiaryMethodDetails")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        masked = {k: "****" + v[-2:] for k, v in reply.body["recipientDetails"].items()}
        return dataclasses.replace(reply, body={**reply.body, "recipientDetails": masked})


@mutant("method-details-kind-always-fiat", reqs=["RCP-METHOD-DETAILS", "RCP-METHOD-DETAILS-KIND"],
        doc="Method details answer `kind: fiat` for crypto methods too.")
def _(ref: Reference) -> None:
    @around(ref, "getBeneficiaryMethodDetails")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body={**reply.body, "kind": "fiat"})


@mutant("method-details-read-only-allowed", reqs=["AUTH-READ-ONLY-NO-DETAILS"],
        doc="A read-only key reads full account details (no `write` scope needed).")
def _(ref: Reference) -> None:
    op = ref.operations["getBeneficiaryMethodDetails"]
    ref.operations[op.op_id] = dataclasses.replace(op, scopes=())


@mutant("external-id-conflict-undetected", reqs=["RCP-EXTERNAL-ID-CONFLICT", "ERR-BENEFICIARY-EXTERNAL-ID-CONFLICT"],
        doc="Creating with an externalId that names a recipient with other account details creates a second "
            "recipient (without the externalId) instead of 409 BENEFICIARY_EXTERNAL_ID_CONFLICT.")
def _(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "BENEFICIARY_EXTERNAL_ID_CONFLICT":
                raise
            del body(call)["externalId"]
            return original(call)

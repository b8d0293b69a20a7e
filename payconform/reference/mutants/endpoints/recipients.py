"""Mutants of the Endpoints part for recipients: create, read, update, delete and the lookups they share
with products.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ...core.errors import ApiError, validation_error
from ...core.operation import Call, Reply
from ...core.store import dumps
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.checkout import link_row
from ..support.requests import read_recipient

if TYPE_CHECKING:
    from ...reference import Reference


PRODUCT_OPS = ("getCheckoutProduct", "updateCheckoutProduct", "deleteCheckoutProduct")


RECIPIENT_OPS = ("getBeneficiary", "getBeneficiaryByExternalId", "updateBeneficiary", "deleteBeneficiary",
                 "addBeneficiaryMethod", "deleteBeneficiaryMethod", "getBeneficiaryMethodDetails")


@mutant("foreign-link-readable", reqs=["CHK-404-FOREIGN"],
        doc="A link of another organization can be read, listed and paid through this organization's path.")
def foreign_link_readable(ref: Reference) -> None:
    @around(ref, "getCheckoutLink", "listCheckoutPayments", "simulateCheckoutPayment")
    def read_through_links_org(original: Handler, call: Call) -> Reply:
        link = link_row(ref, call)
        if link is not None:
            call.org_id = link["org_id"]
        return original(call)


@mutant("fuzz-recipient-name-non-ascii-500", reqs=["RCP-CREATE"],
        doc="createBeneficiary crashes (500 INTERNAL) on a `name` with a character outside ASCII.")
def fuzz_recipient_name_non_ascii_500(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def create_beneficiary(original: Handler, call: Call) -> Reply:
        name = body(call).get("name")
        if isinstance(name, str):
            name.encode("ascii")  # UnicodeEncodeError: the pipeline answers 500 INTERNAL
        return original(call)


@mutant("product-delete-noop", reqs=["PROD-DELETE"],
        doc="DELETE /products/{productId} answers 200 but the product stays.")
def product_delete_noop(ref: Reference) -> None:
    @around(ref, "deleteCheckoutProduct")
    def delete_checkout_product(original: Handler, call: Call) -> Reply:
        return ref.operations["getCheckoutProduct"].handler(call)


@mutant("product-of-another-org-visible", reqs=["CHK-404-FOREIGN"],
        doc="A product id of another organization is found (read, updated, deleted) under this organization's path.")
def product_of_another_org_visible(ref: Reference) -> None:
    @around(ref, *PRODUCT_OPS)
    def read_as_owner(original: Handler, call: Call) -> Reply:
        owner = ref.store.one("SELECT org_id FROM products WHERE id = ? AND mode = ?",
                              (call.params["productId"], call.mode))
        if owner is not None:
            call.org_id = owner["org_id"]
        return original(call)


@mutant("product-not-found-as-400", reqs=["ERR-NOT-FOUND", "CHK-404-FOREIGN", "PROD-DELETE"],
        doc="Product routes answer an unknown or deleted product id with 400 VALIDATION_ERROR, not 404.")
def product_not_found_as_400(ref: Reference) -> None:
    @around(ref, *PRODUCT_OPS)
    def product_operation(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "NOT_FOUND":
                raise validation_error([{"field": "productId", "reason": "unknown"}]) from None
            raise


@mutant("recipient-create-ignores-type", reqs=["RCP-CREATE"],
        doc="createBeneficiary stores every recipient as `individual`, whatever `type` was sent.")
def recipient_create_ignores_type(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def create_beneficiary(original: Handler, call: Call) -> Reply:
        if "type" in body(call):
            body(call)["type"] = "individual"
        return original(call)


@mutant("recipient-read-omits-methods", reqs=["RCP-READ"],
        doc="GET /{recipientId} answers the recipient with an empty `paymentMethods`.")
def recipient_read_omits_methods(ref: Reference) -> None:
    @around(ref, "getBeneficiary")
    def get_beneficiary(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body={**reply.body, "paymentMethods": []})


@mutant("recipient-external-id-read-by-id", reqs=["RCP-READ-EXTERNAL"],
        doc="GET /external/{externalId} looks the value up as a recipient id, so a real externalId answers 404.")
def recipient_external_id_read_by_id(ref: Reference) -> None:
    @around(ref, "getBeneficiaryByExternalId")
    def get_beneficiary_by_external_id(original: Handler, call: Call) -> Reply:
        call.params["recipientId"] = call.params["externalId"]
        return read_recipient(ref, call)


@mutant("recipient-not-found-as-400",
        reqs=["ERR-NOT-FOUND", "RCP-READ", "RCP-READ-EXTERNAL", "RCP-PATCH-RESPONSE", "RCP-DELETE",
              "RCP-ADD-METHOD-UNKNOWN", "RCP-DELETE-METHOD-UNKNOWN"],
        doc="Recipient routes answer an unknown or deleted recipient or method with 400 VALIDATION_ERROR, not 404.")
def recipient_not_found_as_400(ref: Reference) -> None:
    @around(ref, *RECIPIENT_OPS)
    def recipient_operation(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "NOT_FOUND":
                raise validation_error([{"field": "recipientId", "reason": "unknown"}]) from None
            raise


@mutant("patch-drops-email", reqs=["RCP-PATCH-CONTACT-ONLY"],
        doc="PATCH /{recipientId} answers 200 but never changes `email`.")
def patch_drops_email(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        body(call).pop("email", None)
        return original(call)


@mutant("patch-empty-name-clears", reqs=["RCP-PATCH-EMPTY-IGNORED"],
        doc="PATCH with `name: \"\"` empties the name instead of ignoring it.")
def patch_empty_name_clears(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if body(call).get("name") == "":
            ref.store.run("UPDATE recipients SET name = '' WHERE id = ?", (call.params["recipientId"],))
        return reply


@mutant("patch-empty-email-refused", reqs=["RCP-PATCH-EMPTY-IGNORED"],
        doc="PATCH with `email: \"\"` is refused with 400 VALIDATION_ERROR (not an email address) instead of ignored.")
def patch_empty_email_refused(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        if body(call).get("email") == "":
            raise validation_error([{"field": "email", "reason": "not an email address"}])
        return original(call)


@mutant("patch-rewrites-external-id", reqs=["RCP-PATCH-CONTACT-ONLY"],
        doc="PATCH /{recipientId} also takes `externalId` and rewrites it, not only the contact details.")
def patch_rewrites_external_id(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        external_id = body(call).pop("externalId", None)
        reply = original(call)
        if not isinstance(external_id, str):
            return reply
        ref.store.run("UPDATE recipients SET external_id = ? WHERE id = ?", (external_id, reply.resource_id))
        return read_recipient(ref, call)


@mutant("patch-empty-phone-ignored", reqs=["RCP-PATCH-PHONE-CLEARS"],
        doc="PATCH with `phone: \"\"` leaves the phone as it was instead of clearing it.")
def patch_empty_phone_ignored(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        if body(call).get("phone") == "":
            del body(call)["phone"]
        return original(call)


@mutant("patch-edits-account", reqs=["RCP-PATCH-ACCOUNT-NOT-EDITABLE"],
        doc="PATCH with `paymentMethod.recipientDetails` rewrites the account behind the recipient's methods.")
def patch_edits_account(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        sent = body(call)
        method = sent.pop("paymentMethod", None)
        sent.pop("recipientDetails", None)
        if isinstance(method, dict) and isinstance(method.get("recipientDetails"), dict):
            ref.store.run("UPDATE payment_methods SET details = ? WHERE recipient_id = ?",
                          (dumps(method["recipientDetails"]), call.params["recipientId"]))
        return original(call)


@mutant("patch-accepts-any-type", reqs=["RCP-PATCH-RESPONSE"],
        doc="PATCH with a `type` other than individual or business answers 200 (the value is dropped).")
def patch_accepts_any_type(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        if body(call).get("type") not in (None, "individual", "business"):
            del body(call)["type"]
        return original(call)


@mutant("recipient-delete-noop", reqs=["RCP-DELETE"],
        doc="DELETE /{recipientId} answers 200 but the recipient stays, readable and without `deletedAt`.")
def recipient_delete_noop(ref: Reference) -> None:
    @around(ref, "deleteBeneficiary")
    def delete_beneficiary(original: Handler, call: Call) -> Reply:
        return read_recipient(ref, call)


@mutant("add-method-to-deleted-recipient", reqs=["RCP-ADD-METHOD-UNKNOWN"],
        doc="A payment method can be added to a deleted recipient (201 instead of 404).")
def add_method_to_deleted_recipient(ref: Reference) -> None:
    @around(ref, "addBeneficiaryMethod")
    def add_beneficiary_method(original: Handler, call: Call) -> Reply:
        rid = call.params["recipientId"]
        row = ref.store.one("SELECT deleted_at FROM recipients WHERE id = ?", (rid,))
        ref.store.run("UPDATE recipients SET deleted_at = NULL WHERE id = ?", (rid,))
        try:
            return original(call)
        finally:
            restored = row["deleted_at"] if row else None
            ref.store.run("UPDATE recipients SET deleted_at = ? WHERE id = ?", (restored, rid))


@mutant("method-delete-unknown-200", reqs=["RCP-DELETE-METHOD-UNKNOWN"],
        doc="Deleting a method the recipient does not have answers 200 with the recipient instead of 404.")
def method_delete_unknown_200(ref: Reference) -> None:
    @around(ref, "deleteBeneficiaryMethod")
    def delete_beneficiary_method(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "NOT_FOUND":
                raise
            return read_recipient(ref, call)


@mutant("external-id-conflict-undetected", reqs=["RCP-EXTERNAL-ID-CONFLICT", "ERR-BENEFICIARY-EXTERNAL-ID-CONFLICT"],
        doc="Creating with an externalId that names a recipient with other account details creates a second "
            "recipient (without the externalId) instead of 409 BENEFICIARY_EXTERNAL_ID_CONFLICT.")
def external_id_conflict_undetected(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def create_beneficiary(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "BENEFICIARY_EXTERNAL_ID_CONFLICT":
                raise
            del body(call)["externalId"]
            return original(call)

"""Endpoints > Recipients: create (profile), read by id and by external id, PATCH of contact details,
delete, and the `externalId` conflict.

Recipients are created through the profile's `createBeneficiary` (its path and body are not shown);
everything read back goes through the spec-shown routes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_error_body, expect_status

from .._support.accounts import account_details, account_identifiers, method_body
from .._support.answers import member
from .._support.answers import scalars
from .._support.profile import corridor_of
from .._support.recipients import (
    create_recipient,
    post_recipient,
    read_only_recipient,
    read_recipient,
    recipient_body,
    reread,
    untouched_recipient,
)

CONTACT = ("name", "email", "country", "type")


def _digits(phone: Any) -> str:
    return re.sub(r"\D", "", phone) if isinstance(phone, str) else ""


@pytest.mark.req("RCP-CREATE", "RCP-READ")
def test_created_recipient_reads_back(api: Api, contract: Contract, unique) -> None:
    """A recipient created through the profile (the run's one that tests only read) is readable by id with the
    contact details sent and its method."""
    body, created = read_only_recipient(api, contract, unique)
    got = read_recipient(api, created.json["id"])
    for field in (*CONTACT, "externalId"):
        expect(got.get(field) == body[field], f"`{field}` reads {got.get(field)!r}, {body[field]!r} was sent")
    methods = got.get("paymentMethods")
    expect(isinstance(methods, list) and len(methods) == 1,
           f"the recipient was created with one payment method; `paymentMethods` reads {methods!r}")


@pytest.mark.smoke
@pytest.mark.req("RCP-READ", "ERR-NOT-FOUND")
def test_read_unknown_recipient_is_404(api: Api, unique) -> None:
    """GET /{recipientId} of an id that names no recipient: 404 NOT_FOUND ("No such payout, recipient or other id")."""
    expect_error(api.op("getBeneficiary", recipientId=unique("rcp-none")), 404, "NOT_FOUND")


@pytest.mark.req("RCP-READ-EXTERNAL")
def test_read_by_external_id(api: Api, contract: Contract, unique) -> None:
    """GET /external/{externalId} answers the recipient created with that externalId."""
    sent, answer = read_only_recipient(api, contract, unique)
    created, external_id = answer.json, sent["externalId"]
    ex = api.op("getBeneficiaryByExternalId", externalId=external_id)
    expect_status(ex, 200)
    expect(ex.json.get("id") == created["id"] and ex.json.get("externalId") == external_id,
           f"externalId {external_id!r} read recipient {ex.json.get('id')!r} / {ex.json.get('externalId')!r}; "
           f"it names {created['id']!r}", ex)


@pytest.mark.req("RCP-READ-EXTERNAL", "ERR-NOT-FOUND")
def test_read_unknown_external_id_is_404(api: Api, unique) -> None:
    """An externalId no recipient carries: 404 NOT_FOUND."""
    expect_error(api.op("getBeneficiaryByExternalId", externalId=unique("ext-none")), 404, "NOT_FOUND")


@pytest.mark.req("RCP-PATCH-CONTACT-ONLY", "RCP-PATCH-RESPONSE")
def test_patch_changes_contact_details(api: Api, contract: Contract, unique) -> None:
    """PATCH of `name`, `email`, `phone`, `country`, `type`: 200 with the recipient, and the change reads back."""
    created = create_recipient(api, contract, unique, type="individual")
    change = {"name": unique("renamed"), "email": "payee.patched@example.com", "phone": "+442071838750",
              "country": "DE", "type": "business"}
    ex = api.op("updateBeneficiary", recipientId=created["id"], json=change)
    expect_status(ex, 200)
    expect(ex.json.get("id") == created["id"], "the PATCH answer is not the recipient", ex)
    for source, got in (("PATCH answer", ex.json), ("read after PATCH", read_recipient(api, created["id"]))):
        for field in CONTACT:
            expect(got.get(field) == change[field],
                   f"{source}: `{field}` is {got.get(field)!r}, {change[field]!r} was sent", ex)
        expect(_digits(got.get("phone")) == _digits(change["phone"]),
               f"{source}: `phone` is {got.get('phone')!r}, {change['phone']!r} was sent", ex)


@pytest.mark.req("RCP-PATCH-CONTACT-ONLY")
def test_patch_leaves_the_external_id(api: Api, contract: Contract, unique) -> None:
    """Contact details only: a PATCH that also sends `externalId` is refused (a 4xx error body) or the
    `externalId` is ignored; either way the recipient keeps the external id it was created with."""
    original = unique("ext")
    created = post_recipient(api, contract, recipient_body(contract, unique, externalId=original)).json
    sent = unique("ext-patched")
    ex = api.op("updateBeneficiary", recipientId=created["id"], json={"externalId": sent, "name": unique("renamed")})
    if ex.status >= 400:
        expect(ex.status < 500, "a PATCH with `externalId` answered a server error", ex)
        expect_error_body(ex)
    else:
        expect_status(ex, 200)
    got = read_recipient(api, created["id"]).get("externalId")
    expect(got == original, f"a PATCH sending `externalId: {sent!r}` changed it from {original!r} to {got!r}; only "
                            "contact details change", ex)


@pytest.mark.req("RCP-PATCH-EMPTY-IGNORED")
def test_patch_empty_name_email_country_ignored(api: Api, contract: Contract, unique) -> None:
    """An empty `name`, `email` or `country` is ignored: the old values stay while the rest of the PATCH applies."""
    created = create_recipient(api, contract, unique, type="individual")
    ex = api.op("updateBeneficiary", recipientId=created["id"],
                json={"name": "", "email": "", "country": "", "type": "business"})
    expect_status(ex, 200)
    got = read_recipient(api, created["id"])
    for field in ("name", "email", "country"):
        expect(got.get(field) == created[field],
               f"`{field}: \"\"` changed `{field}` from {created[field]!r} to {got.get(field)!r}; "
               "it must be ignored", ex)
    expect(got.get("type") == "business", f"`type` reads {got.get('type')!r} after a PATCH to business", ex)


@pytest.mark.req("RCP-PATCH-PHONE-CLEARS")
def test_patch_empty_phone_clears_it(api: Api, contract: Contract, unique) -> None:
    """`phone: ""` clears the phone (read back: absent, null or empty)."""
    created = create_recipient(api, contract, unique, phone="+14155550123")
    expect(_digits(created.get("phone")), f"the recipient was created with a phone; it reads {created.get('phone')!r}")
    ex = api.op("updateBeneficiary", recipientId=created["id"], json={"phone": ""})
    expect_status(ex, 200)
    phone = read_recipient(api, created["id"]).get("phone")
    expect(phone in (None, ""), f"`phone: \"\"` left the phone as {phone!r}; it must clear it", ex)


@pytest.mark.req("RCP-PATCH-ACCOUNT-NOT-EDITABLE", "RCP-PATCH-CONTACT-ONLY")
def test_patch_cannot_edit_the_account(api: Api, contract: Contract, unique) -> None:
    """Account fields in a PATCH are refused (a 4xx error body) or ignored; either way the method's details
    still carry the account it was created with and never the one the PATCH sent."""
    body = recipient_body(contract, unique)
    answer = post_recipient(api, contract, body)
    created, method = answer.json, member(answer, "paymentMethods", 0)
    original = account_identifiers(body)
    corridor = corridor_of(contract, method)
    new_account = account_details(contract, corridor)
    ex = api.op("updateBeneficiary", recipientId=created["id"],
                json={"recipientDetails": new_account, "paymentMethod": method_body(contract, corridor, new_account)})
    if ex.status >= 400:
        expect(ex.status < 500, "a PATCH with account fields answered a server error", ex)
        expect_error_body(ex)
    else:
        expect_status(ex, 200)
    details = api.op("getBeneficiaryMethodDetails", recipientId=created["id"], methodId=method["id"])
    expect_status(details, 200, "reading the method's details after the PATCH")
    shown = set(scalars(details.json))
    expect(original <= shown and not account_identifiers(new_account) & shown,
           f"after a PATCH sending account {sorted(account_identifiers(new_account))} the method's details read "
           f"{details.json}; the account {sorted(original)} must be unchanged", details)
    got = read_recipient(api, created["id"])
    expect([(m.get("id"), m.get("destinationAccountId")) for m in got.get("paymentMethods") or []]
           == [(method["id"], method.get("destinationAccountId"))],
           f"the recipient's methods changed after a PATCH: {got.get('paymentMethods')}", ex)


@pytest.mark.req("RCP-PATCH-RESPONSE", "ERR-NOT-FOUND")
def test_patch_unknown_recipient_is_404(api: Api, unique) -> None:
    """PATCH of a recipient that does not exist: 404 NOT_FOUND."""
    ex = api.op("updateBeneficiary", recipientId=unique("rcp-none"), json={"name": unique("n")})
    expect_error(ex, 404, "NOT_FOUND")


@pytest.mark.req("RCP-PATCH-RESPONSE")
def test_patch_invalid_type_is_400(api: Api, contract: Contract, unique) -> None:
    """`type` is individual or business: any other value is a 400 and changes nothing (tried on the recipient
    the tests of refused changes share, `untouched_recipient`)."""
    created = untouched_recipient(api, contract, unique)
    ex = api.op("updateBeneficiary", recipientId=created["id"], json={"type": "partnership"})
    after = reread(api, created)
    expect_status(ex, 400)
    expect_error_body(ex)
    expect(after.get("type") == created["type"], "a refused PATCH changed `type`", ex)


@pytest.mark.req("RCP-DELETE")
def test_delete_recipient(api: Api, contract: Contract, unique) -> None:
    """DELETE answers 200; afterwards a read answers 404, or the recipient with `deletedAt` set (the spec lists
    `deletedAt` among a recipient's fields and says no more). Adding a method to it: see test_recipient_methods."""
    created = create_recipient(api, contract, unique)
    ex = api.op("deleteBeneficiary", recipientId=created["id"])
    expect_status(ex, 200)
    read = api.op("getBeneficiary", recipientId=created["id"])
    if read.status == 404:
        expect_error_body(read)
    else:
        expect_status(read, {200, 404}, "reading a deleted recipient")
        expect(read.json.get("deletedAt"), "a deleted recipient reads 200 without `deletedAt` set", read)


@pytest.mark.req("RCP-DELETE", "ERR-NOT-FOUND")
def test_delete_unknown_recipient_is_404(api: Api, unique) -> None:
    """DELETE of a recipient that does not exist: 404 NOT_FOUND."""
    expect_error(api.op("deleteBeneficiary", recipientId=unique("rcp-none")), 404, "NOT_FOUND")


@pytest.mark.smoke
@pytest.mark.req("RCP-EXTERNAL-ID-CONFLICT", "ERR-BENEFICIARY-EXTERNAL-ID-CONFLICT")
def test_external_id_naming_other_account_conflicts(api: Api, contract: Contract, unique) -> None:
    """Creating with an `externalId` that names a recipient with other account details: 409
    BENEFICIARY_EXTERNAL_ID_CONFLICT, and the external id still reads the first recipient."""
    external_id = unique("ext")
    first = create_recipient(api, contract, unique, externalId=external_id)
    ex = api.op("createBeneficiary", json=recipient_body(contract, unique, externalId=external_id))
    expect_error(ex, 409, "BENEFICIARY_EXTERNAL_ID_CONFLICT")
    read = api.op("getBeneficiaryByExternalId", externalId=external_id)
    expect_status(read, 200)
    expect(read.json.get("id") == first["id"], f"after the conflict the externalId names {read.json.get('id')!r}", read)

"""Recipients (beneficiaries) and their payment methods over the API, prefix `/recipients/{orgId}`
(the rules: `recipients.py`). Adding a method registers the account with the payout provider; the operator
makes that provider unavailable with the fault `unavailable` on `payoutAccountProvider` (503
PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE, nothing saved)."""

from __future__ import annotations

import json
from typing import Any

from ..resources import recipients
from ..resources.corridors import read_method
from ..core.errors import ApiError, validation_error
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page
from ..resources.recipients import ACCOUNT_PROVIDER, CONTACT_FIELDS, TYPES, recipient_json
from ..core.validate import COUNTRIES, EMAIL, Checker, check


def _contact(c: Checker, *, patch: bool) -> dict[str, Any]:
    """Contact fields; on PATCH an empty name, email or country means "leave unchanged"."""
    values: dict[str, Any] = {}
    for field, rules in (("name", {}), ("email", {"pattern": EMAIL, "max_len": 254}),
                         ("country", {"choices": COUNTRIES})):
        if patch and c.obj.get(field) == "":
            continue
        value = c.string(field, required=not patch, **rules)  # type: ignore[arg-type]
        if value is not None:
            values[field] = value
    kind = c.string("type", required=not patch, choices=TYPES)
    if kind is not None:
        values["type"] = kind
    if c.obj.get("phone") in (None, ""):  # `phone: ""` (or null) clears it
        if "phone" in c.obj:
            values["phone"] = None
    else:
        phone = c.string("phone", max_len=40)
        if phone is not None:
            values["phone"] = phone
    return values


def create_recipient(call: Call) -> Reply:
    c = check(call.json())
    contact = _contact(c, patch=False)
    external_id = c.string("externalId", nullable=True)
    method_checker = c.nested(call.ref.choices.recipient_method_field)
    method = read_method(method_checker) if method_checker else None
    c.done()
    status, row = recipients.create(call, contact, external_id, method)
    return Reply(status, recipient_json(call, row), row["id"])


def list_recipients(call: Call) -> Reply:
    q = call.query
    limit = q.limit(default=20, low=1, high=100)
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="recipients", scope=f"recipients:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ? AND deleted_at IS NULL", params=(call.org_id, call.mode),
        limit=limit, cursor=q.get("cursor"),
    )
    return Reply(200, page(call, [recipient_json(call, r) for r in rows], next_cursor))


def get_recipient(call: Call) -> Reply:
    return Reply(200, recipient_json(call, recipients.get(call, call.params["recipientId"])))


def get_by_external_id(call: Call) -> Reply:
    row = recipients.find_by(call, "external_id", call.params["externalId"])
    if row is None:
        raise ApiError("NOT_FOUND", "No recipient with that externalId in this organization.")
    return Reply(200, recipient_json(call, row))


def update_recipient(call: Call) -> Reply:
    """Contact details only: any other field is refused before the recipient is looked up."""
    body = check(call.json()).obj
    refused = sorted(set(body) - set(CONTACT_FIELDS))
    if refused:
        raise validation_error(
            [{"field": f, "reason": "only contact details can be changed"} for f in refused],
            "Only name, email, phone, country and type can be changed; an account is replaced by adding a"
            " new method and deleting the old one.",
        )
    row = recipients.get(call, call.params["recipientId"])
    c = Checker(body)
    values = _contact(c, patch=True)
    c.done()
    row = recipients.update(call, row, values)
    return Reply(200, recipient_json(call, row), row["id"])


def delete_recipient(call: Call) -> Reply:
    row = recipients.delete(call, call.params["recipientId"])
    return Reply(200, recipient_json(call, row), row["id"])


def add_method(call: Call) -> Reply:
    c = check(call.json())
    method = read_method(c)
    c.done()
    assert method is not None
    row = recipients.get(call, call.params["recipientId"])
    method_id = recipients.insert_method(call, row["id"], method)
    if call.ref.faults.take(call.org_id, ACCOUNT_PROVIDER, "unavailable") is not None:
        raise ApiError("PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE", "The payout provider could not register the account; "
                       "nothing was saved.")
    body = recipient_json(call, recipients.reread(call, row["id"]))
    body["method"] = next(m for m in body["paymentMethods"] if m["id"] == method_id)
    return Reply(201, body, row["id"])


def delete_method(call: Call) -> Reply:
    row = recipients.delete_method(call, call.params["recipientId"], call.params["methodId"])
    return Reply(200, recipient_json(call, row), row["id"])


def method_details(call: Call) -> Reply:
    method = recipients.get_method(call, call.params["recipientId"], call.params["methodId"])
    return Reply(200, {"id": method["id"], "kind": method["kind"], "currency": method["currency"],
                       "recipientDetails": json.loads(method["details"])})


P = "/recipients/{orgId}"
OPERATIONS = [
    Operation("createBeneficiary", "POST", P, create_recipient, idempotency="optional", takes_body=True,
              audit="recipient.create"),
    Operation("listBeneficiaries", "GET", P, list_recipients),
    Operation("getBeneficiaryByExternalId", "GET", P + "/external/{externalId}", get_by_external_id),
    Operation("getBeneficiary", "GET", P + "/{recipientId}", get_recipient),
    Operation("updateBeneficiary", "PATCH", P + "/{recipientId}", update_recipient, idempotency="optional",
              takes_body=True, audit="recipient.update"),
    Operation("deleteBeneficiary", "DELETE", P + "/{recipientId}", delete_recipient, idempotency="optional",
              audit="recipient.delete"),
    Operation("addBeneficiaryMethod", "POST", P + "/{recipientId}/methods", add_method, idempotency="required",
              takes_body=True, audit="recipient.method_add"),
    Operation("deleteBeneficiaryMethod", "DELETE", P + "/{recipientId}/methods/{methodId}", delete_method,
              idempotency="optional", audit="recipient.method_delete"),
    Operation("getBeneficiaryMethodDetails", "GET", P + "/{recipientId}/methods/{methodId}/details",
              method_details, scopes=("write",)),
]

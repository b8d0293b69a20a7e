"""Recipients (beneficiaries) and their payment methods, prefix `/recipients/{orgId}`.

A recipient's contact details are editable; the account behind a method is not (a wrong account is a
new method, the old one deleted). An account may be linked to one live recipient only. Deleting a
recipient or a method makes its `destinationAccountId` unpayable.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from .. import ids
from ..clock import iso
from ..corridors import account_fingerprint, read_method
from ..errors import ApiError, validation_error
from ..operation import Call, Operation, Reply
from ..paging import by_seq
from ..store import dumps
from ..validate import COUNTRIES, EMAIL, Checker, check

CONTACT_FIELDS = ("name", "email", "phone", "country", "type")
TYPES = ("individual", "business")
SCREENING_STATUS = "cleared"  # the sandbox screens every recipient clear at creation


def _method_json(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "kind": row["kind"],
        "currency": row["currency"],
        "status": "active",
        "destinationAccountId": row["destination_account_id"],
    }


def _methods(call: Call, recipient_id: str) -> list[sqlite3.Row]:
    return call.ref.store.all(
        "SELECT * FROM payment_methods WHERE recipient_id = ? AND deleted_at IS NULL ORDER BY seq",
        (recipient_id,),
    )


def recipient_json(call: Call, row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "email": row["email"],
        "phone": row["phone"],
        "country": row["country"],
        "type": row["type"],
        "externalId": row["external_id"],
        "paymentMethods": [_method_json(m) for m in _methods(call, row["id"])],
        "screeningStatus": SCREENING_STATUS,
        "screeningReason": None,
        "screenedAt": row["created_at"],
        "deletedAt": row["deleted_at"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def _find(call: Call, column: str, value: str) -> sqlite3.Row | None:
    return call.ref.store.one(
        f"SELECT * FROM recipients WHERE {column} = ? AND org_id = ? AND mode = ? AND deleted_at IS NULL",
        (value, call.org_id, call.mode),
    )


def _get(call: Call) -> sqlite3.Row:
    row = _find(call, "id", call.params["recipientId"])
    if row is None:
        raise ApiError("NOT_FOUND", "No such recipient in this organization.")
    return row


def _reread(call: Call, recipient_id: str) -> sqlite3.Row:
    row = call.ref.store.one("SELECT * FROM recipients WHERE id = ?", (recipient_id,))
    assert row is not None
    return row


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


def linked_method(call: Call, fingerprint: str) -> sqlite3.Row | None:
    """The active method of an active recipient of this organization that holds the account, if any."""
    return call.ref.store.one(
        "SELECT m.* FROM payment_methods m JOIN recipients r ON r.id = m.recipient_id"
        " WHERE m.org_id = ? AND m.mode = ? AND m.fingerprint = ? AND m.deleted_at IS NULL"
        " AND r.deleted_at IS NULL",
        (call.org_id, call.mode, fingerprint),
    )


def _check_not_linked(call: Call, fingerprint: str) -> None:
    """409 when an active recipient of this organization already holds the account."""
    row = linked_method(call, fingerprint)
    if row is not None:
        raise ApiError(
            "BANK_ACCOUNT_ALREADY_LINKED",
            "This account is already linked to a recipient; pay that recipient's method instead.",
            existingRecipientId=row["recipient_id"],
            existingMethodId=row["id"],
        )


def insert_method(call: Call, recipient_id: str, method: tuple[str, str, dict[str, str]]) -> str:
    kind, currency, details = method
    fingerprint = account_fingerprint(kind, currency, details)
    _check_not_linked(call, fingerprint)
    method_id = ids.new_id("pm")
    call.ref.store.run(
        "INSERT INTO payment_methods (id, recipient_id, org_id, mode, kind, currency, details, fingerprint,"
        " destination_account_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (method_id, recipient_id, call.org_id, call.mode, kind, currency, dumps(details), fingerprint,
         ids.new_id("acct"), iso(call.now)),
    )
    return method_id


def create_recipient(call: Call) -> Reply:
    c = check(call.json())
    contact = _contact(c, patch=False)
    external_id = c.string("externalId", nullable=True)
    method_checker = c.nested("paymentMethod")
    method = read_method(method_checker) if method_checker else None
    c.done()
    if external_id is not None:
        existing = _find(call, "external_id", external_id)
        if existing is not None:
            return _same_external_id(call, existing, method)
    recipient_id = insert_recipient(call, contact, external_id)
    if method is not None:
        insert_method(call, recipient_id, method)
    return Reply(201, recipient_json(call, _reread(call, recipient_id)), recipient_id)


def insert_recipient(call: Call, contact: dict[str, Any], external_id: str | None = None) -> str:
    """A new recipient from validated contact details (`name`, `email`, `country`, `type`, `phone`?); its id."""
    recipient_id = ids.new_id("rcp")
    now = iso(call.now)
    call.ref.store.run(
        "INSERT INTO recipients (id, org_id, mode, name, email, phone, country, type, external_id, created_at,"
        " updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (recipient_id, call.org_id, call.mode, contact["name"], contact["email"], contact.get("phone"),
         contact["country"], contact["type"], external_id, now, now),
    )
    return recipient_id


def _same_external_id(call: Call, existing: sqlite3.Row, method: tuple[str, str, dict[str, str]] | None) -> Reply:
    """Creating again under a known externalId returns that recipient if the account matches, else 409."""
    held = {m["fingerprint"] for m in _methods(call, existing["id"])}
    wanted = account_fingerprint(*method) if method else None
    if (wanted is None and not held) or wanted in held:
        return Reply(200, recipient_json(call, existing), existing["id"])
    raise ApiError("BENEFICIARY_EXTERNAL_ID_CONFLICT", existingRecipientId=existing["id"])


def list_recipients(call: Call) -> Reply:
    q = call.query
    limit = q.limit(default=20, low=1, high=100)
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="recipients", scope=f"recipients:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ? AND deleted_at IS NULL", params=(call.org_id, call.mode),
        limit=limit, cursor=q.get("cursor"),
    )
    body: dict[str, Any] = {"data": [recipient_json(call, r) for r in rows]}
    if next_cursor:
        body["nextCursor"] = next_cursor
    return Reply(200, body)


def get_recipient(call: Call) -> Reply:
    return Reply(200, recipient_json(call, _get(call)))


def get_by_external_id(call: Call) -> Reply:
    row = _find(call, "external_id", call.params["externalId"])
    if row is None:
        raise ApiError("NOT_FOUND", "No recipient with that externalId in this organization.")
    return Reply(200, recipient_json(call, row))


def update_recipient(call: Call) -> Reply:
    body = check(call.json()).obj
    refused = sorted(set(body) - set(CONTACT_FIELDS))
    if refused:
        raise validation_error(
            [{"field": f, "reason": "only contact details can be changed"} for f in refused],
            "Only name, email, phone, country and type can be changed; an account is replaced by adding a"
            " new method and deleting the old one.",
        )
    row = _get(call)
    c = Checker(body)
    values = _contact(c, patch=True)
    c.done()
    for field, value in values.items():
        call.ref.store.run(f"UPDATE recipients SET {field} = ? WHERE id = ?", (value, row["id"]))
    call.ref.store.run("UPDATE recipients SET updated_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    return Reply(200, recipient_json(call, _reread(call, row["id"])), row["id"])


def delete_recipient(call: Call) -> Reply:
    row = _get(call)
    call.ref.store.run("UPDATE recipients SET deleted_at = ?, updated_at = ? WHERE id = ?",
                       (iso(call.now), iso(call.now), row["id"]))
    return Reply(200, recipient_json(call, _reread(call, row["id"])), row["id"])


def add_method(call: Call) -> Reply:
    c = check(call.json())
    method = read_method(c)
    c.done()
    assert method is not None
    row = _get(call)
    method_id = insert_method(call, row["id"], method)
    body = recipient_json(call, _reread(call, row["id"]))
    body["method"] = next(m for m in body["paymentMethods"] if m["id"] == method_id)
    return Reply(201, body, row["id"])


def _get_method(call: Call) -> sqlite3.Row:
    row = _get(call)
    method = call.ref.store.one(
        "SELECT * FROM payment_methods WHERE id = ? AND recipient_id = ? AND deleted_at IS NULL",
        (call.params["methodId"], row["id"]),
    )
    if method is None:
        raise ApiError("NOT_FOUND", "No such payment method on this recipient.")
    return method


def delete_method(call: Call) -> Reply:
    method = _get_method(call)
    call.ref.store.run("UPDATE payment_methods SET deleted_at = ? WHERE id = ?", (iso(call.now), method["id"]))
    return Reply(200, recipient_json(call, _reread(call, method["recipient_id"])), method["recipient_id"])


def method_details(call: Call) -> Reply:
    method = _get_method(call)
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

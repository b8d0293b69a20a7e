"""Recipients (beneficiaries) and their payment methods.

A recipient's contact details are editable; the account behind a method is not (a wrong account is a
new method, the old one deleted). An account may be linked to one live recipient only. Deleting a
recipient or a method makes its `destinationAccountId` unpayable. Hosted payout links register recipients
through `insert_recipient` and `insert_method` too.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..core import ids
from ..core.clock import iso
from .corridors import account_fingerprint
from ..core.errors import ApiError
from ..core.operation import Call, StoreServer
from ..core.store import dumps

CONTACT_FIELDS = ("name", "email", "phone", "country", "type")
TYPES = ("individual", "business")
SCREENING_STATUS = "cleared"  # the sandbox screens every recipient clear at creation
ACCOUNT_PROVIDER = "payoutAccountProvider"  # operator fault pseudo-operation: who registers payout accounts
Method = tuple[str, str, dict[str, str]]  # kind, currency, account details


def _method_json(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "kind": row["kind"],
        "currency": row["currency"],
        "status": "active",
        "destinationAccountId": row["destination_account_id"],
    }


def _methods(call: Call[StoreServer], recipient_id: str) -> list[sqlite3.Row]:
    return call.ref.store.all(
        "SELECT * FROM payment_methods WHERE recipient_id = ? AND deleted_at IS NULL ORDER BY seq",
        (recipient_id,),
    )


def recipient_json(call: Call[StoreServer], row: sqlite3.Row) -> dict[str, Any]:
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


def find_by(call: Call[StoreServer], column: str, value: str) -> sqlite3.Row | None:
    """The active recipient of this organization and mode whose `column` (`id`, `external_id`) is `value`."""
    return call.ref.store.one(
        f"SELECT * FROM recipients WHERE {column} = ? AND org_id = ? AND mode = ? AND deleted_at IS NULL",
        (value, call.org_id, call.mode),
    )


def get(call: Call[StoreServer], recipient_id: str) -> sqlite3.Row:
    row = find_by(call, "id", recipient_id)
    if row is None:
        raise ApiError("NOT_FOUND", "No such recipient in this organization.")
    return row


def reread(call: Call[StoreServer], recipient_id: str) -> sqlite3.Row:
    row = call.ref.store.one("SELECT * FROM recipients WHERE id = ?", (recipient_id,))
    assert row is not None
    return row


def linked_method(call: Call[StoreServer], fingerprint: str) -> sqlite3.Row | None:
    """The active method of an active recipient of this organization that holds the account, if any."""
    return call.ref.store.one(
        "SELECT m.* FROM payment_methods m JOIN recipients r ON r.id = m.recipient_id"
        " WHERE m.org_id = ? AND m.mode = ? AND m.fingerprint = ? AND m.deleted_at IS NULL"
        " AND r.deleted_at IS NULL",
        (call.org_id, call.mode, fingerprint),
    )


def _check_not_linked(call: Call[StoreServer], fingerprint: str) -> None:
    """409 when an active recipient of this organization already holds the account."""
    row = linked_method(call, fingerprint)
    if row is not None:
        raise ApiError(
            "BANK_ACCOUNT_ALREADY_LINKED",
            "This account is already linked to a recipient; pay that recipient's method instead.",
            existingRecipientId=row["recipient_id"],
            existingMethodId=row["id"],
        )


def insert_method(call: Call[StoreServer], recipient_id: str, method: Method) -> str:
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


def insert_recipient(call: Call[StoreServer], contact: dict[str, Any], external_id: str | None = None) -> str:
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


def create(call: Call[StoreServer], contact: dict[str, Any], external_id: str | None,
           method: Method | None) -> tuple[int, sqlite3.Row]:
    """201 and a new recipient, or 200 and the one already under `external_id` when the account matches."""
    if external_id is not None:
        existing = find_by(call, "external_id", external_id)
        if existing is not None:
            return _same_external_id(call, existing, method), existing
    recipient_id = insert_recipient(call, contact, external_id)
    if method is not None:
        insert_method(call, recipient_id, method)
    return 201, reread(call, recipient_id)


def _same_external_id(call: Call[StoreServer], existing: sqlite3.Row, method: Method | None) -> int:
    """Creating again under a known externalId returns that recipient if the account matches, else 409."""
    held = {m["fingerprint"] for m in _methods(call, existing["id"])}
    wanted = account_fingerprint(*method) if method else None
    if (wanted is None and not held) or wanted in held:
        return 200
    raise ApiError("BENEFICIARY_EXTERNAL_ID_CONFLICT", existingRecipientId=existing["id"])


def update(call: Call[StoreServer], row: sqlite3.Row, values: dict[str, Any]) -> sqlite3.Row:
    """Write validated contact details; the recipient."""
    for field, value in values.items():
        call.ref.store.run(f"UPDATE recipients SET {field} = ? WHERE id = ?", (value, row["id"]))
    call.ref.store.run("UPDATE recipients SET updated_at = ? WHERE id = ?", (iso(call.now), row["id"]))
    return reread(call, row["id"])


def delete(call: Call[StoreServer], recipient_id: str) -> sqlite3.Row:
    row = get(call, recipient_id)
    call.ref.store.run("UPDATE recipients SET deleted_at = ?, updated_at = ? WHERE id = ?",
                       (iso(call.now), iso(call.now), row["id"]))
    return reread(call, row["id"])


def get_method(call: Call[StoreServer], recipient_id: str, method_id: str) -> sqlite3.Row:
    row = get(call, recipient_id)
    method = call.ref.store.one(
        "SELECT * FROM payment_methods WHERE id = ? AND recipient_id = ? AND deleted_at IS NULL",
        (method_id, row["id"]),
    )
    if method is None:
        raise ApiError("NOT_FOUND", "No such payment method on this recipient.")
    return method


def delete_method(call: Call[StoreServer], recipient_id: str, method_id: str) -> sqlite3.Row:
    """Delete the method (its account becomes unpayable); the recipient."""
    method = get_method(call, recipient_id, method_id)
    call.ref.store.run("UPDATE payment_methods SET deleted_at = ? WHERE id = ?", (iso(call.now), method["id"]))
    return reread(call, method["recipient_id"])

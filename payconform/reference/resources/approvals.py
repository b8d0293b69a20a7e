"""Payout approvals: the organization's policy (threshold, velocity cap) and the queue of held payouts.

A payout at or above the threshold, or one that would exceed the velocity cap (payouts created in a
sliding window), is not created: the request is kept in an approval (`pending`, 202 `pending_approval`).
Deciding is a dashboard action (the operator API): approving executes the kept request as a payout
(`payouts.execute_approved`: `executed` with `payoutId`, or `execution_failed` with the refusal's error
`type`); rejecting sends nothing; an approval nobody decides expires `lifetime` (24 hours) after creation
on the organization's clock, applied when it is next read or decided. Policy and lifetime are instance
attributes (mutants).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..core import ids
from ..core.clock import iso
from ..core.operation import Call, Reply, StoreServer
from ..core.store import Store, dumps

if TYPE_CHECKING:
    from ..events.events import Events

PENDING = "pending"


def approval_json(row: sqlite3.Row) -> dict[str, Any]:
    """Resources > Payout approval: the fields the spec names; `payoutId` once executed, `error` on failure."""
    body: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "status": row["status"],
        "requiredApprovals": row["required_approvals"],
        "approvals": row["approvals"],
        "amount": row["amount"],
        "currency": row["currency"],
        "createdAt": row["created_at"],
        "expiresAt": row["expires_at"],
        "updatedAt": row["updated_at"],
    }
    if row["destination_account_id"]:  # a batch's approval has no single destination
        body["destinationAccountId"] = row["destination_account_id"]
    if row["payout_id"]:
        body["payoutId"] = row["payout_id"]
    if row["error_type"]:
        body["error"] = {"type": row["error_type"]}
    return body


class Approvals:
    def __init__(self, threshold: Decimal) -> None:
        self.default_threshold: Decimal | None = threshold  # an organization's until the operator sets its own
        self.lifetime = timedelta(hours=24)
        self.required_approvals = 1
        self.events: Events | None = None  # the event store (set by Reference): every status change is announced

    def policy(self, store: Store, org_id: str, mode: str) -> tuple[Decimal | None, int | None, int | None]:
        """(threshold, velocity count, velocity window seconds) of the organization."""
        row = store.one("SELECT * FROM approval_policies WHERE org_id = ? AND mode = ?", (org_id, mode))
        if row is None:
            return self.default_threshold, None, None
        threshold = Decimal(row["threshold"]) if row["threshold"] is not None else None
        return threshold, row["velocity_count"], row["velocity_window_seconds"]

    def set_policy(self, store: Store, org_id: str, mode: str, threshold: Decimal | None,
                   velocity_count: int | None, velocity_window_seconds: int | None) -> None:
        store.run(
            "INSERT INTO approval_policies (org_id, mode, threshold, velocity_count, velocity_window_seconds)"
            " VALUES (?,?,?,?,?) ON CONFLICT (org_id, mode) DO UPDATE SET threshold = excluded.threshold,"
            " velocity_count = excluded.velocity_count, velocity_window_seconds = excluded.velocity_window_seconds",
            (org_id, mode, None if threshold is None else str(threshold), velocity_count, velocity_window_seconds))

    def applies(self, call: Call[StoreServer], amount: Decimal) -> bool:
        """Whether a payout of `amount` needs approvers: at or above the threshold, or over the velocity cap."""
        threshold, count, window = self.policy(call.ref.store, call.org_id, call.mode)
        if threshold is not None and amount >= threshold:
            return True
        if count is not None and window is not None:
            since = iso(call.now - timedelta(seconds=window))
            made = call.ref.store.one(
                "SELECT COUNT(*) AS n FROM payouts WHERE org_id = ? AND mode = ? AND created_at > ?",
                (call.org_id, call.mode, since))
            return made is not None and made["n"] >= count
        return False

    def hold(self, call: Call[StoreServer], *, amount: Decimal, currency: str, destination_account_id: str) -> Reply:
        """Keep the request for approvers: 202 `pending_approval`, nothing priced or sent."""
        approval_id = self.open(call, kind="payout", amount=amount, currency=currency,
                                destination_account_id=destination_account_id)
        row = self.find(call.ref.store, call.org_id, call.mode, approval_id, call.now)
        assert row is not None
        return Reply(202, {"status": "pending_approval", "approvalId": approval_id, "approval": approval_json(row)},
                     approval_id)

    def open(self, call: Call[StoreServer], *, kind: str, amount: Decimal, currency: str,
             destination_account_id: str | None) -> str:
        """A `pending` approval of `kind` (`payout`, `batch`) keeping the request; its id."""
        approval_id = ids.new_id("apr")
        now = iso(call.now)
        call.ref.store.run(
            "INSERT INTO payout_approvals (id, org_id, mode, kind, status, required_approvals, approvals, amount,"
            " currency, destination_account_id, request, scopes, created_at, expires_at, updated_at)"
            " VALUES (?,?,?,?,?,?,0,?,?,?,?,?,?,?,?)",
            (approval_id, call.org_id, call.mode, kind, PENDING, self.required_approvals, str(amount), currency,
             destination_account_id, call.raw_body.decode("utf-8"), dumps(sorted(call.principal.scopes)), now,
             iso(call.now + self.lifetime), now))
        self.announce(call.ref.store, approval_id, call.now)
        return approval_id

    def announce(self, store: Store, approval_id: str, at: datetime) -> None:
        """`payout_approval.<status>` with `data.approval` as it now stands, in the transaction of the change."""
        row = store.one("SELECT * FROM payout_approvals WHERE id = ?", (approval_id,))
        assert row is not None and self.events is not None
        self.events.record(row["org_id"], row["mode"], f"payout_approval.{row['status']}",
                           {"approval": approval_json(row)}, at)

    def find(self, store: Store, org_id: str, mode: str, approval_id: str, now: datetime) -> sqlite3.Row | None:
        """One approval, expired first if nobody decided it within its lifetime."""
        row = store.one("SELECT * FROM payout_approvals WHERE id = ? AND org_id = ? AND mode = ?",
                        (approval_id, org_id, mode))
        if row is None or row["status"] != PENDING or datetime.fromisoformat(row["expires_at"]) > now:
            return row
        store.run("UPDATE payout_approvals SET status = 'expired', updated_at = ? WHERE id = ?",
                  (row["expires_at"], approval_id))
        self.announce(store, approval_id, datetime.fromisoformat(row["expires_at"]))
        return store.one("SELECT * FROM payout_approvals WHERE id = ?", (approval_id,))

    def decide(self, store: Store, row: sqlite3.Row, status: str, now: datetime, *, payout_id: str | None = None,
               error_type: str | None = None, approvals: int | None = None) -> None:
        store.run(
            "UPDATE payout_approvals SET status = ?, payout_id = ?, error_type = ?, approvals = ?, updated_at = ?"
            " WHERE id = ?",
            (status, payout_id, error_type, row["approvals"] if approvals is None else approvals, iso(now), row["id"]))
        self.announce(store, row["id"], now)


def kept_request(row: sqlite3.Row) -> tuple[bytes, frozenset[str]]:
    """The held request's body and the scopes of the key that sent it."""
    return row["request"].encode("utf-8"), frozenset(json.loads(row["scopes"]))


"""The audit trail: one row per audited mutation, whether it succeeded or was refused.

A row names its actor by exactly one of `apiKeyPrefix` (an API-key call) or `actorUserId` (an operator
action, standing for a dashboard user). Rows are append-only; the row id is the list cursor.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .clock import Clock, iso
from .store import Store

OPERATOR_USER_ID = "operator"


class AuditLog:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def record(
        self,
        *,
        org_id: str,
        mode: str,
        action: str,
        resource_id: str | None,
        request_id: str,
        outcome: str,
        error_type: str | None = None,
        api_key_prefix: str | None = None,
        actor_user_id: str | None = None,
    ) -> None:
        if (api_key_prefix is None) == (actor_user_id is None):
            raise ValueError("an audit row names exactly one of api_key_prefix and actor_user_id")
        self.store.run(
            "INSERT INTO audit_events (org_id, mode, action, resource_id, request_id, api_key_prefix,"
            " actor_user_id, outcome, error_type, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (org_id, mode, action, resource_id, request_id, api_key_prefix, actor_user_id, outcome,
             error_type, iso(self.clock.now(org_id))),
        )


def audit_json(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "action": row["action"],
        "resourceId": row["resource_id"],
        "requestId": row["request_id"],
        "apiKeyPrefix": row["api_key_prefix"],
        "actorUserId": row["actor_user_id"],
        "outcome": row["outcome"],
        "errorType": row["error_type"],
        "createdAt": row["created_at"],
    }

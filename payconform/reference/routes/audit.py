"""The audit trail read, `GET /payments/organizations/{orgId}/audit-events` (readable with a read-only key)."""

from __future__ import annotations


from ..core.audit import audit_json
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_id_newest_first, page

FILTERS = (("action", "action = ?"), ("resourceId", "resource_id = ?"), ("apiKey", "api_key_prefix = ?"),
           ("actorUserId", "actor_user_id = ?"))


def list_audit_events(call: Call) -> Reply:
    """Newest first; the cursor is the `id` of the last row seen. An unknown `apiKey` prefix is an empty page."""
    q = call.query
    limit = q.limit(default=50, low=1, high=100)
    where, args = [], []
    for name, clause in FILTERS:
        value = q.get(name)
        if value is not None:
            where.append(clause)
            args.append(value)
    rows, next_cursor = by_id_newest_first(call, table="audit_events", where=where, args=args, limit=limit)
    return Reply(200, page(call, [audit_json(r) for r in rows], next_cursor))


OPERATIONS = [
    Operation("listAuditEvents", "GET", "/payments/organizations/{orgId}/audit-events", list_audit_events),
]

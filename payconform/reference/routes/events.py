"""The event feed: `GET /payments/organizations/{orgId}/events` (Events > Event feed).

`since` is a `sequence` (decimal string): only strictly later events. `type` filters by event type
(comma-separated). Envelope and paging are not shown in the spec; the profile's choice (`listEvents`):
`{data: [...]}` oldest first, at most `limit` (1-100, default 100) events; read on with
`since=<last sequence>`.
"""

from __future__ import annotations

from ..core.errors import field_error
from ..events.events import EVENT_TYPES
from ..conventions.paging import page
from ..core.operation import Call, Operation, Reply


def list_events(call: Call) -> Reply:
    q = call.query
    raw_since = q.get("since")
    if raw_since is not None and not (raw_since.isascii() and raw_since.isdigit()):
        raise field_error("since", "must be a sequence (a decimal string)")
    types = q.csv("type", frozenset(EVENT_TYPES))
    limit = q.limit(default=100, low=1, high=100)
    call.ref.dispatcher.settle_due(call.org_id)  # the feed is the record: changes that fell due are in it
    events = call.ref.events
    rows = events.feed(call.org_id, call.mode, int(raw_since) if raw_since is not None else None, types, limit)
    return Reply(200, page(call, [events.envelope(row) for row in rows]))


OPERATIONS = [
    Operation("listEvents", "GET", "/payments/organizations/{orgId}/events", list_events),
]

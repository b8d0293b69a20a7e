"""Payout batches over the API: create (202), list, read, items with the `status` filter, confirm, cancel.

The request body of create is the profile's (`createPayoutBatch`: `externalReferenceId` and `items`, lines
shaped like `createPayout`); confirm and cancel take none. The run's rules live in `batches.py`
(`call.ref.batches`); this module reads the request and answers. Lists are cursor-paged
(`{data, nextCursor?}` or the deployment's envelope, `limit` 1-100, default 20): runs newest first, items in line order.
"""

from __future__ import annotations

from typing import Any

from ..resources import batches
from ..core.errors import ApiError, field_error
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page
from ..core.validate import check

MAX_LINES = 1000


def create_batch(call: Call) -> Reply:
    """MASS_PAYOUTS_DISABLED for an organization that opted out; a taken `externalReferenceId` is
    PAYOUT_BATCH_DUPLICATE_REFERENCE naming the run (`originalBatchId`); otherwise 202 and the run. Only the
    envelope is refused here: a line object is judged on its own and a failing one becomes an `invalid` item."""
    rules = call.ref.batches
    if not rules.enabled(call.ref.store, call.org_id):
        raise ApiError("MASS_PAYOUTS_DISABLED")
    c = check(call.json())
    external_reference_id = c.string("externalReferenceId", required=True, max_len=100)
    lines = c.obj.get("items")
    if not isinstance(lines, list) or not 1 <= len(lines) <= MAX_LINES \
            or not all(isinstance(line, dict) for line in lines):
        c.fail("items", f"must be an array of 1-{MAX_LINES} payout line objects")
    c.done()
    assert external_reference_id is not None and isinstance(lines, list)
    row = rules.start(call, external_reference_id, lines)
    return Reply(202, rules.json(call, row), row["id"])


def get_batch(call: Call) -> Reply:
    rules = call.ref.batches
    return Reply(200, rules.json(call, rules.find(call, call.params["batchId"])))


def _page(call: Call, rows: list[Any], next_cursor: str | None, render: Any) -> Reply:
    return Reply(200, page(call, [render(r) for r in rows], next_cursor))


def list_batches(call: Call) -> Reply:
    q, rules = call.query, call.ref.batches
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="payout_batches", scope=f"batches:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ?", params=(call.org_id, call.mode),
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"),
    )
    return _page(call, rows, next_cursor, lambda r: rules.json(call, rules.settle(call, r)))


def list_items(call: Call) -> Reply:
    """The run's lines in order; `status` keeps only the lines in that status (e.g. `invalid`)."""
    q = call.query
    row = call.ref.batches.find(call, call.params["batchId"])
    status = q.get("status")
    if status is not None and status not in batches.ITEM_STATUSES:
        raise field_error("status", "must be one of " + ", ".join(sorted(batches.ITEM_STATUSES)))
    where, params = "batch_id = ?", [row["id"]]
    if status is not None:
        where, params = where + " AND status = ?", [*params, status]
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="payout_batch_items",
        scope=f"batch-items:{call.org_id}:{call.mode}:{row['id']}:{status or ''}", where=where, params=params,
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"), descending=False,
    )
    return _page(call, rows, next_cursor, batches.item_json)


def confirm_batch(call: Call) -> Reply:
    """Creation begins (200, the run) only from `awaiting_confirmation` and once any approval is given."""
    rules = call.ref.batches
    row = rules.confirm(call, rules.find(call, call.params["batchId"]))
    return Reply(200, rules.json(call, row), row["id"])


def cancel_batch(call: Call) -> Reply:
    """200 and the run, `canceled`, before creation starts; PAYOUT_BATCH_NOT_CANCELABLE after."""
    rules = call.ref.batches
    row = rules.withdraw(call, rules.find(call, call.params["batchId"]))
    return Reply(200, rules.json(call, row), row["id"])


P = "/payments/organizations/{orgId}/payouts/batches"
OPERATIONS = [
    Operation("createPayoutBatch", "POST", P, create_batch, idempotency="required", money_write=True,
              takes_body=True, audit="payout_batch.create"),
    Operation("listPayoutBatches", "GET", P, list_batches),
    Operation("getPayoutBatch", "GET", P + "/{batchId}", get_batch),
    Operation("listPayoutBatchItems", "GET", P + "/{batchId}/items", list_items),
    Operation("confirmPayoutBatch", "POST", P + "/{batchId}/confirm", confirm_batch, idempotency="required",
              audit="payout_batch.confirm"),
    Operation("cancelPayoutBatch", "POST", P + "/{batchId}/cancel", cancel_batch, idempotency="required",
              audit="payout_batch.cancel"),
]

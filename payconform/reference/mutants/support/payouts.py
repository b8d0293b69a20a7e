"""The payout, approval, batch and funding operations and rewrites that the mutants of several parts
share.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ..patching import Handler

if TYPE_CHECKING:
    import sqlite3
    from ...reference import Reference


QUEUE = ("listPayoutApprovals", "getPayoutApproval")


def rewrite_approvals(ref: Reference, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Every approval the queue reads answer goes through `change`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            body = reply.body
            if isinstance(body.get("data"), list):
                body = {**body, "data": [change(dict(a)) for a in body["data"]]}
            else:
                body = change(dict(body))
            return dataclasses.replace(reply, body=body)
        return handler

    for op_id in QUEUE:
        ref.wrap_handler(op_id, wrap)


def without_policy(ref: Reference, op_id: str) -> None:
    """While `op_id`'s handler runs no approval threshold or velocity cap applies; other routes keep them."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            applies = ref.approvals.applies
            ref.approvals.applies = lambda call, amount: False  # type: ignore[method-assign]
            try:
                return original(call)
            finally:
                ref.approvals.applies = applies  # type: ignore[method-assign]
        return handler

    ref.wrap_handler(op_id, wrap)


OPERATIONS = ("createPayoutBatch", "listPayoutBatches", "getPayoutBatch", "listPayoutBatchItems",
              "confirmPayoutBatch", "cancelPayoutBatch")


def wrap_batch_operations(ref: Reference, op_ids: tuple[str, ...], wrap: Callable[[Handler], Handler]) -> None:
    for op_id in op_ids:
        ref.wrap_handler(op_id, wrap)


def rewrite_batch_replies(ref: Reference, op_ids: tuple[str, ...], change: Callable[[Reply], Any]) -> None:
    """The reply body of the given operations becomes `change(reply)`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            return dataclasses.replace(reply, body=change(reply))
        return handler

    wrap_batch_operations(ref, op_ids, wrap)


def retype_batch_refusal(ref: Reference, type_: str, change: Callable[[ApiError], ApiError]) -> None:
    """An ApiError of `type_` raised by a batch operation is answered as `change(err)` instead."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if err.type != type_:
                    raise
                raise change(err) from None
        return handler

    wrap_batch_operations(ref, OPERATIONS, wrap)


CONFIRM = "confirmPayoutFunding"


def refuse_expired(ref: Reference, refusal: Callable[[], ApiError]) -> None:
    """A submit of an expired link is refused with `refusal()` instead of the common 404."""
    expired = ref.payout_links.expired

    def refused(row: sqlite3.Row, now: datetime) -> bool:
        if expired(row, now):
            raise refusal()
        return False

    ref.payout_links.expired = refused  # type: ignore[method-assign]


READS = ("getOrder", "getPayout", "listOrders", "listPayouts")


def rewrite_reads(ref: Reference, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Every payout the read operations answer goes through `change` (a copy of the payout in, one out)."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            body = reply.body
            if isinstance(body.get("data"), list):
                body = {**body, "data": [change(dict(p)) for p in body["data"]]}
            else:
                body = change(dict(body))
            return dataclasses.replace(reply, body=body)
        return handler

    for op_id in READS:
        ref.wrap_handler(op_id, wrap)

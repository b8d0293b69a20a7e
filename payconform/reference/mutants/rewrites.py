"""Helpers for variants: rewrite answer bodies, event bodies or one operation's replies through the stable
patch points of a Reference (`response_filters`, `events.record`, `wrap_handler`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import ApiError
from ..core.responses import Outgoing

if TYPE_CHECKING:
    from ..core.operation import Call, Reply
    from ..reference import Handler, Reference

Transform = Callable[[Any], Any]


def rewrite_answers(ref: Reference, transform: Transform) -> None:
    """Every API answer's body becomes `transform(body)`."""
    def rewrite(out: Outgoing) -> None:
        out.body = transform(out.body)

    ref.response_filters.append(rewrite)


def rewrite_events(ref: Reference, transform: Transform, prefix: str = "") -> None:
    """The `data` of every event whose type starts with `prefix` becomes `transform(data)` when it is recorded,
    so that deliveries and the feed carry the same object."""
    record = ref.events.record

    def record_rewritten(org_id: str, mode: str, type_: str, data: dict[str, Any], now: datetime) -> str:
        return record(org_id, mode, type_, transform(data) if type_.startswith(prefix) else data, now)

    ref.events.record = record_rewritten  # type: ignore[method-assign]


def data_rows(reply: Reply) -> list[dict[str, Any]]:
    """The object rows under a list answer's `data` (none when the answer has no such list)."""
    rows = reply.body.get("data") if isinstance(reply.body, dict) else None
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def rewrite_replies(ref: Reference, op_id: str, transform: Callable[[Reply], Reply]) -> None:
    """Every reply of the operation `op_id` becomes `transform(reply)` (raise ApiError in it to refuse)."""
    def wrap(handler: Handler) -> Handler:
        def rewritten(call: Call) -> Reply:
            return transform(handler(call))
        return rewritten

    ref.wrap_handler(op_id, wrap)


def rewrite_refusals(ref: Reference, op_id: str, transform: Callable[[Call, ApiError], ApiError | None]) -> None:
    """Every refusal (ApiError) of the operation `op_id` is raised as `transform(call, err)` instead, or as it
    was where that is None."""
    def wrap(handler: Handler) -> Handler:
        def rewritten(call: Call) -> Reply:
            try:
                return handler(call)
            except ApiError as err:
                replaced = transform(call, err)
                if replaced is None:
                    raise
                raise replaced from err
        return rewritten

    ref.wrap_handler(op_id, wrap)

"""Patches of event recording and webhook replies that the mutants of several parts share."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...core.operation import Call, Reply
from ..patching import Handler

if TYPE_CHECKING:
    from ...reference import Reference


DELIVERY_LISTS = ("listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries")


def rewrite_webhook_replies(ref: Reference, op_ids: tuple[str, ...], change: Callable[[Any], Any]) -> None:
    """The reply body of the given operations goes through `change`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            return dataclasses.replace(reply, body=change(reply.body))
        return handler

    for op_id in op_ids:
        ref.wrap_handler(op_id, wrap)


def on_record(ref: Reference, change: Callable[[Callable[..., str], str, str, str, dict, Any], str]) -> None:
    original = ref.events.record

    def record(org_id: str, mode: str, type_: str, data: dict[str, Any], now: Any) -> str:
        return change(original, org_id, mode, type_, data, now)

    ref.events.record = record


def rewrite_event_data(ref: Reference, type_: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """`data` of events of `type_` goes through `change` before it is stored."""
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, change(dict(d)) if t == type_ else d, n))

"""Tolerated variants of the payout operations, whose bodies and responses the spec does not show."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from . import variant
from .rewrites import rewrite_answers, rewrite_events, rewrite_replies

if TYPE_CHECKING:
    from ..operation import Reply
    from ..reference import Reference


def _minimal_cancel(reply: Reply) -> Reply:
    if reply.status != 200 or not isinstance(reply.body, dict):
        return reply
    return dataclasses.replace(reply, status=202, body={"payoutId": reply.body.get("payoutId")})


@variant("payout-cancel-202-minimal",
         doc="A payout cancel answers 202 with only `{payoutId}`: 'Bodies and responses of the payout operations "
             "(create, price, send, indicative quote, list, read, cancel, ...): not shown'.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "cancelPayout", _minimal_cancel)


def _without_end_user(value: Any) -> Any:
    """Payouts (objects with a `payoutId`) at any depth, less `endUser` and `endUserId`."""
    if isinstance(value, list):
        return [_without_end_user(v) for v in value]
    if not isinstance(value, dict):
        return value
    drop = ("endUser", "endUserId") if "payoutId" in value else ()
    return {k: _without_end_user(v) for k, v in value.items() if k not in drop}


@variant("payout-without-end-user",
         doc="A payout sent without an end user carries neither `endUser` nor `endUserId`, in reads and in "
             "`payout.*` events: the payout table lists '`endUser` | object | `{id}`' and '`endUserId` | string' "
             "with no rule that every payout has one.")
def _(ref: Reference) -> None:
    rewrite_answers(ref, _without_end_user)
    rewrite_events(ref, _without_end_user, "payout.")


def _accepted(reply: Reply) -> Reply:
    return dataclasses.replace(reply, status=202) if reply.status == 200 else reply


@variant("batch-confirm-202",
         doc="Confirming a batch answers 202 (creation begins later): 'confirm batch | | creation begins (answers "
             "200 or 202)'.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "confirmPayoutBatch", _accepted)


def _more_features(reply: Reply) -> Reply:
    if isinstance(reply.body, dict) and isinstance(reply.body.get("features"), list):
        reply.body["features"] = [*reply.body["features"], "vendor_preview"]
    return reply


@variant("policy-extra-features",
         doc="The policy's `features` lists a feature the spec never names beside `developer`: '`features` lists "
             "`developer` when developer tools are on' says nothing of other entries.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "getPolicy", _more_features)


def _minimal_create(reply: Reply) -> Reply:
    if reply.status == 202 or not isinstance(reply.body, dict) or "payoutId" not in reply.body:
        return reply  # a held payout's 202 `pending_approval` is shown; only the accepted payout's body is not
    return dataclasses.replace(reply, body={"payoutId": reply.body["payoutId"]})


@variant("payout-create-minimal",
         doc="An accepted payout is answered with only `{payoutId}`: 'Bodies and responses of the payout "
             "operations (create, ...): not shown'; the payout is read with GET /orders/{payoutId}.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "createPayout", _minimal_create)


@variant("allow-duplicate-other-values-ignored",
         doc="An `X-Allow-Duplicate` header with any value but `true` is ignored (the duplicate guard still answers "
             "409 for an identical body; a new body runs) rather than refused: '`X-Allow-Duplicate: true` (the only "
             "accepted value)' says which value allows a duplicate, not that another is refused.")
def _(ref: Reference) -> None:
    ref.idempotency.allow_duplicate = lambda call: call.headers.get("x-allow-duplicate") == "true"  # type: ignore[method-assign]

"""Mutants of the Versioning part: the version header and what a newer version may add.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..core.errors import ApiError
from ..events.events import EVENT_TYPES
from ..core.operation import Call, Reply
from ..core.responses import Outgoing
from .patching import Handler, around, body
from .registry import mutant
from .rewrites import rewrite_answers

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("webhooks-sandbox-events-enum-old", reqs=["VER-SANDBOX-EVENTS-ENUM"],
        doc="Sandbox registration refuses the approval types and `checkout_payment.partially_refunded` in `events`.")
def webhooks_sandbox_events_enum_old(ref: Reference) -> None:
    added = {"checkout_payment.partially_refunded"} | {t for t in EVENT_TYPES if t.startswith("payout_approval.")}

    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            body = call.json()
            if isinstance(body, dict) and added & set(body.get("events") or []):
                raise ApiError("VALIDATION_ERROR", errors=[{"field": "events", "reason": "unknown event type"}])
            return original(call)
        return handler

    ref.wrap_handler("createSandboxWebhookEndpoint", wrap)


@mutant("ver-audit-events-unserved", reqs=["VER-ADDED-OPERATIONS"],
        doc="GET audit-events (an operation Versioning rule 8 lists as added) answers 404 ROUTE_NOT_FOUND.")
def ver_audit_events_unserved(ref: Reference) -> None:
    @around(ref, "listAuditEvents")
    def list_audit_events(original: Handler, call: Call) -> Reply:
        raise ref.route_not_found("GET", "/payments/organizations/{orgId}/audit-events")


@mutant("ver-batch-confirm-not-implemented", reqs=["VER-ADDED-OPERATIONS"],
        doc="POST batches/{batchId}/confirm (an operation Versioning rule 8 lists as added) is routed but answers "
            "501 NOT_IMPLEMENTED.")
def ver_batch_confirm_not_implemented(ref: Reference) -> None:
    @around(ref, "confirmPayoutBatch")
    def confirm(original: Handler, call: Call) -> Reply:
        raise ApiError("NOT_IMPLEMENTED", "Confirming a batch is not implemented.", status=501)


@mutant("ver-screened-at-epoch", reqs=["VER-CHANGELOG-FIELDS"],
        doc="A recipient's `screenedAt` (an added field) is answered as epoch seconds, a JSON number.")
def ver_screened_at_epoch(ref: Reference) -> None:
    def epoch(out: Outgoing) -> None:
        if isinstance(out.body, dict) and isinstance(out.body.get("screenedAt"), str):
            out.body["screenedAt"] = 1700000000

    ref.response_filters.append(epoch)


@mutant("ver-disclaimer-as-flag", reqs=["VER-CHANGELOG-FIELDS"],
        doc="A quote's RegE disclosure (added fields) carries `otherFeesDisclaimer` as the flag `true`, not its text.")
def ver_disclaimer_as_flag(ref: Reference) -> None:
    @around(ref, "pricePayout", "sendPayout")
    def flagged(original: Handler, call: Call) -> Reply:
        reply = original(call)
        disclosure = reply.body.get("disclosure") if isinstance(reply.body, dict) else None
        if not isinstance(disclosure, dict):
            return reply
        with_flag = {**disclosure, "otherFeesDisclaimer": True}
        return dataclasses.replace(reply, body={**reply.body, "disclosure": with_flag})


@mutant("ver-original-batch-as-number", reqs=["VER-CHANGELOG-FIELDS"],
        doc="PAYOUT_BATCH_DUPLICATE_REFERENCE names the run in `originalBatchId` (an added field) by its row "
            "number, a JSON number.")
def ver_original_batch_as_number(ref: Reference) -> None:
    def row_number(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "PAYOUT_BATCH_DUPLICATE_REFERENCE":
            out.body["originalBatchId"] = 1

    ref.response_filters.append(row_number)


@mutant("ver-history-type-as-number", reqs=["VER-CHANGELOG-ENUMS"],
        doc="Balance history entries carry `type` as a number (0 funding, 1 payout, 2 reversal), not a string.")
def ver_history_type_as_number(ref: Reference) -> None:
    codes = {"funding": 0, "payout": 1, "reversal": 2}

    @around(ref, "getBalanceHistory")
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        entries = [{**e, "type": codes.get(e.get("type"), 9)} for e in reply.body.get("entries") or []]
        return dataclasses.replace(reply, body={**reply.body, "entries": entries})


@mutant("ver-settles-to-as-number", reqs=["VER-CHANGELOG-ENUMS"],
        doc="Funding accounts carry `settlesTo` as a number (0 provider balance, 1 wallet), not a string.")
def ver_settles_to_as_number(ref: Reference) -> None:
    codes = {"provider_balance": 0, "wallet": 1}

    @around(ref, "getFundingAccounts")
    def get_funding_accounts(original: Handler, call: Call) -> Reply:
        reply = original(call)
        accounts = [{**a, "settlesTo": codes.get(a.get("settlesTo"), 9)} for a in reply.body.get("data") or []]
        return dataclasses.replace(reply, body={**reply.body, "data": accounts})


@mutant("ver-sandbox-events-partial-refund-refused", reqs=["VER-SANDBOX-EVENTS-ENUM"],
        doc="Sandbox registration takes the approval types but refuses `checkout_payment.partially_refunded`, "
            "added after them, in `events`.")
def ver_sandbox_events_partial_refund_refused(ref: Reference) -> None:
    @around(ref, "createSandboxWebhookEndpoint")
    def create(original: Handler, call: Call) -> Reply:
        if "checkout_payment.partially_refunded" in (body(call).get("events") or []):
            raise ApiError("VALIDATION_ERROR", errors=[{"field": "events", "reason": "unknown event type"}])
        return original(call)


@mutant("ver-delivery-event-type-older-name", reqs=["VER-SANDBOX-EVENTS-ENUM"],
        doc="The delivery log names a partial refund's deliveries `checkout_payment.refunded`: "
            "`checkout_payment.partially_refunded` is not taken up as a delivery `eventType`.")
def ver_delivery_event_type_older_name(ref: Reference) -> None:
    def rename(value: Any) -> Any:
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, dict):
            if value.get("eventType") == "checkout_payment.partially_refunded" and "eventId" in value:
                return {**value, "eventType": "checkout_payment.refunded"}
            return {k: rename(v) for k, v in value.items()}
        return value

    rewrite_answers(ref, rename)


@mutant("ver-error-type-renamed", reqs=["VER-ERROR-TYPE-STABLE"],
        doc="`VALIDATION_ERROR` is answered under a type of the server's own, `INVALID_PARAMETERS`.")
def ver_error_type_renamed(ref: Reference) -> None:
    def rename(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "VALIDATION_ERROR":
            out.body["type"] = "INVALID_PARAMETERS"

    ref.response_filters.append(rename)

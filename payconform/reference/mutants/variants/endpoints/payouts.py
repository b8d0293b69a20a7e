"""Tolerated variants of the Endpoints part for payouts, batches, approvals and payout links.

The whole suite must pass under each of them.
"""

from __future__ import annotations

import dataclasses
import hmac
import time
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ....resources.approvals import approval_json
from ....core.errors import ApiError
from ....core.money import fmt, parse_decimal
from ....core.operation import Reply
from ....conventions.paging import by_seq
from ...patching import Handler
from ...registry import variant
from ...rewrites import rewrite_answers, rewrite_events, rewrite_refusals, rewrite_replies
from ...support.payouts import refuse_expired

if TYPE_CHECKING:
    from ....core.operation import Call
    from ....reference import Reference


def _refuse_resubmit(ref: Reference, refusal: Callable[[], ApiError]) -> None:
    """A second submit, which the reference answers with the original payout `already_submitted`, is refused."""
    def refuse(reply: Reply) -> Reply:
        if isinstance(reply.body, dict) and reply.body.get("status") == "already_submitted":
            raise refusal()
        return reply

    rewrite_replies(ref, "submitPayoutLink", refuse)


def _minimal_cancel(reply: Reply) -> Reply:
    if reply.status != 200 or not isinstance(reply.body, dict):
        return reply
    return dataclasses.replace(reply, status=202, body={"payoutId": reply.body.get("payoutId")})


def _without_end_user(value: Any) -> Any:
    """Payouts (objects with a `payoutId`) at any depth, less `endUser` and `endUserId`."""
    if isinstance(value, list):
        return [_without_end_user(v) for v in value]
    if not isinstance(value, dict):
        return value
    drop = ("endUser", "endUserId") if "payoutId" in value else ()
    return {k: _without_end_user(v) for k, v in value.items() if k not in drop}


def _accepted(reply: Reply) -> Reply:
    return dataclasses.replace(reply, status=202) if reply.status == 200 else reply


def _more_features(reply: Reply) -> Reply:
    if isinstance(reply.body, dict) and isinstance(reply.body.get("features"), list):
        reply.body["features"] = [*reply.body["features"], "vendor_preview"]
    return reply


def _minimal_create(reply: Reply) -> Reply:
    if reply.status == 202 or not isinstance(reply.body, dict) or "payoutId" not in reply.body:
        return reply  # a held payout's 202 `pending_approval` is shown; only the accepted payout's body is not
    return dataclasses.replace(reply, body={"payoutId": reply.body["payoutId"]})


EXECUTION_TICK = 2.0  # seconds (wall time) between an approval's decision and its execution being recorded


OUTCOMES = ("executed", "execution_failed")


QUEUE_PAGE = 20


@variant("spent-link-404",
         doc="A second submit of a spent link answers 404 NOT_FOUND: '404 `NOT_FOUND` (expired, spent, forged or "
             "unknown token)'; 'A 404 on a payout link route covers expired, spent, forged and unknown links alike'.")
def spent_link_404(ref: Reference) -> None:
    _refuse_resubmit(ref, ref.payout_links.not_found)  # the one 404 of every unusable token


@variant("spent-link-unusable",
         doc="A second submit of a spent link answers 400 PAYOUT_LINK_UNUSABLE: '`PAYOUT_LINK_UNUSABLE` | 400 | ... "
             "Expired, spent, or failed at execution; links are single use'.")
def spent_link_unusable(ref: Reference) -> None:
    _refuse_resubmit(ref, lambda: ApiError("PAYOUT_LINK_UNUSABLE", "This payout link was already used."))


@variant("expired-link-unusable",
         doc="A submit of an expired payout link answers 400 PAYOUT_LINK_UNUSABLE, as the Errors table has it "
             "('`PAYOUT_LINK_UNUSABLE` | 400 | ... Expired, spent, or failed at execution; links are single use'), "
             "not the submit route's '404 `NOT_FOUND` (expired, spent, forged or unknown token)'.")
def expired_link_unusable(ref: Reference) -> None:
    refuse_expired(ref, lambda: ApiError("PAYOUT_LINK_UNUSABLE", "This payout link has expired; links are single use."))


@variant("payout-cancel-202-minimal",
         doc="A payout cancel answers 202 with only `{payoutId}`: 'Bodies and responses of the payout operations "
             "(create, price, send, indicative quote, list, read, cancel, ...): not shown'.")
def payout_cancel_202_minimal(ref: Reference) -> None:
    rewrite_replies(ref, "cancelPayout", _minimal_cancel)


@variant("payout-without-end-user",
         doc="A payout sent without an end user carries neither `endUser` nor `endUserId`, in reads and in "
             "`payout.*` events: the payout table lists '`endUser` | object | `{id}`' and '`endUserId` | string' "
             "with no rule that every payout has one.")
def payout_without_end_user(ref: Reference) -> None:
    rewrite_answers(ref, _without_end_user)
    rewrite_events(ref, _without_end_user, "payout.")


@variant("batch-confirm-202",
         doc="Confirming a batch answers 202 (creation begins later): 'confirm batch | | creation begins (answers "
             "200 or 202)'.")
def batch_confirm_202(ref: Reference) -> None:
    rewrite_replies(ref, "confirmPayoutBatch", _accepted)


@variant("policy-extra-features",
         doc="The policy's `features` lists a feature the spec never names beside `developer`: '`features` lists "
             "`developer` when developer tools are on' says nothing of other entries.")
def policy_extra_features(ref: Reference) -> None:
    rewrite_replies(ref, "getPolicy", _more_features)


@variant("payout-create-minimal",
         doc="An accepted payout is answered with only `{payoutId}`: 'Bodies and responses of the payout "
             "operations (create, ...): not shown'; the payout is read with GET /orders/{payoutId}.")
def payout_create_minimal(ref: Reference) -> None:
    rewrite_replies(ref, "createPayout", _minimal_create)


@variant("allow-duplicate-other-values-ignored",
         doc="An `X-Allow-Duplicate` header with any value but `true` is ignored (the duplicate guard still answers "
             "409 for an identical body; a new body runs) rather than refused: '`X-Allow-Duplicate: true` (the only "
             "accepted value)' says which value allows a duplicate, not that another is refused.")
def allow_duplicate_other_values_ignored(ref: Reference) -> None:
    ref.idempotency.allow_duplicate = lambda call: call.headers.get("x-allow-duplicate") == "true"  # type: ignore[method-assign]


@variant("approval-executed-later",
         doc="An approved payout's execution is recorded a dispatcher tick after the decision: the approval reads "
             "`approved` first, then `executed` or `execution_failed` ('approved' and 'executed' are two rows of "
             "the approval table: the instruction becomes a payout after it is approved).")
def approval_executed_later(ref: Reference) -> None:
    approvals, dispatcher = ref.approvals, ref.dispatcher
    decide, find, settle_due = approvals.decide, approvals.find, dispatcher.settle_due
    waiting: dict[str, tuple[float, tuple[Any, ...], dict[str, Any]]] = {}

    def later(store: Any, row: Any, status: str, now: Any, **fields: Any) -> None:
        if status not in OUTCOMES:
            decide(store, row, status, now, **fields)
            return
        waiting[row["id"]] = (time.monotonic() + EXECUTION_TICK, (store, row, status, now), fields)

    def record_due(only: str | None = None) -> None:
        for approval_id, (due, args, fields) in list(waiting.items()):
            if due <= time.monotonic() and only in (None, approval_id):
                del waiting[approval_id]
                decide(*args, **fields)

    def find_after_due(store: Any, org_id: str, mode: str, approval_id: str, now: Any) -> Any:
        record_due(approval_id)
        return find(store, org_id, mode, approval_id, now)

    def settle_with_due(org_id: str | None) -> None:
        settle_due(org_id)
        with ref.store.tx():
            record_due()

    approvals.decide = later  # type: ignore[method-assign]
    approvals.find = find_after_due  # type: ignore[method-assign]
    dispatcher.settle_due = settle_with_due


@variant("approval-queue-oldest-first",
         doc="The approval queue lists oldest first in fixed pages of 20, ignoring `limit`: the queue's order, "
             "page size and query are not shown ('Approval queue, readable with an API key').")
def approval_queue_oldest_first(ref: Reference) -> None:
    def oldest_first(call: Call) -> Reply:
        rows, next_cursor = by_seq(
            call.ref.store, call.ref.cursors, table="payout_approvals",
            scope=f"approvals-asc:{call.org_id}:{call.mode}",
            where="org_id = ? AND mode = ?", params=(call.org_id, call.mode), limit=QUEUE_PAGE,
            cursor=call.query.get("cursor"), descending=False)
        find = call.ref.approvals.find
        body: dict[str, Any] = {"data": [approval_json(find(call.ref.store, call.org_id, call.mode, r["id"], call.now))
                                         for r in rows]}
        if next_cursor:
            body["nextCursor"] = next_cursor
        return Reply(200, body)

    ref.wrap_handler("listPayoutApprovals", lambda _: oldest_first)


@variant("malformed-hash-transaction-invalid",
         doc="A `transactionHash` that is present but not EVM-shaped is refused with 400 FUNDING_TRANSACTION_INVALID "
             "('Transaction does not fund this payout') rather than VALIDATION_ERROR; a missing one stays a "
             "VALIDATION_ERROR.")
def malformed_hash_transaction_invalid(ref: Reference) -> None:
    def not_a_transaction(call: Call, err: ApiError) -> ApiError | None:
        body = call.json()
        sent = isinstance(body, dict) and body.get("transactionHash") is not None
        named = any(e.get("field") == "transactionHash" for e in err.errors or [])
        if err.type == "VALIDATION_ERROR" and sent and named:
            return ApiError("FUNDING_TRANSACTION_INVALID", "This transaction does not fund the payout.")
        return None

    rewrite_refusals(ref, "confirmPayoutFunding", not_a_transaction)


@variant("limit-named-by-figure",
         doc="PAYOUT_LIMIT_EXCEEDED names the limit by its amount ('... exceeds the maximum of 50,000.00 USD'), "
             "without the words single, daily or end user: 'Over a single, daily or per-end-user limit, named in "
             "the message.', and `detail`: 'Always a string; wording not stable.'")
def limit_named_by_figure(ref: Reference) -> None:
    check_network = ref.pricing.check_network

    def by_figure(amount: Decimal, currency: str, details_json: str) -> None:
        try:
            check_network(amount, currency, details_json)
        except ApiError as err:
            if err.type != "PAYOUT_LIMIT_EXCEEDED":
                raise
            raise ApiError("PAYOUT_LIMIT_EXCEEDED", f"{fmt(amount)} {currency} exceeds the maximum of "
                                                    f"{ref.pricing.single_limit:,.2f} {currency}.") from None

    ref.pricing.check_network = by_figure  # type: ignore[method-assign]


@variant("unknown-quote-not-found",
         doc="Sending a quote id the server never issued (altered, or made up) answers 404 NOT_FOUND ('No such "
             "payout, recipient or other id.') instead of 400 QUOTE_UNVERIFIABLE ('Quote could not be compared; "
             "nothing sent.'): the spec does not say what an unknown quote id answers. A genuine quote of another "
             "organization stays QUOTE_UNVERIFIABLE.")
def unknown_quote_not_found(ref: Reference) -> None:
    def never_issued(call: Call, err: ApiError) -> ApiError | None:
        body = call.json()
        quote_id = body.get("quoteId") if isinstance(body, dict) else None
        if err.type != "QUOTE_UNVERIFIABLE" or not isinstance(quote_id, str):
            return None
        payload, _, signature = quote_id.removeprefix("qt_").partition(".")
        issued = quote_id.startswith("qt_") and hmac.compare_digest(signature.encode(),
                                                                    ref.pricing.sign(payload).encode())
        return None if issued else ApiError("NOT_FOUND", "No such quote; price the payout again.")

    rewrite_refusals(ref, "sendPayout", never_issued)


@variant("non-positive-expect-destination-refused",
         doc="A zero or negative `expectDestination` on sendPayout is refused with 400 BAD_REQUEST (read as a "
             "'non-positive amount') instead of taken as a guard any quote meets: the spec says of it only "
             "'Quote moved past `expectDestination`; re-quote.'")
def non_positive_expect_destination_refused(ref: Reference) -> None:
    def wrap(handler: Handler) -> Handler:
        def guarded(call: Call) -> Reply:
            body = call.json()
            guard = parse_decimal(body.get("expectDestination")) if isinstance(body, dict) else None
            if guard is not None and guard <= 0:
                raise ApiError("BAD_REQUEST", "expectDestination must be a positive amount.")
            return handler(call)
        return guarded

    ref.wrap_handler("sendPayout", wrap)

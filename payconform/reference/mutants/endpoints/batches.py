"""Mutants of the Endpoints part for payout batches and payout links.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ...resources.batches import AWAITING, CANCELED, COMPLETED, FAILED, RECEIVED, VALIDATING
from ...core.errors import ApiError, validation_error
from ...core.operation import Call, Reply
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.payouts import rewrite_batch_replies, without_policy, wrap_batch_operations

if TYPE_CHECKING:
    from ...reference import Reference


def _answer_201(ref: Reference, op_id: str) -> None:
    """Every success of `op_id` is answered 201."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            return dataclasses.replace(original(call), status=201)
        return handler

    wrap_batch_operations(ref, (op_id,), wrap)


SUBMIT = "submitPayoutLink"


@mutant("batch-create-answers-201", reqs=["BATCH-CREATE"], doc="An accepted run is answered 201, not 202.")
def batch_create_answers_201(ref: Reference) -> None:
    _answer_201(ref, "createPayoutBatch")


@mutant("batch-create-unreadable-422", reqs=["BATCH-CREATE"],
        doc="A run body the server cannot read is answered 422 (its VALIDATION_ERROR body unchanged), not 400.")
def batch_create_unreadable_422(ref: Reference) -> None:
    @around(ref, "createPayoutBatch")
    def create_payout_batch(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "VALIDATION_ERROR":
                raise
            raise ApiError(err.type, err.detail, status=422, errors=err.errors) from None


@mutant("batch-read-newest-run", reqs=["BATCH-READ"],
        doc="Reading a run by id answers the organization's newest run.")
def batch_read_newest_run(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            newest = call.ref.store.one("SELECT id FROM payout_batches WHERE org_id = ? AND mode = ?"
                                        " ORDER BY seq DESC LIMIT 1", (call.org_id, call.mode))
            if newest is not None:
                call.params = {**call.params, "batchId": newest["id"]}
            return original(call)
        return handler

    wrap_batch_operations(ref, ("getPayoutBatch",), wrap)


@mutant("batch-list-first-run-only", reqs=["BATCH-LIST"], doc="The list of runs holds only the newest run.")
def batch_list_first_run_only(ref: Reference) -> None:
    rewrite_batch_replies(ref, ("listPayoutBatches",), lambda reply: {**reply.body, "data": reply.body["data"][:1]})


@mutant("batch-items-first-line-only", reqs=["BATCH-ITEMS"], doc="A run's items list holds only its first line.")
def batch_items_first_line_only(ref: Reference) -> None:
    rewrite_batch_replies(ref, ("listPayoutBatchItems",), lambda reply: {**reply.body, "data": reply.body["data"][:1]})


@mutant("batch-confirm-any-state", reqs=["BATCH-T-CONFIRM", "ERR-PAYOUT-BATCH-NOT-CONFIRMABLE"],
        doc="A run is confirmed in any status; PAYOUT_BATCH_NOT_CONFIRMABLE is never answered.")
def batch_confirm_any_state(ref: Reference) -> None:
    ref.batches.confirmable = (RECEIVED, VALIDATING, AWAITING, CANCELED, COMPLETED, FAILED)


@mutant("batch-confirm-creates-nothing", reqs=["BATCH-CONFIRM", "BATCH-T-CONFIRM"],
        doc="A confirmed run completes without creating any payout from its lines.")
def batch_confirm_creates_nothing(ref: Reference) -> None:
    ref.batches.run = lambda call, row: ref.batches.enter(call, row, COMPLETED, call.now)  # type: ignore[method-assign]


@mutant("batch-confirm-answers-201", reqs=["BATCH-CONFIRM"], doc="A confirm that begins creation answers 201.")
def batch_confirm_answers_201(ref: Reference) -> None:
    _answer_201(ref, "confirmPayoutBatch")


@mutant("batch-cancel-needs-no-key", reqs=["BATCH-CANCEL-IDEM"],
        doc="Cancelling a run runs without an `Idempotency-Key` (the key is optional).")
def batch_cancel_needs_no_key(ref: Reference) -> None:
    ref.operations["cancelPayoutBatch"] = dataclasses.replace(ref.operations["cancelPayoutBatch"],
                                                              idempotency="optional")


@mutant("batch-cancel-answers-old-status", reqs=["BATCH-CANCEL-OK"],
        doc="The cancel answers the run as it was before (not `canceled`), though it is canceled.")
def batch_cancel_answers_old_status(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            before = call.ref.batches.json(call, call.ref.batches.find(call, call.params["batchId"]))
            return dataclasses.replace(original(call), body=before)
        return handler

    wrap_batch_operations(ref, ("cancelPayoutBatch",), wrap)


@mutant("plink-needs-credential", reqs=["PLINK-NO-CREDENTIAL"],
        doc="The submit route authenticates an API key like every other route: without one it is 401.")
def plink_needs_credential(ref: Reference) -> None:
    ref.operations[SUBMIT] = dataclasses.replace(ref.operations[SUBMIT], bearer=None)


@mutant("plink-submit-answers-link", reqs=["PLINK-SUBMIT"],
        doc="A successful submit answers the link (id and status) instead of the payout.")
def plink_submit_answers_link(ref: Reference) -> None:
    @around(ref, SUBMIT)
    def submit_payout_link(original: Handler, call: Call) -> Reply:
        reply = original(call)
        link = ref.payout_links.find(call.params["token"])
        return Reply(reply.status, {"id": link["id"] if link else None, "status": "submitted"}, reply.resource_id)


@mutant("plink-submit-individuals-only", reqs=["PLINK-SUBMIT"],
        doc="A submit with `recipientType: business` is refused with 400 VALIDATION_ERROR; only individuals are paid.")
def plink_submit_individuals_only(ref: Reference) -> None:
    @around(ref, SUBMIT)
    def submit_payout_link(original: Handler, call: Call) -> Reply:
        if body(call).get("recipientType") == "business":
            raise validation_error([{"field": "recipientType", "reason": "must be individual"}])
        return original(call)


@mutant("plink-resubmit-pays-again", reqs=["PLINK-ALREADY-SUBMITTED"],
        doc="A submitted link stays open: a second submit sends a second payout.")
def plink_resubmit_pays_again(ref: Reference) -> None:
    ref.payout_links.spend = lambda row, payout_id, now: None  # type: ignore[method-assign]


@mutant("plink-validation-spends-link", reqs=["PLINK-VALIDATION-SPENDABLE"],
        doc="A submit refused with VALIDATION_ERROR fails the link, so the corrected submit is unusable.")
def plink_validation_spends_link(ref: Reference) -> None:
    @around(ref, SUBMIT)
    def submit_payout_link(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            link = ref.payout_links.find(call.params["token"])
            if err.type != "VALIDATION_ERROR" or link is None:
                raise
            ref.payout_links.fail(link, err, call.now)
            err.keeps_writes = True
            raise


@mutant("plink-failed-link-spendable", reqs=["PLINK-UNUSABLE", "ERR-PAYOUT-LINK-UNUSABLE"],
        doc="A payout refused at execution answers its own error and leaves the link spendable.")
def plink_failed_link_spendable(ref: Reference) -> None:
    ref.payout_links.fail = lambda row, refused, now: refused  # type: ignore[method-assign]


@mutant("plink-ignores-approval-policy", reqs=["PLINK-USE-POST-PAYOUTS"],
        doc="A link's payout is sent whatever the approval threshold or velocity cap.")
def plink_ignores_approval_policy(ref: Reference) -> None:
    without_policy(ref, SUBMIT)


@mutant("plink-ignores-velocity-cap", reqs=["PLINK-USE-POST-PAYOUTS"],
        doc="A link's payout is held back by the approval threshold only: it is sent over the velocity cap.")
def plink_ignores_velocity_cap(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            policy = ref.approvals.policy
            ref.approvals.policy = lambda store, org_id, mode: (  # type: ignore[method-assign]
                policy(store, org_id, mode)[0], None, None)
            try:
                return original(call)
            finally:
                ref.approvals.policy = policy  # type: ignore[method-assign]
        return handler

    ref.wrap_handler(SUBMIT, wrap)


@mutant("plink-no-expiry", reqs=["PLINK-NOT-FOUND"],
        doc="A link stays spendable after its expiresAt.")
def plink_no_expiry(ref: Reference) -> None:
    ref.payout_links.expired = lambda row, now: False  # type: ignore[method-assign]


@mutant("plink-signature-unchecked", reqs=["PLINK-NOT-FOUND"],
        doc="A token's signature is not checked: a forged token naming a real link spends it.")
def plink_signature_unchecked(ref: Reference) -> None:
    ref.payout_links.verify = lambda token: token.rpartition(".")[0] or None  # type: ignore[method-assign]


@mutant("plink-destination-unchecked", reqs=["PLINK-DESTINATION-NOT-FOUND"],
        doc="An account unknown to the network (sandbox: ending 0404) is paid instead of refused.")
def plink_destination_unchecked(ref: Reference) -> None:
    ref.payout_links.unknown_account_tail = None


@mutant("plink-no-rate-limit", reqs=["PLINK-RATE-LIMITED"],
        doc="Submits to one payout link are never rate limited.")
def plink_no_rate_limit(ref: Reference) -> None:
    ref.ratelimit.per_bearer_limit = 10**9


@mutant("plink-always-configured", reqs=["PLINK-UNAVAILABLE", "ERR-PAYOUT-LINKS-UNAVAILABLE"],
        doc="Hosted payout links work for an organization that has them not configured.")
def plink_always_configured(ref: Reference) -> None:
    ref.payout_links.configured = lambda org_id: True  # type: ignore[method-assign]

"""Mutants of the Endpoints part for quotes, payouts, orders, funding, approvals and the payout policy.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...core.errors import ApiError
from ...resources.funding import HASH
from ...core.operation import Call, Reply
from ..patching import Handler, around, refuse_for_good
from ..registry import mutant
from ..rewrites import rewrite_refusals
from ..support.payouts import CONFIRM, rewrite_reads

if TYPE_CHECKING:
    from ...reference import Reference


def sent_hash(call: Call) -> Any:
    body = call.json()
    return body.get("transactionHash") if isinstance(body, dict) else None


def send_hash(call: Call, value: str) -> None:
    call.replace_json({**call.json(), "transactionHash": value})


def good_hash() -> str:
    return "0x" + secrets.token_hex(30) + "7a1c"


def _accept_sandbox_tail(ref: Reference, tail: str) -> None:
    """A sandbox hash ending `tail` is confirmed as if it ended in a good transfer's digits."""
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        value = sent_hash(call)
        if isinstance(value, str) and value.endswith(tail):
            send_hash(call, value[:-4] + "7a1c")
        return original(call)


def _make_key_optional(ref: Reference, op_id: str) -> None:
    """The operation `op_id` runs without an Idempotency-Key."""
    ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], idempotency="optional")


@mutant("velocity-cap-ignored", reqs=["PAYOUT-CREATE"],
        doc="The organization's velocity cap is not enforced; only the amount threshold holds payouts.")
def velocity_cap_ignored(ref: Reference) -> None:
    original = ref.approvals.policy
    ref.approvals.policy = lambda store, org_id, mode: (original(store, org_id, mode)[0], None, None)  # type: ignore[method-assign]


@mutant("held-payout-answers-201", reqs=["PAYOUT-CREATE"],
        doc="A payout held for approvers is answered 201 (the `pending_approval` body unchanged), not 202.")
def held_payout_answers_201(ref: Reference) -> None:
    @around(ref, "createPayout")
    def create_payout(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, status=201) if reply.status == 202 else reply


@mutant("approval-queue-first-only", reqs=["APPROVAL-LIST"],
        doc="The approval queue lists only its newest approval, whatever the `limit`.")
def approval_queue_first_only(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            return dataclasses.replace(reply, body={**reply.body, "data": reply.body["data"][:1]})
        return handler

    ref.wrap_handler("listPayoutApprovals", wrap)


@mutant("approval-read-returns-newest", reqs=["APPROVAL-READ"],
        doc="GET /payouts/approvals/{approvalId} answers the organization's newest approval, whatever the id.")
def approval_read_returns_newest(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            newest = ref.store.one("SELECT id FROM payout_approvals WHERE org_id = ? AND mode = ?"
                                   " ORDER BY rowid DESC LIMIT 1", (call.org_id, call.mode))
            if newest is not None:
                call.params["approvalId"] = newest["id"]
            return original(call)
        return handler

    ref.wrap_handler("getPayoutApproval", wrap)


@mutant("funding-confirm-records-nothing", reqs=["FUND-CONFIRM-OK"],
        doc="A good funding confirmation answers 200 but the payout is left waiting on funds.")
def funding_confirm_records_nothing(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE payouts SET funded_at = NULL, funding_hash = NULL WHERE id = ?",
                      (call.params["payoutId"],))
        return reply


@mutant("funding-outcome-unknown-as-internal", reqs=["FUND-OUTCOME-UNKNOWN"],
        doc="A confirmation whose payout the network never acknowledged answers 500 INTERNAL instead of "
            "PAYOUT_OUTCOME_UNKNOWN.")
def funding_outcome_unknown_as_internal(ref: Reference) -> None:
    def generic(call: Call, err: ApiError) -> ApiError | None:
        return ApiError("INTERNAL", err.detail) if err.type == "PAYOUT_OUTCOME_UNKNOWN" else None

    rewrite_refusals(ref, CONFIRM, generic)


@mutant("funding-hash-shape-unchecked", reqs=["FUND-HASH-REQUIRED"],
        doc="A missing or malformed `transactionHash` is taken as a good transfer.")
def funding_hash_shape_unchecked(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        value = sent_hash(call)
        if not (isinstance(value, str) and HASH.fullmatch(value)):
            send_hash(call, good_hash())
        return original(call)


@mutant("funding-0001-accepted", reqs=["FUND-SANDBOX-HASH-OUTCOMES", "ERR-FUNDING-TRANSACTION-INVALID"],
        doc="A sandbox hash ending 0001 funds the payout instead of FUNDING_TRANSACTION_INVALID.")
def funding_0001_accepted(ref: Reference) -> None:
    _accept_sandbox_tail(ref, "0001")


@mutant("funding-0002-accepted", reqs=["FUND-SANDBOX-HASH-OUTCOMES", "ERR-FUNDING-NOT-YET-VERIFIABLE"],
        doc="A sandbox hash ending 0002 funds the payout instead of FUNDING_NOT_YET_VERIFIABLE.")
def funding_0002_accepted(ref: Reference) -> None:
    _accept_sandbox_tail(ref, "0002")


@mutant("funding-0002-hash-refused-for-good", reqs=["ERR-FUNDING-NOT-YET-VERIFIABLE"],
        doc="A hash once answered FUNDING_NOT_YET_VERIFIABLE is from then on refused as FUNDING_TRANSACTION_INVALID "
            "(another hash still funds the payout).")
def funding_0002_hash_refused_for_good(ref: Reference) -> None:
    unverifiable: set[str] = set()

    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        value = str(sent_hash(call)).lower()
        if value in unverifiable:
            raise ApiError("FUNDING_TRANSACTION_INVALID")
        try:
            return original(call)
        except ApiError as err:
            if err.type == "FUNDING_NOT_YET_VERIFIABLE":
                unverifiable.add(value)
            raise


@mutant("funding-refusal-spends-payout", reqs=["FUND-CHAIN-CHECKS"],
        doc="After a refused confirmation the payout is no longer fundable (PAYOUT_NOT_FUNDABLE).")
def funding_refusal_spends_payout(ref: Reference) -> None:
    refuse_for_good(ref, CONFIRM, "payoutId", {"FUNDING_TRANSACTION_INVALID", "FUNDING_NOT_YET_VERIFIABLE"},
                    "PAYOUT_NOT_FUNDABLE")


@mutant("funding-refusal-recorded", reqs=["FUND-CHAIN-CHECKS"],
        doc="A refused confirmation is recorded all the same: the payout reads `requiresFunding: false`, though a good "
            "transfer still funds it.")
def funding_refusal_recorded(ref: Reference) -> None:
    claimed: set[str] = set()

    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type in ("FUNDING_TRANSACTION_INVALID", "FUNDING_NOT_YET_VERIFIABLE"):
                claimed.add(call.params["payoutId"])
            raise

    rewrite_reads(ref, lambda payout: {**payout, "requiresFunding": False} if payout.get("payoutId") in claimed
                  else payout)


@mutant("funding-reuse-allowed", reqs=["FUND-ALREADY-USED", "FUND-SANDBOX-REUSE",
                                       "ERR-FUNDING-TRANSACTION-ALREADY-USED"],
        doc="A transaction that funded one payout also funds another.")
def funding_reuse_allowed(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "FUNDING_TRANSACTION_ALREADY_USED":
                raise
            ref.store.run("UPDATE payouts SET funding_hash = funding_hash || ':' || id WHERE funding_hash = ?",
                          (str(sent_hash(call)).lower(),))
            return original(call)


@mutant("funding-reuse-detail-anonymous", reqs=["FUND-ALREADY-USED"],
        doc="FUNDING_TRANSACTION_ALREADY_USED does not name the payout the transaction funded.")
def funding_reuse_detail_anonymous(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "FUNDING_TRANSACTION_ALREADY_USED":
                raise ApiError(err.type, "This transaction was already used.") from None
            raise


@mutant("payout-reads-flap", reqs=["ORDER-READ", "PAYOUT-ONLY-FORWARD-FROM-COMPLETED"],
        doc="Every other read of a completed or returned payout reports an older state (`processing`), as a "
            "lagging replica would.")
def payout_reads_flap(ref: Reference) -> None:
    reads = itertools.count()

    def change(p: dict[str, Any]) -> dict[str, Any]:
        if p.get("completedAt") and next(reads) % 2:
            return {**p, "status": "processing"}
        return p

    rewrite_reads(ref, change)


@mutant("orders-by-reference-ignores-filter", reqs=["ORDER-BY-REFERENCE"],
        doc="GET /orders?reference= answers every payout of the organization, whatever the reference.")
def orders_by_reference_ignores_filter(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = ref.operations["listPayouts"].handler(call)
            return dataclasses.replace(reply, body={"data": reply.body["data"]})
        return handler

    ref.wrap_handler("listOrders", wrap)


@mutant("orders-unavailable-as-empty-list", reqs=["ORDER-UNAVAILABLE", "ERR-ORDERS-TEMPORARILY-UNAVAILABLE"],
        doc="When the network read behind GET /orders?reference= fails, the lookup answers 200 with an empty "
            "list (a partial list presented as complete).")
def orders_unavailable_as_empty_list(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if err.type != "ORDERS_TEMPORARILY_UNAVAILABLE":
                    raise
                return Reply(200, {"data": []})
        return handler

    ref.wrap_handler("listOrders", wrap)


@mutant("orders-unavailable-as-oldest-only", reqs=["ERR-ORDERS-TEMPORARILY-UNAVAILABLE"],
        doc="When the network read behind GET /orders?reference= fails, the lookup answers 200 with only the oldest "
            "payout of that reference (the part read before the failure, presented as complete).")
def orders_unavailable_as_oldest_only(ref: Reference) -> None:
    @around(ref, "listOrders")
    def list_orders(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "ORDERS_TEMPORARILY_UNAVAILABLE":
                raise
            reply = original(call)
            return dataclasses.replace(reply, body={**reply.body, "data": reply.body["data"][-1:]})


@mutant("payment-reasons-empty", reqs=["DISC-REASONS-ROUTE"],
        doc="GET /payment-reasons answers an empty list.")
def payment_reasons_empty(ref: Reference) -> None:
    ref.wrap_handler("listPaymentReasons", lambda original: lambda call: Reply(200, {"data": []}))


@mutant("policy-developer-always-listed", reqs=["POLICY-FEATURES-DEVELOPER"],
        doc="GET /policy lists `developer` in `features` even when developer tools are off.")
def policy_developer_always_listed(ref: Reference) -> None:
    def wrap(original: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        def handler(call: Call) -> Reply:
            reply = original(call)
            features = sorted({*reply.body["features"], "developer"})
            return dataclasses.replace(reply, body={**reply.body, "features": features})
        return handler

    ref.wrap_handler("getPolicy", wrap)


@mutant("policy-developer-never-listed", reqs=["POLICY-FEATURES-DEVELOPER"],
        doc="GET /policy leaves `developer` out of `features` even when developer tools are on.")
def policy_developer_never_listed(ref: Reference) -> None:
    def wrap(original: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        def handler(call: Call) -> Reply:
            reply = original(call)
            features = [f for f in reply.body["features"] if f != "developer"]
            return dataclasses.replace(reply, body={**reply.body, "features": features})
        return handler

    ref.wrap_handler("getPolicy", wrap)


@mutant("add-method-key-optional", reqs=["RCP-ADD-METHOD-IDEM"],
        doc="Adding a payment method without an Idempotency-Key runs instead of 400 IDEMPOTENCY_KEY_REQUIRED.")
def add_method_key_optional(ref: Reference) -> None:
    _make_key_optional(ref, "addBeneficiaryMethod")


@mutant("funding-key-optional", reqs=["FUND-IDEM-HEADERS"],
        doc="Confirming funding without an Idempotency-Key runs instead of 400 IDEMPOTENCY_KEY_REQUIRED.")
def funding_key_optional(ref: Reference) -> None:
    _make_key_optional(ref, CONFIRM)


@mutant("solana-funding-unverified", reqs=["FUND-SOLANA"],
        doc="Funding of a payout to a Solana wallet is accepted without the sandbox chain read (0001 funds it).")
def solana_funding_unverified(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        row = ref.store.one("SELECT m.details FROM payouts p JOIN payment_methods m"
                            " ON m.destination_account_id = p.destination_account_id WHERE p.id = ?",
                            (call.params["payoutId"],))
        if row is not None and json.loads(row["details"]).get("chain") == "solana" and isinstance(sent_hash(call), str):
            send_hash(call, good_hash())
        return original(call)

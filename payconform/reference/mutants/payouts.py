"""Mutants of payouts: the lifecycle on the organization's clock, the payout read and the create answer.

Lifecycle mutants replace one scenario's timeline on this server's `ref.lifecycle`; read mutants wrap the
payout reads (`getOrder`, `getPayout`, `listOrders`, `listPayouts`) and rewrite the payouts they answer.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .. import ledger
from ..errors import ApiError
from ..lifecycle import COMPLETED, DEFAULT, PROCESSING, Step
from ..operation import Call, Reply
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]
READS = ("getOrder", "getPayout", "listOrders", "listPayouts")
DAY = 86400


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


@mutant("payout-skips-processing", reqs=["PAYOUT-T-PROCESSING"],
        doc="An ordinary sandbox payout goes straight from pending to completed, never `processing`.")
def _(ref: Reference) -> None:
    ref.lifecycle.timelines[DEFAULT] = (COMPLETED,)


@mutant("payout-0002-processes", reqs=["PAYOUT-T-PROCESSING"],
        doc="Sandbox scenario 0002 passes through `processing` like any other payout.")
def _(ref: Reference) -> None:
    ref.lifecycle.timelines["0002"] = (PROCESSING, COMPLETED)


@mutant("payout-never-completes", reqs=["PAYOUT-T-COMPLETED"],
        doc="Sandbox payouts stay where they are instead of completing (recipient never paid).")
def _(ref: Reference) -> None:
    ref.lifecycle.timelines[DEFAULT] = (PROCESSING,)
    ref.lifecycle.timelines["0002"] = ()


@mutant("payout-completed-at-from-creation", reqs=["PAYOUT-COMPLETED-AT"],
        doc="Payout reads carry `completedAt` (the creation instant) before the payout completed.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "completedAt": p.get("completedAt") or p.get("createdAt")})


@mutant("payout-0003-completes", reqs=["PAYOUT-T-FAILED"],
        doc="Sandbox scenario 0003 is paid like any other payout instead of failing.")
def _(ref: Reference) -> None:
    ref.lifecycle.timelines["0003"] = (PROCESSING, COMPLETED)


@mutant("payout-failed-without-failure-code", reqs=["PAYOUT-FAILURE-CODE"],
        doc="A failed payout is read without its `failureCode`.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items() if k != "failureCode"})


@mutant("payout-failed-without-funds-returned", reqs=["PAYOUT-FUNDS-RETURNED"],
        doc="A failed payout is read without `fundsReturned`.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items() if k != "fundsReturned"})


@mutant("payout-failed-sets-completed-at", reqs=["PAYOUT-COMPLETED-AT-FAILED-CANCELED"],
        doc="Failing a payout stamps `completedAt`, which stays null on failed payloads.")
def _(ref: Reference) -> None:
    failed = Step(30, "payout.failed", "failed", "account_invalid", True, completes=True)
    ref.lifecycle.timelines["0003"] = (PROCESSING, failed)


@mutant("payout-failed-read-as-error", reqs=["ERR-ACCEPTED-FAILED-NOT-ERROR"],
        doc="Reading a payout that failed after it was accepted answers an error body instead of the payout.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            if reply.body.get("status") == "failed":
                raise ApiError("BAD_REQUEST", "The payout failed.")
            return reply
        return handler

    for op_id in ("getOrder", "getPayout"):
        ref.wrap_handler(op_id, wrap)


@mutant("payout-never-returned", reqs=["PAYOUT-T-RETURNED"],
        doc="Sandbox scenario 0004 completes and is never returned by the bank.")
def _(ref: Reference) -> None:
    ref.lifecycle.timelines["0004"] = (PROCESSING, COMPLETED)


@mutant("payout-return-keeps-funds", reqs=["PAYOUT-RETURN-BODY"],
        doc="A bank return reads `fundsReturned: false`.")
def _(ref: Reference) -> None:
    returned = Step(90, "payout.returned", "failed", "returned_by_bank", False)
    ref.lifecycle.timelines["0004"] = (PROCESSING, COMPLETED, returned)


@mutant("payout-return-clears-completed-at", reqs=["PAYOUT-COMPLETED-AT-RETURNED"],
        doc="A returned payout is read with `completedAt: null`, though a returned payload keeps it.")
def _(ref: Reference) -> None:
    def change(p: dict[str, Any]) -> dict[str, Any]:
        return {**p, "completedAt": None} if p.get("failureCode") == "returned_by_bank" else p

    rewrite_reads(ref, change)


@mutant("payout-failed-recovers", reqs=["PAYOUT-TERMINAL"],
        doc="A day after failing, a sandbox payout of scenario 0003 or 0004 reads `completed` again.")
def _(ref: Reference) -> None:
    for scenario in ("0003", "0004"):
        recovered = Step(DAY, "payout.completed", "completed", completes=True)
        ref.lifecycle.timelines[scenario] = (*ref.lifecycle.timelines[scenario], recovered)


@mutant("payout-reads-flap", reqs=["ORDER-READ", "PAYOUT-ONLY-FORWARD-FROM-COMPLETED"],
        doc="Every other read of a completed or returned payout reports an older state (`processing`), as a "
            "lagging replica would.")
def _(ref: Reference) -> None:
    reads = itertools.count()

    def change(p: dict[str, Any]) -> dict[str, Any]:
        if p.get("completedAt") and next(reads) % 2:
            return {**p, "status": "processing"}
        return p

    rewrite_reads(ref, change)


@mutant("payout-created-processing", reqs=["PAYOUT-T-CREATE"],
        doc="An accepted payout is answered `processing` instead of `pending`.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            if reply.status == 201:
                return dataclasses.replace(reply, body={**reply.body, "status": "processing"})
            return reply
        return handler

    ref.wrap_handler("createPayout", wrap)


@mutant("payout-read-amounts-as-numbers", reqs=["PAYOUT-FIELDS"],
        doc="Payout reads carry `sourceAmount` and `destinationAmount` as JSON numbers, not decimal strings.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "sourceAmount": float(p["sourceAmount"]),
                                  "destinationAmount": float(p["destinationAmount"])})


@mutant("payout-fee-flat", reqs=["PAYOUT-FEE-OBJECT"],
        doc="Payout reads carry `fee` as a bare amount string instead of `{currency, amount}`.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "fee": p["fee"]["amount"]})


@mutant("payout-reference-dropped", reqs=["PAYOUT-REFERENCE"],
        doc="Payout reads omit the caller's `reference`.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items() if k != "reference"})


@mutant("payout-status-uppercase", reqs=["PAYOUT-STATUS-VALUES"],
        doc="Payout reads spell the status in upper case (`PENDING`), outside the spec's values.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "status": str(p["status"]).upper()})


@mutant("orders-by-reference-ignores-filter", reqs=["ORDER-BY-REFERENCE"],
        doc="GET /orders?reference= answers every payout of the organization, whatever the reference.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = ref.operations["listPayouts"].handler(call)
            return dataclasses.replace(reply, body={"data": reply.body["data"]})
        return handler

    ref.wrap_handler("listOrders", wrap)


@mutant("orders-unavailable-as-empty-list", reqs=["ORDER-UNAVAILABLE", "ERR-ORDERS-TEMPORARILY-UNAVAILABLE"],
        doc="When the network read behind GET /orders?reference= fails, the lookup answers 200 with an empty "
            "list (a partial list presented as complete).")
def _(ref: Reference) -> None:
    failed: set[str] = set()
    before_handler = ref.faults.before_handler

    async def swallow(org_id: str, operation: str) -> None:
        try:
            await before_handler(org_id, operation)
        except ApiError as err:
            if err.type != "ORDERS_TEMPORARILY_UNAVAILABLE":
                raise
            failed.add(org_id)

    ref.faults.before_handler = swallow  # type: ignore[method-assign]

    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            if call.org_id in failed:
                failed.discard(call.org_id)
                return Reply(200, {"data": []})
            return original(call)
        return handler

    ref.wrap_handler("listOrders", wrap)


def _with_scopes(ref: Reference, change: Callable[[frozenset[str]], frozenset[str]]) -> None:
    """createPayout sees the caller's scopes through `change`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            call.principal = dataclasses.replace(call.principal, scopes=change(call.principal.scopes))
            return original(call)
        return handler

    ref.wrap_handler("createPayout", wrap)


@mutant("crypto-scope-unchecked", reqs=["AUTH-CRYPTO-DISABLED", "ERR-CRYPTO-PAYOUTS-DISABLED"],
        doc="Any write key may pay a crypto recipient; CRYPTO_PAYOUTS_DISABLED is never answered.")
def _(ref: Reference) -> None:
    _with_scopes(ref, lambda scopes: scopes | {"crypto_payouts"})


@mutant("crypto-scope-ignored", reqs=["AUTH-CRYPTO-SCOPE"],
        doc="A key holding crypto_payouts is refused crypto payouts as if it lacked the scope.")
def _(ref: Reference) -> None:
    _with_scopes(ref, lambda scopes: scopes - {"crypto_payouts"})


@mutant("insufficient-balance-overdraws", reqs=["ERR-INSUFFICIENT-BALANCE"],
        doc="A payout above the balance is paid anyway, overdrawing the balance.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if err.type != "INSUFFICIENT_BALANCE":
                    raise
                body = call.json()
                ledger.post(call, type="adjustment", amount=Decimal(body["sourceAmount"]),
                            currency=body["sourceCurrency"])
                return original(call)
        return handler

    ref.wrap_handler("createPayout", wrap)
